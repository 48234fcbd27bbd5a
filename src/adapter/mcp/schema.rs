//! The small JSON-Schema subset needed to check MCP tool input schemas and to
//! validate an operator's tool arguments before a functional call.
//!
//! The validator is deliberately conservative: it must never reject
//! arguments that a full JSON-Schema implementation would accept. Keywords
//! outside the subset (`pattern`, `format`, `if`/`then`, `not`, `minItems`,
//! ...) are ignored, as are keywords whose value has an unexpected JSON type.
//! Every check is monotone (ignoring more can only accept more), which is why
//! `oneOf` reports only "no alternative matched" and never "several matched":
//! an ignored keyword could be what tells two alternatives apart. Subschemas
//! nested deeper than [`MAX_DEPTH`], or reached after [`MAX_STEPS`]
//! evaluations, are accepted.
//!
//! Compatibility rules that avoid false failures: a schema object containing
//! `$ref` (or `$dynamicRef` / `$recursiveRef`) is accepted as a whole, since
//! we do not resolve references and draft-07 ignores a reference's siblings;
//! `items` does not apply to the elements covered by `prefixItems`; an
//! OpenAPI-style `"nullable": true` lets `null` pass the `type` check; and
//! `patternProperties` disables `additionalProperties`.
//!
//! Supported keywords: `type`, `enum`, `const`, `minimum`, `maximum`,
//! `exclusiveMinimum`, `exclusiveMaximum` (numeric forms only), `minLength`,
//! `maxLength`, `required`, `properties`, `additionalProperties`, `items`
//! (single-schema form only), `allOf`, `anyOf`, `oneOf`, and the boolean
//! schemas `true` and `false`.

use std::cmp::Ordering;
use std::fmt;

use serde_json::{Map, Number, Value};

use crate::result::Phrase;

/// Subschema nesting depth beyond which a subschema is accepted unevaluated.
pub const MAX_DEPTH: usize = 32;

/// Number of subschema evaluations after which every further subschema is
/// accepted unevaluated (guards against exponential `anyOf`/`allOf` nesting).
pub const MAX_STEPS: usize = 100_000;

/// Whether `schema` is acceptable as an MCP tool `inputSchema`: a JSON object
/// whose `type` member is exactly the string `"object"`.
///
/// A missing `type` (or `["object"]`, or any other value) is **not**
/// accepted: every MCP revision requires `"type": "object"`.
pub fn is_object_schema(schema: &Value) -> bool {
    schema
        .as_object()
        .and_then(|o| o.get("type"))
        .and_then(Value::as_str)
        == Some("object")
}

/// One step of the path to a violating value.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Segment {
    /// A member of an object.
    Property(String),
    /// An element of an array.
    Index(usize),
}

/// The rule an instance broke.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Rule {
    /// A property not declared in `properties` where `additionalProperties`
    /// is `false`.
    NotDeclared,
    /// A property listed in `required` is absent. `name` comes from the
    /// schema (server text); [`Violation`]'s `Display` shows it only if it
    /// looks like a plain identifier.
    MissingRequired {
        /// The missing property name, exactly as the schema spells it.
        name: String,
    },
    /// The value's JSON type is not among `expected` (our own type names).
    WrongType {
        /// The type names the schema allows.
        expected: Vec<&'static str>,
    },
    /// The value is not one of the `enum` values.
    NotInEnum,
    /// The value differs from `const`.
    ConstMismatch,
    /// The number is below `minimum`, or not above `exclusiveMinimum`.
    BelowMinimum,
    /// The number is above `maximum`, or not below `exclusiveMaximum`.
    AboveMaximum,
    /// The string has fewer characters than `minLength`.
    TooShort,
    /// The string has more characters than `maxLength`.
    TooLong,
    /// No subschema of `anyOf` accepts the value.
    NoAlternativeMatched,
    /// No subschema of `oneOf` accepts the value. (Several matching
    /// alternatives are not reported; see the module documentation.)
    NotExactlyOneMatched,
    /// Some subschema of `allOf` rejects the value.
    AllOfFailed,
    /// The schema at this location is `false`, which accepts nothing.
    Forbidden,
}

/// The first rule violation found, and where.
///
/// `Display` writes one sentence naming the argument path and the rule. It
/// never includes values from the schema or the instance; property names are
/// shown only if they match `^[A-Za-z0-9_.$-]{1,64}$`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Violation {
    /// Path from the instance root to the offending value (empty for the root).
    pub path: Vec<Segment>,
    /// The broken rule.
    pub rule: Rule,
}

/// What a [`Violation`] is about, for its wording.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Subject {
    /// The operator's tool arguments against the tool's `inputSchema`.
    Arguments,
    /// A tool result's `structuredContent` against the tool's `outputSchema`.
    StructuredContent,
}

impl Subject {
    fn root(self) -> &'static str {
        match self {
            Subject::Arguments => "the arguments object",
            Subject::StructuredContent => "structuredContent",
        }
    }

    fn element(self) -> &'static str {
        match self {
            Subject::Arguments => "argument `",
            Subject::StructuredContent => "structuredContent at `",
        }
    }

    fn schema(self) -> &'static str {
        match self {
            Subject::Arguments => "the tool's inputSchema",
            Subject::StructuredContent => "the tool's outputSchema",
        }
    }
}

impl Violation {
    /// The violation as one sentence naming the path and the rule, with a property name shown
    /// only when `shown` vouches for it (otherwise `<property>`, or no name at all for a
    /// missing required property). Names shown become
    /// [`crate::result::evidence::Piece::Config`]: for evidence, `shown` must only vouch for
    /// names the configuration holds.
    pub fn phrase(&self, subject: Subject, shown: &dyn Fn(&str) -> bool) -> Phrase {
        let schema = subject.schema();
        let mut p = if self.path.is_empty() {
            Phrase::new().word(subject.root())
        } else {
            let mut p = Phrase::new().word(subject.element());
            p.append(path_phrase(&self.path, shown));
            p.word("`")
        };
        match &self.rule {
            Rule::MissingRequired { name } if shown(name) => p
                .word(" lacks the property `")
                .config(name.clone())
                .word("`, which ")
                .word(schema)
                .word(" requires"),
            rule => {
                let (before, after) = rule.around_schema();
                p = p.word(before).word(schema);
                if !after.is_empty() {
                    p = p.word(after);
                }
                if let Rule::WrongType { expected } = rule {
                    let last = expected.len().saturating_sub(1);
                    for (i, name) in expected.iter().enumerate() {
                        if i > 0 {
                            p = p.word(if i == last { " or " } else { ", " });
                        }
                        p = p.word(name);
                    }
                    p = p.word(")");
                }
                p
            }
        }
    }
}

impl Rule {
    /// The words before and after the schema in a violation's sentence ("… is below the
    /// minimum the tool's inputSchema allows"; a wrong type goes on with the types expected).
    /// A missing property that may be named says more, in [`Violation::phrase`].
    fn around_schema(&self) -> (&'static str, &'static str) {
        match self {
            Rule::NotDeclared => (
                " is not declared by ",
                ", which forbids additional properties",
            ),
            Rule::MissingRequired { .. } => (" lacks a required property of ", ""),
            Rule::WrongType { .. } => (" has a type that ", " does not allow (expected "),
            Rule::NotInEnum => (" is not one of the values ", " allows"),
            Rule::ConstMismatch => (" differs from the value ", " requires"),
            Rule::BelowMinimum => (" is below the minimum ", " allows"),
            Rule::AboveMaximum => (" is above the maximum ", " allows"),
            Rule::TooShort => (" is shorter than ", " allows"),
            Rule::TooLong => (" is longer than ", " allows"),
            Rule::NoAlternativeMatched => (" matches none of the alternatives (anyOf) in ", ""),
            Rule::NotExactlyOneMatched => (" matches none of the alternatives (oneOf) in ", ""),
            Rule::AllOfFailed => (" does not satisfy every subschema (allOf) in ", ""),
            Rule::Forbidden => (" is not permitted by ", ""),
        }
    }
}

/// Writes the argument-side sentence, showing property names that look like plain
/// identifiers (see [`Violation::phrase`] for the evidence form).
impl fmt::Display for Violation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.phrase(Subject::Arguments, &is_safe_name).fmt(f)
    }
}

impl std::error::Error for Violation {}

/// Whether a name may be shown: 1 to 64 characters of `[A-Za-z0-9_.$-]`.
fn is_safe_name(name: &str) -> bool {
    (1..=64).contains(&name.len())
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'.' | b'$' | b'-'))
}

/// `a.b[2].c`; a property name `shown` does not vouch for becomes `<property>`.
pub fn path_phrase(path: &[Segment], shown: &dyn Fn(&str) -> bool) -> Phrase {
    let mut p = Phrase::new();
    for (i, segment) in path.iter().enumerate() {
        match segment {
            Segment::Property(name) => {
                if i > 0 {
                    p = p.word(".");
                }
                p = if shown(name) {
                    p.config(name.clone())
                } else {
                    p.word("<property>")
                };
            }
            Segment::Index(index) => {
                let index = i64::try_from(*index).unwrap_or(i64::MAX);
                p = p.word("[").int(index).word("]");
            }
        }
    }
    p
}

#[cfg(test)]
fn render_path(path: &[Segment]) -> String {
    path_phrase(path, &is_safe_name).to_string()
}

/// Validates `instance` against `schema` and returns the first violation.
///
/// Order within one schema object: `type`, `enum`, `const`, numeric bounds,
/// string lengths, then for objects `required` (in listed order) and each
/// member (in the instance's key order, as
/// `serde_json` keeps it: sorted) against `properties` /
/// `additionalProperties`, then for arrays each element against `items`,
/// then `allOf`, `anyOf`, `oneOf`. A schema that is neither an object nor a
/// boolean accepts everything, and so does a subschema beyond the depth or
/// step limit.
///
/// # Errors
///
/// The first [`Violation`] found, in the order above.
pub fn validate(schema: &Value, instance: &Value) -> Result<(), Violation> {
    Validator { steps: 0 }.check(schema, instance, &mut Vec::new(), 0)
}

struct Validator {
    steps: usize,
}

fn violation(path: &[Segment], rule: Rule) -> Result<(), Violation> {
    Err(Violation {
        path: path.to_vec(),
        rule,
    })
}

impl Validator {
    fn check(
        &mut self,
        schema: &Value,
        instance: &Value,
        path: &mut Vec<Segment>,
        depth: usize,
    ) -> Result<(), Violation> {
        self.steps = self.steps.saturating_add(1);
        if depth > MAX_DEPTH || self.steps > MAX_STEPS {
            return Ok(());
        }
        let schema = match schema {
            Value::Bool(false) => return violation(path, Rule::Forbidden),
            Value::Object(schema) => schema,
            _ => return Ok(()),
        };
        if ["$ref", "$dynamicRef", "$recursiveRef"]
            .iter()
            .any(|keyword| schema.contains_key(*keyword))
        {
            return Ok(());
        }

        let nullable = schema.get("nullable") == Some(&Value::Bool(true));
        if let Some(expected) = schema.get("type").and_then(type_names)
            && !(nullable && instance.is_null())
            && !expected.iter().any(|name| has_type(instance, name))
        {
            return violation(path, Rule::WrongType { expected });
        }
        if let Some(Value::Array(options)) = schema.get("enum")
            && !options.iter().any(|option| json_equal(option, instance))
        {
            return violation(path, Rule::NotInEnum);
        }
        if let Some(constant) = schema.get("const")
            && !json_equal(constant, instance)
        {
            return violation(path, Rule::ConstMismatch);
        }
        match instance {
            Value::Number(n) => check_bounds(schema, n, path)?,
            Value::String(s) => check_length(schema, s, path)?,
            Value::Object(members) => self.check_members(schema, members, path, depth)?,
            Value::Array(items) => self.check_items(schema, items, path, depth)?,
            _ => {}
        }
        self.check_combinators(schema, instance, path, depth)
    }

    fn check_members(
        &mut self,
        schema: &Map<String, Value>,
        members: &Map<String, Value>,
        path: &mut Vec<Segment>,
        depth: usize,
    ) -> Result<(), Violation> {
        if let Some(Value::Array(required)) = schema.get("required") {
            for name in required.iter().filter_map(Value::as_str) {
                if !members.contains_key(name) {
                    let name = name.to_owned();
                    return violation(path, Rule::MissingRequired { name });
                }
            }
        }
        let properties = schema.get("properties").and_then(Value::as_object);
        // Members matched by `patternProperties` cannot be told apart without
        // regular expressions, so its presence disables `additionalProperties`.
        let additional = if schema.contains_key("patternProperties") {
            None
        } else {
            schema.get("additionalProperties")
        };
        for (key, value) in members {
            let subschema = match (properties.and_then(|p| p.get(key)), additional) {
                (Some(declared), _) => declared,
                (None, Some(Value::Bool(false))) => {
                    let mut path = path.clone();
                    path.push(Segment::Property(key.clone()));
                    return Err(Violation {
                        path,
                        rule: Rule::NotDeclared,
                    });
                }
                (None, Some(other)) => other,
                (None, None) => continue,
            };
            path.push(Segment::Property(key.clone()));
            let result = self.check(subschema, value, path, depth + 1);
            path.pop();
            result?;
        }
        Ok(())
    }

    fn check_items(
        &mut self,
        schema: &Map<String, Value>,
        items: &[Value],
        path: &mut Vec<Segment>,
        depth: usize,
    ) -> Result<(), Violation> {
        let Some(item_schema) = schema.get("items") else {
            return Ok(());
        };
        if !(item_schema.is_object() || item_schema.is_boolean()) {
            return Ok(()); // tuple form (or malformed): ignored
        }
        // In 2020-12, `items` covers only the elements after `prefixItems`.
        let skip = match schema.get("prefixItems") {
            Some(Value::Array(prefix)) => prefix.len(),
            _ => 0,
        };
        for (index, item) in items.iter().enumerate().skip(skip) {
            path.push(Segment::Index(index));
            let result = self.check(item_schema, item, path, depth + 1);
            path.pop();
            result?;
        }
        Ok(())
    }

    fn check_combinators(
        &mut self,
        schema: &Map<String, Value>,
        instance: &Value,
        path: &mut Vec<Segment>,
        depth: usize,
    ) -> Result<(), Violation> {
        if let Some(Value::Array(all)) = schema.get("allOf") {
            for subschema in all {
                if self.check(subschema, instance, path, depth + 1).is_err() {
                    return violation(path, Rule::AllOfFailed);
                }
            }
        }
        // Only "none matched" is reported for `oneOf`; see the module documentation.
        for (keyword, rule) in [
            ("anyOf", Rule::NoAlternativeMatched),
            ("oneOf", Rule::NotExactlyOneMatched),
        ] {
            if let Some(Value::Array(alternatives)) = schema.get(keyword)
                && !alternatives.is_empty()
                && !alternatives
                    .iter()
                    .any(|subschema| self.check(subschema, instance, path, depth + 1).is_ok())
            {
                return violation(path, rule);
            }
        }
        Ok(())
    }
}

/// The type names of a `type` keyword, or `None` if the keyword is to be
/// ignored (not a string or array of strings, empty, or naming an unknown type).
fn type_names(keyword: &Value) -> Option<Vec<&'static str>> {
    match keyword {
        Value::String(name) => known_type(name).map(|t| vec![t]),
        Value::Array(names) if !names.is_empty() => names
            .iter()
            .map(|name| name.as_str().and_then(known_type))
            .collect(),
        _ => None,
    }
}

fn known_type(name: &str) -> Option<&'static str> {
    [
        "null", "boolean", "object", "array", "number", "integer", "string",
    ]
    .into_iter()
    .find(|known| *known == name)
}

fn has_type(instance: &Value, name: &str) -> bool {
    match (name, instance) {
        ("null", Value::Null)
        | ("boolean", Value::Bool(_))
        | ("object", Value::Object(_))
        | ("array", Value::Array(_))
        | ("number", Value::Number(_))
        | ("string", Value::String(_)) => true,
        ("integer", Value::Number(n)) => is_integer(n),
        _ => false,
    }
}

/// A number with no fractional part: `1`, `-3`, `1.0` and `1e2` are integers.
fn is_integer(n: &Number) -> bool {
    n.is_i64()
        || n.is_u64()
        || n.as_f64()
            .is_some_and(|f| f.is_finite() && f.fract() == 0.0)
}

/// Exact value when the number is an integer within `i128`.
fn as_i128(n: &Number) -> Option<i128> {
    n.as_i64()
        .map(i128::from)
        .or_else(|| n.as_u64().map(i128::from))
}

fn compare_numbers(a: &Number, b: &Number) -> Option<Ordering> {
    match (as_i128(a), as_i128(b)) {
        (Some(a), Some(b)) => Some(a.cmp(&b)),
        _ => a.as_f64()?.partial_cmp(&b.as_f64()?),
    }
}

/// JSON equality; numbers compare by value (`1 == 1.0`), object member order
/// does not matter.
pub fn json_equal(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(a), Value::Number(b)) => compare_numbers(a, b) == Some(Ordering::Equal),
        (Value::Array(a), Value::Array(b)) => {
            a.len() == b.len() && a.iter().zip(b).all(|(x, y)| json_equal(x, y))
        }
        (Value::Object(a), Value::Object(b)) => {
            a.len() == b.len()
                && a.iter()
                    .all(|(key, x)| b.get(key).is_some_and(|y| json_equal(x, y)))
        }
        _ => a == b,
    }
}

fn check_bounds(
    schema: &Map<String, Value>,
    n: &Number,
    path: &[Segment],
) -> Result<(), Violation> {
    let compare = |keyword: &str| match schema.get(keyword) {
        Some(Value::Number(bound)) => compare_numbers(n, bound),
        _ => None,
    };
    if compare("minimum") == Some(Ordering::Less)
        || matches!(
            compare("exclusiveMinimum"),
            Some(Ordering::Less | Ordering::Equal)
        )
    {
        return violation(path, Rule::BelowMinimum);
    }
    if compare("maximum") == Some(Ordering::Greater)
        || matches!(
            compare("exclusiveMaximum"),
            Some(Ordering::Greater | Ordering::Equal)
        )
    {
        return violation(path, Rule::AboveMaximum);
    }
    Ok(())
}

fn check_length(schema: &Map<String, Value>, s: &str, path: &[Segment]) -> Result<(), Violation> {
    let limit = |keyword: &str| {
        let n = schema.get(keyword)?.as_number()?;
        match n.as_u64() {
            Some(v) => Some(v),
            // `5.0` is a valid length too; negative or fractional values are ignored.
            None => n
                .as_f64()
                .filter(|f| *f >= 0.0 && f.fract() == 0.0)
                .map(|f| f as u64),
        }
    };
    let count = u64::try_from(s.chars().count()).unwrap_or(u64::MAX);
    if limit("minLength").is_some_and(|min| count < min) {
        return violation(path, Rule::TooShort);
    }
    if limit("maxLength").is_some_and(|max| count > max) {
        return violation(path, Rule::TooLong);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn rule(schema: Value, instance: Value) -> Option<Rule> {
        validate(&schema, &instance).err().map(|v| v.rule)
    }

    fn prop(name: &str) -> Segment {
        Segment::Property(name.to_owned())
    }

    #[test]
    fn object_schema_detection() {
        assert!(is_object_schema(&json!({"type": "object"})));
        assert!(is_object_schema(
            &json!({"type": "object", "properties": {}})
        ));
        assert!(!is_object_schema(&json!({})));
        assert!(!is_object_schema(&json!({"properties": {}})));
        assert!(!is_object_schema(&json!({"type": "array"})));
        assert!(!is_object_schema(&json!({"type": ["object"]})));
        assert!(!is_object_schema(&json!({"type": "Object"})));
        assert!(!is_object_schema(&json!(true)));
        assert!(!is_object_schema(&json!(null)));
        assert!(!is_object_schema(&json!("object")));
    }

    #[test]
    fn memory_core_fault_is_caught() {
        let schema = json!({"type": "object", "properties": {}, "additionalProperties": false});
        let args = json!({"freshObservability": true});
        let v = validate(&schema, &args).expect_err("must fail");
        assert_eq!(v.path, vec![prop("freshObservability")]);
        assert_eq!(v.rule, Rule::NotDeclared);
        assert_eq!(
            v.to_string(),
            "argument `freshObservability` is not declared by the tool's inputSchema, \
             which forbids additional properties"
        );
        // The no-argument call stays valid.
        assert_eq!(validate(&schema, &json!({})), Ok(()));
    }

    #[test]
    fn memory_core_fixed_schema_accepts_diagnostics() {
        let schema = json!({
            "type": "object",
            "properties": {
                "freshObservability": {"type": "boolean"},
                "chromaProbeTimeoutMs": {"type": "integer", "minimum": 1},
                "embeddingWriteCanaryTimeoutMs": {"type": "integer", "minimum": 1}
            },
            "additionalProperties": false
        });
        let args = json!({
            "freshObservability": true,
            "chromaProbeTimeoutMs": 5000,
            "embeddingWriteCanaryTimeoutMs": 15000.0
        });
        assert_eq!(validate(&schema, &args), Ok(()));
        assert_eq!(validate(&schema, &json!({})), Ok(()));
        assert_eq!(
            rule(schema.clone(), json!({"chromaProbeTimeoutMs": 0})),
            Some(Rule::BelowMinimum)
        );
        assert_eq!(
            rule(schema.clone(), json!({"chromaProbeTimeoutMs": 1.5})),
            Some(Rule::WrongType {
                expected: vec!["integer"]
            })
        );
        assert_eq!(
            rule(schema, json!({"freshObservability": "yes"})),
            Some(Rule::WrongType {
                expected: vec!["boolean"]
            })
        );
    }

    #[test]
    fn type_keyword() {
        assert_eq!(rule(json!({"type": "string"}), json!("x")), None);
        assert_eq!(
            rule(json!({"type": "string"}), json!(1)),
            Some(Rule::WrongType {
                expected: vec!["string"]
            })
        );
        assert_eq!(rule(json!({"type": ["string", "null"]}), json!(null)), None);
        assert_eq!(
            rule(json!({"type": ["string", "null"]}), json!(false)),
            Some(Rule::WrongType {
                expected: vec!["string", "null"]
            })
        );
        assert_eq!(rule(json!({"type": "integer"}), json!(1.0)), None);
        assert_eq!(rule(json!({"type": "integer"}), json!(-3)), None);
        assert_eq!(rule(json!({"type": "integer"}), json!(u64::MAX)), None);
        let big: Value = serde_json::from_str("1e30").expect("json");
        assert_eq!(rule(json!({"type": "integer"}), big), None);
        assert!(rule(json!({"type": "integer"}), json!(1.5)).is_some());
        assert_eq!(rule(json!({"type": "number"}), json!(1)), None);
        assert!(rule(json!({"type": "number"}), json!("1")).is_some());
        assert!(rule(json!({"type": "object"}), json!([])).is_some());
        assert!(rule(json!({"type": "array"}), json!({})).is_some());
        assert!(rule(json!({"type": "boolean"}), json!(0)).is_some());
        assert!(rule(json!({"type": "null"}), json!(0)).is_some());
        // Malformed or unknown type keywords are ignored.
        for t in [
            json!("any"),
            json!(["string", "whatever"]),
            json!([]),
            json!(5),
            json!(["string", 1]),
        ] {
            assert_eq!(rule(json!({"type": t}), json!(42)), None, "{t}");
        }
    }

    #[test]
    fn properties_and_required() {
        let schema = json!({
            "type": "object",
            "properties": {"a": {"type": "string"}, "b": {"type": "integer"}},
            "required": ["a", "b"]
        });
        assert_eq!(
            validate(&schema, &json!({"a": "x", "b": 1, "c": null})),
            Ok(())
        );
        assert_eq!(
            rule(schema.clone(), json!({"b": 1})),
            Some(Rule::MissingRequired {
                name: "a".to_owned()
            })
        );
        let v = validate(&schema, &json!({"a": 1, "b": 1})).expect_err("fails");
        assert_eq!(v.path, vec![prop("a")]);
        // Non-string entries in `required` are ignored; non-object instances skip it.
        assert_eq!(rule(json!({"required": [1, null]}), json!({})), None);
        assert_eq!(rule(json!({"required": ["a"]}), json!("str")), None);
        assert_eq!(
            rule(json!({"properties": 5, "required": "a"}), json!({"x": 1})),
            None
        );
    }

    #[test]
    fn additional_properties() {
        let closed = json!({"properties": {"a": {}}, "additionalProperties": false});
        assert_eq!(rule(closed.clone(), json!({"a": 1})), None);
        assert_eq!(
            rule(closed, json!({"a": 1, "b": 2})),
            Some(Rule::NotDeclared)
        );
        let typed = json!({"properties": {"a": {}}, "additionalProperties": {"type": "integer"}});
        assert_eq!(rule(typed.clone(), json!({"a": "s", "b": 2})), None);
        let v = validate(&typed, &json!({"b": "s"})).expect_err("fails");
        assert_eq!(v.path, vec![prop("b")]);
        assert_eq!(
            v.rule,
            Rule::WrongType {
                expected: vec!["integer"]
            }
        );
        assert_eq!(
            rule(json!({"additionalProperties": true}), json!({"b": 2})),
            None
        );
        // Without `properties` every member is additional.
        assert_eq!(
            rule(json!({"additionalProperties": false}), json!({"b": 2})),
            Some(Rule::NotDeclared)
        );
        assert_eq!(
            rule(json!({"additionalProperties": false}), json!({})),
            None
        );
        // patternProperties present: never fail on undeclared members.
        let patterned = json!({
            "properties": {"a": {"type": "string"}},
            "patternProperties": {"^x-": {}},
            "additionalProperties": false
        });
        assert_eq!(rule(patterned.clone(), json!({"zzz": 1})), None);
        assert!(rule(patterned, json!({"a": 1})).is_some());
        // A declared property whose schema is `false` is forbidden, not undeclared.
        assert_eq!(
            rule(
                json!({"properties": {"a": false}, "additionalProperties": false}),
                json!({"a": 1})
            ),
            Some(Rule::Forbidden)
        );
    }

    #[test]
    fn items_keyword() {
        let schema = json!({"type": "array", "items": {"type": "string"}});
        assert_eq!(rule(schema.clone(), json!(["a", "b"])), None);
        let v = validate(&schema, &json!(["a", 2])).expect_err("fails");
        assert_eq!(v.path, vec![Segment::Index(1)]);
        assert_eq!(
            rule(json!({"items": [{"type": "string"}]}), json!([1, 2])),
            None
        );
        assert_eq!(rule(json!({"items": false}), json!([])), None);
        assert_eq!(
            rule(json!({"items": false}), json!([1])),
            Some(Rule::Forbidden)
        );
        // `items` applies after `prefixItems` only.
        let tuple = json!({"prefixItems": [{"type": "string"}], "items": {"type": "integer"}});
        assert_eq!(rule(tuple.clone(), json!(["a", 1, 2])), None);
        let v = validate(&tuple, &json!(["a", 1, "b"])).expect_err("fails");
        assert_eq!(v.path, vec![Segment::Index(2)]);
    }

    #[test]
    fn enum_and_const() {
        assert_eq!(rule(json!({"enum": ["a", 1, null]}), json!(1.0)), None);
        assert_eq!(rule(json!({"enum": ["a", 1, null]}), json!(null)), None);
        assert_eq!(
            rule(json!({"enum": ["a", 1]}), json!("b")),
            Some(Rule::NotInEnum)
        );
        assert_eq!(rule(json!({"enum": [[1, 2]]}), json!([1, 2])), None);
        assert_eq!(
            rule(json!({"enum": [[1, 2]]}), json!([2, 1])),
            Some(Rule::NotInEnum)
        );
        assert_eq!(rule(json!({"enum": "a"}), json!("b")), None);
        assert_eq!(rule(json!({"const": 1}), json!(1.0)), None);
        assert_eq!(
            rule(
                json!({"const": {"a": [1, {"b": 2.0}]}}),
                json!({"a": [1.0, {"b": 2}]})
            ),
            None
        );
        assert_eq!(
            rule(json!({"const": {"a": 1}}), json!({"a": 1, "b": 2})),
            Some(Rule::ConstMismatch)
        );
        assert_eq!(
            rule(json!({"const": null}), json!(false)),
            Some(Rule::ConstMismatch)
        );
        assert_eq!(
            rule(json!({"const": "1"}), json!(1)),
            Some(Rule::ConstMismatch)
        );
        assert_eq!(
            rule(json!({"const": u64::MAX}), json!(u64::MAX - 1)),
            Some(Rule::ConstMismatch)
        );
    }

    #[test]
    fn numeric_bounds() {
        let s = json!({"minimum": 1, "maximum": 10});
        assert_eq!(rule(s.clone(), json!(1)), None);
        assert_eq!(rule(s.clone(), json!(10.0)), None);
        assert_eq!(rule(s.clone(), json!(0.5)), Some(Rule::BelowMinimum));
        assert_eq!(rule(s.clone(), json!(-1)), Some(Rule::BelowMinimum));
        assert_eq!(rule(s.clone(), json!(11)), Some(Rule::AboveMaximum));
        assert_eq!(rule(s, json!("100")), None);
        let x = json!({"exclusiveMinimum": 0, "exclusiveMaximum": 1.5});
        assert_eq!(rule(x.clone(), json!(0.1)), None);
        assert_eq!(rule(x.clone(), json!(0)), Some(Rule::BelowMinimum));
        assert_eq!(rule(x.clone(), json!(1.5)), Some(Rule::AboveMaximum));
        assert_eq!(rule(x, json!(1)), None);
        // Draft-4 boolean forms and non-numeric bounds are ignored.
        assert_eq!(
            rule(json!({"minimum": 1, "exclusiveMinimum": true}), json!(1)),
            None
        );
        assert_eq!(rule(json!({"minimum": "5"}), json!(1)), None);
        // Large integers compare exactly.
        assert_eq!(
            rule(json!({"maximum": u64::MAX - 1}), json!(u64::MAX)),
            Some(Rule::AboveMaximum)
        );
        assert_eq!(rule(json!({"minimum": i64::MIN}), json!(i64::MIN)), None);
    }

    #[test]
    fn string_lengths_count_scalars() {
        let s = json!({"minLength": 2, "maxLength": 3});
        assert_eq!(rule(s.clone(), json!("ab")), None);
        assert_eq!(rule(s.clone(), json!("世界🙂")), None); // 3 scalars, 10 bytes
        assert_eq!(rule(s.clone(), json!("a")), Some(Rule::TooShort));
        assert_eq!(rule(s.clone(), json!("abcd")), Some(Rule::TooLong));
        assert_eq!(rule(s, json!(12345)), None);
        assert_eq!(
            rule(json!({"maxLength": 2.0}), json!("abc")),
            Some(Rule::TooLong)
        );
        assert_eq!(rule(json!({"maxLength": -1}), json!("abc")), None);
        assert_eq!(rule(json!({"maxLength": 1.5}), json!("abc")), None);
    }

    #[test]
    fn combinators() {
        let any = json!({"anyOf": [{"type": "string"}, {"type": "integer"}]});
        assert_eq!(rule(any.clone(), json!(3)), None);
        assert_eq!(rule(any, json!(true)), Some(Rule::NoAlternativeMatched));
        let one = json!({"oneOf": [{"type": "integer"}, {"type": "number"}]});
        assert_eq!(rule(one.clone(), json!(1.5)), None);
        assert_eq!(
            rule(one.clone(), json!("s")),
            Some(Rule::NotExactlyOneMatched)
        );
        // Several matches are not reported: an ignored keyword (here `pattern`)
        // may be what keeps alternatives apart for a full validator.
        assert_eq!(rule(one, json!(1)), None);
        let patterned = json!({"oneOf": [
            {"type": "string", "pattern": "^a"},
            {"type": "string", "pattern": "^b"}
        ]});
        assert_eq!(rule(patterned, json!("abc")), None);
        let all = json!({"allOf": [{"type": "integer"}, {"minimum": 5}]});
        assert_eq!(rule(all.clone(), json!(6)), None);
        assert_eq!(rule(all, json!(4)), Some(Rule::AllOfFailed));
        // Empty or malformed combinator arrays are ignored.
        assert_eq!(
            rule(json!({"anyOf": [], "oneOf": [], "allOf": []}), json!(1)),
            None
        );
        assert_eq!(rule(json!({"anyOf": {"type": "string"}}), json!(1)), None);
        // Violations inside alternatives report the location of the combinator.
        let nested = json!({"properties": {"o": {"anyOf": [{"type": "string"}]}}});
        let v = validate(&nested, &json!({"o": 1})).expect_err("fails");
        assert_eq!(v.path, vec![prop("o")]);
    }

    #[test]
    fn boolean_and_odd_schemas() {
        assert_eq!(rule(json!(true), json!({"anything": 1})), None);
        assert_eq!(rule(json!(false), json!({})), Some(Rule::Forbidden));
        for s in [
            json!(null),
            json!(1),
            json!("string"),
            json!([{"type": "string"}]),
        ] {
            assert_eq!(rule(s, json!(5)), None);
        }
    }

    #[test]
    fn unknown_keywords_never_fail() {
        let schema = json!({
            "$schema": "https://json-schema.org/draft/2020-12/schema",
            "$ref": "#/$defs/nothing",
            "$defs": {"nothing": false},
            "type": "object",
            "properties": {
                "s": {"type": "string", "pattern": "^[0-9]+$", "format": "email"},
                "a": {"type": "array", "minItems": 5, "uniqueItems": true, "prefixItems": [false]},
                "n": {"not": {}, "multipleOf": 7}
            },
            "if": {"required": ["s"]}, "then": false, "else": false,
            "dependentRequired": {"s": ["zz"]},
            "unevaluatedProperties": false,
            "propertyNames": {"maxLength": 1},
            "minProperties": 10,
            "x-mcp-header": "Whatever"
        });
        let args = json!({"s": "not an email", "a": [1, 1], "n": 3});
        assert_eq!(validate(&schema, &args), Ok(()));
    }

    #[test]
    fn references_accept_and_nullable_allows_null() {
        let schema = json!({
            "properties": {
                "r": {"$ref": "#/$defs/x", "type": "string"},
                "d": {"$dynamicRef": "#node", "const": 1},
                "n": {"type": "string", "nullable": true}
            },
            "$defs": {"x": {"type": "string"}}
        });
        assert_eq!(
            validate(&schema, &json!({"r": 5, "d": 2, "n": null})),
            Ok(())
        );
        assert_eq!(
            rule(schema, json!({"n": 5})),
            Some(Rule::WrongType {
                expected: vec!["string"]
            })
        );
        assert!(rule(json!({"type": "string", "nullable": false}), json!(null)).is_some());
    }

    fn nested_properties(levels: usize, leaf: Value) -> (Value, Value) {
        let mut schema = json!({"type": "string"});
        let mut instance = leaf;
        for _ in 0..levels {
            schema = json!({"type": "object", "properties": {"k": schema}});
            instance = json!({"k": instance});
        }
        (schema, instance)
    }

    #[test]
    fn recursion_depth_is_bounded() {
        let (schema, instance) = nested_properties(10, json!(1));
        let v = validate(&schema, &instance).expect_err("fails within limit");
        assert_eq!(v.path.len(), 10);
        assert_eq!(render_path(&v.path), "k.k.k.k.k.k.k.k.k.k");
        // Deeper than the limit: accepted rather than evaluated.
        let (schema, instance) = nested_properties(MAX_DEPTH + 5, json!(1));
        assert_eq!(validate(&schema, &instance), Ok(()));
        let (schema, instance) = nested_properties(500, json!(1));
        assert_eq!(validate(&schema, &instance), Ok(()));
        // A failure elsewhere in the instance is still reported.
        let (deep, mut instance) = nested_properties(MAX_DEPTH + 5, json!(1));
        let schema = json!({"properties": {"k": deep, "z": {"type": "string"}}});
        if let Some(members) = instance.as_object_mut() {
            members.insert("z".to_owned(), json!(0));
        }
        let v = validate(&schema, &instance).expect_err("z is wrong");
        assert_eq!(v.path, vec![prop("z")]);
    }

    #[test]
    fn step_budget_bounds_exponential_schemas() {
        // Each passing element costs 511 evaluations (a binary tree of allOf).
        let mut tree = json!({"type": "integer"});
        for _ in 0..8 {
            tree = json!({"allOf": [tree.clone(), tree]});
        }
        let schema = json!({"type": "array", "items": tree});
        let ints_then_string = |n: usize| {
            let mut items = vec![json!(1); n];
            items.push(json!("x"));
            Value::Array(items)
        };
        let v = validate(&schema, &ints_then_string(10)).expect_err("fails");
        assert_eq!(v.path, vec![Segment::Index(10)]);
        assert_eq!(v.rule, Rule::AllOfFailed);
        // 1000 * 511 evaluations exceed the budget before the bad element: accepted.
        assert_eq!(validate(&schema, &ints_then_string(1000)), Ok(()));
    }

    #[test]
    fn display_wording_and_paths() {
        let show = |path: Vec<Segment>, rule: Rule| Violation { path, rule }.to_string();
        let path = vec![
            prop("options"),
            prop("items"),
            Segment::Index(2),
            prop("name"),
        ];
        assert_eq!(
            show(path, Rule::TooLong),
            "argument `options.items[2].name` is longer than the tool's inputSchema allows"
        );
        assert_eq!(
            show(
                vec![],
                Rule::MissingRequired {
                    name: "query".to_owned()
                }
            ),
            "the arguments object lacks the property `query`, which the tool's inputSchema requires"
        );
        let hostile = show(
            vec![],
            Rule::MissingRequired {
                name: "`; rm -rf /\n".to_owned(),
            },
        );
        assert_eq!(
            hostile,
            "the arguments object lacks a required property of the tool's inputSchema"
        );
        let long = "a".repeat(65);
        assert!(!show(vec![], Rule::MissingRequired { name: long.clone() }).contains(&long));
        assert_eq!(
            show(vec![prop("bad name"), Segment::Index(0)], Rule::NotInEnum),
            "argument `<property>[0]` is not one of the values the tool's inputSchema allows"
        );
        assert_eq!(
            show(
                vec![prop("n")],
                Rule::WrongType {
                    expected: vec!["string", "number", "null"]
                }
            ),
            "argument `n` has a type that the tool's inputSchema does not allow (expected string, number or null)"
        );
        for rule in [
            Rule::NotDeclared,
            Rule::WrongType {
                expected: vec!["integer"],
            },
            Rule::NotInEnum,
            Rule::ConstMismatch,
            Rule::BelowMinimum,
            Rule::AboveMaximum,
            Rule::TooShort,
            Rule::TooLong,
            Rule::NoAlternativeMatched,
            Rule::NotExactlyOneMatched,
            Rule::AllOfFailed,
            Rule::Forbidden,
        ] {
            let text = show(vec![prop("x")], rule);
            assert!(text.starts_with("argument `x` "), "{text}");
            assert!(!text.contains('\n'));
        }
    }

    #[test]
    fn display_never_shows_values() {
        let schema = json!({
            "properties": {"p": {"enum": ["SCHEMA-SECRET"], "const": "SCHEMA-SECRET"}},
            "required": ["p"]
        });
        let v = validate(&schema, &json!({"p": "INSTANCE-SECRET"})).expect_err("fails");
        let text = v.to_string();
        assert!(!text.contains("SECRET"), "{text}");
    }

    use crate::adapter::mcp::testing::XorShift;

    fn random_value(rng: &mut XorShift, depth: usize) -> Value {
        const KEYS: &[&str] = &[
            "type",
            "properties",
            "required",
            "additionalProperties",
            "items",
            "enum",
            "const",
            "minimum",
            "maximum",
            "exclusiveMinimum",
            "exclusiveMaximum",
            "minLength",
            "maxLength",
            "anyOf",
            "oneOf",
            "allOf",
            "patternProperties",
            "a",
            "b",
        ];
        const TYPES: &[&str] = &[
            "object", "string", "integer", "number", "null", "array", "boolean",
        ];
        match rng.below(if depth > 4 { 6 } else { 9 }) {
            0 => Value::Null,
            1 => Value::Bool(rng.below(2) == 0),
            2 => json!(rng.below(7) as i64 - 3),
            3 => json!((rng.below(13) as f64) / 4.0 - 1.0),
            4 => json!(TYPES.get(rng.below(TYPES.len())).copied().unwrap_or("x")),
            5 => json!(KEYS.get(rng.below(KEYS.len())).copied().unwrap_or("x")),
            6 | 7 => {
                let mut map = Map::new();
                for _ in 0..rng.below(4) {
                    let key = KEYS.get(rng.below(KEYS.len())).copied().unwrap_or("x");
                    map.insert(key.to_owned(), random_value(rng, depth + 1));
                }
                Value::Object(map)
            }
            _ => Value::Array(
                (0..rng.below(4))
                    .map(|_| random_value(rng, depth + 1))
                    .collect(),
            ),
        }
    }

    #[test]
    fn random_schemas_never_panic() {
        let mut rng = XorShift(0xD1B5_4A32_D192_ED03);
        for _ in 0..20_000 {
            let schema = random_value(&mut rng, 0);
            let instance = random_value(&mut rng, 0);
            if let Err(v) = validate(&schema, &instance) {
                let _ = v.to_string();
            }
            let _ = is_object_schema(&schema);
        }
    }
}
