//! What the source must keep, read as text: the layering of `src/` that
//! docs/contributing.md's table draws (imports point one way between layers, the engine
//! reaches the adapters only through their trait, no cycle among sibling modules at any
//! level), and one poison-tolerant lock helper (`src/vocab/sync.rs`) that every mutex goes
//! through. A fresh checkout needs nothing else to check them.
//!
//! The import reader is deliberately small: it collects the paths that start with `crate::`,
//! `super::` or `self::` (in `use` trees and in code) and resolves each to the longest module
//! of `src/` it names. A path through a re-export counts as an import of the module that
//! re-exports; test code (`#[cfg(test)]` items and the files of `#[cfg(test)]` modules) is
//! left out, because a layer's tests and its test kit import each other by design.
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

/// Every mutex is locked through `agenthealth::vocab::sync::lock` (or, in the test kit, which
/// cannot depend on the crate, its copy `agenthealth_testkit::lock`): no `lock()` whose
/// poisoning is handled (or ignored) on the spot — `unwrap_or_else(|p| p.into_inner())`,
/// `.unwrap()`, `.expect(…)`, `.map(…)`, `.ok()`, `if let Ok(…) = m.lock()` — anywhere in
/// `src/`, `tests/` or `examples/` but in that helper. (`stdout().lock()` and the like are
/// not mutexes; `Condvar` waits return a guard the helper cannot take, and stay as they are.)
#[test]
fn the_lock_helper_is_written_once() {
    let helpers = ["src/vocab/sync.rs", "tests/kit/src/lib.rs"].map(|h| Path::new(ROOT).join(h));
    let mut found = Vec::new();
    let files = ["src", "tests", "examples"]
        .into_iter()
        .flat_map(rust_files);
    for path in files.filter(|p| !helpers.contains(p)) {
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

// ---------------------------------------------------------------------------------------
// Layering

/// A module of the crate, by its path (`["adapter", "mcp", "session"]`; the crate root is
/// empty): `src/a/b.rs` and `src/a/b/mod.rs` are both `a::b`.
type Module = Vec<String>;

/// The module a file under `src/` is, or `None` for `main.rs` (the binary: another crate).
fn module_of(path: &Path) -> Option<Module> {
    let rel = path.strip_prefix(Path::new(ROOT).join("src")).ok()?;
    let mut parts: Module = rel
        .with_extension("")
        .components()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect();
    match parts.last().map(String::as_str) {
        Some("main") if parts.len() == 1 => return None,
        Some("mod") | Some("lib") => {
            parts.pop();
        }
        _ => {}
    }
    Some(parts)
}

/// A token of [`code`]: an identifier, `::`, or any other character.
#[derive(Clone, Debug, PartialEq)]
enum Token {
    Ident(String),
    PathSep,
    Other(char),
}

/// The tokens of `code` with their 1-based lines.
fn tokens(code: &str) -> Vec<(Token, usize)> {
    let chars: Vec<char> = code.chars().collect();
    let mut out = Vec::new();
    let mut line = 1;
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        if c == '\n' {
            line += 1;
            i += 1;
        } else if c.is_whitespace() {
            i += 1;
        } else if c.is_alphabetic() || c == '_' {
            let start = i;
            while i < chars.len() && (chars[i].is_alphanumeric() || chars[i] == '_') {
                i += 1;
            }
            out.push((Token::Ident(chars[start..i].iter().collect()), line));
        } else if c == ':' && chars.get(i + 1) == Some(&':') {
            out.push((Token::PathSep, line));
            i += 2;
        } else {
            out.push((Token::Other(c), line));
            i += 1;
        }
    }
    out
}

/// One path a module names: its segments as written (`crate`/`super`/`self` first) and the
/// inline module it was written in (`mod tests { … }`), whose `super` is the file's module.
#[derive(Debug)]
struct Reference {
    segments: Vec<String>,
    inline: Vec<String>,
    line: usize,
}

/// What one file names, outside its test code.
#[derive(Debug, Default)]
struct Names {
    /// Every path starting with `crate::`, `super::` or `self::`, a `use` tree
    /// (`use crate::{a::{b, c}, d}`) giving one path per leaf.
    refs: Vec<Reference>,
    /// The modules it declares `#[cfg(test)] mod name;` (in files of their own), relative to
    /// it: `["tests"]`, or `["inline", "tests"]` inside `mod inline { … }`.
    test_modules: Vec<Vec<String>>,
}

/// The names of `code`, skipping every `#[cfg(test)]` item: the test code of a layer uses its
/// test kit, which uses the layer (a cycle only `cargo test` builds).
fn names(code: &str) -> Names {
    let toks = tokens(code);
    let ident = |i: usize| match toks.get(i) {
        Some((Token::Ident(s), _)) => Some(s.as_str()),
        _ => None,
    };
    let is = |i: usize, t: &Token| toks.get(i).is_some_and(|(x, _)| x == t);
    let cfg_test = |i: usize| {
        let want = ["#", "[", "cfg", "(", "test", ")", "]"];
        want.iter().enumerate().all(|(k, w)| match toks.get(i + k) {
            Some((Token::Ident(s), _)) => s == w,
            Some((Token::Other(c), _)) => w.len() == 1 && w.starts_with(*c),
            _ => false,
        })
    };
    let mut out = Names::default();
    // Inline modules open: name and the brace depth inside them.
    let mut inline: Vec<(String, usize)> = Vec::new();
    let mut depth = 0usize;
    let mut i = 0;
    while i < toks.len() {
        match &toks[i].0 {
            Token::Other('#') if cfg_test(i) => {
                let mut j = i + 7;
                // Further attributes, then the item: to its `;`, or its braces' end.
                while is(j, &Token::Other('#')) {
                    j = skip_group(&toks, j + 1, '[', ']');
                }
                // `#[cfg(test)] [pub[(…)]] mod name;`: a test module in a file of its own.
                let mut k = j;
                if ident(k) == Some("pub") {
                    k += 1;
                    if is(k, &Token::Other('(')) {
                        k = skip_group(&toks, k, '(', ')');
                    }
                }
                if let (Some("mod"), Some(name), true) =
                    (ident(k), ident(k + 1), is(k + 2, &Token::Other(';')))
                {
                    let mut m: Vec<String> = inline.iter().map(|(n, _)| n.clone()).collect();
                    m.push(name.to_string());
                    out.test_modules.push(m);
                }
                while j < toks.len() {
                    match toks[j].0 {
                        Token::Other(';') => {
                            j += 1;
                            break;
                        }
                        Token::Other('{') => {
                            j = skip_group(&toks, j, '{', '}');
                            break;
                        }
                        _ => j += 1,
                    }
                }
                i = j;
                continue;
            }
            Token::Other('{') => depth += 1,
            Token::Other('}') => {
                depth = depth.saturating_sub(1);
                if inline.last().is_some_and(|(_, d)| *d > depth) {
                    inline.pop();
                }
            }
            Token::Ident(m) if m == "mod" => {
                if let (Some(name), true) = (ident(i + 1), is(i + 2, &Token::Other('{'))) {
                    inline.push((name.to_string(), depth + 1));
                }
            }
            Token::Ident(start)
                if ["crate", "super", "self"].contains(&start.as_str())
                    && is(i + 1, &Token::PathSep)
                    && !(i > 0 && is(i - 1, &Token::PathSep)) =>
            {
                let line = toks[i].1;
                let (paths, next) = use_tree(&toks, i, Vec::new());
                let names: Vec<String> = inline.iter().map(|(n, _)| n.clone()).collect();
                out.refs.extend(paths.into_iter().map(|segments| Reference {
                    segments,
                    inline: names.clone(),
                    line,
                }));
                i = next;
                continue;
            }
            _ => {}
        }
        i += 1;
    }
    out
}

/// The index after the group opening with `open` at `i` (nested groups included).
fn skip_group(toks: &[(Token, usize)], mut i: usize, open: char, close: char) -> usize {
    let mut depth = 0usize;
    while let Some((t, _)) = toks.get(i) {
        i += 1;
        match t {
            Token::Other(c) if *c == open => depth += 1,
            Token::Other(c) if *c == close => {
                depth = depth.saturating_sub(1);
                if depth == 0 {
                    break;
                }
            }
            _ => {}
        }
    }
    i
}

/// The paths of the path or `use` tree at `i` under `prefix`, and the index after it.
fn use_tree(
    toks: &[(Token, usize)],
    mut i: usize,
    prefix: Vec<String>,
) -> (Vec<Vec<String>>, usize) {
    let mut segments = prefix;
    loop {
        match toks.get(i).map(|(t, _)| t) {
            Some(Token::Ident(s)) => {
                segments.push(s.clone());
                i += 1;
            }
            Some(Token::Other('*')) => return (vec![segments], i + 1),
            Some(Token::Other('{')) => {
                let mut paths = Vec::new();
                i += 1;
                while let Some((t, _)) = toks.get(i) {
                    match t {
                        Token::Other('}') => return (paths, i + 1),
                        Token::Other(',') => i += 1,
                        _ => {
                            let (more, next) = use_tree(toks, i, segments.clone());
                            paths.extend(more);
                            // Never stuck on a token a tree cannot start with.
                            i = next.max(i + 1);
                        }
                    }
                }
                return (paths, i);
            }
            _ => return (vec![segments], i),
        }
        if toks.get(i).map(|(t, _)| t) == Some(&Token::PathSep) {
            i += 1;
        } else {
            // `as name` renames the leaf; the path stays.
            if matches!(toks.get(i), Some((Token::Ident(a), _)) if a == "as") {
                i += 2;
            }
            return (vec![segments], i);
        }
    }
}

/// The longest module in `modules` that `r`, written in `here`, names; `None` for a path
/// that names no module of the crate (it cannot: `crate::` always does, at least the root).
fn resolve(modules: &[Module], here: &Module, r: &Reference) -> Option<Module> {
    let mut full: Module = Vec::new();
    let mut segments = r.segments.iter().peekable();
    match segments.peek().map(|s| s.as_str()) {
        Some("crate") => {
            segments.next();
        }
        _ => {
            full = here.iter().chain(&r.inline).cloned().collect();
            while let Some(s) = segments.peek() {
                match s.as_str() {
                    "super" => {
                        full.pop();
                    }
                    "self" => {}
                    _ => break,
                }
                segments.next();
            }
        }
    }
    full.extend(segments.filter(|s| *s != "self").cloned());
    (0..=full.len())
        .rev()
        .map(|n| full[..n].to_vec())
        .find(|m| modules.contains(m))
}

/// An import of one module by another, where it is first written.
#[derive(Debug)]
struct Edge {
    from: Module,
    to: Module,
    at: String,
}

/// Every module of `src/` that is not test code, and every edge between two of them. Test
/// code is left out: `#[cfg(test)]` items, and the files of modules declared
/// `#[cfg(test)] mod …;` (`tests.rs`, `testkit.rs`) with everything under them.
fn edges() -> (Vec<Module>, Vec<Edge>) {
    let all: Vec<(Module, PathBuf, Names)> = rust_files("src")
        .into_iter()
        .filter_map(|p| module_of(&p).map(|m| (m, p)))
        .map(|(m, p)| {
            let names = names(&code(&read(&p)));
            (m, p, names)
        })
        .collect();
    let tests: Vec<Module> = all
        .iter()
        .flat_map(|(m, _, n)| n.test_modules.iter().map(move |t| [&m[..], t].concat()))
        .collect();
    let files: Vec<&(Module, PathBuf, Names)> = all
        .iter()
        .filter(|(m, _, _)| !tests.iter().any(|t| m.starts_with(t)))
        .collect();
    let modules: Vec<Module> = files.iter().map(|(m, _, _)| m.clone()).collect();
    let mut edges: Vec<Edge> = Vec::new();
    for (here, path, names) in files {
        for r in &names.refs {
            let Some(to) = resolve(&modules, here, r) else {
                continue;
            };
            if to != *here && !edges.iter().any(|e| e.from == *here && e.to == to) {
                edges.push(Edge {
                    from: here.clone(),
                    to,
                    at: format!("{}:{}", shown(path), r.line),
                });
            }
        }
    }
    (modules, edges)
}

/// `a::b` as `src/a/b`, the crate root as `lib.rs`.
fn name(m: &[String]) -> String {
    if m.is_empty() {
        "lib.rs".into()
    } else {
        format!("src/{}", m.join("/"))
    }
}

/// A top-level module's name in the layer table: `vocab`, `exit`, `lib` (the crate root).
fn top(m: &[String]) -> String {
    m.first().map_or_else(|| "lib".into(), String::clone)
}

/// One row of docs/contributing.md's layer table: the modules it names and what they may
/// import (`None`: everything).
#[derive(Debug)]
struct Layer {
    modules: Vec<String>,
    may_import: Option<Vec<String>>,
}

/// The modules in backticks of a table cell, as [`top`] names them (`exit.rs` is `exit`).
fn ticked(cell: &str) -> Vec<String> {
    cell.split('`')
        .skip(1)
        .step_by(2)
        .map(|m| m.strip_suffix(".rs").unwrap_or(m).to_string())
        .collect()
}

/// `text` without what is in parentheses (the table's remarks: ``(`TargetPlan`)``).
fn outside_parentheses(text: &str) -> String {
    let mut depth = 0usize;
    text.chars()
        .filter(|c| {
            match c {
                '(' => depth += 1,
                ')' => depth = depth.saturating_sub(1),
                _ => return depth == 0,
            }
            false
        })
        .collect()
}

/// The layer table of docs/contributing.md §Architecture, bottom layer first: each row's
/// modules in backticks in the first column; in the last, `everything`, `nothing of the
/// crate`, or the modules it may import in backticks, remarks in parentheses left out.
fn layers() -> Vec<Layer> {
    let doc = read(&Path::new(ROOT).join("docs/contributing.md"));
    let section = doc
        .split("\n## Architecture\n")
        .nth(1)
        .and_then(|s| s.split("\n## ").next())
        .unwrap_or_else(|| panic!("docs/contributing.md has no ## Architecture section"));
    let rows: Vec<Layer> = section
        .lines()
        .skip_while(|l| !l.starts_with("| Layer |"))
        .skip(2)
        .take_while(|l| l.starts_with('|'))
        .map(|row| {
            let cells: Vec<&str> = row.split('|').map(str::trim).collect();
            let may = cells.get(3).copied().unwrap_or_default();
            Layer {
                modules: ticked(cells.get(1).copied().unwrap_or_default()),
                may_import: match may {
                    "everything" => None,
                    "nothing of the crate" => Some(Vec::new()),
                    _ => Some(ticked(&outside_parentheses(may))),
                },
            }
        })
        .collect();
    assert!(
        rows.len() > 5,
        "no layer table in docs/contributing.md: {rows:?}"
    );
    rows
}

/// The row of `top` in `layers`.
fn row_of(layers: &[Layer], top: &str) -> Option<usize> {
    layers
        .iter()
        .position(|l| l.modules.iter().any(|m| m == top))
}

/// The table is a layering: every top-level module of `src/` is in one row, every row names
/// modules that exist, and a row may import only rows listed before it.
#[test]
fn the_layer_table_names_every_module_once_in_order() {
    let (modules, _) = edges();
    let layers = layers();
    let mut problems = Vec::new();
    let mut tops: Vec<String> = modules.iter().map(|m| top(m)).collect();
    tops.sort();
    tops.dedup();
    for t in &tops {
        let rows = layers.iter().filter(|l| l.modules.contains(t)).count();
        if rows != 1 {
            problems.push(format!("`{t}` is in {rows} rows of the layer table"));
        }
    }
    for (i, layer) in layers.iter().enumerate() {
        for m in &layer.modules {
            if !tops.contains(m) {
                problems.push(format!(
                    "the layer table names `{m}`, which src/ does not have"
                ));
            }
        }
        for m in layer.may_import.iter().flatten() {
            match row_of(&layers, m) {
                Some(j) if j < i => {}
                Some(_) => problems.push(format!(
                    "the row of {:?} may import `{m}`, which is not below it",
                    layer.modules
                )),
                None => problems.push(format!(
                    "the row of {:?} may import `{m}`, which is in no row",
                    layer.modules
                )),
            }
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

/// Each import between top-level modules is one the table allows: never from a layer to one
/// above it, never to a lower layer its row does not list.
#[test]
fn imports_between_layers_follow_the_table() {
    let (_, edges) = edges();
    let layers = layers();
    let mut problems = Vec::new();
    for e in &edges {
        let (from, to) = (top(&e.from), top(&e.to));
        if from == to {
            continue;
        }
        let (Some(i), Some(j)) = (row_of(&layers, &from), row_of(&layers, &to)) else {
            problems.push(format!(
                "{}: `{from}` or `{to}` is in no row of the table",
                e.at
            ));
            continue;
        };
        let listed = layers[i]
            .may_import
            .as_ref()
            .is_none_or(|may| may.contains(&to));
        if j > i || (j == i && layers[i].may_import.is_some()) {
            problems.push(format!(
                "{}: {} imports {}, which is above it in docs/contributing.md's layer order",
                e.at,
                name(&e.from),
                name(&e.to)
            ));
        } else if !listed {
            problems.push(format!(
                "{}: {} imports {}, which its row of docs/contributing.md's layer table does not list",
                e.at,
                name(&e.from),
                name(&e.to)
            ));
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

/// No cycle among sibling modules at any level: the children of one directory (the files
/// and sub-directories of `src/adapter/mcp`, say) import each other one way only; a file's
/// imports of its directory's `mod.rs` do not count, the directory is not its sibling.
#[test]
fn no_sibling_modules_import_each_other_in_a_cycle() {
    let (modules, edges) = edges();
    let mut parents: Vec<Module> = modules
        .iter()
        .filter(|m| !m.is_empty())
        .map(|m| m[..m.len() - 1].to_vec())
        .collect();
    parents.sort();
    parents.dedup();
    let mut problems = Vec::new();
    for parent in &parents {
        let n = parent.len();
        // Child → children it imports, and where.
        let mut graph: Vec<(String, String, &str)> = Vec::new();
        for e in &edges {
            if e.from.len() > n
                && e.to.len() > n
                && e.from[..n] == parent[..]
                && e.to[..n] == parent[..]
                && e.from[n] != e.to[n]
            {
                graph.push((e.from[n].clone(), e.to[n].clone(), &e.at));
            }
        }
        for cycle in cycles(&graph) {
            let how: Vec<String> = graph
                .iter()
                .filter(|(a, b, _)| cycle.contains(a) && cycle.contains(b))
                .map(|(a, b, at)| format!("    {a} -> {b} ({at})"))
                .collect();
            problems.push(format!(
                "cycle in {}/: {}\n{}",
                if parent.is_empty() {
                    "src".into()
                } else {
                    name(parent)
                },
                cycle.join(" <-> "),
                how.join("\n")
            ));
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

/// The strongly connected sets of more than one node of `graph` (`from`, `to`, where), each
/// sorted, found by mutual reachability (the graphs are a few dozen nodes).
fn cycles(graph: &[(String, String, &str)]) -> Vec<Vec<String>> {
    fn reachable<'g>(graph: &'g [(String, String, &str)], from: &'g str) -> Vec<&'g str> {
        let mut seen: Vec<&str> = vec![from];
        let mut todo = vec![from];
        while let Some(n) = todo.pop() {
            for (a, b, _) in graph {
                if a == n && !seen.contains(&b.as_str()) {
                    seen.push(b);
                    todo.push(b);
                }
            }
        }
        seen
    }
    let mut nodes: Vec<&str> = graph.iter().map(|(a, _, _)| a.as_str()).collect();
    nodes.sort_unstable();
    nodes.dedup();
    let mut found: Vec<Vec<String>> = Vec::new();
    for n in &nodes {
        let from_n = reachable(graph, n);
        let mut set: Vec<String> = nodes
            .iter()
            .filter(|m| from_n.contains(m) && reachable(graph, m).contains(n))
            .map(|m| m.to_string())
            .collect();
        set.sort();
        if set.len() > 1 && !found.contains(&set) {
            found.push(set);
        }
    }
    found
}

/// The engine knows no protocol: it reaches the adapters only through `src/adapter/mod.rs`
/// (the `Adapter` trait and the registry), never `adapter/http` or `adapter/mcp`.
#[test]
fn the_engine_reaches_adapters_only_through_their_trait() {
    let (_, edges) = edges();
    let found: Vec<String> = edges
        .iter()
        .filter(|e| e.from.first().is_some_and(|t| t == "engine"))
        .filter(|e| e.to.first().is_some_and(|t| t == "adapter") && e.to.len() > 1)
        .map(|e| format!("{}: {} imports {}", e.at, name(&e.from), name(&e.to)))
        .collect();
    assert!(found.is_empty(), "{}", found.join("\n"));
}

/// The reader finds `use` trees, paths in expressions, `super` from inline modules and
/// nothing in comments or strings.
#[test]
fn references_are_read_from_code_only() {
    let src = "use crate::{a::{b, c as d}, e::*};\nuse super::f;\nfn g() { crate::h::i(); let s = \"crate::no\"; } // crate::no\nmod tests { use super::j; use self::k; }\n";
    let refs = names(&code(src)).refs;
    let got: Vec<String> = refs
        .iter()
        .map(|r| format!("{}{}", r.inline.join("/"), r.segments.join("::")))
        .collect();
    assert_eq!(
        got,
        [
            "crate::a::b",
            "crate::a::c",
            "crate::e",
            "super::f",
            "crate::h::i",
            "testssuper::j",
            "testsself::k"
        ]
    );
    let modules: Vec<Module> = [&[][..], &["x"], &["x", "y"], &["x", "z"]]
        .iter()
        .map(|m| m.iter().map(|s| s.to_string()).collect())
        .collect();
    let here: Module = vec!["x".into(), "y".into()];
    let to = |i: usize| resolve(&modules, &here, &refs[i]).map(|m| m.join("::"));
    assert_eq!(to(3), Some("x".into()), "a file's super is its directory");
    assert_eq!(
        to(5),
        Some("x::y".into()),
        "an inline module's super is its file"
    );
}
