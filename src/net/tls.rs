//! Our TLS link of the connector chain: a rustls handshake against the process trust store.
//!
//! Why not ureq's `RustlsConnector`: it builds a rustls configuration per agent (re-parsing a
//! system bundle for every probe), only knows "webpki roots or a given list", and hands
//! certificate failures back wrapped in I/O errors. Ours shares one configuration per process
//! (built lazily by [`super::trust`]), records the tls stage, and keeps the rustls error so a
//! failure is classified exactly (`tls_untrusted`, `tls_name_mismatch`, `tls_expired`, …).
//! Verification is never disabled.

use std::io::{self, Read, Write};
use std::sync::Arc;

use rustls::pki_types::ServerName;
use rustls::{ClientConfig, ClientConnection, StreamOwned};
use ureq::Error;
use ureq::unversioned::transport::{
    Buffers, ConnectionDetails, Connector, Either, NextTimeout, Transport, TransportAdapter, time,
};

use crate::result::Stage;

use super::buffers::ConnBuffers;

use super::connect::Connected;
use super::stages::Recorder;
use super::trust;

/// Wraps the chained transport in TLS when the URL is `https`.
pub(crate) struct TlsStage {
    rec: Recorder,
    config: Option<Arc<ClientConfig>>,
}

impl TlsStage {
    /// `config` replaces the process trust store (tests; a future `--ca-file`).
    pub(crate) fn new(rec: Recorder, config: Option<Arc<ClientConfig>>) -> TlsStage {
        TlsStage { rec, config }
    }

    fn handshake<In: Transport>(
        &self,
        details: &ConnectionDetails,
        transport: In,
    ) -> Result<TlsTransport, Error> {
        let config = match &self.config {
            Some(c) => c.clone(),
            None => trust::process_store()
                .map_err(|_| Error::Tls("trust store unavailable"))?
                .client_config(),
        };
        let host = details.uri.host().unwrap_or_default();
        let host = host
            .strip_prefix('[')
            .and_then(|h| h.strip_suffix(']'))
            .unwrap_or(host);
        let name = ServerName::try_from(host.to_string())
            .map_err(|_| Error::Tls("invalid server name"))?;
        let mut conn = ClientConnection::new(config, name).map_err(Error::Rustls)?;
        let mut sock = TransportAdapter::new(transport.boxed(), details.current_time.clone());
        sock.set_timeout(remaining(details));
        while conn.is_handshaking() {
            conn.complete_io(&mut sock).map_err(tls_error)?;
        }
        let buffers = ConnBuffers::new(
            details.config.input_buffer_size(),
            details.config.output_buffer_size(),
        );
        Ok(TlsTransport {
            buffers,
            stream: StreamOwned::new(conn, sock),
        })
    }
}

impl<In: Transport> Connector<In> for TlsStage {
    type Out = Either<In, TlsTransport>;

    fn connect(&self, details: &ConnectionDetails, chained: Option<In>) -> Connected<Self::Out> {
        let Some(transport) = chained else {
            return Ok(None);
        };
        if !details.needs_tls() || transport.is_tls() {
            return Ok(Some(Either::A(transport)));
        }
        self.rec.stage_started(Stage::Tls);
        let result = self.handshake(details, transport);
        self.rec.stage_ended(Stage::Tls, result.is_ok());
        result.map(|t| Some(Either::B(t)))
    }
}

impl std::fmt::Debug for TlsStage {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("TlsStage")
    }
}

/// The connect budget left for the handshake. `details.timeout` was computed before the TCP
/// connect; ureq's own connector can start the clock at `details.now`, ours subtracts the
/// time the connect took.
fn remaining(details: &ConnectionDetails) -> NextTimeout {
    let mut timeout = details.timeout;
    if let (time::Duration::Exact(after), time::Instant::Exact(then), time::Instant::Exact(now)) =
        (timeout.after, details.now, (details.current_time)())
    {
        let spent = now.saturating_duration_since(then);
        timeout.after = time::Duration::Exact(after.saturating_sub(spent));
    }
    timeout
}

/// Turns an I/O error from rustls into a ureq error that keeps the rustls cause.
fn tls_error(e: io::Error) -> Error {
    match e.get_ref().and_then(|i| i.downcast_ref::<rustls::Error>()) {
        Some(tls) => Error::Rustls(tls.clone()),
        None => Error::from(e),
    }
}

/// An established TLS connection over the chained transport.
pub(crate) struct TlsTransport {
    buffers: ConnBuffers,
    stream: StreamOwned<ClientConnection, TransportAdapter>,
}

impl Transport for TlsTransport {
    fn buffers(&mut self) -> &mut dyn Buffers {
        &mut self.buffers
    }

    fn transmit_output(&mut self, amount: usize, timeout: NextTimeout) -> Result<(), Error> {
        self.stream.get_mut().set_timeout(timeout);
        let output = &self.buffers.output()[..amount];
        self.stream.write_all(output).map_err(tls_error)
    }

    fn await_input(&mut self, timeout: NextTimeout) -> Result<bool, Error> {
        self.stream.get_mut().set_timeout(timeout);
        let input = self.buffers.input_append_buf();
        let n = self.stream.read(input).map_err(tls_error)?;
        self.buffers.input_appended(n);
        Ok(n > 0)
    }

    fn is_open(&mut self) -> bool {
        self.stream.get_mut().get_mut().is_open()
    }

    fn is_tls(&self) -> bool {
        true
    }
}

impl std::fmt::Debug for TlsTransport {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TlsTransport")
            .field("chained", &self.stream.sock.inner())
            .finish()
    }
}
