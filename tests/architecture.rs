//! What the source must keep, read as Rust with `syn`: the layering of `src/` that
//! docs/contributing.md's table draws (imports point one way between layers, the engine
//! reaches the adapters only through their trait, no cycle among sibling modules at any
//! level), and one poison-tolerant lock helper that every mutex goes through. A fresh
//! checkout needs nothing else to check them.
//!
//! The import reader collects the paths that start with `crate::`, `super::` or `self::` (in
//! `use` trees, in code, and in the tokens of macro calls and attributes, which syn does not
//! parse) and resolves each to the longest module of `src/` it names. A path through a
//! re-export counts as an import of the module that re-exports; test code (`#[cfg(test)]`
//! items, statements and variants, and the files of `#[cfg(test)]` modules) is left out,
//! because a layer's tests and its test kit import each other by design. Comments and
//! literals are not code to syn, so neither prose nor test data can trip or satisfy a rule.

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use proc_macro2::{Delimiter, Spacing, TokenStream, TokenTree};
use quote::ToTokens;
use syn::parse::Parser;
use syn::punctuated::Punctuated;
use syn::visit::{self, Visit};
use syn::{Attribute, Expr, Item, Meta};

const ROOT: &str = env!("CARGO_MANIFEST_DIR");

// What the rules name in src/, one line each to change when a module moves.

/// The crate's poison-tolerant lock helper, and the file that defines it.
const LOCK_HELPER: &str = "agenthealth::vocab::sync::lock";
const LOCK_HELPER_FILE: &str = "src/vocab/sync.rs";
/// The test kit's copy (it cannot depend on the crate), and its file.
const KIT_LOCK_HELPER: &str = "agenthealth_testkit::lock";
const KIT_LOCK_HELPER_FILE: &str = "tests/kit/src/lib.rs";
/// The layer that knows no protocol, and the module whose sub-modules (`adapter/http`,
/// `adapter/mcp`) it may not import: it reaches them through `adapter/mod.rs` only.
const ENGINE: &str = "engine";
const ADAPTERS: &str = "adapter";

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

/// `text`, parsed as a Rust file (`what` names it in the panic when it does not parse).
fn parse(text: &str, what: &str) -> syn::File {
    syn::parse_file(text).unwrap_or_else(|e| panic!("{what}:{}: {e}", e.span().start().line))
}

/// 1-based line where `span` starts.
fn line(span: proc_macro2::Span) -> usize {
    span.start().line
}

/// Whether `node`'s outer attributes hold `#[cfg(test)]` (exactly that: `cfg(all(test, …))`
/// is not test code). Read from its tokens: syn keeps the attributes in each variant.
fn cfg_test(node: &impl ToTokens) -> bool {
    let outer = |input: syn::parse::ParseStream| {
        let attrs = Attribute::parse_outer(input)?;
        input.parse::<TokenStream>()?;
        Ok(attrs)
    };
    let is_cfg_test = |attr: &Attribute| matches!(&attr.meta, Meta::List(l) if l.path.is_ident("cfg") && l.tokens.to_string() == "test");
    outer
        .parse2(node.to_token_stream())
        .is_ok_and(|attrs| attrs.iter().any(is_cfg_test))
}

/// Path roots the import reader follows.
const ROOTS: [&str; 3] = ["crate", "super", "self"];

/// Whether `trees[i..]` starts with `::`.
fn path_sep_at(trees: &[TokenTree], i: usize) -> bool {
    matches!(
        (trees.get(i), trees.get(i + 1)),
        (Some(TokenTree::Punct(a)), Some(TokenTree::Punct(b)))
            if a.as_char() == ':' && a.spacing() == Spacing::Joint && b.as_char() == ':'
    )
}

/// The `crate::…`, `super::…` and `self::…` paths in `tokens` (a macro call's input, an
/// attribute's arguments), a `{…}` after `::` read as a use tree, each with its line.
fn token_paths(tokens: TokenStream, out: &mut Vec<(Vec<String>, usize)>) {
    let trees: Vec<TokenTree> = tokens.into_iter().collect();
    let mut i = 0;
    while i < trees.len() {
        match &trees[i] {
            TokenTree::Group(group) => token_paths(group.stream(), out),
            TokenTree::Ident(root)
                if ROOTS.contains(&root.to_string().as_str())
                    && path_sep_at(&trees, i + 1)
                    && !(i >= 2 && path_sep_at(&trees, i - 2)) =>
            {
                let (paths, next) = token_path_at(&trees, i, Vec::new());
                out.extend(paths.into_iter().map(|p| (p, line(root.span()))));
                i = next;
                continue;
            }
            _ => {}
        }
        i += 1;
    }
}

/// The paths of the path starting at `trees[i]` under `prefix`, and the index after it.
fn token_path_at(
    trees: &[TokenTree],
    mut i: usize,
    mut segments: Vec<String>,
) -> (Vec<Vec<String>>, usize) {
    loop {
        match trees.get(i) {
            Some(TokenTree::Ident(ident)) => {
                segments.push(ident.to_string());
                i += 1;
            }
            Some(TokenTree::Group(group)) if group.delimiter() == Delimiter::Brace => {
                let inner: Vec<TokenTree> = group.stream().into_iter().collect();
                let paths = inner
                    .split(|t| matches!(t, TokenTree::Punct(p) if p.as_char() == ','))
                    .filter(|part| !part.is_empty())
                    .flat_map(|part| token_path_at(part, 0, segments.clone()).0)
                    .collect();
                return (paths, i + 1);
            }
            Some(TokenTree::Punct(p)) if p.as_char() == '*' => return (vec![segments], i + 1),
            _ => return (vec![segments], i),
        }
        if !path_sep_at(trees, i) {
            return (vec![segments], i);
        }
        i += 2;
    }
}

/// The paths of a `use` tree under `prefix`, leaves renamed with `as` by their own name.
fn use_paths(tree: &syn::UseTree, prefix: &[String]) -> Vec<Vec<String>> {
    let with = |ident: &syn::Ident| [prefix, &[ident.to_string()]].concat();
    match tree {
        syn::UseTree::Path(p) => use_paths(&p.tree, &with(&p.ident)),
        syn::UseTree::Name(n) => vec![with(&n.ident)],
        syn::UseTree::Rename(r) => vec![with(&r.ident)],
        syn::UseTree::Glob(_) => vec![prefix.to_vec()],
        syn::UseTree::Group(g) => g.items.iter().flat_map(|t| use_paths(t, prefix)).collect(),
    }
}

/// `visit_…` methods that skip the nodes marked `#[cfg(test)]`.
macro_rules! skip_test_code {
    ($($visit:ident($node:ty),)*) => {$(
        fn $visit(&mut self, node: &'ast $node) {
            if !cfg_test(node) {
                visit::$visit(self, node);
            }
        }
    )*};
}

/// Reads one file's [`Names`]: a syn visitor that skips test code.
#[derive(Default)]
struct Reader {
    names: Names,
    /// The inline modules (`mod tests { … }`) it is in.
    inline: Vec<String>,
}

impl Reader {
    fn reference(&mut self, segments: Vec<String>, line: usize) {
        if segments
            .first()
            .is_some_and(|s| ROOTS.contains(&s.as_str()))
        {
            self.names.refs.push(Reference {
                segments,
                inline: self.inline.clone(),
                line,
            });
        }
    }

    fn tokens(&mut self, tokens: &TokenStream) {
        let mut paths = Vec::new();
        token_paths(tokens.clone(), &mut paths);
        for (segments, line) in paths {
            self.reference(segments, line);
        }
    }
}

impl<'ast> Visit<'ast> for Reader {
    fn visit_item(&mut self, item: &'ast Item) {
        if !cfg_test(item) {
            return visit::visit_item(self, item);
        }
        // `#[cfg(test)] mod name;`: a test module in a file of its own.
        if let Item::Mod(m) = item
            && m.content.is_none()
        {
            let mut module = self.inline.clone();
            module.push(m.ident.to_string());
            self.names.test_modules.push(module);
        }
    }

    fn visit_item_mod(&mut self, m: &'ast syn::ItemMod) {
        let inline = m.content.is_some();
        if inline {
            self.inline.push(m.ident.to_string());
        }
        visit::visit_item_mod(self, m);
        if inline {
            self.inline.pop();
        }
    }

    fn visit_item_use(&mut self, u: &'ast syn::ItemUse) {
        for segments in use_paths(&u.tree, &[]) {
            self.reference(segments, line(u.use_token.span));
        }
    }

    fn visit_path(&mut self, p: &'ast syn::Path) {
        if p.leading_colon.is_none() && p.segments.len() > 1 {
            let segments = p.segments.iter().map(|s| s.ident.to_string()).collect();
            self.reference(segments, line(p.segments[0].ident.span()));
        }
        visit::visit_path(self, p);
    }

    fn visit_macro(&mut self, m: &'ast syn::Macro) {
        self.tokens(&m.tokens);
        visit::visit_macro(self, m);
    }

    fn visit_meta_list(&mut self, m: &'ast syn::MetaList) {
        self.tokens(&m.tokens);
        visit::visit_meta_list(self, m);
    }

    skip_test_code! {
        visit_stmt(syn::Stmt),
        visit_impl_item(syn::ImplItem),
        visit_trait_item(syn::TraitItem),
        visit_variant(syn::Variant),
        visit_field(syn::Field),
        visit_arm(syn::Arm),
        visit_field_value(syn::FieldValue),
    }
}

/// The names of the Rust source `text`, skipping every `#[cfg(test)]` item: the test code of
/// a layer uses its test kit, which uses the layer (a cycle only `cargo test` builds).
fn names(text: &str, what: &str) -> Names {
    let mut reader = Reader::default();
    reader.visit_file(&parse(text, what));
    reader.names
}

// ---------------------------------------------------------------------------------------
// The lock helper

/// Every mutex is locked through [`LOCK_HELPER`] (or, in the test kit, which cannot depend on
/// the crate, its copy [`KIT_LOCK_HELPER`]): no `lock()` whose poisoning is handled (or
/// ignored) on the spot — `unwrap_or_else(|p| p.into_inner())`, `.unwrap()`, `.expect(…)`,
/// `.map(…)`, `.ok()`, `?`, `if let Ok(…) = m.lock()`, `match m.lock()` — anywhere in `src/`,
/// `tests/` or `examples/` but in those helpers, macro arguments included.
/// (`stdout().lock()` and the like are not mutexes; `Condvar` waits return a guard the helper
/// cannot take, and stay as they are.)
#[test]
fn the_lock_helper_is_written_once() {
    let helpers = [LOCK_HELPER_FILE, KIT_LOCK_HELPER_FILE].map(|h| Path::new(ROOT).join(h));
    let mut found = Vec::new();
    let files = ["src", "tests", "examples"]
        .into_iter()
        .flat_map(rust_files);
    for path in files.filter(|p| !helpers.contains(p)) {
        for at in handled_locks(&read(&path), &shown(&path)) {
            found.push(format!(
                "{}:{at}: lock with {LOCK_HELPER} ({KIT_LOCK_HELPER} in the test kit)",
                shown(&path)
            ));
        }
    }
    assert!(found.is_empty(), "{}", found.join("\n"));
}

/// The lines of the Rust source `text` where a `lock()` result is handled on the spot.
fn handled_locks(text: &str, what: &str) -> Vec<usize> {
    let mut locks = Locks::default();
    locks.visit_file(&parse(text, what));
    locks.handled.sort_unstable();
    locks.handled.dedup();
    locks.handled
}

/// The line of the `lock` of `e`, when `e` is `….lock()` on something that is not
/// `stdout()`, `stderr()` or `stdin()`.
fn lock_call(e: &Expr) -> Option<usize> {
    match e {
        Expr::MethodCall(call) => lock_of(call),
        _ => None,
    }
}

/// [`lock_call`] of a method call.
fn lock_of(call: &syn::ExprMethodCall) -> Option<usize> {
    let stdio = matches!(&*call.receiver, Expr::Call(c) if matches!(&*c.func,
    Expr::Path(p) if p.path.segments.last().is_some_and(|s| {
        ["stdout", "stderr", "stdin"].contains(&s.ident.to_string().as_str())
    })));
    (call.method == "lock" && call.args.is_empty() && !stdio).then(|| line(call.method.span()))
}

/// The method calls that handle a lock's `Result` on the spot, by their name's start.
const HANDLERS: [&str; 6] = ["unwrap", "expect", "map", "ok", "is_ok", "is_err"];

/// Finds the `lock()` calls whose `Result` is handled on the spot ([`Locks::handled`]), or,
/// with `all`, every `lock()` call (inside a scrutinee).
#[derive(Default)]
struct Locks {
    all: bool,
    handled: Vec<usize>,
}

impl Locks {
    /// Every `lock()` call in `e`.
    fn all_in(e: &Expr) -> Vec<usize> {
        let mut all = Locks {
            all: true,
            handled: Vec::new(),
        };
        all.visit_expr(e);
        all.handled
    }
}

impl<'ast> Visit<'ast> for Locks {
    fn visit_expr_method_call(&mut self, call: &'ast syn::ExprMethodCall) {
        let handler = HANDLERS
            .iter()
            .any(|h| call.method.to_string().starts_with(h));
        let found = if self.all {
            lock_of(call)
        } else {
            lock_call(&call.receiver).filter(|_| handler)
        };
        self.handled.extend(found);
        visit::visit_expr_method_call(self, call);
    }

    fn visit_expr_try(&mut self, t: &'ast syn::ExprTry) {
        if let Some(at) = lock_call(&t.expr) {
            self.handled.push(at);
        }
        visit::visit_expr_try(self, t);
    }

    fn visit_expr_let(&mut self, l: &'ast syn::ExprLet) {
        let ok = matches!(&*l.pat, syn::Pat::TupleStruct(p) if p.path.is_ident("Ok"));
        if ok {
            self.handled.extend(Locks::all_in(&l.expr));
        }
        visit::visit_expr_let(self, l);
    }

    fn visit_expr_match(&mut self, m: &'ast syn::ExprMatch) {
        self.handled.extend(Locks::all_in(&m.expr));
        visit::visit_expr_match(self, m);
    }

    /// Macro arguments are code too: read as expressions (`assert!(…)`, `format!(…)`) or as
    /// statements; a macro whose input is neither has no call to find.
    fn visit_macro(&mut self, m: &'ast syn::Macro) {
        if let Ok(args) = m.parse_body_with(Punctuated::<Expr, syn::Token![,]>::parse_terminated) {
            args.iter().for_each(|e| self.visit_expr(e));
        } else if let Ok(stmts) = m.parse_body_with(syn::Block::parse_within) {
            stmts.iter().for_each(|s| self.visit_stmt(s));
        }
    }
}

#[test]
fn locks_handled_on_the_spot_are_found_in_code_and_macro_arguments_only() {
    let src = r#"
fn f(m: &Mutex<u8>) -> Result<(), E> {
    let a = m.lock().unwrap();
    let b = m.lock().unwrap_or_else(|p| p.into_inner());
    if let Ok(g) = m.lock() {}
    match m.lock() { _ => {} }
    let c = m.lock()?;
    assert!(m.lock().is_ok(), "a message");
    let fine = lock(&m);
    let out = std::io::stdout().lock();
    let s = "m.lock().unwrap()"; // m.lock().unwrap()
    /* m.lock().expect("x") */
    Ok(())
}
"#;
    assert_eq!(handled_locks(src, "test"), [3, 4, 5, 6, 7, 8]);
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

/// A file of `src/` that is not test code, as the rules read it.
struct Source {
    module: Module,
    path: PathBuf,
    names: Names,
}

/// Every file of `src/` that is not test code, read once for all the rules (parsing is most
/// of their time). Test code is left out: `#[cfg(test)]` items, and the files of modules
/// declared `#[cfg(test)] mod …;` (`tests.rs`, `testkit.rs`) with everything under them.
fn production() -> &'static [Source] {
    static FILES: OnceLock<Vec<Source>> = OnceLock::new();
    FILES.get_or_init(|| {
        let all: Vec<Source> = rust_files("src")
            .into_iter()
            .filter_map(|path| {
                let module = module_of(&path)?;
                let names = names(&read(&path), &shown(&path));
                Some(Source {
                    module,
                    path,
                    names,
                })
            })
            .collect();
        let tests: Vec<Module> = all
            .iter()
            .flat_map(|f| {
                f.names
                    .test_modules
                    .iter()
                    .map(|t| [&f.module[..], t].concat())
            })
            .collect();
        all.into_iter()
            .filter(|f| !tests.iter().any(|t| f.module.starts_with(t)))
            .collect()
    })
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

/// The reader finds `use` trees, paths in expressions and macro arguments, `super` from
/// inline modules, and nothing in comments, strings or test code.
#[test]
fn references_are_read_from_code_only() {
    let src = "use crate::{a::{b, c as d}, e::*};\nuse super::f;\nfn g() { crate::h::i(); let s = \"crate::no\"; } // crate::no\nmod tests { use super::j; use self::k; }\nfn l() { format!(\"{}\", crate::m::N); }\n#[cfg(test)]\nmod t;\n#[cfg(test)]\nfn x() { crate::no::x(); }\nfn y() {\n    #[cfg(test)]\n    crate::no::y();\n}\n";
    let read = names(src, "test");
    let refs = read.refs;
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
            "testsself::k",
            "crate::m::N",
        ]
    );
    assert_eq!(read.test_modules, [vec!["t".to_string()]]);
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
