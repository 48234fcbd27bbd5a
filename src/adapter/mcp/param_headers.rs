//! `x-mcp-header` parameter bindings (2026-07-28 over HTTP): which tool arguments a client
//! mirrors into `Mcp-Param-<Name>` headers, the rules that make an annotation valid, and the
//! header-value encoding with the protocol's Base64 sentinel.
//!
//! A tool whose annotations break a rule is excluded from the discovered inventory (the
//! reason is an [`Exclusion`], in our own words). The bindings of valid tools, and the value
//! encoding, serve the functional call.

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use serde_json::Value;

/// The annotation keyword.
const ANNOTATION: &str = "x-mcp-header";
/// Schema nesting deeper than this makes a tool invalid.
const MAX_DEPTH: usize = 64;
/// The largest integer a header may mirror (2^53 − 1).
const MAX_SAFE_INTEGER: u64 = (1 << 53) - 1;

/// Why a tool's header annotations are invalid.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Exclusion {
    /// An annotation value is not a string.
    NotAString,
    /// A header name is empty or not an RFC 9110 token.
    NotAToken,
    /// Two header names are equal ignoring case.
    Duplicate,
    /// An annotated property is not of type string, integer or boolean.
    UnsupportedType,
    /// An annotation sits on the root schema, or somewhere not reachable from the root
    /// through `properties` alone.
    Unreachable,
    /// A `properties` member is not an object.
    MalformedProperties,
    /// The schema nests deeper than the walk allows.
    TooDeep,
}

impl Exclusion {
    /// Our description, for evidence.
    pub fn as_str(self) -> &'static str {
        match self {
            Exclusion::NotAString => "x-mcp-header annotation is not a string",
            Exclusion::NotAToken => "x-mcp-header name is not an HTTP token",
            Exclusion::Duplicate => "x-mcp-header names repeat ignoring case",
            Exclusion::UnsupportedType => {
                "x-mcp-header property is not a string, integer or boolean"
            }
            Exclusion::Unreachable => "x-mcp-header is not on a property reachable by properties",
            Exclusion::MalformedProperties => "input schema properties is not an object",
            Exclusion::TooDeep => "input schema nests too deeply",
        }
    }
}

/// The JSON type a binding mirrors.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ParamType {
    /// A string, sent as is (or Base64-encoded).
    String,
    /// An integer within ±(2^53 − 1), sent in decimal.
    Integer,
    /// A boolean, sent as `true`/`false`.
    Boolean,
}

/// One argument mirrored into a header.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ParamBinding {
    /// Property names from the arguments' root to the value.
    pub path: Vec<String>,
    /// The header name after `Mcp-Param-`.
    pub header: String,
    /// The value's type.
    pub kind: ParamType,
}

/// The bindings a tool's `inputSchema` declares, or why its annotations are invalid.
pub fn bindings(input_schema: &Value) -> Result<Vec<ParamBinding>, Exclusion> {
    let mut found = Vec::new();
    walk(input_schema, &mut Vec::new(), true, 0, &mut found)?;
    for (i, b) in found.iter().enumerate() {
        if found
            .iter()
            .take(i)
            .any(|a| a.header.eq_ignore_ascii_case(&b.header))
        {
            return Err(Exclusion::Duplicate);
        }
    }
    Ok(found)
}

/// Visits every node. `reachable` holds along chains of `properties` from the root; any other
/// keyword or array element makes its subtree unreachable, and an annotation there invalid.
fn walk(
    node: &Value,
    path: &mut Vec<String>,
    reachable: bool,
    depth: usize,
    found: &mut Vec<ParamBinding>,
) -> Result<(), Exclusion> {
    if depth > MAX_DEPTH {
        return Err(Exclusion::TooDeep);
    }
    match node {
        Value::Array(items) => {
            for item in items {
                walk(item, path, false, depth + 1, found)?;
            }
        }
        Value::Object(members) => {
            if let Some(annotation) = members.get(ANNOTATION) {
                found.push(binding(annotation, members.get("type"), path, reachable)?);
            }
            for (key, value) in members {
                match key.as_str() {
                    ANNOTATION => {}
                    "properties" => {
                        let Value::Object(properties) = value else {
                            return Err(Exclusion::MalformedProperties);
                        };
                        for (name, schema) in properties {
                            path.push(name.clone());
                            let walked = walk(schema, path, reachable, depth + 1, found);
                            path.pop();
                            walked?;
                        }
                    }
                    _ => walk(value, path, false, depth + 1, found)?,
                }
            }
        }
        _ => {}
    }
    Ok(())
}

fn binding(
    annotation: &Value,
    kind: Option<&Value>,
    path: &[String],
    reachable: bool,
) -> Result<ParamBinding, Exclusion> {
    if !reachable || path.is_empty() {
        return Err(Exclusion::Unreachable);
    }
    let Value::String(header) = annotation else {
        return Err(Exclusion::NotAString);
    };
    if !is_token(header) {
        return Err(Exclusion::NotAToken);
    }
    let kind = match kind.and_then(Value::as_str) {
        Some("string") => ParamType::String,
        Some("integer") => ParamType::Integer,
        Some("boolean") => ParamType::Boolean,
        _ => return Err(Exclusion::UnsupportedType),
    };
    Ok(ParamBinding {
        path: path.to_vec(),
        header: header.clone(),
        kind,
    })
}

/// Whether `s` is a non-empty RFC 9110 token (`1*tchar`).
pub fn is_token(s: &str) -> bool {
    !s.is_empty()
        && s.bytes().all(|b| {
            b.is_ascii_alphanumeric()
                || matches!(
                    b,
                    b'!' | b'#'
                        | b'$'
                        | b'%'
                        | b'&'
                        | b'\''
                        | b'*'
                        | b'+'
                        | b'-'
                        | b'.'
                        | b'^'
                        | b'_'
                        | b'`'
                        | b'|'
                        | b'~'
                )
        })
}

/// An argument that does not fit its binding's type.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ArgumentMismatch;

/// The encoded header value a binding takes from `arguments`, or `None` when the argument is
/// absent or `null` (the header is then omitted).
pub fn header_value(
    arguments: &Value,
    binding: &ParamBinding,
) -> Result<Option<String>, ArgumentMismatch> {
    let mut value = arguments;
    for name in &binding.path {
        match value.get(name) {
            Some(next) => value = next,
            None => return Ok(None),
        }
    }
    let text = match (binding.kind, value) {
        (_, Value::Null) => return Ok(None),
        (ParamType::String, Value::String(s)) => encode_value(s),
        (ParamType::Boolean, Value::Bool(b)) => b.to_string(),
        (ParamType::Integer, Value::Number(n)) => integer(n).ok_or(ArgumentMismatch)?,
        _ => return Err(ArgumentMismatch),
    };
    Ok(Some(text))
}

fn integer(n: &serde_json::Number) -> Option<String> {
    if let Some(u) = n.as_u64() {
        return (u <= MAX_SAFE_INTEGER).then(|| u.to_string());
    }
    if let Some(i) = n.as_i64() {
        return (i.unsigned_abs() <= MAX_SAFE_INTEGER).then(|| i.to_string());
    }
    let f = n.as_f64()?;
    // `1e2` is the integer 100; 1.5 and anything beyond 2^53 − 1 are not.
    #[allow(clippy::cast_precision_loss, clippy::cast_possible_truncation)]
    let fits = f.fract() == 0.0 && f.abs() <= MAX_SAFE_INTEGER as f64;
    #[allow(clippy::cast_possible_truncation)]
    fits.then(|| (f as i64).to_string())
}

/// Encodes a value for `Mcp-Name` or `Mcp-Param-*`: verbatim when it is printable ASCII
/// (0x20–0x7E, so no TAB) without leading or trailing whitespace and not itself shaped like
/// the sentinel; otherwise `=?base64?<standard padded Base64 of the UTF-8 bytes>?=`.
pub fn encode_value(value: &str) -> String {
    let printable = value.bytes().all(|b| (0x20..=0x7E).contains(&b));
    let trimmed = value.trim() == value;
    let sentinel_shaped = value.starts_with("=?base64?") && value.ends_with("?=");
    if printable && trimmed && !sentinel_shaped {
        value.to_owned()
    } else {
        format!("=?base64?{}?=", STANDARD.encode(value.as_bytes()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// Upstream §17 F30: a valid schema with nested and top-level bindings.
    #[test]
    fn nested_bindings_and_values() {
        let schema = json!({"type":"object","properties":{
            "nested":{"type":"object","properties":{
                "number":{"type":"integer","x-mcp-header":"Number"},
                "enabled":{"type":"boolean","x-mcp-header":"Enabled"}}},
            "text":{"type":"string","x-mcp-header":"Text"}}});
        let found = bindings(&schema).expect("valid");
        assert_eq!(found.len(), 3);
        let args = json!({"nested":{"number":42,"enabled":true},"text":" padded "});
        let value_of = |header: &str| {
            let b = found.iter().find(|b| b.header == header).expect("bound");
            header_value(&args, b).expect("fits")
        };
        assert_eq!(value_of("Number").as_deref(), Some("42"));
        assert_eq!(value_of("Enabled").as_deref(), Some("true"));
        assert!(value_of("Text").is_some_and(|v| v.starts_with("=?base64?")));
    }

    /// Upstream §17 F31–F35, plus the remaining rules.
    #[test]
    fn invalid_annotations() {
        let cases = [
            (
                json!({"type":"string","x-mcp-header":"Root"}),
                Exclusion::Unreachable,
            ),
            (
                json!({"type":"object","properties":{"n":{"type":"number","x-mcp-header":"N"}}}),
                Exclusion::UnsupportedType,
            ),
            (
                json!({"type":"object","properties":{"n":{"x-mcp-header":"N"}}}),
                Exclusion::UnsupportedType,
            ),
            (
                json!({"type":"object","properties":{"n":{"type":"string","x-mcp-header":"bad name"}}}),
                Exclusion::NotAToken,
            ),
            (
                json!({"type":"object","properties":{"n":{"type":"string","x-mcp-header":""}}}),
                Exclusion::NotAToken,
            ),
            (
                json!({"type":"object","properties":{"n":{"type":"string","x-mcp-header":7}}}),
                Exclusion::NotAString,
            ),
            (
                json!({"type":"object","properties":{
                    "a":{"type":"string","x-mcp-header":"Name"},
                    "b":{"type":"string","x-mcp-header":"name"}}}),
                Exclusion::Duplicate,
            ),
            (
                json!({"type":"object","anyOf":[{"properties":{"a":{"type":"string","x-mcp-header":"A"}}}]}),
                Exclusion::Unreachable,
            ),
            (
                json!({"type":"object","properties":{"a":{"type":"array","items":{"type":"string","x-mcp-header":"A"}}}}),
                Exclusion::Unreachable,
            ),
            (
                json!({"type":"object","properties":[]}),
                Exclusion::MalformedProperties,
            ),
        ];
        for (schema, expected) in cases {
            assert_eq!(bindings(&schema), Err(expected), "{schema}");
        }
        let mut deep = json!({"type":"string"});
        for _ in 0..70 {
            deep = json!({"type":"object","properties":{"d":deep}});
        }
        assert_eq!(bindings(&deep), Err(Exclusion::TooDeep));
        assert_eq!(bindings(&json!({"type":"object"})), Ok(vec![]));
    }

    /// Upstream §17 F36–F37 and the integer rendering.
    #[test]
    fn integer_values() {
        let b = ParamBinding {
            path: vec!["n".into()],
            header: "N".into(),
            kind: ParamType::Integer,
        };
        let at = |v: Value| header_value(&json!({ "n": v }), &b);
        assert_eq!(at(json!(9_007_199_254_740_992_u64)), Err(ArgumentMismatch));
        assert_eq!(
            at(json!(9_007_199_254_740_991_u64)),
            Ok(Some("9007199254740991".into()))
        );
        assert_eq!(
            at(json!(-9_007_199_254_740_991_i64)),
            Ok(Some("-9007199254740991".into()))
        );
        assert_eq!(at(Value::Null), Ok(None));
        let hundred: Value = serde_json::from_str("1e2").expect("json");
        assert_eq!(at(hundred), Ok(Some("100".into())));
        assert_eq!(at(json!(1.5)), Err(ArgumentMismatch));
        assert_eq!(at(json!("42")), Err(ArgumentMismatch));
        assert_eq!(header_value(&json!({}), &b), Ok(None));
        assert_eq!(
            header_value(&json!({"n":{"deeper":1}}), &b),
            Err(ArgumentMismatch)
        );
    }

    /// mcp-protocol.md §4.5's table.
    #[test]
    fn sentinel_encoding() {
        let table = [
            ("us-west1", "us-west1"),
            ("ticket #42", "ticket #42"),
            ("café", "=?base64?Y2Fmw6k=?="),
            ("  eu-west-1", "=?base64?ICBldS13ZXN0LTE=?="),
            ("a\tb", "=?base64?YQli?="),
            ("line1\nline2", "=?base64?bGluZTEKbGluZTI=?="),
            ("=?base64?x?=", "=?base64?PT9iYXNlNjQ/eD89?="),
            ("", ""),
        ];
        for (plain, encoded) in table {
            assert_eq!(encode_value(plain), encoded, "{plain:?}");
        }
        assert!(encode_value("search 世界").starts_with("=?base64?"));
    }
}
