//! The connector chain around ureq's own pieces: TCP timing and the first-response-byte
//! watch. The TLS link of the chain is in [`super::tls`].
//!
//! Chain, outermost last: ureq's CONNECT-proxy connector → [`TimedTcp`] → our TLS connector →
//! [`FirstByte`]. ureq runs the same chain for the hop to a proxy; `FirstByte` recognises that
//! hop (its configuration has no proxy while the exchange has one) and leaves it alone, so a
//! proxy's `CONNECT` reply never counts as the target's response.

use ureq::Error;
use ureq::unversioned::transport::{
    Buffers, ConnectionDetails, Connector, Either, NextTimeout, TcpConnector, Transport,
};

use crate::result::Stage;

use super::stages::Recorder;

/// ureq's TCP connector (timeouts, address fallback, shutdown registration), timed.
pub(crate) struct TimedTcp {
    inner: TcpConnector,
    rec: Recorder,
}

impl TimedTcp {
    pub(crate) fn new(rec: Recorder) -> TimedTcp {
        TimedTcp {
            inner: TcpConnector::default(),
            rec,
        }
    }
}

impl<In: Transport> Connector<In> for TimedTcp {
    type Out = <TcpConnector as Connector<In>>::Out;

    fn connect(
        &self,
        details: &ConnectionDetails,
        chained: Option<In>,
    ) -> Result<Option<Self::Out>, Error> {
        if chained.is_some() {
            // A proxy tunnel is already open: nothing to connect.
            return self.inner.connect(details, chained);
        }
        self.rec.stage_started(Stage::Tcp);
        let result = self.inner.connect(details, None);
        self.rec
            .stage_ended(Stage::Tcp, matches!(result, Ok(Some(_))));
        result
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

    fn connect(
        &self,
        details: &ConnectionDetails,
        chained: Option<In>,
    ) -> Result<Option<Self::Out>, Error> {
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
        })))
    }
}

impl std::fmt::Debug for FirstByte {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("FirstByte")
    }
}

/// A transport that reports, once per exchange, that the request is going out (a pooled
/// connection's http stage starts there) and that a response byte came in.
pub(crate) struct Watched<T> {
    inner: T,
    rec: Recorder,
    sent: u64,
    seen: u64,
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
        self.inner.transmit_output(amount, timeout)
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
