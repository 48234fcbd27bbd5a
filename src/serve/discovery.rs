//! `GET /targets`: the configured top-level targets in Prometheus's HTTP service discovery
//! format (`http_sd_configs`), so a Prometheus can discover what one `serve` knows and scrape
//! each through `/probe?target=NAME`.
//!
//! One group per distinct top-level name (repeated names are one target of `/probe`, as they
//! are one label set of `/metrics`), in declaration order: the name as the group's only
//! target, and `__meta_agenthealth_target_type` (and `__meta_agenthealth_target_id` when the
//! target has an id) as its labels, which a job's relabelling may keep. Never an endpoint.
//! Names and ids are redacted like everything `serve` publishes.

use serde_json::{Map, Value, json};

use crate::config::Config;
use crate::output::Redactor;

/// The body of `/targets`: compact JSON, keys sorted, a final newline.
pub fn targets_body(config: &Config, redactor: &Redactor) -> String {
    let mut seen: Vec<&str> = Vec::new();
    let mut groups = Vec::new();
    for &root in &config.roots {
        let target = &config.nodes[root];
        if seen.contains(&target.name.as_str()) {
            continue;
        }
        seen.push(&target.name);
        let mut labels = Map::new();
        labels.insert(
            "__meta_agenthealth_target_type".into(),
            Value::from(target.kind.as_str()),
        );
        if let Some(id) = &target.id {
            labels.insert(
                "__meta_agenthealth_target_id".into(),
                Value::from(redactor.apply_to_id(id)),
            );
        }
        groups.push(json!({
            "labels": labels,
            "targets": [redactor.apply(&target.name)],
        }));
    }
    let mut body = Value::Array(groups).to_string();
    body.push('\n');
    body
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_group_per_top_level_name_with_its_type_and_id() {
        let config = crate::config::load_str(
            "version: v1\ntargets:\n  - name: notes \"mcp\"\n    id: notes\n    type: mcp\n    endpoint: http://a/\n    dependencies:\n      - name: db\n        type: http\n        endpoint: http://db/\n  - name: web\n    type: http\n    endpoint: http://b/\n  - name: web\n    type: http\n    endpoint: http://c/\n  - name: secret-name\n    type: http\n    endpoint: http://d/\n",
        )
        .expect("config");
        let body = targets_body(&config, &Redactor::new(["secret-name"]));
        assert_eq!(
            body,
            concat!(
                r#"[{"labels":{"__meta_agenthealth_target_id":"notes","__meta_agenthealth_target_type":"mcp"},"targets":["notes \"mcp\""]},"#,
                r#"{"labels":{"__meta_agenthealth_target_type":"http"},"targets":["web"]},"#,
                r#"{"labels":{"__meta_agenthealth_target_type":"http"},"targets":["[REDACTED]"]}]"#,
                "\n"
            )
        );
        assert!(!body.contains("http://"), "never an endpoint");
    }
}
