//! What the source must keep, read as text: one poison-tolerant lock helper
//! (`src/vocab/sync.rs`) that every mutex goes through.
//!
//! The files are read with comments and the insides of string and character literals blanked
//! out ([`code`]), so neither prose nor test data can trip or satisfy a rule.

use std::path::{Path, PathBuf};

const ROOT: &str = env!("CARGO_MANIFEST_DIR");

/// Every `.rs` file under `dir` (relative to the repository root), sorted.
fn rust_files(dir: &str) -> Vec<PathBuf> {
    fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
        let entries = std::fs::read_dir(dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display()));
        for entry in entries.flatten() {
            let path = entry.path();
            if path.is_dir() {
                walk(&path, out);
            } else if path.extension().is_some_and(|x| x == "rs") {
                out.push(path);
            }
        }
    }
    let mut out = Vec::new();
    walk(&Path::new(ROOT).join(dir), &mut out);
    out.sort();
    out
}

/// `path` relative to the repository root, for messages.
fn shown(path: &Path) -> String {
    path.strip_prefix(ROOT)
        .unwrap_or(path)
        .display()
        .to_string()
}

fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", shown(path)))
}

/// `text` with every comment (line, block, nested, doc) and the contents of every string,
/// raw string, byte string and character literal replaced by spaces; newlines are kept, so
/// line numbers stay, and the quotes stay, so `"…"` is still an expression. Lifetimes
/// (`'a`, `'static`) are code.
pub(crate) fn code(text: &str) -> String {
    let chars: Vec<char> = text.chars().collect();
    let mut out = String::with_capacity(text.len());
    let blank = |c: char| if c == '\n' { '\n' } else { ' ' };
    let ident = |c: char| c.is_alphanumeric() || c == '_';
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        let next = chars.get(i + 1).copied();
        let before = i.checked_sub(1).and_then(|j| chars.get(j).copied());
        if c == '/' && next == Some('/') {
            while i < chars.len() && chars[i] != '\n' {
                out.push(' ');
                i += 1;
            }
        } else if c == '/' && next == Some('*') {
            let mut depth = 0;
            while i < chars.len() {
                if chars[i] == '/' && chars.get(i + 1) == Some(&'*') {
                    depth += 1;
                    out.push_str("  ");
                    i += 2;
                } else if chars[i] == '*' && chars.get(i + 1) == Some(&'/') {
                    depth -= 1;
                    out.push_str("  ");
                    i += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    out.push(blank(chars[i]));
                    i += 1;
                }
            }
        } else if (c == 'r' || (c == 'b' && next == Some('r')))
            && !before.is_some_and(ident)
            && raw_string_at(&chars, i + usize::from(c == 'b')).is_some()
        {
            let start = i + usize::from(c == 'b');
            let hashes = raw_string_at(&chars, start).unwrap_or(0);
            // `r`, the hashes and the opening quote stay.
            let open = start + 1 + hashes + 1;
            out.extend(&chars[i..open]);
            i = open;
            let closes = |j: usize| {
                chars.get(j) == Some(&'"') && (1..=hashes).all(|h| chars.get(j + h) == Some(&'#'))
            };
            while i < chars.len() && !closes(i) {
                out.push(blank(chars[i]));
                i += 1;
            }
            let end = (i + 1 + hashes).min(chars.len());
            out.extend(&chars[i..end]);
            i = end;
        } else if c == '"' {
            out.push('"');
            i += 1;
            while i < chars.len() && chars[i] != '"' {
                if chars[i] == '\\' {
                    out.push(' ');
                    i += 1;
                }
                if let Some(&escaped) = chars.get(i) {
                    out.push(blank(escaped));
                }
                i += 1;
            }
            if i < chars.len() {
                out.push('"');
                i += 1;
            }
        } else if c == '\'' && (next == Some('\\') || chars.get(i + 2) == Some(&'\'')) {
            // A character literal (`'x'`, `'\n'`, `'\u{1b}'`), not a lifetime.
            out.push('\'');
            i += 1;
            if chars.get(i) == Some(&'\\') {
                // The backslash and the character it escapes (which may be a quote).
                out.push_str("  ");
                i += 2;
            }
            while i < chars.len() && chars[i] != '\'' {
                out.push(' ');
                i += 1;
            }
            if i < chars.len() {
                out.push('\'');
                i += 1;
            }
        } else {
            out.push(c);
            i += 1;
        }
    }
    out
}

/// The number of `#` of a raw string starting with the `r` at `i`, if one starts there.
fn raw_string_at(chars: &[char], i: usize) -> Option<usize> {
    if chars.get(i) != Some(&'r') {
        return None;
    }
    let hashes = chars[i + 1..].iter().take_while(|c| **c == '#').count();
    (chars.get(i + 1 + hashes) == Some(&'"')).then_some(hashes)
}

/// 1-based line of byte offset `at` in `text`.
fn line_of(text: &str, at: usize) -> usize {
    text[..at].matches('\n').count() + 1
}

#[test]
fn code_blanks_comments_and_literals_but_keeps_lifetimes() {
    let src = "let a = \"crate::x\"; // crate::y\n/* crate::z /* nested */ */ fn f<'a>(c: char) -> &'a str { r#\"crate::w\"# }\nlet q = '\"'; let n = '\\n'; let s = '\\''; crate::v";
    let out = code(src);
    assert!(
        !out.contains("crate::x") && !out.contains("crate::y"),
        "{out}"
    );
    assert!(
        !out.contains("crate::z") && !out.contains("crate::w"),
        "{out}"
    );
    assert!(out.contains("fn f<'a>(c: char) -> &'a str"), "{out}");
    assert!(out.ends_with("crate::v"), "{out}");
    assert_eq!(out.lines().count(), src.lines().count());
}

/// Every mutex is locked through `agenthealth::vocab::sync::lock`: no `lock()` whose
/// poisoning is handled (or ignored) on the spot — `unwrap_or_else(|p| p.into_inner())`,
/// `.unwrap()`, `.expect(…)`, `.map(…)`, `.ok()`, `if let Ok(…) = m.lock()` — anywhere in
/// `src/`, `tests/` or `examples/` but in that helper. (`stdout().lock()` and the like are
/// not mutexes; `Condvar` waits return a guard the helper cannot take, and stay as they are.)
#[test]
fn the_lock_helper_is_written_once() {
    let helper = Path::new(ROOT).join("src/vocab/sync.rs");
    let mut found = Vec::new();
    let files = ["src", "tests", "examples"]
        .into_iter()
        .flat_map(rust_files);
    for path in files.filter(|p| *p != helper) {
        let text = code(&read(&path));
        for (at, _) in text.match_indices(".lock()") {
            let head = text[..at].trim_end();
            if ["stdout()", "stderr()", "stdin()"]
                .iter()
                .any(|io| head.ends_with(io))
            {
                continue;
            }
            let tail = text[at + ".lock()".len()..].trim_start();
            let handled = [
                ".unwrap", ".expect", ".map", ".ok", ".is_ok", ".is_err", "?",
            ]
            .iter()
            .any(|t| tail.starts_with(t));
            let statement = head.rsplit([';', '{', '}']).next().unwrap_or_default();
            let matched = statement.contains("if let Ok")
                || statement.contains("while let Ok")
                || statement.trim_start().starts_with("match ");
            if handled || matched {
                found.push(format!(
                    "{}:{}: lock with agenthealth::vocab::sync::lock",
                    shown(&path),
                    line_of(&text, at)
                ));
            }
        }
    }
    assert!(found.is_empty(), "{}", found.join("\n"));
}
