//! The section readers: one module per mapping of the v1 configuration, each reading its
//! mapping strictly from the untyped tree.
//!
//! Each reader first rejects unknown keys (with a suggestion), then reads the fields in a fixed
//! order, then applies its cross-field rules, so the first error reported for a mapping does
//! not depend on key order. A target's dependencies are read last, after the target's own
//! fields and sections. The bounds and name rules the readers apply are [`super::rules`],
//! shared with the command line. The result is a tree of [`Decl`]s; [`super::graph`] turns it
//! into the node arena and validates references.

mod dependency;
mod functional;
mod http;
mod mcp;
mod module;
mod oauth;
mod stdio;
mod target;

use crate::config::reader::{At, Fail, KeyPath};
use crate::config::{Relationship, Target, rules};
use crate::contract::Dimension;

/// What a target's `checks` requests, which its sections' settings must serve: a setting no
/// requested dimension would read is an error rather than silently unused.
pub(super) struct Requested<'a>(Option<&'a [(Dimension, KeyPath)]>);

impl Requested<'_> {
    /// Whether the target lists its `checks` (else it runs the passive defaults).
    fn explicit(&self) -> bool {
        self.0.is_some()
    }

    /// Whether the target's `checks` lists `d`.
    fn has(&self, d: Dimension) -> bool {
        self.0.is_some_and(|c| c.iter().any(|(x, _)| *x == d))
    }
}

/// A target as declared, before the graph is assembled.
#[derive(Debug)]
pub(crate) struct Decl {
    /// The target; `dependencies` is still empty.
    pub target: Target,
    /// Where the target was declared.
    pub path: KeyPath,
    /// Where its `id` value is, when it has one.
    pub id_path: Option<KeyPath>,
    /// Its dependency entries, in order.
    pub deps: Vec<DepDecl>,
    /// Why its endpoint cannot work on any host, at the endpoint's value.
    pub unusable: Option<Fail>,
}

impl Decl {
    /// The first unusable endpoint of this declaration and its inline dependencies, in
    /// declaration order (the target, then each dependency depth-first).
    pub(crate) fn first_unusable(&self) -> Option<&Fail> {
        self.unusable.as_ref().or_else(|| {
            self.deps.iter().find_map(|d| match &d.to {
                DepTo::Inline(decl) => decl.first_unusable(),
                DepTo::Ref { .. } => None,
            })
        })
    }
}

/// One dependency entry as declared.
#[derive(Debug)]
pub(crate) struct DepDecl {
    /// `critical` (default true).
    pub critical: bool,
    /// `relationship`, if given.
    pub relationship: Option<Relationship>,
    /// Where the entry was declared.
    pub path: KeyPath,
    /// What the entry points at.
    pub to: DepTo,
}

/// The two kinds of dependency entry.
#[derive(Debug)]
pub(crate) enum DepTo {
    /// An inline target: a node of its own.
    Inline(Box<Decl>),
    /// `ref: <id>`: the node declared with that id.
    Ref {
        /// The id.
        id: String,
        /// Where the `ref` value is.
        path: KeyPath,
    },
}

pub(crate) use module::module;

/// Reads one entry of `targets`: a target with no edge of its own.
pub(crate) fn top_level_target(at: At<'_, '_>) -> Result<Decl, Fail> {
    let fields = at.map("a mapping describing a target")?;
    for key in ["critical", "relationship"] {
        if let Some(f) = fields.get(key) {
            return Err(f
                .path
                .fail_key("only allowed on dependency entries; a top-level target has no edge"));
        }
    }
    if let Some(f) = fields.get("ref") {
        return Err(f
            .path
            .fail_key("only allowed on dependency entries; a top-level entry must be a target"));
    }
    target::check_keys(&fields, &[])?;
    let mut decl = target::target(&fields)?;
    decl.deps = dependency::entries(&fields)?;
    Ok(decl)
}

/// The name of an environment variable (`auth.bearer_env`, `mcp.stdio.env` values, the
/// OAuth `*_env` keys): see [`rules::is_env_name`].
fn env_ref<'a>(at: At<'a, '_>) -> Result<&'a str, Fail> {
    let what = "the name of an environment variable";
    let s = at.nonblank(what)?;
    if !rules::is_env_name(s) {
        return Err(at.fail(format!("expected {what}; `=` and NUL are not allowed")));
    }
    Ok(s)
}

/// A string that can reach an argv, a path or an environment: no NUL byte.
fn no_nul<'a>(at: At<'a, '_>, what: &str) -> Result<&'a str, Fail> {
    let s = at.str(what)?;
    if rules::has_nul(s) {
        return Err(at.fail(format!("expected {what}; NUL is not allowed")));
    }
    Ok(s)
}
