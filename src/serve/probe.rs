//! `/probe`: one target (or a module at a URL) checked on demand, answered in the Prometheus
//! text format, as blackbox_exporter answers a scrape.
//!
//! * `GET /probe?target=NAME` runs every top-level target called NAME with what it depends on
//!   (one label set, as `/metrics` folds repeated names); `GET /probe?module=M&target=URL`
//!   runs module M with URL as its endpoint. 200 whatever the target's status, with
//!   `probe_success`, `probe_duration_seconds` and the target families of `/metrics`; 400
//!   `bad_request` (a parameter repeated, unknown, not UTF-8 or missing; a bad timeout
//!   header), `unknown_target`, `unknown_module` or `bad_target` (not an `http(s)` URL); 403
//!   `target_refused` when the module's allow list refuses the URL or an address it resolves
//!   to — nothing is sent to it; 503 `probe_overloaded` beyond the queue.
//! * The run ends by the smaller of the configuration's run deadline (`deadline_ms`,
//!   `--deadline`, the 60 s cap) and the scraper's `X-Prometheus-Scrape-Timeout-Seconds` less
//!   a margin (a quarter of it, at most 0.5 s), counted from the request's arrival: the
//!   answer comes before the scraper gives up.
//! * At most `concurrency` runs at once, each on a thread of its own; as many more wait in a
//!   FIFO queue; beyond that a request is answered 503 at once (`Retry-After: 1`). A run that
//!   would start with less than [`MIN_RUN`] left is answered 503 instead.
//! * Single flight: a request for what a queued run will check joins it (the run then ends by
//!   the earlier of their deadlines), and one for what a running run checks joins it when that
//!   run ends by the request's own deadline; finished results are never reused. A run whose
//!   clients all hung up is cancelled (or leaves the queue), and so is every run when `serve`
//!   stops.
//!
//! The HTTP server's thread never waits here: a request is answered later
//! ([`Handled::Later`]); a run's thread hands its answers over and writes a byte to the done
//! socket, which wakes the server's poll.

use std::collections::VecDeque;
use std::io::{Read, Write};
use std::os::unix::net::UnixStream;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use super::ahp;
use super::http_server::{Answer, Handled, RequestHead, RequestId};
use crate::config::{Config, NodeId, RunDeadline};
use crate::contract::allow::UrlParts;
use crate::contract::{Bound, Forbidden, Secret};
use crate::engine;
use crate::output::metrics::{self, Dialect};
use crate::result::document::Document;
use crate::result::reason::{NetFailure, Reason};
use crate::run_plan::RunPlan;
use crate::runtime::sync::lock;
use crate::runtime::{Cancel, threads};

/// A run is not started with less time than this left (answered 503).
pub const MIN_RUN: Duration = Duration::from_millis(100);
/// The longest margin kept between a run's end and the scraper's timeout.
const MAX_MARGIN: Duration = Duration::from_millis(500);

/// `--probe-concurrency`'s default: 16 runs per CPU (probes wait on the network), within
/// 16 to 128. std's count honours a container's CPU quota.
pub fn default_concurrency() -> usize {
    let cpus = std::thread::available_parallelism().map_or(1, std::num::NonZeroUsize::get);
    cpus.saturating_mul(16).clamp(16, 128)
}

/// What a probe checks, and the key concurrent requests share a run by.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Key {
    /// The configured top-level targets of this name.
    Target(String),
    /// A module at a URL (as given).
    Module(String, String),
}

/// One run and the requests waiting for it.
struct Flight {
    id: u64,
    key: Key,
    config: Config,
    deadline: Instant,
    bound: Bound,
    members: Vec<RequestId>,
    running: bool,
    cancel: Cancel,
}

#[derive(Default)]
struct State {
    /// Queued and running flights.
    flights: Vec<Flight>,
    /// The ids of the queued flights, oldest first.
    queue: VecDeque<u64>,
    running: usize,
    next_id: u64,
    ready: Vec<(RequestId, Answer)>,
}

impl State {
    fn position(&self, id: u64) -> Option<usize> {
        self.flights.iter().position(|f| f.id == id)
    }
}

/// The probe dispatcher of one `serve`.
pub struct Probes {
    config: Config,
    token: Option<Secret>,
    concurrency: usize,
    stop: Cancel,
    state: Mutex<State>,
    /// The server polls `done`; runs write to `wake`.
    done: UnixStream,
    wake: UnixStream,
}

/// A request, once its parameters are read.
struct Asked {
    key: Key,
    config: Config,
    deadline: Instant,
    bound: Bound,
}

impl Probes {
    /// The dispatcher for `config`'s targets and modules, `concurrency` runs at once (and as
    /// many queued); every run is cancelled with `stop`.
    pub fn new(
        config: Config,
        token: Option<Secret>,
        concurrency: usize,
        stop: &Cancel,
    ) -> std::io::Result<Arc<Probes>> {
        let (done, wake) = UnixStream::pair()?;
        done.set_nonblocking(true)?;
        wake.set_nonblocking(true)?;
        Ok(Arc::new(Probes {
            config,
            token,
            concurrency: concurrency.max(1),
            stop: stop.clone(),
            state: Mutex::new(State::default()),
            done,
            wake,
        }))
    }

    /// The socket that is readable when answers are ready.
    pub fn done(&self) -> &UnixStream {
        &self.done
    }

    /// The answers ready now.
    pub fn take_done(&self) -> Vec<(RequestId, Answer)> {
        let mut sink = [0u8; 64];
        while matches!((&self.done).read(&mut sink), Ok(n) if n > 0) {}
        std::mem::take(&mut lock(&self.state).ready)
    }

    /// Answers `request` (admitted: path, method and token are right), now when it cannot
    /// run, later under `ticket` when it does.
    pub fn handle(self: &Arc<Self>, request: &RequestHead, ticket: RequestId) -> Handled {
        let arrived = Instant::now();
        match self.asked(request, arrived) {
            Ok(asked) => self.dispatch(asked, ticket),
            Err(answer) => Handled::Now(answer),
        }
    }

    /// The client of `ticket` hung up: it leaves its flight, and a flight nobody waits for
    /// leaves the queue or is cancelled.
    pub fn abandoned(&self, ticket: RequestId) {
        let mut state = lock(&self.state);
        let Some(i) = state
            .flights
            .iter()
            .position(|f| f.members.contains(&ticket))
        else {
            return;
        };
        state.flights[i].members.retain(|t| *t != ticket);
        if !state.flights[i].members.is_empty() {
            return;
        }
        if state.flights[i].running {
            state.flights[i].cancel.cancel();
        } else {
            let gone = state.flights.swap_remove(i);
            state.queue.retain(|id| *id != gone.id);
        }
    }

    /// Reads the request: what to check and by when.
    fn asked(&self, request: &RequestHead, arrived: Instant) -> Result<Asked, Answer> {
        let params = params(request.query).ok_or_else(|| ahp::error(400, "bad_request"))?;
        let timeout = match request.header("X-Prometheus-Scrape-Timeout-Seconds") {
            Some(v) => Some(scrape_timeout(v).ok_or_else(|| ahp::error(400, "bad_request"))?),
            None => None,
        };
        let (key, config) = match params.module {
            Some(name) => self.module(name, params.target)?,
            None => {
                let roots: Vec<NodeId> = (self.config.roots.iter().copied())
                    .filter(|&r| self.config.nodes[r].name == params.target)
                    .collect();
                if roots.is_empty() {
                    return Err(ahp::error(400, "unknown_target"));
                }
                (Key::Target(params.target), self.config.subgraph(&roots))
            }
        };
        let (limit, bound) = run_limit(self.config.deadline, timeout);
        Ok(Asked {
            key,
            config,
            deadline: arrived + limit,
            bound,
        })
    }

    /// A module's run at `url`: refused at once when no address could make it admissible.
    fn module(&self, name: String, url: String) -> Result<(Key, Config), Answer> {
        let module = (self.config.modules.iter())
            .find(|m| m.name == name)
            .ok_or_else(|| ahp::error(400, "unknown_module"))?;
        // The URL becomes the run's endpoint: what the endpoint grammar refuses is no target.
        let parts = (crate::contract::endpoint::http_url(&url).ok())
            .and_then(|_| UrlParts::parse(&url))
            .ok_or_else(|| ahp::error(400, "bad_target"))?;
        if let Some(allow) = &module.template.allow {
            allow.listing(&parts).map_err(refused)?;
        }
        let config = self.config.of_module(module, &url);
        Ok((Key::Module(name, url), config))
    }

    /// Joins a flight for the same key that ends in time, or starts or queues a new one.
    fn dispatch(self: &Arc<Self>, asked: Asked, ticket: RequestId) -> Handled {
        let mut state = lock(&self.state);
        let joinable =
            |f: &Flight| f.key == asked.key && (!f.running || f.deadline <= asked.deadline);
        if let Some(f) = state.flights.iter_mut().find(|f| joinable(f)) {
            f.members.push(ticket);
            if !f.running && asked.deadline < f.deadline {
                (f.deadline, f.bound) = (asked.deadline, asked.bound);
            }
            return Handled::Later;
        }
        let starts = state.running < self.concurrency;
        if !starts && state.queue.len() >= self.concurrency {
            return Handled::Now(overloaded());
        }
        state.next_id += 1;
        let id = state.next_id;
        state.flights.push(Flight {
            id,
            key: asked.key,
            config: asked.config,
            deadline: asked.deadline,
            bound: asked.bound,
            members: vec![ticket],
            running: starts,
            cancel: Cancel::new(),
        });
        if !starts {
            state.queue.push_back(id);
            return Handled::Later;
        }
        state.running += 1;
        drop(state);
        let probes = Arc::clone(self);
        if threads::spawn("probe", threads::WORKER_STACK, move || probes.fly(id)).is_err() {
            // No thread: this flight cannot run; its requests are told so.
            lock(&self.state).running -= 1;
            self.finish(id, overloaded());
        }
        Handled::Later
    }

    /// A run's thread: flight `first`, then queued ones, until the queue is empty.
    fn fly(&self, first: u64) {
        let mut next = Some(first);
        while let Some(id) = next {
            let taken = {
                let mut state = lock(&self.state);
                let found = state.position(id).map(|i| &mut state.flights[i]);
                found.map(|f| {
                    f.running = true;
                    (f.config.clone(), f.deadline, f.bound, f.cancel.clone())
                })
            };
            if let Some((config, deadline, bound, cancel)) = taken {
                let answer = self.run(config, deadline, bound, &cancel);
                self.finish(id, answer);
            }
            next = {
                let mut state = lock(&self.state);
                let queued = state.queue.pop_front();
                if queued.is_none() {
                    state.running -= 1;
                }
                queued
            };
        }
    }

    /// Runs one flight's configuration by `deadline`, cancelled by its own `cancel` or by
    /// `serve`'s stop.
    fn run(&self, mut config: Config, deadline: Instant, bound: Bound, cancel: &Cancel) -> Answer {
        let left = deadline.saturating_duration_since(Instant::now());
        if left < MIN_RUN {
            return overloaded();
        }
        let ms = u64::try_from(left.as_millis()).unwrap_or(u64::MAX);
        config.deadline = Some(RunDeadline { ms, bound });
        let _stop = {
            let cancel = cancel.clone();
            self.stop.register(move || cancel.cancel())
        };
        let plan = RunPlan::from_env(config);
        let mut doc = engine::run(&plan, cancel, &|_, _| {});
        super::redact(&mut doc, &plan, self.token.as_ref());
        match refusal(&doc) {
            Some(class) => refused(class),
            None => Answer {
                status: 200,
                headers: ahp::common(Dialect::Prometheus.content_type()),
                body: Arc::from(metrics::render_probe(&doc)),
            },
        }
    }

    /// Hands `answer` to every member of flight `id`, which ends.
    fn finish(&self, id: u64, answer: Answer) {
        let mut state = lock(&self.state);
        let Some(i) = state.position(id) else {
            return;
        };
        let flight = state.flights.swap_remove(i);
        for &t in &flight.members {
            state.ready.push((t, answer.clone()));
        }
        // Non-blocking: a full socket means a wake-up is pending already.
        let _ = (&self.wake).write(&[1]);
    }
}

/// The run's limit from its arrival and the bound that sets it: the configuration's run
/// deadline (or the cap), or the scraper's timeout less the margin when that is earlier.
fn run_limit(deadline: Option<RunDeadline>, scrape: Option<Duration>) -> (Duration, Bound) {
    let configured = deadline.map_or((engine::RUN_CAP, Bound::RunCap), |d| {
        (Duration::from_millis(d.ms).min(engine::RUN_CAP), d.bound)
    });
    match scrape {
        Some(timeout) => {
            let limit = timeout.saturating_sub((timeout / 4).min(MAX_MARGIN));
            if limit < configured.0 {
                (limit, Bound::ScrapeTimeout)
            } else {
                configured
            }
        }
        None => configured,
    }
}

/// `X-Prometheus-Scrape-Timeout-Seconds`: a positive, finite number of seconds.
fn scrape_timeout(value: &str) -> Option<Duration> {
    let seconds: f64 = value.trim().parse().ok()?;
    (seconds.is_finite() && seconds > 0.0).then(|| Duration::from_secs_f64(seconds.min(3600.0)))
}

/// `/probe`'s parameters.
#[derive(Debug, PartialEq, Eq)]
struct Params {
    target: String,
    module: Option<String>,
}

/// Reads the query: `target` (required) and `module`, each once, percent-decoded (`+` is a
/// space), UTF-8; nothing else.
fn params(query: Option<&str>) -> Option<Params> {
    let (mut target, mut module) = (None, None);
    for (name, value) in crate::text::query_pairs(query?)? {
        let slot = match name.as_str() {
            "target" => &mut target,
            "module" => &mut module,
            _ => return None,
        };
        if slot.replace(value).is_some() {
            return None;
        }
    }
    Some(Params {
        target: target.filter(|t| !t.is_empty())?,
        module,
    })
}

/// The allow list's refusal a run met, if it met one: which class of address it was.
fn refusal(doc: &Document) -> Option<Forbidden> {
    doc.results
        .iter()
        .flat_map(|r| r.checks.values())
        .find_map(|c| match c.reason {
            Some(Reason::Network(NetFailure::AddressRefused(class))) => Some(class),
            _ => None,
        })
}

/// 403 `target_refused`, with the class of what was refused (never the URL).
fn refused(class: Forbidden) -> Answer {
    ahp::json(
        403,
        &format!(
            "{{\"ahp_version\":\"{}\",\"error\":\"target_refused\",\"refused\":\"{}\"}}\n",
            ahp::VERSION,
            class.as_str()
        ),
    )
}

/// 503 `probe_overloaded`, `Retry-After: 1`.
fn overloaded() -> Answer {
    let mut a = ahp::error(503, "probe_overloaded");
    a.headers.push(("Retry-After", "1".into()));
    a
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parameters_are_decoded_and_strict() {
        let p = |q: &str| params(Some(q));
        assert_eq!(
            p("target=notes%20mcp"),
            Some(Params {
                target: "notes mcp".into(),
                module: None
            })
        );
        assert_eq!(
            p("module=mcp&target=http%3A%2F%2Fa.svc%3A8080%2Fmcp"),
            Some(Params {
                target: "http://a.svc:8080/mcp".into(),
                module: Some("mcp".into())
            })
        );
        assert_eq!(
            p("target=search+mcp&").map(|p| p.target),
            Some("search mcp".into())
        );
        assert_eq!(p("target=%C3%A9").map(|p| p.target), Some("é".into()));
        for bad in [
            "",
            "module=m",
            "target=",
            "target=a&target=b",
            "target=a&x=1",
            "target=%zz",
            "target=%ff",
            "target=%4",
        ] {
            assert_eq!(p(bad), None, "{bad}");
        }
        assert_eq!(params(None), None);
    }

    #[test]
    fn the_run_ends_before_the_scraper_gives_up() {
        let s = |secs: f64| Some(Duration::from_secs_f64(secs));
        let file = Some(RunDeadline {
            ms: 3000,
            bound: Bound::DeadlineMs,
        });
        // A quarter of the timeout, at most half a second, is kept.
        assert_eq!(
            run_limit(None, s(10.0)),
            (Duration::from_millis(9500), Bound::ScrapeTimeout)
        );
        assert_eq!(
            run_limit(None, s(1.0)),
            (Duration::from_millis(750), Bound::ScrapeTimeout)
        );
        // The configuration's deadline when it is earlier, and the cap without either.
        assert_eq!(
            run_limit(file, s(10.0)),
            (Duration::from_millis(3000), Bound::DeadlineMs)
        );
        assert_eq!(
            run_limit(file, s(2.0)),
            (Duration::from_millis(1500), Bound::ScrapeTimeout)
        );
        assert_eq!(run_limit(None, None), (engine::RUN_CAP, Bound::RunCap));
        assert_eq!(run_limit(None, s(120.0)), (engine::RUN_CAP, Bound::RunCap));
        for bad in ["0", "-1", "NaN", "inf", "x", ""] {
            assert_eq!(scrape_timeout(bad), None, "{bad}");
        }
        assert_eq!(scrape_timeout(" 4 "), Some(Duration::from_secs(4)));
        assert_eq!(scrape_timeout("2.5"), Some(Duration::from_millis(2500)));
    }

    #[test]
    fn the_default_concurrency_is_sized_to_the_machine() {
        let n = default_concurrency();
        assert!((16..=128).contains(&n) && n % 16 == 0 || n == 128, "{n}");
    }
}
