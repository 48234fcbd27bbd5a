//! Stage timings of one exchange: dns, tcp, tls and http, as the contract's `steps`.
//!
//! The resolver and the connector chain report into a `Recorder` shared by one
//! [`Client`](super::Client); the client starts a fresh ledger for each exchange and turns it
//! into [`Timings`] when the response head arrives or the exchange fails.
//!
//! Stage rules (the contract's "start = UNKNOWN, done = HEALTHY/UNREACHABLE"):
//! * dns, tcp, tls: finished → HEALTHY with its duration; failed (a timeout included) →
//!   UNREACHABLE with the time it took to fail; started and never finished → UNKNOWN.
//! * http (from the connection being ready to the response head): head received → HEALTHY;
//!   a hard failure before any response byte (reset, closed) → UNREACHABLE; cut by the
//!   deadline, or failed after the response started → UNKNOWN.
//! * An IP literal has no dns stage; plain http has no tls stage; a connection reused from the
//!   pool has neither tcp nor tls (ureq still resolves the name for every request).

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use crate::contract::Status;
use crate::result::{Stage, Steps};
use crate::runtime::Attempt;
use crate::runtime::sync::lock;

/// One stage's outcome.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct StageTime {
    /// HEALTHY, UNREACHABLE, or UNKNOWN when it started and never finished.
    pub status: Status,
    /// How long it took (to succeed or to fail); `None` when unfinished.
    pub elapsed: Option<Duration>,
}

/// The stages of one exchange, plus its latency.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Timings {
    /// Name resolution (absent for IP literals).
    pub dns: Option<StageTime>,
    /// TCP connect (absent on a reused connection).
    pub tcp: Option<StageTime>,
    /// TLS handshake (absent for plain http and on a reused connection).
    pub tls: Option<StageTime>,
    /// Request written → response head read.
    pub http: Option<StageTime>,
    /// Whether this exchange opened a new connection (false: reused from the pool).
    pub new_connection: bool,
    /// Whether the exchange went through a proxy (the dns/tcp stages then describe the hop to
    /// the proxy).
    pub proxied: bool,
    /// From the start of the exchange to the complete response head.
    pub latency: Option<Duration>,
    /// The kernel's round trip of the connection this exchange opened, right after its
    /// handshake (`TCP_INFO`); `None` on a reused connection, through a proxy (it would be the
    /// proxy's), or when the kernel had no sample.
    pub rtt: Option<Duration>,
}

impl Timings {
    /// One stage, if it was recorded.
    pub fn stage(&self, stage: Stage) -> Option<StageTime> {
        match stage {
            Stage::Dns => self.dns,
            Stage::Tcp => self.tcp,
            Stage::Tls => self.tls,
            Stage::Http => self.http,
        }
    }

    /// Records every stage into `steps` (ms, fractional).
    pub fn write_steps(&self, steps: &mut Steps) {
        for stage in [Stage::Dns, Stage::Tcp, Stage::Tls, Stage::Http] {
            if let Some(t) = self.stage(stage) {
                steps.set(stage, t.status, t.elapsed.map(ms));
            }
        }
    }
}

/// Milliseconds as a fraction.
pub fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

#[derive(Clone, Copy, Default)]
struct Mark {
    started: Option<Instant>,
    ended: Option<(Instant, bool)>,
}

impl Mark {
    fn outcome(&self) -> Option<StageTime> {
        let started = self.started?;
        Some(match self.ended {
            Some((at, ok)) => StageTime {
                status: if ok {
                    Status::Healthy
                } else {
                    Status::Unreachable
                },
                elapsed: Some(at.saturating_duration_since(started)),
            },
            None => StageTime {
                status: Status::Unknown,
                elapsed: None,
            },
        })
    }
}

struct Ledger {
    start: Instant,
    dns: Mark,
    tcp: Mark,
    tls: Mark,
    ready: Option<Instant>,
    first_byte: Option<Instant>,
    head: Option<Instant>,
    attempt: Option<Attempt>,
    proxied: bool,
    /// Bytes of the request body (sent after the head).
    body: usize,
    rtt: Option<Duration>,
}

impl Ledger {
    fn new() -> Ledger {
        Ledger {
            start: Instant::now(),
            dns: Mark::default(),
            tcp: Mark::default(),
            tls: Mark::default(),
            ready: None,
            first_byte: None,
            head: None,
            attempt: None,
            proxied: false,
            body: 0,
            rtt: None,
        }
    }

    fn mark(&mut self, stage: Stage) -> Option<&mut Mark> {
        match stage {
            Stage::Dns => Some(&mut self.dns),
            Stage::Tcp => Some(&mut self.tcp),
            Stage::Tls => Some(&mut self.tls),
            // The http stage is derived from `ready` and `head`, never marked directly.
            Stage::Http => None,
        }
    }
}

/// How an exchange ended, for the http stage.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Ending {
    /// The response head arrived.
    Head,
    /// The exchange failed; `cut` when by the deadline/abort rather than by the peer.
    Failed { cut: bool },
}

/// The shared ledger the resolver, the connectors and the client write into.
#[derive(Clone)]
pub(crate) struct Recorder {
    ledger: Arc<Mutex<Ledger>>,
    exchange: Arc<AtomicU64>,
}

impl Recorder {
    pub(crate) fn new() -> Recorder {
        Recorder {
            ledger: Arc::new(Mutex::new(Ledger::new())),
            exchange: Arc::new(AtomicU64::new(0)),
        }
    }

    fn lock(&self) -> MutexGuard<'_, Ledger> {
        lock(&self.ledger)
    }

    /// Starts a new exchange on behalf of `attempt`, whose request has a body of `body` bytes.
    pub(crate) fn begin(&self, attempt: &Attempt, proxied: bool, body: usize) {
        let mut l = self.lock();
        *l = Ledger::new();
        l.attempt = Some(attempt.clone());
        l.proxied = proxied;
        l.body = body;
        self.exchange.fetch_add(1, Ordering::SeqCst);
    }

    /// The current exchange's number (transports use it to notice a new exchange on a
    /// pooled connection without taking the lock on every read).
    pub(crate) fn exchange(&self) -> u64 {
        self.exchange.load(Ordering::SeqCst)
    }

    pub(crate) fn proxied(&self) -> bool {
        self.lock().proxied
    }

    /// Bytes of the current exchange's request body.
    pub(crate) fn request_body(&self) -> usize {
        self.lock().body
    }

    pub(crate) fn stage_started(&self, stage: Stage) {
        let mut l = self.lock();
        if let Some(m) = l.mark(stage) {
            m.started = Some(Instant::now());
            m.ended = None;
        }
    }

    pub(crate) fn stage_ended(&self, stage: Stage, ok: bool) {
        let mut l = self.lock();
        if let Some(m) = l.mark(stage).filter(|m| m.started.is_some()) {
            m.ended = Some((Instant::now(), ok));
        }
    }

    /// The new connection's kernel round trip (never a proxy's: that is not the target's).
    pub(crate) fn connected(&self, rtt: Option<Duration>) {
        let mut l = self.lock();
        l.rtt = rtt.filter(|_| !l.proxied);
    }

    /// The connection is ready for the request (after TLS, or reused from the pool).
    pub(crate) fn connection_ready(&self) {
        let mut l = self.lock();
        if l.ready.is_none() {
            l.ready = Some(Instant::now());
        }
    }

    /// A response byte arrived: marks the attempt.
    pub(crate) fn first_byte(&self) {
        let mut l = self.lock();
        if l.first_byte.is_none() {
            l.first_byte = Some(Instant::now());
            if let Some(a) = &l.attempt {
                a.mark_response();
            }
        }
    }

    /// Whether a response byte arrived in this exchange.
    pub(crate) fn saw_first_byte(&self) -> bool {
        self.lock().first_byte.is_some()
    }

    /// Closes the exchange's ledger and returns its timings.
    pub(crate) fn finish(&self, ending: Ending) -> Timings {
        let mut l = self.lock();
        let now = Instant::now();
        if ending == Ending::Head {
            l.head = Some(now);
            if l.first_byte.is_none() {
                l.first_byte = Some(now);
            }
        }
        let http = l.ready.map(|ready| match ending {
            Ending::Head => StageTime {
                status: Status::Healthy,
                elapsed: Some(now.saturating_duration_since(ready)),
            },
            Ending::Failed { cut } if cut || l.first_byte.is_some() => StageTime {
                status: Status::Unknown,
                elapsed: None,
            },
            Ending::Failed { .. } => StageTime {
                status: Status::Unreachable,
                elapsed: Some(now.saturating_duration_since(ready)),
            },
        });
        Timings {
            dns: l.dns.outcome(),
            tcp: l.tcp.outcome(),
            tls: l.tls.outcome(),
            http,
            new_connection: l.tcp.started.is_some(),
            proxied: l.proxied,
            latency: l.head.map(|h| h.saturating_duration_since(l.start)),
            rtt: l.rtt,
        }
    }
}

impl std::fmt::Debug for Recorder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Recorder")
            .field("exchange", &self.exchange())
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::contract::Bound;
    use crate::runtime::Deadline;

    fn attempt() -> Attempt {
        Attempt::new(Deadline::new(
            Instant::now() + Duration::from_secs(5),
            Bound::TimeoutMs,
        ))
    }

    #[test]
    fn a_full_exchange_has_every_stage_healthy() {
        let r = Recorder::new();
        let a = attempt();
        r.begin(&a, false, 0);
        for s in [Stage::Dns, Stage::Tcp, Stage::Tls] {
            r.stage_started(s);
            r.stage_ended(s, true);
        }
        r.connection_ready();
        r.first_byte();
        assert!(a.response_seen());
        let t = r.finish(Ending::Head);
        let mut steps = Steps::default();
        t.write_steps(&mut steps);
        let stages: Vec<_> = steps
            .0
            .iter()
            .map(|(s, st, ms)| (*s, *st, ms.is_some()))
            .collect();
        assert_eq!(
            stages,
            vec![
                (Stage::Dns, Status::Healthy, true),
                (Stage::Tcp, Status::Healthy, true),
                (Stage::Tls, Status::Healthy, true),
                (Stage::Http, Status::Healthy, true),
            ]
        );
        assert!(t.new_connection && t.latency.is_some());
    }

    #[test]
    fn failed_and_unfinished_stages() {
        let r = Recorder::new();
        r.begin(&attempt(), false, 0);
        r.stage_started(Stage::Tcp);
        r.stage_ended(Stage::Tcp, false);
        let t = r.finish(Ending::Failed { cut: false });
        assert_eq!(t.tcp.map(|s| s.status), Some(Status::Unreachable));
        assert!(t.dns.is_none() && t.http.is_none() && t.latency.is_none());

        r.begin(&attempt(), false, 0);
        r.stage_started(Stage::Dns);
        let t = r.finish(Ending::Failed { cut: true });
        assert_eq!(
            t.dns,
            Some(StageTime {
                status: Status::Unknown,
                elapsed: None
            })
        );
    }

    #[test]
    fn http_stage_after_connection() {
        let r = Recorder::new();
        r.begin(&attempt(), false, 0);
        r.connection_ready();
        let reset = r.finish(Ending::Failed { cut: false });
        assert_eq!(reset.http.map(|s| s.status), Some(Status::Unreachable));
        assert!(!reset.new_connection, "no tcp stage: a reused connection");

        r.begin(&attempt(), false, 0);
        r.connection_ready();
        let cut = r.finish(Ending::Failed { cut: true });
        assert_eq!(cut.http.map(|s| s.status), Some(Status::Unknown));

        r.begin(&attempt(), false, 0);
        r.connection_ready();
        r.first_byte();
        let partial = r.finish(Ending::Failed { cut: false });
        assert_eq!(partial.http.map(|s| s.status), Some(Status::Unknown));
    }
}
