//! OAuth end to end through the built binary, against the OAuth lab (tests/interop/oauth.rs):
//! a real authorization server (oidc-provider) and MCP servers protected by the official
//! SDKs' own resource-server pieces, all on 127.0.0.1, plus the official conformance
//! suite's client `auth/*` scenarios run against the binary through a wrapper.
//!
//! Every grant (`client_credentials` with Basic and with post, `refresh_token` from
//! `refresh_token_env`, `authorization_code` through `agenthealth login` driven by the
//! scripted browser) in both eras against both protected servers; the quirks a real
//! authorization server has (down-scoping, rotation with reuse detection, form-encoded
//! Basic secrets, a path issuer); and never a token or a secret in any output.
//!
//! Each test starts its own authorization server and protected servers. The lab must be
//! installed (`.ci/interop-setup`, which `make test` runs first); without it these tests
//! fail saying what is missing.
//!
//! `harness`: the targets, configurations and the `login` driver; `grants`: the grants a
//! check runs by itself; `authorization_code`: `agenthealth login` and the tokens it saves;
//! `conformance`: the official suite's client scenarios; `disk_faults`: token files on a
//! volume that fills up or fails, against the rotating server; `python_sdk`: the
//! authorization server built on the Python SDK's own auth routes; `oidc_provider`:
//! oidc-provider's own policies (PAR required, its refresh-token policy, registration);
//! `registration`: `login --register` and the client it saves.

mod authorization_code;
mod conformance;
mod disk_faults;
mod grants;
mod harness;
mod oidc_provider;
mod python_sdk;
mod registration;
