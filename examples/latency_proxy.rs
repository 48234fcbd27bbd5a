//! `latency_proxy`: a TCP proxy on 127.0.0.1 that makes a local server look far away, for
//! `make bench`: every chunk waits `DELAY_MS` in each direction, and a new connection's first
//! bytes wait one round trip more (its TCP handshake). It also counts what a check costs
//! across such a link.
//!
//! ```text
//! latency_proxy UPSTREAM_HOST:PORT DELAY_MS [LISTEN_IP FAR_MS]
//! ```
//!
//! Prints `listening on 127.0.0.1:PORT`. With `LISTEN_IP FAR_MS` it listens there instead: the
//! far side of the kernel-visible link `make bench` makes in a network namespace, `FAR_MS` each
//! way from the client, where it only counts (`DELAY_MS` 0). The round trips are then counted
//! as the client lived them: an answer reaches the client `FAR_MS` after it leaves here, a
//! request left the client `FAR_MS` before it arrives, and a connection's first request was
//! decided when its handshake began (three one-way trips before it was accepted). Each line read on stdin is answered with
//! `round_trips=N connections=M cleanup=K` for the traffic since the previous line, and the
//! counts start again (`cleanup`: `DELETE` requests, the end-of-run cleanup, which are not
//! part of the chain). `round_trips` is the longest chain of requests each sent only after the
//! answer to the one before arrived: a request's depth is one more than that of the deepest
//! answer the client had received when it sent the request (on any connection), so requests
//! sent at once on several connections count once. A TLS handshake's flights count like
//! requests.

use std::io::{self, BufRead, Read, Write};
use std::net::{Shutdown, TcpListener, TcpStream};
use std::sync::mpsc;
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::{Duration, Instant};

use agenthealth_testkit::lock;

#[derive(Default)]
struct Counts {
    /// Each answer delivered so far: when the client has it, and its depth.
    delivered: Vec<(Instant, u32)>,
    /// The deepest request so far.
    deepest: u32,
    connections: u32,
    /// `DELETE` requests (the end-of-run cleanup).
    cleanup: u32,
}

/// One connection's turn: the depth of its request in flight, and whether its answer started.
#[derive(Default)]
struct Turn {
    depth: u32,
    answered: bool,
}

/// Copies `from` to `to`, each chunk released `delay` after it arrived (and not before
/// `not_before`); `on_chunk` runs when a chunk is read, `on_release` when it is written.
fn pipe(
    mut from: TcpStream,
    mut to: TcpStream,
    delay: Duration,
    not_before: Instant,
    on_chunk: impl Fn(&[u8]) -> u32 + Send + 'static,
    on_release: impl Fn(u32) + Send + 'static,
) {
    let (tx, rx) = mpsc::channel::<(Instant, u32, Vec<u8>)>();
    let writer = thread::spawn(move || {
        for (due, depth, bytes) in rx {
            let now = Instant::now();
            if due > now {
                thread::sleep(due - now);
            }
            // Marked delivered before the client can read it (and answer).
            on_release(depth);
            if to.write_all(&bytes).is_err() {
                break;
            }
        }
        let _ = to.shutdown(Shutdown::Write);
    });
    let mut buf = vec![0u8; 64 * 1024];
    loop {
        match from.read(&mut buf) {
            Ok(0) | Err(_) => break,
            Ok(n) => {
                let depth = on_chunk(&buf[..n]);
                let due = (Instant::now() + delay).max(not_before + delay);
                if tx.send((due, depth, buf[..n].to_vec())).is_err() {
                    break;
                }
            }
        }
    }
    drop(tx);
    let _ = writer.join();
}

impl Counts {
    /// The deepest answer the client had received by `at`.
    fn seen_by(&self, at: Instant) -> u32 {
        let had = self.delivered.iter().filter(|(t, _)| *t <= at);
        had.map(|(_, d)| *d).max().unwrap_or(0)
    }
}

fn serve(
    client: TcpStream,
    upstream: &str,
    (delay, far): (Duration, Duration),
    counts: Arc<Mutex<Counts>>,
) {
    let accepted = Instant::now();
    let Ok(server) = TcpStream::connect(upstream) else {
        return;
    };
    let _ = client.set_nodelay(true);
    let _ = server.set_nodelay(true);
    lock(&counts).connections += 1;
    let turn = Arc::new(Mutex::new(Turn {
        depth: 0,
        answered: true,
    }));
    let (c2, s2) = match (client.try_clone(), server.try_clone()) {
        (Ok(c), Ok(s)) => (c, s),
        _ => return,
    };
    // Client → server: a chunk after an answer started is a new request.
    let up = {
        let (turn, counts) = (turn.clone(), counts.clone());
        thread::spawn(move || {
            pipe(
                client,
                server,
                delay,
                // The handshake: one round trip before the first byte can leave.
                accepted + 2 * delay,
                move |bytes: &[u8]| {
                    let mut t = lock(&turn);
                    if t.answered && bytes.starts_with(b"DELETE ") {
                        // The end-of-run cleanup: counted apart from the check.
                        lock(&counts).cleanup += 1;
                        t.answered = false;
                        t.depth = 0;
                    } else if t.answered {
                        let mut c = lock(&counts);
                        // When the client decided to send it.
                        let now = Instant::now();
                        let sent = match t.depth {
                            0 if far > Duration::ZERO => accepted.checked_sub(3 * far),
                            _ => now.checked_sub(far),
                        };
                        t.depth = c.seen_by(sent.unwrap_or(now)) + 1;
                        t.answered = false;
                        c.deepest = c.deepest.max(t.depth);
                    }
                    t.depth
                },
                |_| {},
            )
        })
    };
    // Server → client: an answer carries its request's depth.
    let down_turn = turn.clone();
    pipe(
        s2,
        c2,
        delay,
        accepted,
        move |_: &[u8]| lock(&down_turn).depth,
        move |depth| {
            let mut c = lock(&counts);
            c.delivered.push((Instant::now() + far, depth));
            lock(&turn).answered = true;
        },
    );
    let _ = up.join();
}

fn main() -> io::Result<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let (upstream, delay_ms, ip, far_ms) = match args.as_slice() {
        [upstream, delay_ms] => (upstream, delay_ms, "127.0.0.1", "0"),
        [upstream, delay_ms, ip, far] => (upstream, delay_ms, ip.as_str(), far.as_str()),
        _ => {
            eprintln!("usage: latency_proxy UPSTREAM_HOST:PORT DELAY_MS [LISTEN_IP FAR_MS]");
            std::process::exit(2);
        }
    };
    let delay = Duration::from_millis(delay_ms.parse().unwrap_or(20));
    let far = Duration::from_millis(far_ms.parse().unwrap_or(0));
    let listener = TcpListener::bind((ip, 0))?;
    println!("listening on {}", listener.local_addr()?);
    io::stdout().flush()?;
    let counts = Arc::new(Mutex::new(Counts::default()));
    {
        let counts = counts.clone();
        thread::spawn(move || {
            let stdin = io::stdin();
            for line in stdin.lock().lines() {
                if line.is_err() {
                    break;
                }
                let mut c = lock(&counts);
                println!(
                    "round_trips={} connections={} cleanup={}",
                    c.deepest, c.connections, c.cleanup
                );
                let _ = io::stdout().flush();
                *c = Counts::default();
            }
            std::process::exit(0);
        });
    }
    for client in listener.incoming().flatten() {
        let upstream = upstream.clone();
        let counts = counts.clone();
        thread::spawn(move || serve(client, &upstream, (delay, far), counts));
    }
    Ok(())
}
