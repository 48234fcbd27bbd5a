//! TLS for the test servers: certificates made in the test with rcgen (ring), and a rustls
//! server session to wrap [`Server`](crate::http_server::Server) connections in.

use std::io;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use rcgen::{
    BasicConstraints, CertificateParams, DnType, IsCa, Issuer, KeyPair, KeyUsagePurpose,
    date_time_ymd,
};
use rustls::pki_types::{CertificateDer, PrivateKeyDer, PrivatePkcs8KeyDer};
use rustls::{RootCertStore, ServerConfig, ServerConnection, StreamOwned};

use crate::http_server::{Stream, Wrap};

/// A certificate chain and its key, for a server.
pub struct Identity {
    /// Leaf first.
    pub chain: Vec<CertificateDer<'static>>,
    /// The leaf's key.
    pub key: PrivateKeyDer<'static>,
}

/// A private CA that issues leaf certificates.
pub struct TestCa {
    /// The CA certificate.
    pub cert: CertificateDer<'static>,
    /// The same, PEM-encoded (for `SSL_CERT_FILE`).
    pub pem: String,
    issuer: Issuer<'static, KeyPair>,
}

/// A fresh CA, as [`TestCa::new`] makes.
impl Default for TestCa {
    fn default() -> TestCa {
        TestCa::new()
    }
}

impl TestCa {
    /// A new CA.
    pub fn new() -> TestCa {
        let key = KeyPair::generate().expect("ca key");
        let mut params = CertificateParams::new(Vec::<String>::new()).expect("ca params");
        // Its own name: with rcgen's default for both, OpenSSL (curl) takes a leaf for
        // self-signed.
        params
            .distinguished_name
            .push(DnType::CommonName, "agenthealth test CA");
        params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
        params.key_usages = vec![KeyUsagePurpose::KeyCertSign, KeyUsagePurpose::CrlSign];
        let cert = params.self_signed(&key).expect("ca cert");
        TestCa {
            cert: cert.der().clone(),
            pem: cert.pem(),
            issuer: Issuer::new(params, key),
        }
    }

    /// A leaf for `names` (DNS names or IP addresses), valid now.
    pub fn leaf(&self, names: &[&str]) -> Identity {
        self.issue(names, false)
    }

    /// A leaf for `names` that expired long ago.
    pub fn expired_leaf(&self, names: &[&str]) -> Identity {
        self.issue(names, true)
    }

    fn issue(&self, names: &[&str], expired: bool) -> Identity {
        let key = KeyPair::generate().expect("leaf key");
        let names: Vec<String> = names.iter().map(|n| n.to_string()).collect();
        let mut params = CertificateParams::new(names).expect("leaf params");
        if expired {
            params.not_before = date_time_ymd(2000, 1, 1);
            params.not_after = date_time_ymd(2001, 1, 1);
        }
        let cert = params.signed_by(&key, &self.issuer).expect("leaf cert");
        Identity {
            chain: vec![cert.der().clone()],
            key: PrivateKeyDer::Pkcs8(PrivatePkcs8KeyDer::from(key.serialize_der())),
        }
    }

    /// A root store trusting only this CA.
    pub fn roots(&self) -> RootCertStore {
        let mut roots = RootCertStore::empty();
        roots.add(self.cert.clone()).expect("add ca");
        roots
    }
}

/// A self-signed leaf for `names` (trusted by nobody).
pub fn self_signed(names: &[&str]) -> Identity {
    let names: Vec<String> = names.iter().map(|n| n.to_string()).collect();
    let certified = rcgen::generate_simple_self_signed(names).expect("self-signed");
    Identity {
        chain: vec![certified.cert.der().clone()],
        key: PrivateKeyDer::Pkcs8(PrivatePkcs8KeyDer::from(
            certified.signing_key.serialize_der(),
        )),
    }
}

/// Wraps each accepted connection in a TLS server session presenting `identity`.
pub fn server_wrap(identity: Identity) -> Wrap {
    handshakes_wrap(identity, None)
}

/// Handshakes a server completed, by kind: counters the connection threads add to, so no
/// lock (this file is also compiled into the crate's unit tests, which cannot reach the
/// crate's lock helper by the path the integration tests use).
#[derive(Debug, Default)]
pub struct Handshakes {
    full: AtomicUsize,
    resumed: AtomicUsize,
}

impl Handshakes {
    /// `(full, resumed)` so far: full handshakes (certificate sent and verified), and
    /// resumed sessions.
    pub fn counts(&self) -> (usize, usize) {
        (
            self.full.load(Ordering::SeqCst),
            self.resumed.load(Ordering::SeqCst),
        )
    }
}

/// Like [`server_wrap`], completing each handshake before the first request and counting it
/// into `counts`.
pub fn counting_server_wrap(identity: Identity, counts: Arc<Handshakes>) -> Wrap {
    handshakes_wrap(identity, Some(counts))
}

fn handshakes_wrap(identity: Identity, counts: Option<Arc<Handshakes>>) -> Wrap {
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let config = ServerConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .expect("versions")
        .with_no_client_auth()
        .with_single_cert(identity.chain, identity.key)
        .expect("server cert");
    let config = Arc::new(config);
    Arc::new(move |mut tcp| {
        let mut conn = ServerConnection::new(config.clone()).map_err(io::Error::other)?;
        if let Some(counts) = &counts {
            while conn.is_handshaking() {
                conn.complete_io(&mut tcp)?;
            }
            let kind = match conn.handshake_kind() {
                Some(rustls::HandshakeKind::Resumed) => &counts.resumed,
                _ => &counts.full,
            };
            kind.fetch_add(1, Ordering::SeqCst);
        }
        let stream: Box<dyn Stream> = Box::new(StreamOwned::new(conn, tcp));
        Ok(stream)
    })
}
