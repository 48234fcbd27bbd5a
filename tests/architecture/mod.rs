//! What the source must keep, read as Rust with `syn`: the layering of `src/` that
//! docs/contributing.md's table draws (imports point one way between layers, the engine
//! reaches the adapters only through their trait, no cycle among sibling modules at any
//! level), one poison-tolerant lock helper that every mutex goes through, no production
//! function over 80 lines, and one meaning per name (no public type name defined twice, no
//! basename used more than twice). A fresh checkout needs nothing else to check them.
//!
//! The import reader collects the paths that start with `crate::`, `super::` or `self::` (in
//! `use` trees, in code, and in the tokens of macro calls and attributes, which syn does not
//! parse) and resolves each to the longest module of `src/` it names. A path through a
//! re-export counts as an import of the module that re-exports; test code (`#[cfg(test)]`
//! items, statements and variants, and the files of `#[cfg(test)]` modules) is left out,
//! because a layer's tests and its test kit import each other by design. Comments and
//! literals are not code to syn, so neither prose nor test data can trip or satisfy a rule.
//!
//! `reader`: what a file names; `layers`: the layer table and the import rules; `locks`: the
//! lock helper; `sizes`: function lengths; `names`: type names and basenames. The files of
//! `src/` are read once, here, for every rule.

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use proc_macro2::TokenStream;
use quote::ToTokens;
use syn::parse::Parser;
use syn::{Attribute, Meta};

mod layers;
mod locks;
mod names;
mod reader;
mod sizes;

use reader::{Names, names};

const ROOT: &str = env!("CARGO_MANIFEST_DIR");

// What the rules name in src/, one line each to change when a module moves.

/// The crate's poison-tolerant lock helper, and the file that defines it.
const LOCK_HELPER: &str = "agenthealth::runtime::sync::lock";
const LOCK_HELPER_FILE: &str = "src/runtime/sync.rs";
/// The test kit's copy (it cannot depend on the crate), and its file.
const KIT_LOCK_HELPER: &str = "agenthealth_testkit::lock";
const KIT_LOCK_HELPER_FILE: &str = "tests/kit/src/lib.rs";
/// The layer that knows no protocol, and the module whose sub-modules (`adapter/http_probe`,
/// `adapter/mcp`) it may not import: it reaches them through `adapter/mod.rs` only.
const ENGINE: &str = "engine";
const ADAPTERS: &str = "adapter";
/// The binary's entry point: another crate than the library, but production code too.
const MAIN: &str = "src/main.rs";

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

/// A file of `src/` that is not test code, as the rules read it.
struct Source {
    module: Module,
    path: PathBuf,
    names: Names,
}

/// `src/main.rs`, read as [`production`] reads the library's files.
fn binary() -> &'static Source {
    static MAIN_RS: OnceLock<Source> = OnceLock::new();
    MAIN_RS.get_or_init(|| {
        let path = Path::new(ROOT).join(MAIN);
        let names = names(&read(&path), &shown(&path));
        Source {
            module: Vec::new(),
            path,
            names,
        }
    })
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
