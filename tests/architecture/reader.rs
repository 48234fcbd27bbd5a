//! What one file names: the `crate::`, `super::` and `self::` paths of its code (use trees,
//! paths, and the tokens of macro calls and attributes), and its `#[cfg(test)]` modules, test
//! code skipped.

use proc_macro2::{Delimiter, Spacing, TokenStream, TokenTree};
use syn::Item;
use syn::visit::{self, Visit};

use super::*;

/// One path a module names: its segments as written (`crate`/`super`/`self` first) and the
/// inline module it was written in (`mod tests { … }`), whose `super` is the file's module.
#[derive(Debug)]
pub(super) struct Reference {
    pub(super) segments: Vec<String>,
    pub(super) inline: Vec<String>,
    pub(super) line: usize,
}

/// What one file names, outside its test code.
#[derive(Debug, Default)]
pub(super) struct Names {
    /// Every path starting with `crate::`, `super::` or `self::`, a `use` tree
    /// (`use crate::{a::{b, c}, d}`) giving one path per leaf.
    pub(super) refs: Vec<Reference>,
    /// The modules it declares `#[cfg(test)] mod name;` (in files of their own), relative to
    /// it: `["tests"]`, or `["inline", "tests"]` inside `mod inline { … }`.
    pub(super) test_modules: Vec<Vec<String>>,
    /// Every function with a body (free, in an `impl`, a trait's default), outside test code.
    pub(super) functions: Vec<Function>,
    /// Every struct, enum, union, type alias and trait it defines, outside test code.
    pub(super) types: Vec<TypeDef>,
}

/// A function: its name and the lines from `fn` to its closing brace.
#[derive(Debug)]
pub(super) struct Function {
    pub(super) name: String,
    pub(super) first: usize,
    pub(super) last: usize,
}

/// A type definition: its name, its kind (`struct`, `enum`, …), its line, and whether it is
/// visible beyond its module (`pub` in any form).
#[derive(Debug)]
pub(super) struct TypeDef {
    pub(super) name: String,
    pub(super) kind: &'static str,
    pub(super) line: usize,
    pub(super) public: bool,
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

    fn function(&mut self, sig: &syn::Signature, body: &syn::Block) {
        self.names.functions.push(Function {
            name: sig.ident.to_string(),
            first: line(sig.fn_token.span),
            last: body.brace_token.span.close().end().line,
        });
    }

    fn type_def(&mut self, ident: &syn::Ident, vis: &syn::Visibility, kind: &'static str) {
        self.names.types.push(TypeDef {
            name: ident.to_string(),
            kind,
            line: line(ident.span()),
            public: !matches!(vis, syn::Visibility::Inherited),
        });
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

    fn visit_item_fn(&mut self, f: &'ast syn::ItemFn) {
        self.function(&f.sig, &f.block);
        visit::visit_item_fn(self, f);
    }

    fn visit_impl_item_fn(&mut self, f: &'ast syn::ImplItemFn) {
        self.function(&f.sig, &f.block);
        visit::visit_impl_item_fn(self, f);
    }

    fn visit_trait_item_fn(&mut self, f: &'ast syn::TraitItemFn) {
        if let Some(body) = &f.default {
            self.function(&f.sig, body);
        }
        visit::visit_trait_item_fn(self, f);
    }

    fn visit_item_struct(&mut self, i: &'ast syn::ItemStruct) {
        self.type_def(&i.ident, &i.vis, "struct");
        visit::visit_item_struct(self, i);
    }

    fn visit_item_enum(&mut self, i: &'ast syn::ItemEnum) {
        self.type_def(&i.ident, &i.vis, "enum");
        visit::visit_item_enum(self, i);
    }

    fn visit_item_union(&mut self, i: &'ast syn::ItemUnion) {
        self.type_def(&i.ident, &i.vis, "union");
        visit::visit_item_union(self, i);
    }

    fn visit_item_type(&mut self, i: &'ast syn::ItemType) {
        self.type_def(&i.ident, &i.vis, "type");
        visit::visit_item_type(self, i);
    }

    fn visit_item_trait(&mut self, i: &'ast syn::ItemTrait) {
        self.type_def(&i.ident, &i.vis, "trait");
        visit::visit_item_trait(self, i);
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
pub(super) fn names(text: &str, what: &str) -> Names {
    let mut reader = Reader::default();
    reader.visit_file(&parse(text, what));
    reader.names
}

/// The reader finds `use` trees, paths in expressions and macro arguments, `super` from
/// inline modules, and nothing in comments, strings or test code.
#[test]
fn references_are_read_from_code_only() {
    use super::layers::resolve;
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
