//! Resuming a legacy stream that ended early (upstream §17 I): after its `retry`, at most three
//! times, within the deadline and the response budget, each answer checked.

use super::*;

/// The fixture of upstream §17 I: the POST stream primes `id: cursor` with `retry`, then
/// closes; every GET answers with `get`.
fn resumable(
    post_prefix: &'static str,
    get: impl Fn(&Request) -> Reply + Send + Sync + 'static,
) -> Server {
    Server::start(move |r| match (r.method.as_str(), r.rpc().as_str()) {
        ("POST", "initialize") => with_session(r),
        ("POST", _) => {
            let mut body = sse_head(&[]);
            body.extend_from_slice(post_prefix.as_bytes());
            Reply::Close(body)
        }
        ("GET", _) => get(r),
        _ => Reply::Send(response(202, &[], b"")),
    })
}

fn legacy_session(server: &Server) -> HttpTransport {
    let mut t = transport(server);
    send(&mut t, "initialize", 1, Era::Handshake, &attempt_for(LONG)).expect("init");
    t
}

fn call(
    t: &mut HttpTransport,
    era: Era,
    within: Duration,
) -> Result<transport::Reply, TransportError> {
    send(t, "tools/call", 3, era, &attempt_for(within))
}

/// I53: one GET, after the retry delay, carrying the last event id and the session.
#[test]
fn a_legacy_stream_resumes_after_its_retry_delay() {
    let server = resumable("id: cursor\nretry: 20\ndata:\n\n", |_| {
        let mut body = sse_head(&[]);
        body.extend_from_slice(
            event(r#"{"jsonrpc":"2.0","id":3,"result":{"content":[]}}"#).as_bytes(),
        );
        Reply::Close(body)
    });
    let mut t = legacy_session(&server);
    let started = Instant::now();
    let reply = call(&mut t, Era::Legacy(V), Duration::from_millis(150)).expect("resumed");
    assert!(started.elapsed() >= Duration::from_millis(20));
    assert_eq!(reply.mode, ResponseMode::Sse);
    let gets = server.with_method("GET");
    assert_eq!(gets.len(), 1);
    assert_eq!(gets[0].header("last-event-id"), Some("cursor"));
    assert_eq!(gets[0].header("mcp-session-id"), Some("s-1"));
    assert_eq!(gets[0].header("mcp-protocol-version"), Some("2025-11-25"));
    assert_eq!(gets[0].header("accept"), Some("text/event-stream"));
    assert_eq!(
        server.with_method("POST").len(),
        2,
        "the POST is never repeated"
    );
}

/// I54 (modern) and I55 (no event id): no GET.
#[test]
fn stateless_and_id_less_streams_do_not_resume() {
    let server = resumable("id: cursor\nretry: 20\ndata:\n\n", |_| panic!("no GET"));
    let mut t = legacy_session(&server);
    let got = call(&mut t, Era::Modern, Duration::from_millis(150));
    assert_eq!(
        got.err(),
        Some(TransportError::Malformed(Malformed::StreamEnded))
    );
    let server = resumable("retry: 20\ndata:\n\n", |_| panic!("no GET"));
    let mut t = legacy_session(&server);
    let got = call(&mut t, Era::Legacy(V), Duration::from_millis(150));
    assert_eq!(
        got.err(),
        Some(TransportError::Malformed(Malformed::StreamEnded))
    );
    assert!(server.with_method("GET").is_empty());
}

/// I56: three resumptions at most.
#[test]
fn a_stream_resumes_three_times_at_most() {
    let gets = Arc::new(AtomicUsize::new(0));
    let counted = Arc::clone(&gets);
    let server = resumable("id: cursor\ndata:\n\n", move |_| {
        counted.fetch_add(1, Ordering::SeqCst);
        let mut body = sse_head(&[]);
        body.extend_from_slice(b"id: cursor\ndata:\n\n");
        Reply::Close(body)
    });
    let mut t = legacy_session(&server);
    let got = call(&mut t, Era::Legacy(V), Duration::from_millis(500));
    assert!(matches!(got, Err(TransportError::Limit(_))), "{got:?}");
    assert_eq!(gets.load(Ordering::SeqCst), 3);
}

/// I57: a retry delay beyond the deadline ends the attempt without a GET.
#[test]
fn retry_beyond_the_deadline_sends_no_get() {
    let server = resumable("id: cursor\nretry: 999999\ndata:\n\n", |_| panic!("no GET"));
    let mut t = legacy_session(&server);
    let started = Instant::now();
    let got = call(&mut t, Era::Legacy(V), Duration::from_millis(150));
    assert!(started.elapsed() < Duration::from_millis(100));
    assert_eq!(unanswered(got.as_ref().err()), Some(true));
}

/// I58: the POST stream and its resumptions share one 1 MiB budget.
#[test]
fn resumptions_share_the_budget() {
    const COMMENT_KIB: usize = 600;
    let comment = || format!(":{}\n", "c".repeat(COMMENT_KIB * 1024));
    let prefix: &'static str =
        Box::leak(format!("{}id: cursor\ndata:\n\n", comment()).into_boxed_str());
    let server = resumable(prefix, move |_| {
        let mut body = sse_head(&[]);
        body.extend_from_slice(comment().as_bytes());
        body.extend_from_slice(event(r#"{"jsonrpc":"2.0","id":3,"result":{}}"#).as_bytes());
        Reply::Close(body)
    });
    let mut t = legacy_session(&server);
    let got = call(&mut t, Era::Legacy(V), LONG);
    assert_eq!(got.err(), Some(TransportError::Limit(Limit::Response)));
    assert_eq!(server.with_method("POST").len(), 2);
}

/// Upstream §17 N135–N136: the resumption GET's own status and media type.
#[test]
fn resumption_answers_are_checked() {
    for (get, expected) in [
        (response(401, &[], b""), refused(401, false)),
        (
            response(404, &[], b""),
            TransportError::Malformed(Malformed::ResumptionStatus),
        ),
        (
            json(200, "{}"),
            TransportError::Malformed(Malformed::ResumptionContentType),
        ),
    ] {
        let get = Arc::new(get);
        let server = resumable("id: cursor\ndata:\n\n", move |_| Reply::Send(get.to_vec()));
        let mut t = legacy_session(&server);
        let got = call(&mut t, Era::Legacy(V), LONG);
        assert_eq!(got.err(), Some(expected));
    }
}
