//! The tables the crate's registries must equal: evidence keys and exit codes.

// The crate's registries the tables must equal (one line each to change when they move).
use agenthealth::EXIT_CODES;
use agenthealth::EvidenceKey as Key;

use super::{DOCUMENTS, read};

/// The evidence tables (tables under a heading containing "Evidence" in docs/output.md and
/// docs/mcp.md) and the registry of evidence keys (`Key::ALL`, src/result/evidence.rs) agree:
/// one key per row, in backticks in the first column; no key listed twice; every listed key
/// is a key of the registry, and every key of the registry is listed.
#[test]
fn the_evidence_tables_list_every_key_once() {
    let mut listed: Vec<(String, String)> = Vec::new();
    let mut problems = Vec::new();
    for doc in ["docs/output.md", "docs/mcp.md"] {
        let text = read(doc);
        for (line, row) in evidence_rows(&text) {
            let first = row.split('|').nth(1).unwrap_or("").trim();
            let key = first
                .strip_prefix('`')
                .and_then(|k| k.strip_suffix('`'))
                .filter(|k| {
                    !k.is_empty() && k.bytes().all(|b| b.is_ascii_lowercase() || b == b'_')
                });
            match key {
                Some(key) => listed.push((key.to_string(), format!("{doc}:{line}"))),
                None => problems.push(format!(
                    "{doc}:{line}: the first column must be one key in backticks: {row}"
                )),
            }
        }
    }
    assert!(listed.len() > 20, "no evidence tables found: {listed:?}");
    // The code declares every key once, with its meaning, in one registry.
    let registry: Vec<&str> = Key::ALL.iter().map(|k| k.as_str()).collect();
    for (i, (key, at)) in listed.iter().enumerate() {
        if let Some((_, first)) = listed[..i].iter().find(|(k, _)| k == key) {
            problems.push(format!("{at}: `{key}` is already listed at {first}"));
        }
        if !registry.contains(&key.as_str()) {
            problems.push(format!(
                "{at}: `{key}` is not in the evidence-key registry (src/result/evidence.rs)"
            ));
        }
    }
    for key in &registry {
        if !listed.iter().any(|(k, _)| k == key) {
            problems.push(format!(
                "src/result/evidence.rs: evidence key `{key}` is in no evidence table of docs/"
            ));
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

/// The exit-code tables — tables whose header is `| Exit | Status | Meaning |`: one in
/// README.md, one in docs/output.md, none elsewhere — are `src/exit.rs`'s `CODES` (which the
/// help text and the man page print), row for row: the code; the status in backticks, or the
/// tool failure by its name; the meaning as a sentence (capitalised, with a full stop).
#[test]
fn the_exit_code_tables_are_the_binarys() {
    let want: Vec<String> = EXIT_CODES
        .iter()
        .map(|c| {
            let status = match c.status {
                Some(_) => format!("`{}`", c.name()),
                None => c.name().to_string(),
            };
            format!("| {} | {status} | {}. |", c.code, sentence(c.meaning))
        })
        .collect();
    assert_eq!(want.len(), 7, "{want:?}");
    for doc in DOCUMENTS {
        let tables = exit_code_tables(&read(doc));
        let expected = usize::from(["README.md", "docs/output.md"].contains(doc));
        assert_eq!(tables.len(), expected, "{doc}: exit-code tables");
        for rows in tables {
            assert_eq!(
                rows, want,
                "{doc}: the exit-code table is src/exit.rs's CODES"
            );
        }
    }
}

/// `text` with its first letter capitalised.
fn sentence(text: &str) -> String {
    let mut chars = text.chars();
    chars.next().map_or_else(String::new, |first| {
        first.to_uppercase().chain(chars).collect()
    })
}

/// The body rows of each table of `text` whose header is `| Exit | Status | Meaning |`.
fn exit_code_tables(text: &str) -> Vec<Vec<String>> {
    let lines: Vec<&str> = text.lines().collect();
    lines
        .iter()
        .enumerate()
        .filter(|(_, l)| l.trim() == "| Exit | Status | Meaning |")
        .map(|(i, _)| {
            lines
                .iter()
                .skip(i + 2)
                .take_while(|l| l.starts_with('|'))
                .map(|l| l.trim().to_string())
                .collect()
        })
        .collect()
}

/// The body rows (line number, text) of the tables under headings that contain "Evidence":
/// a table's first line is its header and its second the separator.
fn evidence_rows(text: &str) -> Vec<(usize, String)> {
    let mut rows = Vec::new();
    let mut under_evidence = false;
    let mut in_fence = false;
    let mut row_of_table = 0;
    for (i, line) in text.lines().enumerate() {
        if line.trim_start().starts_with("```") {
            in_fence = !in_fence;
        }
        let in_table = !in_fence && line.starts_with('|');
        row_of_table = if in_table { row_of_table + 1 } else { 0 };
        if in_fence {
            continue;
        }
        if line.starts_with('#') {
            under_evidence = line.contains("Evidence");
        } else if under_evidence && row_of_table > 2 {
            rows.push((i + 1, line.to_string()));
        }
    }
    rows
}
