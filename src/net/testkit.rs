//! Test helpers: the one HTTP test server and TLS material from the test kit (`tests/kit`,
//! shared with the integration tests and the examples), and a watchdog that behaves like
//! the engine's.

use std::sync::mpsc;
use std::thread;
use std::time::{Duration, Instant};

use crate::contract::Bound;
use crate::runtime::{Attempt, Deadline};

pub(crate) use agenthealth_testkit::{http_server, tls};

/// Runs `f` under an attempt ending after `timeout`, with a watchdog thread that calls
/// [`Attempt::abort`] at the deadline unless `f` returned first (what the engine does).
/// Returns `f`'s result and how long `f` took.
pub(crate) fn with_watchdog<T>(timeout: Duration, f: impl FnOnce(&Attempt) -> T) -> (T, Duration) {
    with_watchdog_at(timeout, timeout, f)
}

/// Like [`with_watchdog`], but the watchdog fires after `fire` while the attempt's own
/// deadline is `timeout` (to prove the abort hook cuts I/O that no timeout would).
pub(crate) fn with_watchdog_at<T>(
    timeout: Duration,
    fire: Duration,
    f: impl FnOnce(&Attempt) -> T,
) -> (T, Duration) {
    let start = Instant::now();
    let attempt = Attempt::new(Deadline::new(start + timeout, Bound::TimeoutMs));
    let (done, finished) = mpsc::channel::<()>();
    let dog = {
        let attempt = attempt.clone();
        thread::spawn(move || {
            if let Err(mpsc::RecvTimeoutError::Timeout) = finished.recv_timeout(fire) {
                attempt.abort();
            }
        })
    };
    let out = f(&attempt);
    let took = start.elapsed();
    let _ = done.send(());
    let _ = dog.join();
    (out, took)
}

/// The bound every timing test asserts: the deadline plus one second of slack.
pub(crate) fn within(timeout: Duration, took: Duration) -> bool {
    took <= timeout + Duration::from_secs(1)
}
