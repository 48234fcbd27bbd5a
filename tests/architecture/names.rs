//! One meaning per name: no type name defined twice in `src/` unless every definition is
//! private to its module (helpers such as `Inner` or `State` may repeat), and no file
//! basename used more than [`MAX_BASENAME_USES`] times (`mod.rs` and `tests.rs` aside), nor
//! any of [`UNIQUE_BASENAMES`] twice. Test code is left out of the first rule.

use std::collections::BTreeMap;

use super::*;

/// How many files of `src/` may share a basename.
const MAX_BASENAME_USES: usize = 2;
/// The basenames every directory module has.
const EXEMPT_BASENAMES: [&str; 2] = ["mod.rs", "tests.rs"];
/// Basenames one file at most may have: `login.rs` is one job.
const UNIQUE_BASENAMES: [&str; 1] = ["login.rs"];

#[test]
fn no_type_name_is_defined_twice_unless_every_definition_is_private() {
    let mut defined: BTreeMap<&str, Vec<String>> = BTreeMap::new();
    let mut public: Vec<&str> = Vec::new();
    for file in production().iter().chain([binary()]) {
        for t in &file.names.types {
            let visibility = if t.public {
                "visible beyond its module"
            } else {
                "private"
            };
            defined.entry(&t.name).or_default().push(format!(
                "{}:{} ({} {}, {visibility})",
                shown(&file.path),
                t.line,
                t.kind,
                t.name
            ));
            if t.public {
                public.push(&t.name);
            }
        }
    }
    let found: Vec<String> = defined
        .iter()
        .filter(|(name, at)| at.len() > 1 && public.contains(name))
        .map(|(name, at)| {
            format!(
                "`{name}` is defined {} times:\n    {}",
                at.len(),
                at.join("\n    ")
            )
        })
        .collect();
    assert!(found.is_empty(), "{}", found.join("\n"));
}

#[test]
fn no_file_basename_is_used_more_than_twice() {
    let mut uses: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for path in rust_files("src") {
        let name = path
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        uses.entry(name).or_default().push(shown(&path));
    }
    let found: Vec<String> = uses
        .iter()
        .filter(|(name, _)| !EXEMPT_BASENAMES.contains(&name.as_str()))
        .filter(|(name, at)| {
            let most = if UNIQUE_BASENAMES.contains(&name.as_str()) {
                1
            } else {
                MAX_BASENAME_USES
            };
            at.len() > most
        })
        .map(|(name, at)| format!("{name} is {} files: {}", at.len(), at.join(", ")))
        .collect();
    assert!(found.is_empty(), "{}", found.join("\n"));
}

/// Private helpers may repeat; a name visible beyond its module in any form may not.
#[test]
fn type_definitions_are_read_with_their_visibility() {
    let src = "struct A;\npub(crate) enum B {}\npub(super) type C = u8;\npub trait D {}\nfn f() { struct E; }\n#[cfg(test)]\nstruct F;\n";
    let got: Vec<(String, &str, bool)> = names(src, "test")
        .types
        .into_iter()
        .map(|t| (t.name, t.kind, t.public))
        .collect();
    let want = [
        ("A", "struct", false),
        ("B", "enum", true),
        ("C", "type", true),
        ("D", "trait", true),
        ("E", "struct", false),
    ];
    let want: Vec<(String, &str, bool)> = want
        .iter()
        .map(|(n, k, p)| (n.to_string(), *k, *p))
        .collect();
    assert_eq!(got, want);
}
