//! Typed, strict readers over the untyped [`Node`] tree, each knowing its key path.
//!
//! Every reader either returns the typed value or a [`Fail`] that names the path and what was
//! expected. Messages are built only from fixed words, key names and the YAML *kind* of what
//! was found (`found a string`) — never from a value, because a secret pasted into the wrong
//! field must not be printed back.
//!
//! Key names do appear in paths: they are names, not values. A key that does not look like a
//! name (it contains whitespace or control characters, or is very long) is shown as
//! `<key #N>` instead.

use std::collections::HashSet;

use super::rules::{self, Range, is_blank};
use super::yaml::{Node, PathStep};

/// A failed check: where, whether the key or the value is at fault, and what was expected.
#[derive(Clone, Debug)]
pub(crate) struct Fail {
    /// The offending node.
    pub path: KeyPath,
    /// Point the line at the entry's key (unknown, duplicate, misplaced key) rather than its
    /// value.
    pub at_key: bool,
    /// What was expected, in our words.
    pub expected: String,
}

/// One segment of a key path.
#[derive(Clone, Debug)]
enum Seg {
    /// A mapping entry: its key as shown to people, and its position in the mapping.
    Key { shown: String, entry: usize },
    /// A list item.
    Index(usize),
}

/// A path from the document root, such as `targets[1].http.headers.X-Ready`.
#[derive(Clone, Debug, Default)]
pub(crate) struct KeyPath {
    segs: Vec<Seg>,
}

impl KeyPath {
    /// The path of the entry at position `entry` of this mapping, whose key is `key`.
    pub(crate) fn key(&self, key: &str, entry: usize) -> KeyPath {
        let mut segs = self.segs.clone();
        segs.push(Seg::Key {
            shown: shown_key(key, entry),
            entry,
        });
        KeyPath { segs }
    }

    /// The path of item `i` of this list.
    pub(crate) fn index(&self, i: usize) -> KeyPath {
        let mut segs = self.segs.clone();
        segs.push(Seg::Index(i));
        KeyPath { segs }
    }

    /// Whether this is the document root.
    pub(crate) fn is_root(&self) -> bool {
        self.segs.is_empty()
    }

    /// The steps [`super::yaml::line_of`] follows to find this node in the text.
    pub(crate) fn steps(&self) -> Vec<PathStep> {
        self.segs
            .iter()
            .map(|s| match s {
                Seg::Key { entry, .. } => PathStep::Entry(*entry),
                Seg::Index(i) => PathStep::Index(*i),
            })
            .collect()
    }

    /// The path as people read it: `targets[0].dependencies[1]`.
    pub(crate) fn render(&self) -> String {
        let mut out = String::new();
        for seg in &self.segs {
            match seg {
                Seg::Key { shown, .. } => {
                    if !out.is_empty() && !shown.starts_with('[') {
                        out.push('.');
                    }
                    out.push_str(shown);
                }
                Seg::Index(i) => {
                    out.push('[');
                    out.push_str(&i.to_string());
                    out.push(']');
                }
            }
        }
        out
    }

    /// A failure of this node's value.
    pub(crate) fn fail(&self, expected: impl Into<String>) -> Fail {
        Fail {
            path: self.clone(),
            at_key: false,
            expected: expected.into(),
        }
    }

    /// A failure of this entry's key (the last segment must be a key).
    pub(crate) fn fail_key(&self, expected: impl Into<String>) -> Fail {
        Fail {
            path: self.clone(),
            at_key: true,
            expected: expected.into(),
        }
    }
}

/// How a key appears in a path: plain when it looks like a name, quoted when it is printable
/// but not name-like (JSON Pointers, odd header names), a placeholder otherwise.
fn shown_key(key: &str, entry: usize) -> String {
    let name_like = |c: char| c.is_ascii_alphanumeric() || c == '_' || c == '-';
    if !key.is_empty() && key.len() <= 64 && key.chars().all(name_like) {
        key.to_string()
    } else if !key.is_empty()
        && key.len() <= 64
        && key
            .chars()
            .all(|c| c.is_ascii_graphic() && c != '"' && c != '\\')
    {
        format!("[\"{key}\"]")
    } else {
        format!("<key #{}>", entry + 1)
    }
}

/// A node together with its path.
#[derive(Clone, Copy)]
pub(crate) struct At<'a, 'p> {
    /// The node.
    pub node: &'a Node,
    /// Where it is.
    pub path: &'p KeyPath,
}

/// `expected <what>, found <kind>`.
pub(crate) fn mismatch(what: &str, found: &Node) -> String {
    format!("expected {what}, found {}", found.kind())
}

impl<'a> At<'a, '_> {
    /// A failure of this value.
    pub(crate) fn fail(&self, expected: impl Into<String>) -> Fail {
        self.path.fail(expected)
    }

    /// The value must be a YAML string.
    pub(crate) fn str(&self, what: &str) -> Result<&'a str, Fail> {
        match self.node {
            Node::Str(s) => Ok(s),
            other => Err(self.fail(mismatch(what, other))),
        }
    }

    /// The value must be a string that is not blank.
    pub(crate) fn nonblank(&self, what: &str) -> Result<&'a str, Fail> {
        let s = self.str(what)?;
        if is_blank(s) {
            return Err(self.fail(format!("expected {what}, found a blank string")));
        }
        Ok(s)
    }

    /// The value must be a YAML boolean (`true`/`false`).
    pub(crate) fn bool(&self) -> Result<bool, Fail> {
        match self.node {
            Node::Bool(b) => Ok(*b),
            other => Err(self.fail(mismatch("`true` or `false`", other))),
        }
    }

    /// The value must be a YAML integer within `lo..=hi`.
    pub(crate) fn int(&self, lo: i128, hi: i128) -> Result<i128, Fail> {
        let what = format!("an integer from {lo} to {hi}");
        match self.node {
            Node::Int(n) if (lo..=hi).contains(n) => Ok(*n),
            Node::Int(_) => Err(self.fail(format!("expected {what}; out of range"))),
            other => Err(self.fail(mismatch(&what, other))),
        }
    }

    /// The value must be a YAML integer within `range`: a setting with a [`rules`] bound.
    pub(crate) fn whole(&self, range: Range) -> Result<u64, Fail> {
        let n = self.int(range.min.into(), range.max.into())?;
        u64::try_from(n).map_err(|_| self.fail("out of range"))
    }

    /// The value must be a YAML integer or float, finite.
    pub(crate) fn number(&self, what: &str) -> Result<f64, Fail> {
        let n = match self.node {
            // Precision loss above 2^53 is irrelevant for thresholds and ages.
            Node::Int(n) => *n as f64,
            Node::Float(f) => *f,
            other => return Err(self.fail(mismatch(what, other))),
        };
        if !n.is_finite() {
            return Err(self.fail(format!("expected {what}; found a non-finite number")));
        }
        Ok(n)
    }

    /// The value must be a list; returns its items with their paths.
    pub(crate) fn list(&self, what: &str) -> Result<Vec<(KeyPath, &'a Node)>, Fail> {
        match self.node {
            Node::Seq(items) => Ok(items
                .iter()
                .enumerate()
                .map(|(i, n)| (self.path.index(i), n))
                .collect()),
            other => Err(self.fail(mismatch(what, other))),
        }
    }

    /// The value must be a list of strings; each item is checked by `item`.
    pub(crate) fn str_list(
        &self,
        what: &str,
        item_what: &str,
    ) -> Result<Vec<(KeyPath, &'a str)>, Fail> {
        let mut out = Vec::new();
        for (path, node) in self.list(what)? {
            let s = At { node, path: &path }.str(item_what)?;
            out.push((path, s));
        }
        Ok(out)
    }

    /// [`At::map`] with no key but those in `known` ([`Fields::only`]): a section's mapping.
    pub(crate) fn section(&self, what: &str, known: &[&str]) -> Result<Fields<'a>, Fail> {
        let fields = self.map(what)?;
        fields.only(known)?;
        Ok(fields)
    }

    /// The value must be a mapping with string keys, no duplicates and no merge keys.
    pub(crate) fn map(&self, what: &str) -> Result<Fields<'a>, Fail> {
        let Node::Map(entries) = self.node else {
            return Err(self.fail(mismatch(what, self.node)));
        };
        let mut fields: Vec<Field<'a>> = Vec::with_capacity(entries.len());
        let mut seen: HashSet<&str> = HashSet::with_capacity(entries.len());
        for (entry, (key, value)) in entries.iter().enumerate() {
            let Node::Str(name) = key else {
                let path = self.path.key("", entry);
                return Err(path.fail_key(format!(
                    "keys must be strings, found {} as a key",
                    key.kind()
                )));
            };
            let path = self.path.key(name, entry);
            if name == "<<" {
                return Err(path.fail_key("merge keys (`<<`) are not supported"));
            }
            if !seen.insert(name) {
                return Err(path.fail_key("duplicate key"));
            }
            fields.push(Field {
                name,
                path,
                node: value,
            });
        }
        Ok(Fields {
            path: self.path.clone(),
            fields,
        })
    }
}

/// One entry of a mapping.
pub(crate) struct Field<'a> {
    /// The key.
    pub name: &'a str,
    /// The entry's path.
    pub path: KeyPath,
    /// The value.
    pub node: &'a Node,
}

impl<'a> Field<'a> {
    /// The value with its path.
    pub(crate) fn at(&self) -> At<'a, '_> {
        At {
            node: self.node,
            path: &self.path,
        }
    }
}

/// The entries of a mapping whose keys are known to be unique strings.
pub(crate) struct Fields<'a> {
    /// The mapping's own path.
    pub path: KeyPath,
    /// Entries in document order.
    pub fields: Vec<Field<'a>>,
}

impl<'a> Fields<'a> {
    /// The entry named `key`, if present.
    pub(crate) fn get(&self, key: &str) -> Option<&Field<'a>> {
        self.fields.iter().find(|f| f.name == key)
    }

    /// The entry named `key`, or a failure naming it as missing.
    pub(crate) fn require(&self, key: &str) -> Result<&Field<'a>, Fail> {
        self.get(key)
            .ok_or_else(|| self.path.fail(format!("missing required key `{key}`")))
    }

    /// The required field `key`, a non-blank string (`what` names it in the message).
    pub(crate) fn nonblank(&self, key: &str, what: &str) -> Result<String, Fail> {
        Ok(self.require(key)?.at().nonblank(what)?.to_string())
    }

    /// Rejects the first key not in `known`, suggesting the nearest known key.
    pub(crate) fn only(&self, known: &[&str]) -> Result<(), Fail> {
        for f in &self.fields {
            if !known.contains(&f.name) {
                return Err(f.path.fail_key(rules::unknown("key", known, f.name)));
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_render_like_code() {
        let root = KeyPath::default();
        let p = root
            .key("targets", 1)
            .index(2)
            .key("http", 0)
            .key("X-Ready", 3);
        assert_eq!(p.render(), "targets[2].http.X-Ready");
        assert_eq!(
            p.steps(),
            vec![
                PathStep::Entry(1),
                PathStep::Index(2),
                PathStep::Entry(0),
                PathStep::Entry(3)
            ]
        );
        let q = root.key("json", 0).key("/a/b", 4);
        assert_eq!(q.render(), "json[\"/a/b\"]");
        let r = root.key("env", 0).key("has space", 1);
        assert_eq!(r.render(), "env.<key #2>");
    }
}
