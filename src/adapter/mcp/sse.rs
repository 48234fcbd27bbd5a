//! Push parser for `text/event-stream` bodies (the WHATWG "server-sent
//! events" format), without any I/O.
//!
//! Feed the body in chunks of any size with [`SseParser::feed`]; complete
//! events are appended to the caller's vector as soon as their terminating
//! blank line has been seen. Chunk boundaries never change the result, even
//! when they split a UTF-8 character, the byte-order mark or a CRLF pair.
//!
//! Memory is bounded: a line, or the data of one event, longer than the
//! configured maximum fails with [`SseError::EventTooLarge`] before it is
//! buffered past that maximum.
//!
//! One parser can follow a resumed stream: call [`SseParser::finish`] when a
//! connection ends, then feed the next connection's body. The last event id
//! and the retry delay carry over; everything else starts afresh.

use std::fmt;

const BOM: [u8; 3] = [0xEF, 0xBB, 0xBF];

/// One dispatched event.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Event {
    /// The `event` field of this event, or `"message"` when absent or empty.
    pub event_type: String,
    /// The `data` lines joined with `\n` (no trailing newline). It may be
    /// empty, e.g. for an MCP priming event (`id: x` followed by `data:`).
    pub data: String,
    /// The last event id in effect when this event was dispatched.
    pub id: String,
}

/// Why the stream was refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SseError {
    /// A line, or the data of one event, exceeded the configured maximum.
    EventTooLarge,
}

impl fmt::Display for SseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SseError::EventTooLarge => {
                f.write_str("event stream line or event exceeds the size limit")
            }
        }
    }
}

impl std::error::Error for SseError {}

/// Progress through an optional byte-order mark at the start of a stream.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Bom {
    /// At stream start; this many BOM bytes have been matched so far.
    Matching(usize),
    /// Past the stream start.
    Done,
}

/// Incremental event-stream parser. See the module documentation.
#[derive(Debug)]
pub struct SseParser {
    max_event_bytes: usize,
    bom: Bom,
    /// The previous chunk ended with CR, so a leading LF must be skipped.
    after_cr: bool,
    line: Vec<u8>,
    data: String,
    event_type: String,
    last_event_id: String,
    retry_ms: Option<u64>,
    bytes_seen: u64,
    failed: bool,
}

impl SseParser {
    /// Creates a parser that refuses any line, and any event's data, longer
    /// than `max_event_bytes` bytes.
    pub fn new(max_event_bytes: usize) -> Self {
        SseParser {
            max_event_bytes,
            bom: Bom::Matching(0),
            after_cr: false,
            line: Vec::new(),
            data: String::new(),
            event_type: String::new(),
            last_event_id: String::new(),
            retry_ms: None,
            bytes_seen: 0,
            failed: false,
        }
    }

    /// Parses the next chunk of the stream and appends every event it
    /// completes to `out`.
    ///
    /// On [`SseError::EventTooLarge`] the pending line and event are dropped
    /// and every later call fails the same way until [`finish`](Self::finish)
    /// starts a new stream. Events completed earlier in the same chunk are
    /// still in `out`.
    ///
    /// # Errors
    ///
    /// [`SseError::EventTooLarge`] if a line or an event's data exceeds the
    /// maximum given to [`new`](Self::new).
    pub fn feed(&mut self, chunk: &[u8], out: &mut Vec<Event>) -> Result<(), SseError> {
        let len = u64::try_from(chunk.len()).unwrap_or(u64::MAX);
        self.bytes_seen = self.bytes_seen.saturating_add(len);
        if self.failed {
            return Err(SseError::EventTooLarge);
        }
        let result = self.feed_inner(chunk, out);
        if result.is_err() {
            self.failed = true;
            self.line = Vec::new();
            self.data = String::new();
            self.event_type = String::new();
        }
        result
    }

    /// Ends the current stream (connection closed).
    ///
    /// Per WHATWG, an event without its terminating blank line, and any unterminated last
    /// line, are discarded: ending a stream never completes an event. Returns `true` if
    /// something was discarded ("stream ended mid-event"). The last event id, the retry
    /// delay and the byte count are kept; the next [`feed`](Self::feed) starts a new stream
    /// (a leading byte-order mark is stripped again and a size error is cleared).
    pub fn finish(&mut self) -> bool {
        let discarded = !self.line.is_empty()
            || !self.data.is_empty()
            || !self.event_type.is_empty()
            || matches!(self.bom, Bom::Matching(n) if n > 0);
        self.bom = Bom::Matching(0);
        self.after_cr = false;
        self.line.clear();
        self.data.clear();
        self.event_type.clear();
        self.failed = false;
        discarded
    }

    /// The last event id seen (empty if none, or after an empty `id:` line).
    /// Send it as `Last-Event-ID` when resuming.
    pub fn last_event_id(&self) -> &str {
        &self.last_event_id
    }

    /// The last valid `retry` value in milliseconds, if any. A value too large
    /// for `u64` saturates to `u64::MAX`.
    pub fn retry_ms(&self) -> Option<u64> {
        self.retry_ms
    }

    /// Total number of bytes passed to [`feed`](Self::feed), across streams.
    pub fn bytes_seen(&self) -> u64 {
        self.bytes_seen
    }

    fn feed_inner(&mut self, chunk: &[u8], out: &mut Vec<Event>) -> Result<(), SseError> {
        let mut rest = chunk;
        while let Bom::Matching(matched) = self.bom {
            let Some((&byte, tail)) = rest.split_first() else {
                return Ok(());
            };
            if BOM.get(matched) == Some(&byte) {
                rest = tail;
                self.bom = if matched + 1 == BOM.len() {
                    Bom::Done
                } else {
                    Bom::Matching(matched + 1)
                };
            } else {
                // Not a BOM after all: the bytes matched so far are content.
                let prefix = BOM.get(..matched).unwrap_or_default();
                self.push_line(prefix)?;
                self.bom = Bom::Done;
            }
        }
        while let Some((&first, tail)) = rest.split_first() {
            if self.after_cr {
                self.after_cr = false;
                if first == b'\n' {
                    rest = tail;
                    continue;
                }
            }
            match rest.iter().position(|&b| b == b'\r' || b == b'\n') {
                None => {
                    self.push_line(rest)?;
                    break;
                }
                Some(end) => {
                    let (head, terminator) = rest.split_at(end);
                    self.push_line(head)?;
                    self.after_cr = terminator.first() == Some(&b'\r');
                    rest = terminator.get(1..).unwrap_or_default();
                    self.end_line(out)?;
                }
            }
        }
        Ok(())
    }

    fn push_line(&mut self, bytes: &[u8]) -> Result<(), SseError> {
        if self.line.len().saturating_add(bytes.len()) > self.max_event_bytes {
            return Err(SseError::EventTooLarge);
        }
        self.line.extend_from_slice(bytes);
        Ok(())
    }

    fn end_line(&mut self, out: &mut Vec<Event>) -> Result<(), SseError> {
        let line = std::mem::take(&mut self.line);
        let result = self.process_line(&String::from_utf8_lossy(&line), out);
        self.line = line;
        self.line.clear();
        result
    }

    fn process_line(&mut self, line: &str, out: &mut Vec<Event>) -> Result<(), SseError> {
        if line.is_empty() {
            self.dispatch(out);
            return Ok(());
        }
        if line.starts_with(':') {
            return Ok(());
        }
        let (field, value) = match line.split_once(':') {
            Some((field, value)) => (field, value.strip_prefix(' ').unwrap_or(value)),
            None => (line, ""),
        };
        match field {
            "event" => value.clone_into(&mut self.event_type),
            "data" => {
                // `data` keeps a trailing '\n', so this is the dispatched length.
                if self.data.len().saturating_add(value.len()) > self.max_event_bytes {
                    return Err(SseError::EventTooLarge);
                }
                self.data.push_str(value);
                self.data.push('\n');
            }
            // An id containing NUL is ignored entirely.
            "id" if !value.contains('\0') => value.clone_into(&mut self.last_event_id),
            // Only a non-empty run of ASCII digits is a valid retry value.
            "retry" if !value.is_empty() && value.bytes().all(|b| b.is_ascii_digit()) => {
                let ms = value.bytes().fold(0u64, |acc, b| {
                    acc.saturating_mul(10)
                        .saturating_add(u64::from(b.saturating_sub(b'0')))
                });
                self.retry_ms = Some(ms);
            }
            _ => {}
        }
        Ok(())
    }

    fn dispatch(&mut self, out: &mut Vec<Event>) {
        if self.data.is_empty() {
            self.event_type.clear();
            return;
        }
        if self.data.ends_with('\n') {
            self.data.pop();
        }
        let event_type = if self.event_type.is_empty() {
            "message".to_owned()
        } else {
            std::mem::take(&mut self.event_type)
        };
        out.push(Event {
            event_type,
            data: std::mem::take(&mut self.data),
            id: self.last_event_id.clone(),
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, PartialEq, Eq)]
    struct Parsed {
        events: Vec<Event>,
        last_id: String,
        retry: Option<u64>,
        failed: bool,
        discarded: bool,
    }

    fn run_chunks<'a>(chunks: impl IntoIterator<Item = &'a [u8]>, max: usize) -> Parsed {
        let mut parser = SseParser::new(max);
        let mut events = Vec::new();
        let mut failed = false;
        for chunk in chunks {
            if parser.feed(chunk, &mut events).is_err() {
                failed = true;
                break;
            }
        }
        let discarded = if failed { false } else { parser.finish() };
        Parsed {
            events,
            last_id: parser.last_event_id().to_owned(),
            retry: parser.retry_ms(),
            failed,
            discarded,
        }
    }

    /// Parses `stream` whole, one byte at a time and in every two-way split,
    /// asserting that all of them agree.
    fn run_max(stream: &[u8], max: usize) -> Parsed {
        let whole = run_chunks([stream], max);
        let bytewise = run_chunks(stream.chunks(1), max);
        assert_eq!(whole, bytewise, "byte-by-byte differs for {stream:?}");
        for split in 0..=stream.len() {
            let (a, b) = stream.split_at(split);
            let two = run_chunks([a, b], max);
            assert_eq!(whole, two, "split at {split} differs for {stream:?}");
        }
        whole
    }

    fn run(stream: &str) -> Parsed {
        run_max(stream.as_bytes(), 1 << 20)
    }

    fn ev(event_type: &str, data: &str, id: &str) -> Event {
        Event {
            event_type: event_type.to_owned(),
            data: data.to_owned(),
            id: id.to_owned(),
        }
    }

    fn data_of(o: &Parsed) -> Vec<&str> {
        o.events.iter().map(|e| e.data.as_str()).collect()
    }

    #[test]
    fn basic_event_and_multiline_data() {
        let o = run("data: hello\n\ndata: a\ndata: b\ndata:\n\n");
        assert_eq!(
            o.events,
            vec![ev("message", "hello", ""), ev("message", "a\nb\n", "")]
        );
        assert!(!o.discarded);
    }

    #[test]
    fn line_endings_cr_lf_crlf_mixed() {
        let o = run("data: a\rdata: b\r\n\r\ndata: c\n\rdata: d\r\r\ndata: e\r\n\n");
        assert_eq!(data_of(&o), vec!["a\nb", "c", "d", "e"]);
        // Two CRs are a line end plus a blank line.
        assert_eq!(data_of(&run("data: x\r\r")), vec!["x"]);
    }

    #[test]
    fn crlf_split_across_chunks_is_one_terminator() {
        // If the LF after a chunk-final CR were a second line end, the event
        // would be dispatched after "a" and "b" would be a separate event.
        let o = run_chunks([&b"data: a\r"[..], b"\ndata: b\r", b"\n\r", b"\n"], 1024);
        assert_eq!(data_of(&o), vec!["a\nb"]);
        let o = run_chunks([&b"data: a\r"[..], b"", b"\n", b"\r\n"], 1024);
        assert_eq!(data_of(&o), vec!["a"]);
    }

    #[test]
    fn bom_stripped_only_at_stream_start() {
        assert_eq!(data_of(&run("\u{feff}data: x\n\n")), vec!["x"]);
        // A second BOM is content: the field name becomes "\u{feff}data".
        assert!(run("\u{feff}\u{feff}data: x\n\n").events.is_empty());
        assert_eq!(data_of(&run("data: a\n\n\u{feff}data: b\n\n")), vec!["a"]);
        // A truncated BOM is content too (decoded lossily).
        assert!(run_max(b"\xef\xbbdata: x\n\n", 1024).events.is_empty());
        assert_eq!(data_of(&run("\u{feff}\ndata: x\n\n")), vec!["x"]);
        // Split across chunks.
        let o = run_chunks([&b"\xef"[..], b"\xbb", b"\xbfdata: y\n\n"], 1024);
        assert_eq!(data_of(&o), vec!["y"]);
    }

    #[test]
    fn comments_ignored() {
        let o = run(": keep-alive\n:\ndata: x\n: mid-event comment\ndata: y\n\n");
        assert_eq!(data_of(&o), vec!["x\ny"]);
        assert!(run(": only a comment\n\n").events.is_empty());
    }

    #[test]
    fn field_without_colon_has_empty_value() {
        assert_eq!(data_of(&run("data\ndata\n\n")), vec!["\n"]);
        assert_eq!(data_of(&run("data\n\n")), vec![""]);
        let o = run("id: 5\nid\ndata: x\n\n");
        assert_eq!(o.events, vec![ev("message", "x", "")]);
    }

    #[test]
    fn one_leading_space_removed() {
        let o = run("data:  two\n\ndata:\ttab\n\ndata:none\n\ndata: a:b: c\n\n");
        assert_eq!(data_of(&o), vec![" two", "\ttab", "none", "a:b: c"]);
    }

    #[test]
    fn empty_data_buffer_does_not_dispatch_but_id_updates() {
        let o = run("id: 5\n\nevent: ping\n\ndata: x\n\n");
        assert_eq!(o.events, vec![ev("message", "x", "5")]);
        assert_eq!(o.last_id, "5");
        let o = run("id: 7\n\n");
        assert!(o.events.is_empty());
        assert_eq!(o.last_id, "7");
    }

    #[test]
    fn mcp_priming_event_dispatches_empty_data() {
        let o = run("id: s7-0\nretry: 2000\ndata:\n\nevent: message\nid: s7-1\ndata: {}\n\n");
        assert_eq!(
            o.events,
            vec![ev("message", "", "s7-0"), ev("message", "{}", "s7-1")]
        );
        assert_eq!(o.retry, Some(2000));
    }

    #[test]
    fn event_type_applies_to_one_event() {
        let o = run("event: ping\ndata: a\n\ndata: b\n\nevent:\ndata: c\n\n");
        assert_eq!(
            o.events,
            vec![
                ev("ping", "a", ""),
                ev("message", "b", ""),
                ev("message", "c", "")
            ]
        );
    }

    #[test]
    fn id_persists_nul_ignored_empty_resets() {
        let o = run("id: 1\ndata: a\n\ndata: b\n\nid: 2\0x\ndata: c\n\nid:\ndata: d\n\n");
        assert_eq!(
            o.events,
            vec![
                ev("message", "a", "1"),
                ev("message", "b", "1"),
                ev("message", "c", "1"),
                ev("message", "d", "")
            ]
        );
        assert_eq!(o.last_id, "");
        assert_eq!(run("id: 3\nid: \0\n").last_id, "3");
    }

    #[test]
    fn retry_only_ascii_digits() {
        assert_eq!(run("retry: 1500\n").retry, Some(1500));
        assert_eq!(run("retry: 10\nretry: 15a\n").retry, Some(10));
        assert_eq!(run("retry: 10\nretry: -1\n").retry, Some(10));
        assert_eq!(run("retry: 10\nretry:  100\n").retry, Some(10));
        assert_eq!(run("retry: 10\nretry:\n").retry, Some(10));
        assert_eq!(run("retry: 10\nretry: ١٢\n").retry, Some(10));
        assert_eq!(
            run("retry: 99999999999999999999999\n").retry,
            Some(u64::MAX)
        );
        assert_eq!(run("retry:0\n").retry, Some(0));
        assert_eq!(run("data: x\n\n").retry, None);
    }

    #[test]
    fn unknown_and_miscased_fields_ignored() {
        let o = run("Data: no\nfoo: bar\nID: 9\n  \ndata: yes\n\n");
        assert_eq!(o.events, vec![ev("message", "yes", "")]);
        // A line of spaces is a field named " ", not a blank line.
        let o = run("data: a\n \ndata: b\n\n");
        assert_eq!(data_of(&o), vec!["a\nb"]);
    }

    #[test]
    fn utf8_split_and_invalid_bytes_decoded_lossily() {
        assert_eq!(data_of(&run("data: é世🙂\n\n")), vec!["é世🙂"]);
        let o = run_max(b"data: a\xffb\xe4\xb8\n\n", 1024);
        assert_eq!(data_of(&o), vec!["a\u{fffd}b\u{fffd}"]);
    }

    #[test]
    fn incomplete_event_discarded_at_finish() {
        let o = run("data: a\n\ndata: b\n");
        assert_eq!(data_of(&o), vec!["a"]);
        assert!(o.discarded);
        let o = run("data: a\n\ndata: b");
        assert_eq!(data_of(&o), vec!["a"]);
        assert!(o.discarded);
        let o = run("data: a\n\nevent: x\n");
        assert!(o.discarded);
        let o = run("data: a\n\n");
        assert!(!o.discarded);
        // An id line that was terminated still counts.
        assert_eq!(run("id: 4\ndata: b\n").last_id, "4");
    }

    #[test]
    fn finish_starts_a_new_stream_keeping_id_and_retry() {
        let mut p = SseParser::new(1024);
        let mut out = Vec::new();
        assert!(
            p.feed(
                b"\xef\xbb\xbfid: 1\nretry: 50\ndata: a\n\ndata: lost",
                &mut out
            )
            .is_ok()
        );
        assert!(p.finish());
        assert!(p.feed(b"\xef\xbb\xbfdata: b\n\n", &mut out).is_ok());
        assert!(!p.finish());
        assert_eq!(out, vec![ev("message", "a", "1"), ev("message", "b", "1")]);
        assert_eq!(p.retry_ms(), Some(50));
        assert_eq!(p.bytes_seen(), 50);
    }

    #[test]
    fn line_and_event_size_limits() {
        // Exactly at the limit is fine.
        assert_eq!(data_of(&run_max(b"data:12345\n\n", 10)), vec!["12345"]);
        assert!(run_max(b"data:123456\n\n", 10).failed);
        // The event's data is limited even when every line is short.
        assert_eq!(
            data_of(&run_max(b"data:1234\ndata:1234\n\n", 9)),
            vec!["1234\n1234"]
        );
        assert!(run_max(b"data:1234\ndata:12345\n\n", 9).failed);
        // A long comment or unknown field line is refused too.
        assert!(run_max(b":12345678901\n", 10).failed);
        // Events before the oversized one are still delivered.
        let o = run_max(b"data: ok\n\ndata: 0123456789\n\n", 10);
        assert!(o.failed);
        assert_eq!(data_of(&o), vec!["ok"]);
        // The BOM does not count against the first line.
        assert_eq!(
            data_of(&run_max(b"\xef\xbb\xbfdata:12345\n\n", 10)),
            vec!["12345"]
        );
    }

    #[test]
    fn huge_line_without_newline_is_not_buffered() {
        const MAX: usize = 1 << 20;
        let mut p = SseParser::new(MAX);
        let mut out = Vec::new();
        let chunk = vec![b'x'; 64 * 1024];
        let mut failed_at = None;
        for i in 0..160 {
            // 160 * 64 KiB = 10 MiB
            if p.feed(&chunk, &mut out).is_err() {
                failed_at = Some(i);
                break;
            }
            assert!(p.line.len() <= MAX);
        }
        assert_eq!(failed_at, Some(16));
        assert!(p.line.capacity() == 0 && p.data.capacity() == 0);
        assert_eq!(
            p.feed(b"\n\ndata: x\n\n", &mut out),
            Err(SseError::EventTooLarge)
        );
        assert!(out.is_empty());
        assert_eq!(p.bytes_seen(), 17 * 64 * 1024 + 11);
    }

    use crate::adapter::mcp::testing::XorShift;

    #[test]
    fn garbage_never_panics_and_chunking_never_matters() {
        let mut rng = XorShift(0x2545_F491_4F6C_DD1D);
        let pieces: &[&[u8]] = &[
            b"data",
            b"id",
            b"event",
            b"retry",
            b":",
            b": ",
            b" ",
            b"\r",
            b"\n",
            b"\r\n",
            b"\0",
            b"\xef\xbb\xbf",
            b"\xef",
            b"\xff",
            b"9",
            b"x",
            b"\xe4\xb8\x96",
        ];
        for round in 0..5_000 {
            let mut stream = Vec::new();
            for _ in 0..rng.below(48) {
                if round % 4 == 0 {
                    stream.push(rng.next() as u8);
                } else {
                    let piece = pieces.get(rng.below(pieces.len())).copied().unwrap_or(b"");
                    stream.extend_from_slice(piece);
                }
            }
            let max = 1 + rng.below(40);
            let whole = run_chunks([stream.as_slice()], max);
            let bytewise = run_chunks(stream.chunks(1), max);
            assert_eq!(whole, bytewise, "{stream:?}");
            let split = rng.below(stream.len() + 1);
            let (a, b) = stream.split_at(split);
            assert_eq!(whole, run_chunks([a, b], max), "{stream:?}");
        }
    }
}
