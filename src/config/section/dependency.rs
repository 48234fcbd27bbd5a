//! A target's `dependencies`: each entry is an inline target with its edge (`critical`,
//! `relationship`), or a `ref` to a target declared elsewhere with an id.

use super::{DepDecl, DepTo, target};
use crate::config::reader::{At, Fail, Fields};
use crate::config::{Relationship, rules};

/// Keys an inline dependency entry has besides the target's: its edge.
const EDGE_KEYS: &[&str] = &["critical", "relationship"];
/// Keys of a `ref` dependency entry.
const REF_KEYS: &[&str] = &["ref", "critical", "relationship"];

/// The entries of the target mapping's `dependencies` list, in order (none when absent).
/// Inline targets read their own dependencies here too, so nesting is read depth first.
pub(super) fn entries(fields: &Fields<'_>) -> Result<Vec<DepDecl>, Fail> {
    let Some(f) = fields.get("dependencies") else {
        return Ok(Vec::new());
    };
    let mut deps = Vec::new();
    for (path, node) in f.at().list("a list of dependency entries")? {
        deps.push(dependency(At { node, path: &path })?);
    }
    Ok(deps)
}

/// Reads one entry of a `dependencies` list: an inline target or a `ref`.
fn dependency(at: At<'_, '_>) -> Result<DepDecl, Fail> {
    let fields = at.map("a mapping describing a dependency (a target or a `ref`)")?;
    if let Some(r) = fields.get("ref") {
        if let Some(extra) = fields.fields.iter().find(|f| !REF_KEYS.contains(&f.name)) {
            return Err(extra.path.fail_key(
                "not allowed in a `ref` entry; expected only ref, critical, relationship",
            ));
        }
        let id = r.at().str("the id of a target")?.to_string();
        let (critical, relationship) = edge(&fields)?;
        return Ok(DepDecl {
            critical,
            relationship,
            path: fields.path.clone(),
            to: DepTo::Ref {
                id,
                path: r.path.clone(),
            },
        });
    }
    target::check_keys(&fields, EDGE_KEYS)?;
    let (critical, relationship) = edge(&fields)?;
    let mut decl = target::target(&fields)?;
    decl.deps = entries(&fields)?;
    Ok(DepDecl {
        critical,
        relationship,
        path: fields.path.clone(),
        to: DepTo::Inline(Box::new(decl)),
    })
}

/// `critical` (default true) and `relationship` of a dependency entry.
fn edge(fields: &Fields<'_>) -> Result<(bool, Option<Relationship>), Fail> {
    let critical = match fields.get("critical") {
        Some(f) => f.at().bool()?,
        None => true,
    };
    let relationship = match fields.get("relationship") {
        Some(f) => {
            let names: Vec<&str> = Relationship::ALL.iter().map(|r| r.as_str()).collect();
            let s = f.at().str("a relationship")?;
            let found = Relationship::ALL.into_iter().find(|r| r.as_str() == s);
            Some(found.ok_or_else(|| f.path.fail(rules::unknown("relationship", &names, s)))?)
        }
        None => None,
    };
    Ok((critical, relationship))
}
