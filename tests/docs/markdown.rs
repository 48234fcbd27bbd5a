//! What the harness reads in a document: fenced blocks, and the markers (HTML comments) that
//! give them files, real servers or a browser.

/// What the harness reads in a document, in document order.
pub(super) enum Item {
    /// A fenced block.
    Fence(Fence),
    /// ``<!-- file: NAME from BASE: `OLD` => `NEW` -->``, a line of its own.
    Derived {
        line: usize,
        name: String,
        base: String,
        old: String,
        new: String,
    },
}

/// A fenced block: its info string, the marker on the line before it, its first line's
/// number (1-based, the opening fence) and its lines.
pub(super) struct Fence {
    pub(super) info: String,
    pub(super) marker: Option<Marker>,
    pub(super) line: usize,
    pub(super) body: Vec<String>,
}

/// A fence's text, with a final newline.
pub(super) fn item_text(item: &Item) -> String {
    match item {
        Item::Fence(fence) => {
            let mut text = fence.body.join("\n");
            text.push('\n');
            text
        }
        Item::Derived { .. } => String::new(),
    }
}

/// A harness marker: an HTML comment on a line of its own.
#[derive(Debug)]
pub(super) enum Marker {
    /// `<!-- file: NAME -->`, right before a `yaml` block.
    File(String),
    /// ``<!-- file: NAME from BASE: `OLD` => `NEW` -->``, on its own.
    Derived {
        name: String,
        base: String,
        old: String,
        new: String,
    },
    /// `<!-- console: interop -->`, right before a `console` block.
    Interop,
    /// `<!-- console: browser -->`, right before a `console` block.
    Browser,
}

/// The fenced blocks and derived files of `text`, with the markers checked: `file:` and
/// `console:` markers must be followed at once by the kind of block they apply to, and `$ `
/// lines may only appear in console blocks.
pub(super) fn items(text: &str) -> Result<Vec<Item>, String> {
    let mut out = Vec::new();
    let mut lines = text.lines().enumerate().map(|(i, l)| (i + 1, l));
    // The marker on the line before, waiting for its block.
    let mut pending: Option<(usize, Marker)> = None;
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
            out.push(Item::Fence(Fence {
                info,
                marker,
                line: n,
                body,
            }));
            continue;
        }
        if let Some((at, m)) = pending.take() {
            return Err(format!("{at}: {m:?} is not followed by its block"));
        }
        match marker(line).map_err(|e| format!("{n}: {e}"))? {
            Some(Marker::Derived {
                name,
                base,
                old,
                new,
            }) => out.push(Item::Derived {
                line: n,
                name,
                base,
                old,
                new,
            }),
            Some(m) => pending = Some((n, m)),
            None => {}
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
    if let Some(spec) = inner.strip_prefix("file:") {
        let spec = spec.trim();
        let Some((name, derived)) = spec.split_once(" from ") else {
            return file_name(spec).map(|name| Some(Marker::File(name)));
        };
        let bad = || format!("expected <!-- file: NAME from BASE: `OLD` => `NEW` -->: {line}");
        let (base, change) = derived.split_once(':').ok_or_else(bad)?;
        let (old, new) = change.split_once("=>").ok_or_else(bad)?;
        let ticked = |s: &str| {
            s.trim()
                .strip_prefix('`')
                .and_then(|s| s.strip_suffix('`'))
                .map(str::to_string)
        };
        let (old, new) = (ticked(old).ok_or_else(bad)?, ticked(new).ok_or_else(bad)?);
        if old.is_empty() {
            return Err(bad());
        }
        Ok(Some(Marker::Derived {
            name: file_name(name.trim())?,
            base: file_name(base.trim())?,
            old,
            new,
        }))
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
    match marker("<!-- file: b.yaml from a.yaml: `x: '{\"k\": 1}'` => `x: '{}'` -->") {
        Ok(Some(Marker::Derived {
            name,
            base,
            old,
            new,
        })) => {
            assert_eq!((name.as_str(), base.as_str()), ("b.yaml", "a.yaml"));
            assert_eq!((old.as_str(), new.as_str()), ("x: '{\"k\": 1}'", "x: '{}'"));
        }
        other => panic!("{other:?}"),
    }
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
        "<!-- file: b.yaml from a.yaml: x => y -->",
    ] {
        assert!(marker(bad).is_err(), "{bad}");
    }
    assert!(items("<!-- file: a.yaml -->\n\n```yaml\nx: 1\n```\n").is_err());
    assert!(items("<!-- file: a.yaml -->\n```json\n{}\n```\n").is_err());
    assert!(items("<!-- console: interop -->\n```yaml\nx: 1\n```\n").is_err());
    assert!(items("```text\n$ agenthealth version\n```\n").is_err());
    assert!(items("```console\n$ agenthealth version\n").is_err());
    assert!(items("<!-- file: a.yaml -->\n```yaml\nx: 1\n```\n<!-- file: b.yaml from a.yaml: `1` => `2` -->\n").is_ok());
}
