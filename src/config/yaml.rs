//! YAML text → an untyped tree, and a tree position → a line number.
//!
//! The loader never lets serde map YAML straight onto the configuration types: serde's own
//! errors quote the offending value (`invalid type: string "…"`), and a secret pasted in the
//! wrong place must never reach a message. Instead [`parse`] records the document as a
//! [`Node`] tree that keeps what strictness needs and serde would hide:
//!
//! - mappings are ordered entry lists, so duplicate and non-string keys survive to be reported;
//! - scalars keep their resolved YAML 1.2 type (`'200'` is a string, `200` an integer, `yes` a
//!   string), so the typed readers can refuse every coercion;
//! - values carrying a local tag (`!foo`) become [`Node::Tagged`] and are rejected later.
//!
//! Aliases are resolved by `yaml_serde` (each use is a copy). Because a few aliases can expand
//! to an enormous tree, building the tree is bounded by [`MAX_NODES`] and [`MAX_STRING_BYTES`].
//! Merge keys (`<<`) are not applied by `yaml_serde`; they arrive as ordinary keys and the typed
//! readers reject them.
//!
//! Positions are not kept in the tree. When a later check fails, [`line_of`] parses the text a
//! second time and stops at the failing entry, so the line comes from the parser itself rather
//! than from a guess (a correct path with no line beats a wrong line). This costs one extra
//! parse, on the error path only.

use std::cell::Cell;
use std::fmt;

use serde::de::{self, DeserializeSeed, IgnoredAny, MapAccess, SeqAccess};

use super::prescan::{self, Yaml11};

/// Bound on tree nodes (scalars, lists, mappings), aliases expanded. A 1,000-target file
/// needs about 30,000.
pub(crate) const MAX_NODES: usize = 500_000;
/// Bound on the bytes of all string scalars and keys, aliases expanded.
pub(crate) const MAX_STRING_BYTES: usize = 16 << 20;
/// The nesting bound (lists and mappings): the pre-scan's, and `yaml_serde`'s own.
pub(crate) use super::prescan::MAX_NESTING;

/// One YAML node with its resolved type. Nothing is coerced.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Node {
    /// `null`, `~` or an empty value.
    Null,
    /// `true` / `false` (YAML 1.2: `yes`, `on` … are strings).
    Bool(bool),
    /// An integer. Values beyond `i128` are clamped; every range check rejects them anyway.
    Int(i128),
    /// A float, possibly `.inf` or `.nan`.
    Float(f64),
    /// A string (quoted, or plain that resolves to no other type).
    Str(String),
    /// A list.
    Seq(Vec<Node>),
    /// A mapping, entries in document order, keys of any type, duplicates kept.
    Map(Vec<(Node, Node)>),
    /// A value with a local tag such as `!foo`; never valid in a configuration.
    Tagged,
    /// A YAML 1.1 form (a `0b` integer, a `!!` tag) marked by the pre-scan; never valid.
    Yaml11(Yaml11),
}

impl Node {
    /// What kind of value this is, for messages (`found an integer`). Never the value.
    pub(crate) fn kind(&self) -> &'static str {
        match self {
            Node::Null => "null",
            Node::Bool(_) => "a boolean",
            Node::Int(_) => "an integer",
            Node::Float(_) => "a float",
            Node::Str(_) => "a string",
            Node::Seq(_) => "a list",
            Node::Map(_) => "a mapping",
            Node::Tagged => "a tagged value",
            Node::Yaml11(Yaml11::Binary) => {
                "a YAML 1.1 binary integer (`0b`; write the number in decimal)"
            }
            Node::Yaml11(Yaml11::Tag) => "a YAML 1.1 `!!` tag (write the value without it)",
        }
    }
}

/// A document that is not well-formed YAML, or too big to hold.
#[derive(Debug, PartialEq)]
pub(crate) struct SyntaxError {
    /// The keys leading to the problem, as far as known (`targets.mcp`), or empty.
    pub path: String,
    /// What went wrong, in words that never contain input text.
    pub message: String,
    /// 1-based line, when the parser knows it.
    pub line: Option<usize>,
}

/// Parses exactly one YAML document into a [`Node`] tree.
///
/// An empty document is [`Node::Null`]. A second document, a syntax error, nesting deeper
/// than [`MAX_NESTING`] or a tree over the size bounds is a [`SyntaxError`]. The nesting
/// bound is applied by [`prescan::scan`] before the parser runs, in time linear in the text.
/// YAML 1.1 forms it found become [`Node::Yaml11`] in the tree, for the readers to refuse
/// with their key path: the text is parsed with each one marked by a local tag, and that
/// tree is kept when a mark landed on a node (otherwise the scan misplaced them, inside a
/// block scalar say, and the text is parsed as written).
pub(crate) fn parse(text: &str) -> Result<Node, SyntaxError> {
    let found = prescan::scan(text).map_err(|deep| SyntaxError {
        path: deep_path(&deep.path),
        message: format!("nesting too deep; at most {MAX_NESTING} levels of lists and mappings"),
        line: Some(deep.line),
    })?;
    if !found.is_empty() {
        if let Ok((node, marks)) = parse_counting(&prescan::mark(text, &found)) {
            if marks > 0 {
                return Ok(node);
            }
        }
    }
    parse_counting(text).map(|(node, _)| node)
}

/// The path a nesting error names, like a key path (`targets[…].checks`): the first few
/// levels are enough to find the place.
fn deep_path(segs: &[String]) -> String {
    const SHOWN: usize = 6;
    let mut path = String::new();
    for seg in segs.iter().take(SHOWN) {
        if !path.is_empty() && !seg.starts_with('[') {
            path.push('.');
        }
        path.push_str(seg);
    }
    if segs.len() > SHOWN {
        path.push('…');
    }
    path
}

/// Parses `text`, counting the YAML 1.1 marks that became nodes.
fn parse_counting(text: &str) -> Result<(Node, usize), SyntaxError> {
    let budget = Budget::default();
    let seed = NodeSeed { budget: &budget };
    let node = seed
        .deserialize(yaml_serde::Deserializer::from_str(text))
        .map_err(|e| syntax_error(&e, &budget))?;
    Ok((node, budget.marks.get()))
}

/// Translates a `yaml_serde` error into our words. Only libyaml's fixed problem strings are
/// passed through; everything else is mapped to a message of our own.
fn syntax_error(e: &yaml_serde::Error, budget: &Budget) -> SyntaxError {
    let line = e.location().map(|l| l.line());
    if budget.exceeded.get() {
        return SyntaxError {
            path: String::new(),
            message: format!(
                "configuration too large (at most {MAX_NODES} values and {} MiB of text, \
                 aliases expanded)",
                MAX_STRING_BYTES >> 20
            ),
            line,
        };
    }
    let text = e.to_string();
    let message = if text.contains("more than one document") {
        "configuration must contain exactly one YAML document".to_string()
    } else if text.starts_with("recursion limit exceeded") {
        format!("nesting too deep; at most {MAX_NESTING} levels of lists and mappings")
    } else if text.starts_with("repetition limit exceeded") {
        "too many alias expansions".to_string()
    } else if text.starts_with("unknown anchor") {
        "alias refers to an unknown anchor".to_string()
    } else if text.starts_with("EOF while parsing") {
        "unexpected end of YAML document".to_string()
    } else {
        // libyaml's Display is "<problem> at line L column C[, <context> …]"; the problem is
        // one of libyaml's static strings, never input text. Keep it only if it looks like one.
        let problem = text
            .split(" at line ")
            .next()
            .and_then(|p| p.split(" at position ").next())
            .unwrap_or_default();
        let plain = !problem.is_empty()
            && problem.len() <= 80
            && problem
                .chars()
                .all(|c| c == ' ' || (c.is_ascii_graphic() && c != '"' && c != '\\'));
        if plain {
            format!("invalid YAML: {problem}")
        } else {
            "invalid YAML".to_string()
        }
    };
    SyntaxError {
        path: String::new(),
        message,
        line,
    }
}

/// Counts what the tree holds so that an alias bomb stops early.
#[derive(Default)]
struct Budget {
    nodes: Cell<usize>,
    bytes: Cell<usize>,
    exceeded: Cell<bool>,
    /// YAML 1.1 marks that became nodes.
    marks: Cell<usize>,
}

impl Budget {
    fn charge<E: de::Error>(&self, bytes: usize) -> Result<(), E> {
        let nodes = self.nodes.get() + 1;
        let bytes = self.bytes.get().saturating_add(bytes);
        self.nodes.set(nodes);
        self.bytes.set(bytes);
        if nodes > MAX_NODES || bytes > MAX_STRING_BYTES {
            self.exceeded.set(true);
            return Err(E::custom("configuration too large"));
        }
        Ok(())
    }
}

struct NodeSeed<'b> {
    budget: &'b Budget,
}

impl<'de> DeserializeSeed<'de> for NodeSeed<'_> {
    type Value = Node;

    fn deserialize<D: de::Deserializer<'de>>(self, d: D) -> Result<Node, D::Error> {
        d.deserialize_any(NodeVisitor {
            budget: self.budget,
        })
    }
}

struct NodeVisitor<'b> {
    budget: &'b Budget,
}

impl<'b> NodeVisitor<'b> {
    /// The seed of a child node, charged to the same budget.
    fn seed(&self) -> NodeSeed<'b> {
        NodeSeed {
            budget: self.budget,
        }
    }
}

impl<'de> de::Visitor<'de> for NodeVisitor<'_> {
    type Value = Node;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any YAML value")
    }

    fn visit_bool<E: de::Error>(self, v: bool) -> Result<Node, E> {
        self.budget.charge(0)?;
        Ok(Node::Bool(v))
    }

    fn visit_i64<E: de::Error>(self, v: i64) -> Result<Node, E> {
        self.budget.charge(0)?;
        Ok(Node::Int(i128::from(v)))
    }

    fn visit_u64<E: de::Error>(self, v: u64) -> Result<Node, E> {
        self.budget.charge(0)?;
        Ok(Node::Int(i128::from(v)))
    }

    fn visit_i128<E: de::Error>(self, v: i128) -> Result<Node, E> {
        self.budget.charge(0)?;
        Ok(Node::Int(v))
    }

    fn visit_u128<E: de::Error>(self, v: u128) -> Result<Node, E> {
        self.budget.charge(0)?;
        Ok(Node::Int(i128::try_from(v).unwrap_or(i128::MAX)))
    }

    fn visit_f64<E: de::Error>(self, v: f64) -> Result<Node, E> {
        self.budget.charge(0)?;
        Ok(Node::Float(v))
    }

    fn visit_str<E: de::Error>(self, v: &str) -> Result<Node, E> {
        self.budget.charge(v.len())?;
        Ok(Node::Str(v.to_string()))
    }

    fn visit_unit<E: de::Error>(self) -> Result<Node, E> {
        self.budget.charge(0)?;
        Ok(Node::Null)
    }

    fn visit_none<E: de::Error>(self) -> Result<Node, E> {
        self.visit_unit()
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Node, A::Error> {
        self.budget.charge(0)?;
        let mut items = Vec::new();
        while let Some(item) = seq.next_element_seed(self.seed())? {
            items.push(item);
        }
        Ok(Node::Seq(items))
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Node, A::Error> {
        self.budget.charge(0)?;
        let mut entries = Vec::new();
        while let Some(key) = map.next_key_seed(self.seed())? {
            let value = map.next_value_seed(self.seed())?;
            entries.push((key, value));
        }
        Ok(Node::Map(entries))
    }

    fn visit_enum<A: de::EnumAccess<'de>>(self, data: A) -> Result<Node, A::Error> {
        // A local tag (`!foo value`): consume the value, remember only that it was tagged,
        // and whether the tag is a pre-scan's mark of a YAML 1.1 form.
        self.budget.charge(0)?;
        let (tag, variant) = data.variant::<String>()?;
        de::VariantAccess::newtype_variant::<IgnoredAny>(variant)?;
        let marked = [Yaml11::Binary, Yaml11::Tag]
            .into_iter()
            .find(|kind| tag == prescan::marker(*kind));
        Ok(match marked {
            Some(kind) => {
                self.budget.marks.set(self.budget.marks.get() + 1);
                Node::Yaml11(kind)
            }
            None => Node::Tagged,
        })
    }
}

/// One step from a node to a child: the n-th entry of a mapping or the n-th list item.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum PathStep {
    /// The entry at this position in a mapping (position, not key: duplicates are distinct).
    Entry(usize),
    /// The item at this index in a list.
    Index(usize),
}

/// The 1-based line of the node reached by `steps` from the root, or of that entry's key
/// when `at_key` is set (the last step must then be an [`PathStep::Entry`]).
///
/// Re-parses `text` and stops at the node: the parser reports where that node starts. `None`
/// when the steps do not lead anywhere (never expected for paths built from the same text).
pub(crate) fn line_of(text: &str, steps: &[PathStep], at_key: bool) -> Option<usize> {
    let found = Cell::new(false);
    let seek = Seek {
        steps,
        at_key,
        found: &found,
    };
    match seek.deserialize(yaml_serde::Deserializer::from_str(text)) {
        Err(e) if found.get() => e.location().map(|l| l.line()),
        _ => None,
    }
}

/// Walks down `steps`, skipping everything else, and fails on purpose at the destination so
/// that `yaml_serde` attaches the destination's position to the error.
struct Seek<'a> {
    steps: &'a [PathStep],
    at_key: bool,
    found: &'a Cell<bool>,
}

impl<'de> DeserializeSeed<'de> for Seek<'_> {
    type Value = ();

    fn deserialize<D: de::Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        if self.steps.is_empty() {
            d.deserialize_any(Here { found: self.found })
        } else {
            d.deserialize_any(self)
        }
    }
}

impl<'de> de::Visitor<'de> for Seek<'_> {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a list or mapping on the way to a node")
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        let (i, rest) = self.split(false)?;
        for _ in 0..i {
            seq.next_element::<IgnoredAny>()?.ok_or_else(not_found)?;
        }
        seq.next_element_seed(self.down(rest))?
            .ok_or_else(not_found)
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        let (i, rest) = self.split(true)?;
        for _ in 0..i {
            map.next_key::<IgnoredAny>()?.ok_or_else(not_found)?;
            map.next_value::<IgnoredAny>()?;
        }
        if rest.is_empty() && self.at_key {
            map.next_key_seed(Seek {
                at_key: false,
                ..self.down(rest)
            })?;
            return Err(not_found());
        }
        map.next_key::<IgnoredAny>()?.ok_or_else(not_found)?;
        map.next_value_seed(self.down(rest))
    }
}

impl<'a> Seek<'a> {
    /// The position this step takes — of a mapping's entry when `entry`, else of a list's
    /// item — and the steps after it.
    fn split<E: de::Error>(&self, entry: bool) -> Result<(usize, &'a [PathStep]), E> {
        match self.steps.split_first() {
            Some((&PathStep::Entry(i), rest)) if entry => Ok((i, rest)),
            Some((&PathStep::Index(i), rest)) if !entry => Ok((i, rest)),
            _ => Err(not_found()),
        }
    }

    /// The seek for the steps after this one.
    fn down(&self, rest: &'a [PathStep]) -> Seek<'a> {
        Seek {
            steps: rest,
            at_key: self.at_key,
            found: self.found,
        }
    }
}

/// The path leads nowhere (never expected for paths built from the same text).
fn not_found<E: de::Error>() -> E {
    E::custom("not found")
}

/// Visits of a scalar that stop at it, as every visit of [`Here`] does.
macro_rules! stop_at_scalars {
    ($($visit:ident($value:ty)),* $(,)?) => {
        $(fn $visit<E: de::Error>(self, _: $value) -> Result<(), E> {
            self.stop()
        })*
    };
}

/// The destination: every visit is an error, which `yaml_serde` marks with the node's start.
struct Here<'a> {
    found: &'a Cell<bool>,
}

impl Here<'_> {
    fn stop<E: de::Error>(&self) -> Result<(), E> {
        self.found.set(true);
        Err(E::custom("found"))
    }
}

impl<'de> de::Visitor<'de> for Here<'_> {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("the node being located")
    }

    stop_at_scalars!(
        visit_bool(bool),
        visit_i64(i64),
        visit_u64(u64),
        visit_i128(i128),
        visit_u128(u128),
        visit_f64(f64),
        visit_str(&str),
    );
    fn visit_unit<E: de::Error>(self) -> Result<(), E> {
        self.stop()
    }
    fn visit_none<E: de::Error>(self) -> Result<(), E> {
        self.stop()
    }
    fn visit_seq<A: SeqAccess<'de>>(self, _: A) -> Result<(), A::Error> {
        self.stop()
    }
    fn visit_map<A: MapAccess<'de>>(self, _: A) -> Result<(), A::Error> {
        self.stop()
    }
    fn visit_enum<A: de::EnumAccess<'de>>(self, _: A) -> Result<(), A::Error> {
        self.stop()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn map(entries: Vec<(&str, Node)>) -> Node {
        Node::Map(
            entries
                .into_iter()
                .map(|(k, v)| (Node::Str(k.to_string()), v))
                .collect(),
        )
    }

    #[test]
    fn scalars_keep_their_yaml_type() {
        let n = parse(
            "a: 200\nb: '200'\nc: yes\nd: true\ne: 1.5\nf: ~\ng:\nh: !!str 7\ni: 0x10\nj: .inf\nk: 0b11\n",
        );
        assert_eq!(
            n,
            Ok(map(vec![
                ("a", Node::Int(200)),
                ("b", Node::Str("200".into())),
                ("c", Node::Str("yes".into())),
                ("d", Node::Bool(true)),
                ("e", Node::Float(1.5)),
                ("f", Node::Null),
                ("g", Node::Null),
                ("h", Node::Yaml11(Yaml11::Tag)),
                ("i", Node::Int(16)),
                ("j", Node::Float(f64::INFINITY)),
                ("k", Node::Yaml11(Yaml11::Binary)),
            ]))
        );
    }

    #[test]
    fn duplicate_and_non_string_keys_survive() {
        let n = parse("a: 1\na: 2\n1: x\n? [k]\n: v\n");
        let Ok(Node::Map(entries)) = n else {
            panic!("expected a mapping, got {n:?}");
        };
        assert_eq!(entries.len(), 4);
        assert_eq!(entries[1].0, Node::Str("a".into()));
        assert_eq!(entries[2].0, Node::Int(1));
        assert_eq!(entries[3].0, Node::Seq(vec![Node::Str("k".into())]));
    }

    #[test]
    fn local_tags_become_tagged() {
        assert_eq!(
            parse("a: !foo bar\nb: !x {c: 1}\nc: !y [1]\n"),
            Ok(map(vec![
                ("a", Node::Tagged),
                ("b", Node::Tagged),
                ("c", Node::Tagged)
            ]))
        );
    }

    #[test]
    fn aliases_are_copies_and_merge_keys_stay_keys() {
        let n = parse("a: &x {k: 1}\nb: *x\nc:\n  <<: *x\n");
        let inner = map(vec![("k", Node::Int(1))]);
        assert_eq!(
            n,
            Ok(map(vec![
                ("a", inner.clone()),
                ("b", inner.clone()),
                ("c", map(vec![("<<", inner)])),
            ]))
        );
    }

    #[test]
    fn empty_document_is_null() {
        assert_eq!(parse(""), Ok(Node::Null));
        assert_eq!(parse("# only a comment\n"), Ok(Node::Null));
    }

    #[test]
    fn second_document_is_rejected() {
        let e = parse("a: 1\n---\nb: 2\n").unwrap_err();
        assert_eq!(
            e.message,
            "configuration must contain exactly one YAML document"
        );
    }

    #[test]
    fn syntax_errors_carry_libyaml_problem_and_line() {
        let e = parse("a: 1\nb: [1, 2\nc: 3\n").unwrap_err();
        assert!(e.message.starts_with("invalid YAML: "), "{e:?}");
        assert!(e.line.is_some());
        let e = parse("a:\n\tb: 1\n").unwrap_err();
        assert_eq!(
            e.message,
            "invalid YAML: found character that cannot start any token"
        );
        assert_eq!(e.line, Some(2));
    }

    #[test]
    fn deep_nesting_is_rejected_without_overflow() {
        let text = format!("{}{}", "[".repeat(10_000), "]".repeat(10_000));
        let e = parse(&text).unwrap_err();
        assert_eq!(
            e.message,
            "nesting too deep; at most 128 levels of lists and mappings"
        );
        let ok = format!("{}{}", "[".repeat(MAX_NESTING), "]".repeat(MAX_NESTING));
        assert!(parse(&ok).is_ok());
    }

    #[test]
    fn deep_flow_nesting_is_refused_before_the_parser_runs() {
        let text = format!(
            "version: v1\ntargets: {}{}\n",
            "[".repeat(40_000),
            "]".repeat(40_000)
        );
        let started = std::time::Instant::now();
        let e = parse(&text).unwrap_err();
        let took = started.elapsed();
        assert!(took < std::time::Duration::from_millis(100), "{took:?}");
        assert_eq!(
            (e.path.as_str(), e.message.as_str(), e.line),
            (
                "targets",
                "nesting too deep; at most 128 levels of lists and mappings",
                Some(2)
            )
        );
    }

    #[test]
    fn a_misplaced_mark_changes_nothing() {
        // `0b1` in a block scalar is text: the scan may not know, the tree does.
        let text = "a: |\n  0b1\n";
        assert_eq!(parse(text), Ok(map(vec![("a", Node::Str("0b1\n".into()))])));
    }

    #[test]
    fn alias_bomb_hits_the_budget() {
        let mut text = String::from("a: &a [");
        text.push_str(&"x,".repeat(1000));
        text.push_str("x]\nb: [");
        text.push_str(&"*a,".repeat(600));
        text.push_str("*a]\n");
        let e = parse(&text).unwrap_err();
        assert!(e.message.starts_with("configuration too large"), "{e:?}");
    }

    #[test]
    fn line_of_finds_values_and_keys() {
        let text =
            "version: v1\ntargets:\n  - name: a\n    type: http\n  - name: b\n    timeot_ms: 5\n";
        // targets (entry 1) → item 1 → entry 1 (timeot_ms)
        let steps = [PathStep::Entry(1), PathStep::Index(1), PathStep::Entry(1)];
        assert_eq!(line_of(text, &steps, true), Some(6));
        assert_eq!(line_of(text, &steps, false), Some(6));
        // the mapping of item 1 starts at its first key
        assert_eq!(line_of(text, &steps[..2], false), Some(5));
        assert_eq!(line_of(text, &[PathStep::Entry(7)], false), None);
    }

    #[test]
    fn line_of_distinguishes_duplicate_keys() {
        let text = "a: 1\nb: 2\na: 3\n";
        assert_eq!(line_of(text, &[PathStep::Entry(0)], true), Some(1));
        assert_eq!(line_of(text, &[PathStep::Entry(2)], true), Some(3));
    }

    #[test]
    fn line_of_value_on_its_own_line() {
        let text = "a:\n  - x\n  -\n    - y\n";
        assert_eq!(
            line_of(
                text,
                &[PathStep::Entry(0), PathStep::Index(1), PathStep::Index(0)],
                false
            ),
            Some(4)
        );
    }
}
