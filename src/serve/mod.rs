//! `serve`: the AgentHealth Protocol v1 and Prometheus metrics over HTTP, for Kubernetes
//! probes and scrapers, from a loop that runs the checks on its own schedule.
//!
//! Three threads besides the engine's workers: the caller's, which serves HTTP
//! ([`http_server`], one `poll` loop with bounded connections, head size and timeouts); the refresh
//! loop ([`refresh`]), which runs the engine at start and then [`INTERVAL`] after each run
//! completes; and the signal thread the caller installed, whose cancellation stops both:
//! the server at once, the loop as soon as its run has cancelled its checks. Requests read
//! what the loop published ([`snapshot`]) and answer by the protocol's rules ([`ahp`]).
//!
//! This layer sits above `engine` and `output`: it drives the one and renders with the
//! other; only `lib.rs` calls it.

pub mod ahp;
pub mod discovery;
pub mod http_server;
pub mod probe;
pub mod refresh;
pub mod snapshot;

use std::fmt;
use std::io::Write;
use std::net::{SocketAddr, TcpListener};
use std::os::unix::net::UnixStream;
use std::sync::{Arc, mpsc};
use std::time::{Duration, Instant};

use crate::config::Config;
use crate::contract::Secret;
use crate::output::Redactor;
use crate::output::metrics::{self, Dialect, Runs};
use crate::result::document::Document;
use crate::run_plan::RunPlan;
use crate::runtime::Cancel;
use crate::runtime::threads;
use http_server::Handled;
use probe::Probes;
use snapshot::Board;

/// The pause after each run, as in the reference.
pub const INTERVAL: Duration = Duration::from_secs(30);

/// The pause after each run: `--interval-ms` (hidden, for tests) or [`INTERVAL`].
pub fn interval(ms: Option<u64>) -> Duration {
    ms.map_or(INTERVAL, Duration::from_millis)
}

/// A run older than this is stale, as in the reference. Tests shorten the interval
/// (`--interval-ms`, at most [`INTERVAL`]), never this.
pub const MAX_AGE: Duration = Duration::from_secs(120);

/// How long a stop waits for the refresh loop to finish cancelling its run.
const STOP_WAIT: Duration = Duration::from_millis(800);

/// How `serve` runs.
#[derive(Clone, Debug)]
pub struct Options {
    /// Where to listen.
    pub listen: SocketAddr,
    /// The bearer token of the detailed paths and `/metrics`, already validated.
    pub token: Option<Secret>,
    /// The pause after each run.
    pub interval: Duration,
    /// `/probe` runs at once (and as many queued).
    pub probe_concurrency: usize,
}

/// Why `serve` could not start or stopped failing.
#[derive(Debug)]
pub enum ServeError {
    /// `--token-env` names a variable that is unset or empty.
    TokenUnset(String),
    /// The token is too short or has characters a bearer token cannot have.
    TokenInvalid,
    /// The address could not be bound.
    Bind(SocketAddr, std::io::ErrorKind),
    /// A thread could not be started, or polling failed.
    Server,
}

impl fmt::Display for ServeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ServeError::TokenUnset(name) => write!(
                f,
                "--token-env: the environment variable {name} is unset or empty"
            ),
            ServeError::TokenInvalid => write!(
                f,
                "--token-env: the token must be at least {} characters of A-Z a-z 0-9 - . _ ~ + / (then only = padding)",
                ahp::MIN_TOKEN_LEN
            ),
            ServeError::Bind(addr, kind) => write!(f, "cannot listen on {addr}: {kind}"),
            ServeError::Server => f.write_str("the AHP server failed"),
        }
    }
}

/// The `--token-env` token from the variable's value.
pub fn token(name: &str, value: Option<String>) -> Result<Secret, ServeError> {
    match value.filter(|v| !v.is_empty()) {
        None => Err(ServeError::TokenUnset(name.to_string())),
        Some(v) if ahp::valid_token(&v) => Ok(Secret::new(v)),
        Some(_) => Err(ServeError::TokenInvalid),
    }
}

/// Serves `config` until `cancel`; `announce` hears the bound address first.
pub fn run(
    config: Config,
    options: Options,
    cancel: &Cancel,
    announce: &dyn Fn(SocketAddr),
) -> Result<(), ServeError> {
    let bind = |e: std::io::Error| ServeError::Bind(options.listen, e.kind());
    let listener = TcpListener::bind(options.listen).map_err(bind)?;
    let bound = listener.local_addr().map_err(bind)?;
    let (wake, waker) = UnixStream::pair().map_err(|_| ServeError::Server)?;
    let _registration = cancel.register(move || {
        let _ = (&waker).write(&[1]);
    });
    let no_run = Runs {
        total: Some(0),
        last: None,
    };
    let before_first = metrics::render(None, &no_run, Dialect::Prometheus);
    let board = Arc::new(Board::new(MAX_AGE, before_first));
    board.set_running(true);
    let probes = Probes::new(
        config.clone(),
        options.token.clone(),
        options.probe_concurrency,
        cancel,
    )
    .map_err(|_| ServeError::Server)?;
    let targets: Arc<str> = {
        let plan = RunPlan::from_env(config.clone());
        Arc::from(discovery::targets_body(
            &config,
            &redactor(&plan, options.token.as_ref()),
        ))
    };
    let (done_tx, done_rx) = mpsc::channel::<()>();
    let looped = {
        let (board, cancel, token) = (board.clone(), cancel.clone(), options.token.clone());
        threads::spawn("refresh", threads::WORKER_STACK, move || {
            // /live turns 503 however the loop ends.
            let _stopped = Stopped(&board);
            refresh::run(&config, token.as_ref(), options.interval, &board, &cancel);
            let _ = done_tx.send(());
        })
    };
    if looped.is_err() {
        return Err(ServeError::Server);
    }
    announce(bound);
    let routes = Routes {
        board: &board,
        token: options.token.as_ref(),
        probes: &probes,
        targets,
    };
    let served = http_server::serve(&listener, &http_server::LIMITS, &wake, &routes);
    // Whatever ended the server ends the loop; its run cancels its checks and cleans up.
    cancel.cancel();
    let _ = done_rx.recv_timeout(STOP_WAIT);
    served.map_err(|_| ServeError::Server)
}

/// What `serve`'s paths answer: the AHP paths and `/metrics` from what the refresh loop
/// published, `/probe` from its dispatcher, `/targets` from the configuration.
struct Routes<'a> {
    board: &'a Board,
    token: Option<&'a Secret>,
    probes: &'a Arc<Probes>,
    targets: Arc<str>,
}

impl http_server::Service for Routes<'_> {
    fn handle(
        &self,
        request: &http_server::RequestHead,
        ticket: http_server::RequestId,
    ) -> Handled {
        if let Err(refused) = ahp::admit(request, self.token) {
            return Handled::Now(refused);
        }
        match request.path {
            "/probe" => self.probes.handle(request, ticket),
            "/targets" => Handled::Now(http_server::Answer {
                status: 200,
                headers: ahp::common("application/json"),
                body: self.targets.clone(),
            }),
            _ => Handled::Now(ahp::respond(request, &self.board.view(), Instant::now())),
        }
    }

    fn refuse(&self, e: http_server::HeadError) -> http_server::Answer {
        ahp::refuse(e)
    }

    fn done(&self) -> Option<&UnixStream> {
        Some(self.probes.done())
    }

    fn take_done(&self) -> Vec<(http_server::RequestId, http_server::Answer)> {
        self.probes.take_done()
    }

    fn abandoned(&self, ticket: http_server::RequestId) {
        self.probes.abandoned(ticket);
    }
}

/// What a run publishes must not show: the run's secrets (the environment's, tokens learned
/// during it) and `serve`'s own token.
fn redactor(plan: &RunPlan, token: Option<&Secret>) -> Redactor {
    let mut secrets = plan.secrets();
    secrets.extend(token.cloned());
    Redactor::new(secrets.iter().map(Secret::expose))
}

/// Redacts `doc`, the document of a run of `plan`, for publishing.
pub(crate) fn redact(doc: &mut Document, plan: &RunPlan, token: Option<&Secret>) {
    let redactor = redactor(plan, token);
    doc.map_strings(&|s| redactor.apply(s), &|id| redactor.apply_to_id(id));
}

/// Marks the refresh loop stopped when dropped (at its end, or if it panicked).
struct Stopped<'a>(&'a Board);

impl Drop for Stopped<'_> {
    fn drop(&mut self) {
        self.0.set_running(false);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn serve_pauses_30_s_after_each_run_unless_a_test_says_otherwise() {
        let interval_of = |args: &[&str]| match crate::cli::parse(args.iter().copied()) {
            Ok(crate::cli::Command::Serve(s)) => Some(interval(s.interval_ms)),
            _ => None,
        };
        assert_eq!(
            interval_of(&["serve", "c.yaml"]),
            Some(Duration::from_secs(30))
        );
        assert_eq!(
            interval_of(&["serve", "c.yaml", "--interval-ms", "5"]),
            Some(Duration::from_millis(5))
        );
        // The hidden flag can shorten the pause, never lengthen it; no pause alone makes the
        // last run stale.
        assert_eq!(
            interval_of(&["serve", "c.yaml", "--interval-ms", "30001"]),
            None
        );
        assert!(MAX_AGE > INTERVAL);
    }

    #[test]
    fn the_token_is_read_from_a_set_valid_variable() {
        let unset = |v: Option<&str>| matches!(token("T", v.map(str::to_string)), Err(ServeError::TokenUnset(n)) if n == "T");
        assert!(unset(None) && unset(Some("")));
        // A value that was not UTF-8 arrives with U+FFFD in it: not a token.
        for bad in ["short", "sixteen chars \u{fffd}\u{fffd}\u{fffd}"] {
            assert!(matches!(
                token("T", Some(bad.into())),
                Err(ServeError::TokenInvalid)
            ));
        }
        let ok = token("T", Some("0123456789abcdef".into()));
        assert_eq!(
            ok.ok().map(|s| s.expose().to_string()),
            Some("0123456789abcdef".into())
        );
        // The messages name the variable, never the value.
        let line = ServeError::TokenInvalid.to_string();
        assert!(line.contains("at least 16 characters"), "{line}");
    }
}
