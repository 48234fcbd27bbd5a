//! What the harness reads in a document: fenced blocks, and the markers (HTML comments) that
//! give them files, real servers or a browser.

/// A fenced block: its info string, the marker on the line before it, its first line's
/// number (1-based, the opening fence), its lines, and the last paragraph before it that
/// starts with `Needs:` (what its commands need installed).
pub(super) struct Fence {
    pub(super) info: String,
    pub(super) marker: Option<Marker>,
    pub(super) line: usize,
    pub(super) body: Vec<String>,
    pub(super) needs: Option<String>,
}

impl Fence {
    /// The block's text, with a final newline.
    pub(super) fn text(&self) -> String {
        let mut text = self.body.join("\n");
        text.push('\n');
        text
    }
}

/// A harness marker: an HTML comment on a line of its own.
#[derive(Debug)]
pub(super) enum Marker {
    /// `<!-- file: NAME -->`, right before a `yaml` block, whose caption names `NAME`.
    File(String),
    /// `<!-- console: interop -->`, right before a `console` block.
    Interop,
    /// `<!-- console: browser -->`, right before a `console` block.
    Browser,
}

/// The fenced blocks of `text`, with the markers checked: `file:` and `console:` markers
/// must be followed at once by the kind of block they apply to, a `file:` marker must follow
/// a paragraph that names its file (`` `NAME` ``: a reader cannot see the comment), and `$ `
/// lines may only appear in console blocks.
pub(super) fn fences(text: &str) -> Result<Vec<Fence>, String> {
    let mut out = Vec::new();
    let mut lines = text.lines().enumerate().map(|(i, l)| (i + 1, l));
    // The marker on the line before, waiting for its block.
    let mut pending: Option<(usize, Marker)> = None;
    // The last prose paragraph before the current line, and whether a blank line ended it.
    let mut paragraph = String::new();
    let mut ended = false;
    let mut needs = None;
    while let Some((n, line)) = lines.next() {
        let trimmed = line.trim_start();
        if let Some(info) = trimmed.strip_prefix("```") {
            let info = info.trim().to_string();
            if info == "console" && trimmed.len() != line.len() {
                return Err(format!("{n}: a console block must start at column 0"));
            }
            let mut body = Vec::new();
            loop {
                match lines.next() {
                    Some((_, l)) if l.trim_start() == "```" => break,
                    Some((_, l)) => body.push(l.to_string()),
                    None => return Err(format!("{n}: the block never closes")),
                }
            }
            let marker = pending.take().map(|(_, m)| m);
            match (&marker, info.as_str()) {
                (None, _)
                | (Some(Marker::File(_)), "yaml")
                | (Some(Marker::Interop | Marker::Browser), "console") => {}
                (Some(m), _) => {
                    return Err(format!(
                        "{}: {m:?} cannot apply to a ```{info} block",
                        n - 1
                    ));
                }
            }
            if info != "console"
                && let Some(l) = body.iter().find(|l| l.starts_with("$ "))
            {
                return Err(format!(
                    "{n}: a ```{info} block shows a command (`{l}`): transcripts go in `console` blocks"
                ));
            }
            if paragraph.starts_with("Needs:") {
                needs = Some(paragraph.clone());
            }
            out.push(Fence {
                info,
                marker,
                line: n,
                body,
                needs: needs.clone(),
            });
            paragraph.clear();
            continue;
        }
        if let Some((at, m)) = pending.take() {
            return Err(format!("{at}: {m:?} is not followed by its block"));
        }
        match marker(line).map_err(|e| format!("{n}: {e}"))? {
            Some(Marker::File(name)) if !paragraph.contains(&format!("`{name}`")) => {
                return Err(format!(
                    "{n}: the paragraph before <!-- file: {name} --> must name `{name}`: \
                     the comment is invisible to a reader"
                ));
            }
            Some(m) => pending = Some((n, m)),
            None if line.trim().is_empty() => ended = true,
            None => {
                if std::mem::take(&mut ended) {
                    if paragraph.starts_with("Needs:") {
                        needs = Some(paragraph.clone());
                    }
                    paragraph.clear();
                }
                paragraph.push_str(line);
                paragraph.push('\n');
            }
        }
    }
    match pending {
        None => Ok(out),
        Some((at, m)) => Err(format!("{at}: {m:?} is not followed by its block")),
    }
}

/// The harness marker on `line`, if it is one.
fn marker(line: &str) -> Result<Option<Marker>, String> {
    let Some(inner) = line
        .trim()
        .strip_prefix("<!--")
        .and_then(|l| l.strip_suffix("-->"))
        .map(str::trim)
    else {
        return Ok(None);
    };
    if let Some(name) = inner.strip_prefix("file:") {
        file_name(name.trim()).map(|name| Some(Marker::File(name)))
    } else if let Some(kind) = inner.strip_prefix("console:") {
        match kind.trim() {
            "interop" => Ok(Some(Marker::Interop)),
            "browser" => Ok(Some(Marker::Browser)),
            other => Err(format!("unknown console marker `{other}`")),
        }
    } else if inner.starts_with("file") || inner.starts_with("console") {
        Err(format!("malformed marker: {line}"))
    } else {
        Ok(None)
    }
}

/// A relative path inside the working directory.
fn file_name(name: &str) -> Result<String, String> {
    let ok = !name.is_empty()
        && !name.starts_with('/')
        && !name.split('/').any(|part| part.is_empty() || part == "..")
        && !name.contains(char::is_whitespace);
    if ok {
        Ok(name.to_string())
    } else {
        Err(format!("not a relative file name: `{name}`"))
    }
}

#[test]
fn markers_are_strict() {
    assert!(matches!(
        marker("<!-- file: a.yaml -->"),
        Ok(Some(Marker::File(_)))
    ));
    assert!(matches!(
        marker("<!-- console: interop -->"),
        Ok(Some(Marker::Interop))
    ));
    assert!(matches!(marker("<!-- a comment -->"), Ok(None)));
    for bad in [
        "<!-- console: server -->",
        "<!-- file: /etc/passwd -->",
        "<!-- file: ../x.yaml -->",
        "<!-- files: a.yaml -->",
        "<!-- file: b.yaml from a.yaml -->",
    ] {
        assert!(marker(bad).is_err(), "{bad}");
    }
    let caption = "In `a.yaml`:\n\n";
    assert!(
        fences(&format!(
            "{caption}<!-- file: a.yaml -->\n```yaml\nx: 1\n```\n"
        ))
        .is_ok()
    );
    assert!(
        fences(&format!(
            "{caption}<!-- file: a.yaml -->\n\n```yaml\nx: 1\n```\n"
        ))
        .is_err()
    );
    assert!(
        fences(&format!(
            "{caption}<!-- file: a.yaml -->\n```json\n{{}}\n```\n"
        ))
        .is_err()
    );
    assert!(fences("<!-- console: interop -->\n```yaml\nx: 1\n```\n").is_err());
    assert!(fences("```text\n$ agenthealth version\n```\n").is_err());
    assert!(fences("```console\n$ agenthealth version\n").is_err());
}

#[test]
fn a_file_marker_needs_a_caption_naming_its_file() {
    let block = "<!-- file: a.yaml -->\n```yaml\nx: 1\n```\n";
    assert!(fences(block).is_err());
    assert!(fences(&format!("Another file, `b.yaml`:\n\n{block}")).is_err());
    // The caption is the paragraph right before, not one further up.
    assert!(fences(&format!("Save `a.yaml`.\n\nThen:\n\n{block}")).is_err());
    assert!(fences(&format!("Save it as\n`a.yaml`:\n\n{block}")).is_ok());
}

/// The programs `block`'s `agenthealth … -- PROGRAM` lines start that its `Needs:` paragraph
/// does not name (a fixture under `tests/fixtures/` needs no naming).
pub(super) fn unnamed_programs(block: &Fence) -> Vec<String> {
    block
        .body
        .iter()
        .filter(|l| l.trim_start().starts_with("agenthealth "))
        .filter_map(|l| l.split_once(" -- ").map(|(_, argv)| argv))
        .filter(|argv| !argv.contains("tests/fixtures/"))
        .filter_map(|argv| argv.split_whitespace().next())
        .filter(|program| {
            let named = format!("`{program}`");
            !block.needs.as_ref().is_some_and(|n| n.contains(&named))
        })
        .map(str::to_string)
        .collect()
}

#[test]
fn a_command_line_server_is_named_in_the_needs_paragraph_before_it() {
    let block = "```sh\nagenthealth ping mcp --stdio -- uvx srv\nagenthealth ping mcp --stdio -- python3 tests/fixtures/stdio/x.py\n```\n";
    let unnamed = |text: &str| unnamed_programs(&fences(text).unwrap()[0]);
    assert_eq!(unnamed(block), ["uvx"]);
    assert!(unnamed(&format!("Needs: `uvx` (from uv).\n\n{block}")).is_empty());
    assert_eq!(unnamed(&format!("Needs: `npx`.\n\n{block}")), ["uvx"]);
}
