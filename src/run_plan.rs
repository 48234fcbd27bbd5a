//! The run plan: a loaded configuration with every environment reference resolved once, before
//! the engine starts.
//!
//! This is the step between configuration and engine. The configuration names variables
//! (`auth.bearer_env`, `mcp.stdio.env`, `mcp.oauth.client_secret_env`, …); the plan reads each
//! of them exactly once per run, keeps the values as [`Secret`]s (which the output's redaction
//! pass receives), and hands every target a [`TargetPlan`]: its configuration, the credential
//! it sends, the environment a stdio child gets, and which references are missing. The engine
//! passes a target's plan to its adapter without looking inside it; adapters never read the
//! environment.

use std::sync::Arc;

use crate::config::{Config, OAuthOptions, Target};
use crate::contract::Secret;
use crate::oauth::Settings;
use crate::runtime::SecretLog;

/// A configuration ready to run.
#[derive(Clone, Debug)]
pub struct RunPlan {
    /// The configuration (graph, concurrency, targets).
    pub config: Config,
    /// One plan per node of `config.nodes`, in the same order.
    pub targets: Vec<Arc<TargetPlan>>,
    secrets: SecretLog,
}

/// Everything an adapter gets about one target for one run.
#[derive(Clone, Debug)]
pub struct TargetPlan {
    /// The target as configured.
    pub target: Arc<Target>,
    /// What the target's requests carry in `Authorization`.
    pub credential: Credential,
    /// A stdio server's mapped environment (child name, value), in configuration order.
    pub child_env: Vec<(String, Secret)>,
    /// Referenced variables that are unset or empty (the engine reports them as
    /// MISCONFIGURED before any check).
    pub missing_env: Vec<String>,
    /// Where secrets learned during the run (OAuth tokens) are recorded for redaction.
    pub secrets: SecretLog,
}

/// The credential a target's requests carry.
#[derive(Clone, Debug)]
pub enum Credential {
    /// None.
    None,
    /// A static bearer token from the environment (`auth.bearer_env`, `--bearer-env`).
    Bearer {
        /// The variable it came from (its name only appears in evidence).
        variable: String,
        /// The token.
        token: Secret,
    },
    /// Tokens acquired with OAuth (`mcp.oauth`), with its secrets resolved.
    OAuth(Arc<Settings>),
}

impl RunPlan {
    /// Resolves every reference from the process environment.
    pub fn from_env(config: Config) -> RunPlan {
        RunPlan::resolve(config, |name| std::env::var(name).ok())
    }

    /// Resolves every reference with `lookup`. Each variable is read once, however many
    /// targets name it; unset and empty values are missing.
    pub fn resolve(config: Config, lookup: impl Fn(&str) -> Option<String>) -> RunPlan {
        let mut values: Vec<(String, Option<Secret>)> = Vec::new();
        let mut value = |name: &str| -> Option<Secret> {
            if let Some((_, v)) = values.iter().find(|(n, _)| n == name) {
                return v.clone();
            }
            let v = lookup(name).filter(|v| !v.is_empty()).map(Secret::new);
            values.push((name.to_string(), v.clone()));
            v
        };
        let secrets = SecretLog::new();
        let mut targets = Vec::with_capacity(config.nodes.len());
        for target in &config.nodes {
            let missing_env = target
                .env_refs()
                .into_iter()
                .filter(|name| value(name).is_none())
                .map(str::to_string)
                .collect();
            let oauth = target.mcp.as_ref().and_then(|m| m.oauth.as_ref());
            let credential = match (&target.bearer_env, oauth) {
                (Some(variable), _) => match value(variable) {
                    Some(token) => Credential::Bearer {
                        variable: variable.clone(),
                        token,
                    },
                    None => Credential::None,
                },
                (None, Some(options)) => Credential::OAuth(Arc::new(settings(options, &mut value))),
                (None, None) => Credential::None,
            };
            let mut child_env = Vec::new();
            if let Some(stdio) = target.mcp.as_ref().and_then(|m| m.stdio.as_ref()) {
                for (child, host) in &stdio.env {
                    if let Some(secret) = value(host) {
                        child_env.push((child.clone(), secret));
                    }
                }
            }
            targets.push(Arc::new(TargetPlan {
                target: Arc::new(target.clone()),
                credential,
                child_env,
                missing_env,
                secrets: secrets.clone(),
            }));
        }
        for secret in values.into_iter().filter_map(|(_, v)| v) {
            secrets.record(&secret);
        }
        RunPlan {
            config,
            targets,
            secrets,
        }
    }

    /// Every secret of the run so far — the environment's, and tokens learned during it —
    /// for the redaction pass.
    pub fn secrets(&self) -> Vec<Secret> {
        self.secrets.values()
    }
}

/// `mcp.oauth` with its variables resolved.
fn settings(options: &OAuthOptions, value: &mut dyn FnMut(&str) -> Option<Secret>) -> Settings {
    Settings {
        configured: options.clone(),
        client_secret: options.client_secret_env.as_deref().and_then(&mut *value),
        refresh_token: options.refresh_token_env.as_deref().and_then(&mut *value),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::load_str;

    #[test]
    fn every_reference_is_read_once_and_missing_ones_are_named() {
        let config = load_str(
            "version: v1
targets:
  - {name: a, type: http, endpoint: 'http://a/', auth: {bearer_env: TOKEN}}
  - {name: b, type: http, endpoint: 'http://b/', auth: {bearer_env: TOKEN}}
  - name: c
    type: mcp
    endpoint: stdio://c
    mcp:
      transport: stdio
      stdio: {command: server, env: {API_KEY: HOST_KEY, EMPTY: UNSET}}
",
        )
        .expect("valid");
        let reads = std::cell::Cell::new(0);
        let plan = RunPlan::resolve(config, |name| {
            reads.set(reads.get() + 1);
            match name {
                "TOKEN" => Some("tok".into()),
                "HOST_KEY" => Some("key".into()),
                "UNSET" => Some(String::new()),
                _ => None,
            }
        });
        assert_eq!(reads.get(), 3, "TOKEN is read once for two targets");
        assert!(matches!(
            &plan.targets[0].credential,
            Credential::Bearer { variable, token } if variable == "TOKEN" && token.expose() == "tok"
        ));
        assert!(matches!(
            &plan.targets[1].credential,
            Credential::Bearer { variable, .. } if variable == "TOKEN"
        ));
        let c = &plan.targets[2];
        assert!(matches!(c.credential, Credential::None));
        assert_eq!(
            c.child_env,
            vec![("API_KEY".to_string(), Secret::new("key".into()))]
        );
        assert_eq!(c.missing_env, vec!["UNSET".to_string()]);
        let mut secrets: Vec<String> = plan
            .secrets()
            .iter()
            .map(|s| s.expose().to_string())
            .collect();
        secrets.sort_unstable();
        assert_eq!(secrets, ["key", "tok"]);
    }
}
