//! The dependency graph: from declared targets to the node arena, validated.
//!
//! Every top-level target and every inline dependency becomes a node of its own, in
//! declaration order (pre-order: a target, then its inline dependencies). A `ref` entry adds an
//! edge to the node declared with that id, wherever it was declared. Then, before any probe
//! could run:
//!
//! 1. ids are unique across the file (checked in declaration order);
//! 2. every `ref` resolves, and never to the target that declares it;
//! 3. there is no cycle (the message names it: `cycle: a → b → a`);
//! 4. no root's expanded tree is deeper than [`MAX_DEPTH`] edges;
//! 5. the expanded trees of all roots together have at most [`MAX_PROJECTIONS`] entries (each
//!    visit of a shared node counts, as it appears once per reference in the results).
//!
//! The walks are iterative, so a long chain of references cannot overflow the stack, and
//! sizes are computed once per node (memoised), so a graph whose expansion is exponential is
//! measured in linear time.

use std::collections::HashMap;

use super::reader::{Fail, KeyPath};
use super::section::{Decl, DepTo};
use super::{Config, Edge, NodeId, Relationship, Target};
use crate::text::suggest;

/// Deepest allowed expanded tree, in edges from a top-level target.
pub(crate) const MAX_DEPTH: usize = 64;
/// Most result entries the expanded trees may produce together.
pub(crate) const MAX_PROJECTIONS: u64 = 10_000;

/// An edge before references are resolved.
struct RawEdge {
    to: RawTo,
    critical: bool,
    relationship: Option<Relationship>,
    /// Where the edge was declared (the entry for inline, the `ref` value for references).
    path: KeyPath,
}

enum RawTo {
    Node(NodeId),
    Ref(String),
}

/// Builds the validated [`Config`] from the declared top-level targets.
pub(crate) fn assemble(roots: Vec<Decl>, concurrency: usize) -> Result<Config, Fail> {
    let mut arena = Arena::default();
    let mut root_ids = Vec::with_capacity(roots.len());
    for decl in roots {
        root_ids.push(arena.push(decl)?);
    }
    let Arena {
        mut nodes,
        paths,
        raw,
        ids,
    } = arena;

    // Resolve references, in declaration order.
    let mut edges: Vec<Vec<(Edge, KeyPath)>> = Vec::with_capacity(raw.len());
    for (owner, list) in raw.into_iter().enumerate() {
        let mut out = Vec::with_capacity(list.len());
        for e in list {
            let node = match e.to {
                RawTo::Node(n) => n,
                RawTo::Ref(id) => match ids.get(id.as_str()) {
                    Some(&(n, _)) if n == owner => {
                        return Err(e.path.fail("a target cannot depend on itself"));
                    }
                    Some(&(n, _)) => n,
                    None => {
                        let mut msg = String::from("no target declares this id");
                        if let Some(s) = suggest(&id, ids.keys().map(String::as_str)) {
                            msg.push_str(&format!(" (did you mean `{s}`?)"));
                        }
                        return Err(e.path.fail(msg));
                    }
                },
            };
            out.push((
                Edge {
                    node,
                    critical: e.critical,
                    relationship: e.relationship,
                },
                e.path,
            ));
        }
        edges.push(out);
    }

    let sizes = measure(&nodes, &edges, &root_ids)?;
    for &r in &root_ids {
        if sizes.height[r] > MAX_DEPTH {
            return Err(paths[r].fail(format!(
                "dependencies nest deeper than {MAX_DEPTH} levels (counting shared nodes once \
                 per reference)"
            )));
        }
    }
    let mut total: u64 = 0;
    for &r in &root_ids {
        total = total.saturating_add(sizes.projections[r]);
        if total > MAX_PROJECTIONS {
            return Err(paths[r].fail(format!(
                "the dependency graph expands to more than {MAX_PROJECTIONS} results (each \
                 reference to a shared node counts)"
            )));
        }
    }

    for (node, list) in nodes.iter_mut().zip(edges) {
        node.dependencies = list.into_iter().map(|(e, _)| e).collect();
    }
    Ok(Config {
        unusable_endpoint: None,
        concurrency,
        nodes,
        roots: root_ids,
        deadline: None,
        modules: Vec::new(),
    })
}

/// Nodes in declaration order, with their edges still unresolved.
#[derive(Default)]
struct Arena {
    nodes: Vec<Target>,
    paths: Vec<KeyPath>,
    raw: Vec<Vec<RawEdge>>,
    /// id → (node, where the id was declared).
    ids: HashMap<String, (NodeId, KeyPath)>,
}

impl Arena {
    /// Adds `decl` and its inline dependencies; returns `decl`'s node. Recursion depth is
    /// bounded by the YAML nesting limit.
    fn push(&mut self, decl: Decl) -> Result<NodeId, Fail> {
        let Decl {
            target,
            path,
            id_path,
            deps,
            ..
        } = decl;
        let me = self.nodes.len();
        if let (Some(id), Some(id_path)) = (&target.id, id_path) {
            if let Some((_, first)) = self.ids.get(id.as_str()) {
                return Err(id_path.fail(format!(
                    "duplicate id; already declared at {}",
                    first.render()
                )));
            }
            self.ids.insert(id.clone(), (me, id_path));
        }
        self.nodes.push(target);
        self.paths.push(path);
        self.raw.push(Vec::new());
        for dep in deps {
            let (to, edge_path) = match dep.to {
                DepTo::Inline(child) => (RawTo::Node(self.push(*child)?), dep.path),
                DepTo::Ref { id, path } => (RawTo::Ref(id), path),
            };
            self.raw[me].push(RawEdge {
                to,
                critical: dep.critical,
                relationship: dep.relationship,
                path: edge_path,
            });
        }
        Ok(me)
    }
}

/// Per-node height (edges to the deepest leaf of its expansion) and projection count
/// (entries of its expansion, saturating).
struct Sizes {
    height: Vec<usize>,
    projections: Vec<u64>,
}

/// Iterative depth-first walk from the roots: detects cycles and computes [`Sizes`].
fn measure(
    nodes: &[Target],
    edges: &[Vec<(Edge, KeyPath)>],
    roots: &[NodeId],
) -> Result<Sizes, Fail> {
    #[derive(Clone, Copy, PartialEq)]
    enum Color {
        New,
        OnPath,
        Done,
    }
    let n = nodes.len();
    let mut color = vec![Color::New; n];
    let mut sizes = Sizes {
        height: vec![0; n],
        projections: vec![1; n],
    };
    // (node, index of the next edge to follow)
    let mut stack: Vec<(NodeId, usize)> = Vec::new();
    for &root in roots {
        if color[root] != Color::New {
            continue;
        }
        color[root] = Color::OnPath;
        stack.push((root, 0));
        while let Some(top) = stack.last_mut() {
            let (node, next) = *top;
            if let Some((edge, path)) = edges[node].get(next) {
                top.1 += 1;
                match color[edge.node] {
                    Color::New => {
                        color[edge.node] = Color::OnPath;
                        stack.push((edge.node, 0));
                    }
                    Color::OnPath => {
                        let start = stack.iter().position(|(s, _)| *s == edge.node).unwrap_or(0);
                        let mut names: Vec<String> = stack[start..]
                            .iter()
                            .map(|(s, _)| label(nodes, *s))
                            .collect();
                        names.push(label(nodes, edge.node));
                        return Err(path.fail(format!("cycle: {}", names.join(" → "))));
                    }
                    Color::Done => {}
                }
            } else {
                stack.pop();
                color[node] = Color::Done;
                let mut height = 0;
                let mut projections: u64 = 1;
                for (edge, _) in &edges[node] {
                    height = height.max(sizes.height[edge.node] + 1);
                    projections = projections.saturating_add(sizes.projections[edge.node]);
                }
                sizes.height[node] = height;
                // Saturate well above the bound so sums stay meaningful.
                sizes.projections[node] = projections.min(MAX_PROJECTIONS + 1);
            }
        }
    }
    Ok(sizes)
}

/// How a node is named in a cycle: its id, or where it was declared.
fn label(nodes: &[Target], n: NodeId) -> String {
    nodes
        .get(n)
        .map(|t| t.id.clone().unwrap_or_else(|| t.path.clone()))
        .unwrap_or_default()
}
