//! The layering of `src/` that docs/contributing.md's table draws: imports point one way
//! between layers, the engine reaches the adapters only through their trait, and no cycle
//! among sibling modules at any level.

use super::reader::Reference;
use super::*;

/// The longest module in `modules` that `r`, written in `here`, names; `None` for a path
/// that names no module of the crate (it cannot: `crate::` always does, at least the root).
pub(super) fn resolve(modules: &[Module], here: &Module, r: &Reference) -> Option<Module> {
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

/// Every module of `src/` that is not test code, and every edge between two of them.
fn edges() -> (Vec<Module>, Vec<Edge>) {
    let files = production();
    let modules: Vec<Module> = files.iter().map(|f| f.module.clone()).collect();
    let mut edges: Vec<Edge> = Vec::new();
    for file in files {
        let here = &file.module;
        for r in &file.names.refs {
            let Some(to) = resolve(&modules, here, r) else {
                continue;
            };
            if to != *here && !edges.iter().any(|e| e.from == *here && e.to == to) {
                edges.push(Edge {
                    from: here.clone(),
                    to,
                    at: format!("{}:{}", shown(&file.path), r.line),
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

/// A top-level module's name in the layer table: `contract`, `exit`, `lib` (the crate root).
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

/// The engine ([`ENGINE`]) knows no protocol: it reaches the adapters only through
/// `src/adapter/mod.rs` (the `Adapter` trait and the registry, [`ADAPTERS`]), never
/// `adapter/http` or `adapter/mcp`.
#[test]
fn the_engine_reaches_adapters_only_through_their_trait() {
    let (_, edges) = edges();
    let found: Vec<String> = edges
        .iter()
        .filter(|e| e.from.first().is_some_and(|t| t == ENGINE))
        .filter(|e| e.to.first().is_some_and(|t| t == ADAPTERS) && e.to.len() > 1)
        .map(|e| format!("{}: {} imports {}", e.at, name(&e.from), name(&e.to)))
        .collect();
    assert!(found.is_empty(), "{}", found.join("\n"));
}
