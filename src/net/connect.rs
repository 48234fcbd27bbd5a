//! The connector chain: TCP timing, and the watch over each exchange (its first response
//! byte, its request written in one piece). The TCP link itself is [`super::tcp`], the TLS
//! link [`super::tls`].
//!
//! Chain, outermost last: ureq's CONNECT-proxy connector → [`TimedTcp`] → our TLS connector →
//! [`FirstByte`]. ureq runs the same chain for the hop to a proxy; `FirstByte` recognises that
//! hop (its configuration has no proxy while the exchange has one) and leaves it alone, so a
//! proxy's `CONNECT` reply never counts as the target's response.

use ureq::Error;
use ureq::unversioned::transport::{
    Buffers, ConnectionDetails, Connector, Either, NextTimeout, Transport,
};

use std::sync::Arc;

use crate::contract::AllowList;
use crate::result::Stage;

use super::stages::Recorder;

/// What one stage of the connector chain gives the next: its transport, or `None` (ureq's
/// `Connector::connect`).
pub(crate) type Connected<T> = Result<Option<T>, Error>;
use super::tcp::{self, TcpTransport};

/// Our TCP connection ([`tcp::connect`]), timed, to addresses `allow` admits (when given).
pub(crate) struct TimedTcp {
    rec: Recorder,
    allow: Option<Arc<AllowList>>,
}

impl TimedTcp {
    pub(crate) fn new(rec: Recorder, allow: Option<Arc<AllowList>>) -> TimedTcp {
        TimedTcp { rec, allow }
    }
}

impl<In: Transport> Connector<In> for TimedTcp {
    type Out = Either<In, TcpTransport>;

    fn connect(&self, details: &ConnectionDetails, chained: Option<In>) -> Connected<Self::Out> {
        if let Some(tunnel) = chained {
            // A proxy tunnel is already open: nothing to connect.
            return Ok(Some(Either::A(tunnel)));
        }
        self.rec.stage_started(Stage::Tcp);
        let result = tcp::connect(details, self.allow.as_deref());
        self.rec.stage_ended(Stage::Tcp, result.is_ok());
        if let Ok(t) = &result {
            self.rec.connected(t.rtt());
        }
        result.map(|t| Some(Either::B(t)))
    }
}

impl std::fmt::Debug for TimedTcp {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("TimedTcp")
    }
}

/// Wraps the finished connection so the first response byte of each exchange is noticed.
pub(crate) struct FirstByte {
    rec: Recorder,
}

impl FirstByte {
    pub(crate) fn new(rec: Recorder) -> FirstByte {
        FirstByte { rec }
    }
}

impl<In: Transport> Connector<In> for FirstByte {
    type Out = Either<In, Watched<In>>;

    fn connect(&self, details: &ConnectionDetails, chained: Option<In>) -> Connected<Self::Out> {
        let Some(inner) = chained else {
            return Ok(None);
        };
        if self.rec.proxied() && details.config.proxy().is_none() {
            // The hop to the proxy itself.
            return Ok(Some(Either::A(inner)));
        }
        self.rec.connection_ready();
        let exchange = self.rec.exchange();
        Ok(Some(Either::B(Watched {
            inner,
            rec: self.rec.clone(),
            sent: exchange,
            seen: 0,
            headed: 0,
            held: Vec::new(),
            owed: 0,
        })))
    }
}

impl std::fmt::Debug for FirstByte {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("FirstByte")
    }
}

/// A transport that reports, once per exchange, that the request is going out (a pooled
/// connection's http stage starts there) and that a response byte came in; and that sends a
/// request in one piece.
///
/// ureq writes a request's head and then its body, each with its own write. Sent as they come
/// they are two segments, and a server that reads the head first wakes twice (or, with
/// Nagle on either side, waits for an ACK in between). So the head of a request with a body is
/// held back until the body has been written behind it, when both fit the output buffer
/// (request heads and MCP bodies are small; a larger body goes out as ureq writes it).
pub(crate) struct Watched<T> {
    inner: T,
    rec: Recorder,
    sent: u64,
    seen: u64,
    /// The exchange whose head was written (or held) last.
    headed: u64,
    /// The head (and any body bytes) held back, while `owed` body bytes are still to come.
    held: Vec<u8>,
    owed: usize,
}

impl<T: Transport> Watched<T> {
    /// Writes `amount` bytes of the output buffer, holding back a head whose body follows.
    fn write_whole(&mut self, amount: usize, timeout: NextTimeout) -> Result<(), Error> {
        let exchange = self.rec.exchange();
        if self.headed != exchange {
            // The first write of an exchange is its whole head (its buffer is sized for it).
            self.headed = exchange;
            self.held.clear();
            let body = self.rec.request_body();
            let output = self.inner.buffers().output();
            if body > 0 && amount.saturating_add(body) <= output.len() {
                self.held
                    .extend_from_slice(output.get(..amount).unwrap_or_default());
                self.owed = body;
                return Ok(());
            }
            return self.inner.transmit_output(amount, timeout);
        }
        if self.held.is_empty() {
            return self.inner.transmit_output(amount, timeout);
        }
        // Body bytes: put the held bytes in front of them.
        let held = self.held.len();
        let total = held.saturating_add(amount);
        let output = self.inner.buffers().output();
        if total > output.len() || amount > self.owed {
            // Not the request we sized for: send what we hold, then this, as ureq wrote them.
            let pending = std::mem::take(&mut self.held);
            let output = self.inner.buffers().output();
            let body: Vec<u8> = output.get(..amount).unwrap_or_default().to_vec();
            self.write_copy(&pending, timeout)?;
            return self.write_copy(&body, timeout);
        }
        output.copy_within(..amount, held);
        if let Some(front) = output.get_mut(..held) {
            front.copy_from_slice(&self.held);
        }
        self.owed -= amount;
        if self.owed > 0 {
            // The body comes in several writes: keep gathering.
            self.held.clear();
            self.held
                .extend_from_slice(output.get(..total).unwrap_or_default());
            return Ok(());
        }
        self.held.clear();
        self.inner.transmit_output(total, timeout)
    }

    /// Writes `bytes` through the output buffer (in pieces of its size).
    fn write_copy(&mut self, bytes: &[u8], timeout: NextTimeout) -> Result<(), Error> {
        for piece in bytes.chunks(self.inner.buffers().output().len().max(1)) {
            let output = self.inner.buffers().output();
            if let Some(dst) = output.get_mut(..piece.len()) {
                dst.copy_from_slice(piece);
            }
            self.inner.transmit_output(piece.len(), timeout)?;
        }
        Ok(())
    }
}

impl<T: Transport> Transport for Watched<T> {
    fn buffers(&mut self) -> &mut dyn Buffers {
        self.inner.buffers()
    }

    fn transmit_output(&mut self, amount: usize, timeout: NextTimeout) -> Result<(), Error> {
        let exchange = self.rec.exchange();
        if self.sent != exchange {
            self.sent = exchange;
            self.rec.connection_ready();
        }
        self.write_whole(amount, timeout)
    }

    fn await_input(&mut self, timeout: NextTimeout) -> Result<bool, Error> {
        let result = self.inner.await_input(timeout);
        if matches!(result, Ok(true)) {
            let exchange = self.rec.exchange();
            if self.seen != exchange {
                self.seen = exchange;
                self.rec.first_byte();
            }
        }
        result
    }

    fn is_open(&mut self) -> bool {
        self.inner.is_open()
    }

    fn is_tls(&self) -> bool {
        self.inner.is_tls()
    }
}

impl<T: Transport> std::fmt::Debug for Watched<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Watched")
            .field("inner", &self.inner)
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::contract::Bound;
    use crate::runtime::{Attempt, Deadline};
    use std::time::Duration;
    use ureq::unversioned::transport::LazyBuffers;

    /// A transport that records each write.
    #[derive(Debug)]
    struct Writes {
        buffers: LazyBuffers,
        sent: Vec<Vec<u8>>,
    }

    impl Transport for Writes {
        fn buffers(&mut self) -> &mut dyn Buffers {
            &mut self.buffers
        }
        fn transmit_output(&mut self, amount: usize, _: NextTimeout) -> Result<(), Error> {
            self.sent.push(self.buffers.output()[..amount].to_vec());
            Ok(())
        }
        fn await_input(&mut self, _: NextTimeout) -> Result<bool, Error> {
            Ok(false)
        }
        fn is_open(&mut self) -> bool {
            true
        }
    }

    fn watched(output: usize) -> Watched<Writes> {
        Watched {
            inner: Writes {
                buffers: LazyBuffers::new(1024, output),
                sent: Vec::new(),
            },
            rec: Recorder::new(),
            sent: 0,
            seen: 0,
            headed: 0,
            held: Vec::new(),
            owed: 0,
        }
    }

    /// Writes `pieces` as ureq does: each into the output buffer, then transmitted.
    fn write(w: &mut Watched<Writes>, body: usize, pieces: &[&[u8]]) {
        let attempt = Attempt::new(Deadline::after(Duration::from_secs(5), Bound::TimeoutMs));
        w.rec.begin(&attempt, false, body);
        for piece in pieces {
            w.buffers().output()[..piece.len()].copy_from_slice(piece);
            w.transmit_output(piece.len(), NextTimeout::default())
                .expect("write");
        }
    }

    #[test]
    fn a_request_leaves_in_one_write() {
        let mut w = watched(64);
        write(&mut w, 4, &[b"HEAD\r\n\r\n", b"body"]);
        // A request without a body, then one whose body comes in two pieces.
        write(&mut w, 0, &[b"GET\r\n\r\n"]);
        write(&mut w, 6, &[b"POST\r\n\r\n", b"abc", b"def"]);
        let sent: Vec<&[u8]> = w.inner.sent.iter().map(Vec::as_slice).collect();
        assert_eq!(
            sent,
            [
                b"HEAD\r\n\r\nbody".as_slice(),
                b"GET\r\n\r\n",
                b"POST\r\n\r\nabcdef"
            ]
        );
    }

    #[test]
    fn a_body_too_large_for_the_buffer_follows_its_head() {
        let mut w = watched(16);
        write(&mut w, 12, &[b"POST\r\n\r\n", b"0123456789ab"]);
        let sent: Vec<&[u8]> = w.inner.sent.iter().map(Vec::as_slice).collect();
        assert_eq!(sent, [b"POST\r\n\r\n".as_slice(), b"0123456789ab"]);
    }
}
