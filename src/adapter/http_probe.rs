//! The HTTP adapter (`http`, `api`, `gateway`, `router`): passive HEAD/GET probes and the
//! opted-in GET with body matching, over the network layer ([`crate::net`]).
//!
//! Dimensions (upstream contract §6):
//! * **configuration** (offline): the endpoint parses, is `http`/`https`, names a host, has
//!   no userinfo and no fragment; the credential has no control byte other than TAB; for
//!   `https`, the host is a name a certificate can be checked against and the trust store
//!   loads; the proxy variable for the scheme, if any, is usable. Otherwise MISCONFIGURED,
//!   with no network traffic at all.
//! * **reachability**: the passive method (`http.method`, else HEAD; GET for `gateway` and
//!   `router`). Any HTTP response is HEALTHY, its head time is the latency; the stages
//!   (dns, tcp, tls, http) are the steps.
//! * **authentication**: 401/403 → MISCONFIGURED `http_auth`; any other status HEALTHY.
//! * **protocol**: 401/403 → MISCONFIGURED `http_auth` (even when listed as expected); a
//!   status outside `expected_status` (default 2xx) → UNHEALTHY `http_status`; a required
//!   header missing or different → UNHEALTHY `http_headers`.
//! * **functional** (active): always GET, the same status/header rules, then, with
//!   `body_contains`, at most `max_body_bytes + 1` bytes read: over the limit → UNKNOWN
//!   `http_body_limit`; text missing → UNHEALTHY `http_body`; a body cut or stalled → UNKNOWN.
//!
//! One response serves the passive dimensions of a run: authentication and protocol judge
//! the response reachability already received (the Go reference's defaults issue "HEAD only"
//! and no GET; we also avoid repeating the HEAD). Functional always makes its own GET. No
//! redirect is ever followed (a 3xx is the response); TLS is always verified.
//!
//! Evidence keys: `method`, `http_status`, `failure`, `response_reused`, `header_mismatch`,
//! `body_bytes`, `max_body_bytes`, and for configuration `endpoint`, `credential`,
//! `trust_store`, `trust_store_source`, `trust_store_certs`, `trust_store_error`,
//! `trust_store_variable`, `proxy`, `proxy_error`. Never server text, never the URL.

use crate::result::Key;
use std::sync::Arc;

use crate::adapter::{Adapter, TargetRun, credential};
use crate::run_plan::TargetPlan;

use crate::config::{DEFAULT_MAX_BODY_BYTES, HttpMethod, HttpOptions};
use crate::contract::TargetType;
use crate::contract::{Dimension, Status};
use crate::net::{self, Client, Endpoint, HeaderMap, Method, Request, Reuse};
use crate::result::reason::{HttpFailure, Note, Reason};
use crate::result::{Fact, Observation};
use crate::runtime::Attempt;

/// HEAD/GET probes of an HTTP endpoint.
pub struct HttpAdapter;

impl Adapter for HttpAdapter {
    fn dimensions(&self) -> &'static [Dimension] {
        &[
            Dimension::Reachability,
            Dimension::Authentication,
            Dimension::Protocol,
            Dimension::Functional,
        ]
    }

    fn start(&self, ctx: Arc<TargetPlan>) -> Box<dyn TargetRun> {
        Box::new(HttpRun {
            client: Client::within(Reuse::Fresh, ctx.target.allow.clone()),
            ctx,
            setup: None,
            passive: None,
        })
    }
}

/// One target's run: the validated setup, the client and the passive response.
struct HttpRun {
    ctx: Arc<TargetPlan>,
    client: Client,
    setup: Option<Result<Setup, Observation>>,
    passive: Option<Passive>,
}

/// What the configuration check established.
struct Setup {
    endpoint: Endpoint,
    authorization: Option<String>,
    passive_method: Method,
    options: HttpOptions,
}

/// The passive response, kept for the other passive dimensions of the run.
struct Passive {
    status: u16,
    headers: HeaderMap,
}

impl TargetRun for HttpRun {
    fn configure(&mut self) -> Observation {
        self.ensure_setup();
        match &self.setup {
            None => Observation::new(Status::Unknown),
            Some(Err(obs)) => obs.clone(),
            Some(Ok(setup)) => {
                let mut obs = Observation::healthy()
                    .with(Key::Method, Fact::Word(setup.passive_method.as_str()));
                if setup.endpoint.is_https() {
                    if let Ok(store) = net::trust::process_store() {
                        store.write_evidence(&mut obs.evidence);
                    }
                }
                if let Ok(Some(variable)) = self.client.proxy_variable(&setup.endpoint) {
                    obs.evidence.set(Key::Proxy, Fact::Word(variable));
                }
                obs
            }
        }
    }

    fn check(&mut self, dim: Dimension, attempt: &Attempt) -> Observation {
        self.ensure_setup();
        let HttpRun {
            client,
            setup,
            passive,
            ..
        } = self;
        let setup = match setup {
            Some(Ok(setup)) => setup,
            Some(Err(obs)) => return obs.clone(),
            None => return Observation::new(Status::Unknown),
        };
        match dim {
            Dimension::Reachability => reachability(client, setup, passive, attempt),
            Dimension::Authentication | Dimension::Protocol => {
                let obs = match passive_response(client, setup, passive, attempt) {
                    Ok(obs) => obs,
                    Err(obs) => return obs,
                };
                let Some(p) = passive.as_ref() else {
                    return Observation::new(Status::Unknown);
                };
                let verdict = if dim == Dimension::Authentication {
                    accepts_credentials(p.status)
                } else {
                    judge(p.status, &p.headers, &setup.options)
                };
                match verdict {
                    Ok(()) => obs,
                    Err(failed) => merge(obs, head_facts(failed, setup, p.status, &p.headers)),
                }
            }
            Dimension::Functional => functional(client, setup, attempt),
            _ => Observation::failed(
                Status::Misconfigured,
                Reason::Engine(Note::DimensionUnsupported),
            ),
        }
    }

    fn discard(&mut self) {
        self.passive = None;
        self.client.discard();
    }
}

impl HttpRun {
    /// Validates the target once per run (offline).
    fn ensure_setup(&mut self) {
        if self.setup.is_none() {
            self.setup = Some(validate(&self.ctx, &self.client));
        }
    }
}

/// The configuration rules. No network.
fn validate(ctx: &TargetPlan, client: &Client) -> Result<Setup, Observation> {
    let target = &ctx.target;
    let authorization = credential::static_header(&ctx.credential);
    let endpoint = net::preflight(&target.endpoint, authorization.as_deref(), client)?;
    let mut options = target.http.clone().unwrap_or_default();
    if options.max_body_bytes == 0 {
        options.max_body_bytes = DEFAULT_MAX_BODY_BYTES;
    }
    let passive_method = match options.method {
        Some(HttpMethod::Head) => Method::Head,
        Some(HttpMethod::Get) => Method::Get,
        None if matches!(target.kind, TargetType::Gateway | TargetType::Router) => Method::Get,
        None => Method::Head,
    };
    Ok(Setup {
        endpoint,
        authorization,
        passive_method,
        options,
    })
}

/// Control bytes (below 0x20, except TAB) and DEL cannot travel in a header value.
/// One exchange with the setup's endpoint and credential.
fn exchange(
    client: &mut Client,
    setup: &Setup,
    method: Method,
    attempt: &Attempt,
) -> Result<net::Response, net::NetError> {
    let mut req = Request::new(method, &setup.endpoint);
    if let Some(auth) = setup.authorization.as_deref() {
        req = req.header("Authorization", auth);
    }
    client.send(attempt, &req)
}

/// A failure's observation, with the method that failed and the configured host and port it
/// was sent to.
fn failed(f: &net::NetError, setup: &Setup, method: Method) -> Observation {
    f.observation()
        .with(Key::Method, Fact::Word(method.as_str()))
        .with(Key::Address, Fact::Config(setup.endpoint.address()))
}

/// An observation of a received response: HEALTHY, its stages and status.
fn responded(resp: &net::Response, method: Method) -> Observation {
    let mut obs = Observation::healthy()
        .responded()
        .with(Key::Method, Fact::Word(method.as_str()))
        .with(Key::HttpStatus, Fact::Int(i64::from(resp.status())));
    resp.timings().write_steps(&mut obs.steps);
    obs
}

fn reachability(
    client: &mut Client,
    setup: &Setup,
    passive: &mut Option<Passive>,
    attempt: &Attempt,
) -> Observation {
    *passive = None;
    match exchange(client, setup, setup.passive_method, attempt) {
        Err(f) => failed(&f, setup, setup.passive_method),
        Ok(resp) => {
            let mut obs = responded(&resp, setup.passive_method);
            obs.latency = resp.timings().latency;
            *passive = Some(Passive {
                status: resp.status(),
                headers: resp.headers().clone(),
            });
            obs
        }
    }
}

/// Makes sure `passive` holds the passive response for authentication and protocol:
/// reachability's, or a new one if there is none (a dimension checked on its own). Returns a
/// HEALTHY observation saying where the response came from, or the failure.
fn passive_response(
    client: &mut Client,
    setup: &Setup,
    passive: &mut Option<Passive>,
    attempt: &Attempt,
) -> Result<Observation, Observation> {
    if let Some(p) = passive.as_ref() {
        attempt.mark_response();
        return Ok(Observation::healthy()
            .responded()
            .with(Key::Method, Fact::Word(setup.passive_method.as_str()))
            .with(Key::HttpStatus, Fact::Int(i64::from(p.status)))
            .with(Key::ResponseReused, Fact::Bool(true)));
    }
    match exchange(client, setup, setup.passive_method, attempt) {
        Err(f) => Err(failed(&f, setup, setup.passive_method)),
        Ok(resp) => {
            *passive = Some(Passive {
                status: resp.status(),
                headers: resp.headers().clone(),
            });
            Ok(responded(&resp, setup.passive_method))
        }
    }
}

/// The authentication rule: 401 and 403 mean the credential (or its absence) was refused.
fn accepts_credentials(status: u16) -> Result<(), Observation> {
    if status == 401 || status == 403 {
        return Err(Observation::failed(
            Status::Misconfigured,
            Reason::Http(HttpFailure::AuthRejected),
        ));
    }
    Ok(())
}

/// The protocol rules on a response head.
fn judge(status: u16, headers: &HeaderMap, options: &HttpOptions) -> Result<(), Observation> {
    accepts_credentials(status)?;
    let accepted = match &options.expected_status {
        Some(list) => list.contains(&status),
        None => (200..300).contains(&status),
    };
    if !accepted {
        return Err(Observation::failed(
            Status::Unhealthy,
            Reason::Http(HttpFailure::StatusMismatch),
        ));
    }
    let mismatched: Vec<String> = options
        .headers
        .iter()
        .filter(|(name, value)| {
            !headers
                .get_all(name.as_str())
                .iter()
                .any(|v| v.as_bytes() == value.as_bytes())
        })
        .map(|(name, _)| name.clone())
        .collect();
    if !mismatched.is_empty() {
        return Err(Observation::failed(
            Status::Unhealthy,
            Reason::Http(HttpFailure::HeaderMismatch),
        )
        .with(Key::HeaderMismatch, Fact::ConfigList(mismatched)));
    }
    Ok(())
}

/// A refusal with what the response head said beyond its status: where a redirect points
/// (against the configured endpoint), whether a 401/403 challenged for credentials.
fn head_facts(
    mut failed: Observation,
    setup: &Setup,
    status: u16,
    headers: &HeaderMap,
) -> Observation {
    net::HeadFacts::of(&setup.endpoint, status, headers).write(&mut failed.evidence);
    failed
}

/// `base` (stages, status evidence) with the verdict of `failed` on top.
fn merge(mut base: Observation, failed: Observation) -> Observation {
    base.status = failed.status;
    base.reason = failed.reason;
    base.evidence.extend(&failed.evidence);
    base
}

fn functional(client: &mut Client, setup: &Setup, attempt: &Attempt) -> Observation {
    let resp = match exchange(client, setup, Method::Get, attempt) {
        Err(f) => return failed(&f, setup, Method::Get),
        Ok(resp) => resp,
    };
    let obs = responded(&resp, Method::Get);
    if let Err(verdict) = judge(resp.status(), resp.headers(), &setup.options) {
        return merge(
            obs,
            head_facts(verdict, setup, resp.status(), resp.headers()),
        );
    }
    let Some(needle) = setup
        .options
        .body_contains
        .as_deref()
        .filter(|n| !n.is_empty())
    else {
        return obs;
    };
    let limit = setup.options.max_body_bytes;
    let limit_fact = Fact::Int(i64::try_from(limit).unwrap_or(i64::MAX));
    match resp.read_body(limit) {
        Err(f) => merge(obs, f.observation()),
        Ok(body) if body.over_limit => merge(
            obs,
            Observation::failed(Status::Unknown, Reason::Http(HttpFailure::BodyLimit))
                .with(Key::MaxBodyBytes, limit_fact),
        ),
        Ok(body) => {
            let found = body
                .bytes
                .windows(needle.len())
                .any(|w| w == needle.as_bytes());
            let obs = obs.with(
                Key::BodyBytes,
                Fact::Int(i64::try_from(body.bytes.len()).unwrap_or(i64::MAX)),
            );
            if found {
                obs
            } else {
                merge(
                    obs,
                    Observation::failed(Status::Unhealthy, Reason::Http(HttpFailure::BodyMissing)),
                )
            }
        }
    }
}

#[cfg(test)]
mod tests;
