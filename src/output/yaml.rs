//! `--format yaml`: the JSON document re-encoded as block YAML the way the Go reference's
//! encoder (yaml.v3, indent 2) writes it — every mapping's keys in alphabetical order,
//! sequences indented under their key, and `null`, `{}` and `[]` for a null latency, an empty
//! `checks` and an empty `dependencies`.
//!
//! Layout is ours; scalars are `yaml_serde`'s, so its quoting rules decide when a string needs
//! quotes (`'200'`, `'null'`, `'- x'`). A string that would need more than one line (a name
//! with a newline) is written as a JSON string, which is a valid YAML double-quoted scalar.

use serde_json::Value;

/// Renders a JSON value (the result document) as YAML.
pub fn render(value: &Value) -> String {
    let mut out = String::new();
    match value {
        Value::Object(map) if !map.is_empty() => mapping(map, 0, &mut out),
        other => {
            out.push_str(&inline(other));
            out.push('\n');
        }
    }
    out
}

/// A non-empty mapping, one `key: value` per line at `indent`, keys sorted.
fn mapping(map: &serde_json::Map<String, Value>, indent: usize, out: &mut String) {
    let mut entries: Vec<(&String, &Value)> = map.iter().collect();
    entries.sort_by(|a, b| a.0.cmp(b.0));
    for (key, value) in entries {
        push_indent(out, indent);
        out.push_str(&string(key));
        out.push(':');
        block_value(value, indent, out);
    }
}

/// A non-empty sequence at `indent`, each item introduced by `- `.
fn sequence(items: &[Value], indent: usize, out: &mut String) {
    for item in items {
        push_indent(out, indent);
        out.push('-');
        match item {
            Value::Object(map) if !map.is_empty() => {
                // The item's first key goes on the dash line; the rest align under it.
                out.push(' ');
                let mut inner = String::new();
                mapping(map, indent + 2, &mut inner);
                out.push_str(&inner[indent + 2..]);
            }
            Value::Array(items) if !items.is_empty() => {
                out.push(' ');
                let mut inner = String::new();
                sequence(items, indent + 2, &mut inner);
                out.push_str(&inner[indent + 2..]);
            }
            scalar => {
                out.push(' ');
                out.push_str(&inline(scalar));
                out.push('\n');
            }
        }
    }
}

/// What follows `key:`: the value on the same line, or a nested block on the next lines.
fn block_value(value: &Value, indent: usize, out: &mut String) {
    match value {
        Value::Object(map) if !map.is_empty() => {
            out.push('\n');
            mapping(map, indent + 2, out);
        }
        Value::Array(items) if !items.is_empty() => {
            out.push('\n');
            sequence(items, indent + 2, out);
        }
        scalar => {
            out.push(' ');
            out.push_str(&inline(scalar));
            out.push('\n');
        }
    }
}

/// A scalar, or an empty collection, on one line.
fn inline(value: &Value) -> String {
    match value {
        Value::Null => "null".into(),
        Value::Bool(b) => b.to_string(),
        Value::Number(n) => n.to_string(),
        Value::String(s) => string(s),
        Value::Object(_) => "{}".into(),
        Value::Array(_) => "[]".into(),
    }
}

/// A string scalar on one line, quoted as YAML needs. Beyond what `yaml_serde` (YAML 1.2)
/// quotes, plain scalars that a YAML 1.1 reader (PyYAML, Ruby) would take for a boolean,
/// number or date are quoted too, so every reader gets a string back.
fn string(s: &str) -> String {
    match yaml_serde::to_string(s) {
        Ok(text) => {
            let text = text.strip_suffix('\n').unwrap_or(&text);
            if text.contains('\n') || (text == s && yaml_1_1_would_retype(s)) {
                json_string(s)
            } else {
                text.to_string()
            }
        }
        Err(_) => json_string(s),
    }
}

/// YAML 1.1 booleans (`yes`, `off`, …) and anything that starts like a number or date.
fn yaml_1_1_would_retype(s: &str) -> bool {
    const BOOLS: [&str; 11] = [
        "y", "yes", "n", "no", "on", "off", "true", "false", "null", "~", "",
    ];
    BOOLS.contains(&s.to_ascii_lowercase().as_str())
        || s.starts_with(|c: char| c.is_ascii_digit() || matches!(c, '+' | '-' | '.'))
}

fn json_string(s: &str) -> String {
    serde_json::to_string(s).unwrap_or_else(|_| "''".into())
}

fn push_indent(out: &mut String, indent: usize) {
    out.extend(std::iter::repeat_n(' ', indent));
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn the_go_reference_layout() {
        let doc = json!({
            "spec_version": "v1",
            "results": [
                {"target": {"name": "a", "type": "custom"}, "status": "MISCONFIGURED",
                 "latency_ms": null,
                 "checks": {"configuration": {"status": "MISCONFIGURED", "message": "m"}},
                 "dependencies": []},
                {"target": {"name": "b", "type": "http"}, "status": "UNKNOWN",
                 "latency_ms": 1.5, "checks": {},
                 "dependencies": [
                    {"relationship": "downstream", "critical": false,
                     "target": {"name": "c", "type": "http"}, "status": "HEALTHY",
                     "latency_ms": 0.25,
                     "checks": {"reachability": {"status": "HEALTHY",
                                                 "steps": {"tcp": "HEALTHY", "http": "HEALTHY"}}},
                     "dependencies": []}
                 ]}
            ]
        });
        let want = "\
results:
  - checks:
      configuration:
        message: m
        status: MISCONFIGURED
    dependencies: []
    latency_ms: null
    status: MISCONFIGURED
    target:
      name: a
      type: custom
  - checks: {}
    dependencies:
      - checks:
          reachability:
            status: HEALTHY
            steps:
              http: HEALTHY
              tcp: HEALTHY
        critical: false
        dependencies: []
        latency_ms: 0.25
        relationship: downstream
        status: HEALTHY
        target:
          name: c
          type: http
    latency_ms: 1.5
    status: UNKNOWN
    target:
      name: b
      type: http
spec_version: v1
";
        assert_eq!(render(&doc), want);
    }

    #[test]
    fn awkward_strings_round_trip() {
        let names = [
            "plain",
            "",
            "200",
            "null",
            "true",
            "- item",
            "key: value",
            "#comment",
            "a\nb: c\n- d",
            "tab\there",
            "esc\u{1b}[31m",
            "  leading and trailing  ",
            "'single' \"double\"",
            "[REDACTED]",
            "ünïcödé → ✓",
            "{braces}",
            "*alias",
            "&anchor",
            "!tag",
            "%directive",
            "@at",
            "`backtick`",
            "|",
            ">",
            "~",
            "1e3",
            "0x1F",
            ".inf",
            "yes",
        ];
        for name in names {
            let doc =
                json!({"target": {"name": name, "id": name}, "list": [name, [name], {name: name}]});
            let text = render(&doc);
            let back: Value =
                yaml_serde::from_str(&text).unwrap_or_else(|e| panic!("{name:?}: {e}\n{text}"));
            assert_eq!(back, doc, "{name:?}:\n{text}");
        }
    }

    #[test]
    fn yaml_1_1_lookalikes_are_quoted() {
        for s in [
            "yes",
            "No",
            "ON",
            "off",
            "y",
            "1_000",
            "2024-01-01",
            "1:30",
            ".5",
            "+1",
        ] {
            let text = render(&json!({ "name": s }));
            assert!(
                text == format!("name: \"{s}\"\n") || text == format!("name: '{s}'\n"),
                "{text}"
            );
        }
        assert_eq!(render(&json!({"name": "api-1"})), "name: api-1\n");
    }

    #[test]
    fn numbers_and_booleans_keep_their_type() {
        let doc = json!({"a": 404, "b": 0.001, "c": true, "d": null, "e": 12345.678});
        let text = render(&doc);
        assert_eq!(text, "a: 404\nb: 0.001\nc: true\nd: null\ne: 12345.678\n");
        let back: Value = yaml_serde::from_str(&text).unwrap_or_default();
        assert_eq!(back, doc);
    }
}
