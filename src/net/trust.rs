//! The trust store: which certificate authorities verify servers. TLS is always verified.
//!
//! Selection, first match wins:
//! 1. `SSL_CERT_FILE` and/or `SSL_CERT_DIR` when set (non-empty), the OpenSSL convention that
//!    curl and most tools honour. `SSL_CERT_DIR` may list several directories separated by
//!    `:`; every regular file in them is read for PEM certificates. A variable that is set
//!    but unreadable, or that yields no certificate, is an error: an operator who points us at
//!    a private CA must not silently get the public roots instead.
//! 2. The system bundle: the first of [`SYSTEM_BUNDLES`] that exists and holds at least one
//!    certificate (Debian/Ubuntu/Alpine/distroless, Fedora/RHEL, openSUSE, …). This is where
//!    `update-ca-certificates` puts a private CA on an air-gapped host.
//! 3. The Mozilla roots compiled into the binary (`webpki-roots`), so a static binary in a
//!    `scratch` image still verifies public servers.
//!
//! The store is built lazily, once per process, by the first `https` exchange (or the first
//! configuration check of an `https` target): a plain-http probe never parses a certificate.

use std::collections::HashSet;
use std::path::Path;
use std::sync::{Arc, OnceLock};

use rustls::pki_types::CertificateDer;
use rustls::pki_types::pem::PemObject;
use rustls::{ClientConfig, RootCertStore};

use crate::result::reason::TrustProblem;
use crate::result::{Evidence, Fact, Key};

/// System CA bundles, in the order they are tried.
pub const SYSTEM_BUNDLES: &[&str] = &[
    "/etc/ssl/certs/ca-certificates.crt", // Debian, Ubuntu, Alpine, Arch, Gentoo, distroless
    "/etc/pki/tls/certs/ca-bundle.crt",   // Fedora, RHEL 6
    "/etc/pki/ca-trust/extracted/pem/tls-ca-bundle.pem", // CentOS, RHEL 7+
    "/etc/ssl/ca-bundle.pem",             // openSUSE
    "/etc/pki/tls/cacert.pem",            // OpenELEC
    "/etc/ssl/cert.pem",                  // Alpine (LibreSSL), macOS
];

/// Largest file read as a certificate bundle; anything bigger is not one.
const MAX_BUNDLE_BYTES: u64 = 16 << 20;

/// Where the trusted roots came from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TrustSource {
    /// `SSL_CERT_FILE` and/or `SSL_CERT_DIR`.
    Environment {
        /// `SSL_CERT_FILE` contributed.
        file: bool,
        /// `SSL_CERT_DIR` contributed.
        dir: bool,
    },
    /// A system bundle at this path.
    System(&'static str),
    /// The Mozilla roots compiled into the binary.
    Bundled,
}

impl TrustSource {
    /// `env`, `system` or `bundled` (the `trust_store` evidence word).
    pub fn kind_word(self) -> &'static str {
        match self {
            TrustSource::Environment { .. } => "env",
            TrustSource::System(_) => "system",
            TrustSource::Bundled => "bundled",
        }
    }

    /// The variable(s), the system path, or `webpki-roots` (the `trust_store_source` word).
    pub fn origin_word(self) -> &'static str {
        match self {
            TrustSource::Environment {
                file: true,
                dir: true,
            } => "SSL_CERT_FILE+SSL_CERT_DIR",
            TrustSource::Environment { file: true, .. } => "SSL_CERT_FILE",
            TrustSource::Environment { .. } => "SSL_CERT_DIR",
            TrustSource::System(path) => path,
            TrustSource::Bundled => "webpki-roots",
        }
    }
}

/// A loaded trust store and the rustls client configuration built on it.
#[derive(Clone, Debug)]
pub struct TrustStore {
    /// Where the roots came from.
    pub source: TrustSource,
    /// How many root certificates were accepted.
    pub certificates: usize,
    config: Arc<ClientConfig>,
}

impl TrustStore {
    /// The client configuration that verifies against these roots.
    pub fn client_config(&self) -> Arc<ClientConfig> {
        self.config.clone()
    }

    /// Adds `trust_store`, `trust_store_source` and `trust_store_certs`.
    pub fn write_evidence(&self, evidence: &mut Evidence) {
        evidence.set(Key::TrustStore, Fact::Word(self.source.kind_word()));
        evidence.set(Key::TrustStoreSource, Fact::Word(self.source.origin_word()));
        evidence.set(
            Key::TrustStoreCerts,
            Fact::Int(i64::try_from(self.certificates).unwrap_or(i64::MAX)),
        );
    }
}

/// Why the configured trust store cannot be used.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TrustError {
    /// The variable names a file or directory we cannot read.
    Unreadable(&'static str),
    /// The variable names something that holds no usable certificate.
    NoCertificates(&'static str),
    /// rustls refused to build a configuration (should not happen with ring).
    Tls,
}

impl TrustError {
    /// The variable at fault, if any.
    pub fn variable(self) -> Option<&'static str> {
        match self {
            TrustError::Unreadable(v) | TrustError::NoCertificates(v) => Some(v),
            TrustError::Tls => None,
        }
    }

    /// A fixed word for evidence.
    pub fn as_word(self) -> &'static str {
        match self {
            TrustError::Unreadable(_) => "unreadable",
            TrustError::NoCertificates(_) => "no_certificates",
            TrustError::Tls => "tls_config",
        }
    }

    /// The reason's family member.
    pub fn problem(self) -> TrustProblem {
        match self {
            TrustError::Unreadable(_) => TrustProblem::Unreadable,
            TrustError::NoCertificates(_) => TrustProblem::NoCertificates,
            TrustError::Tls => TrustProblem::Tls,
        }
    }
}

/// The process-wide trust store, loaded on first use from the environment and the file
/// system (see the module docs for the order).
pub fn process_store() -> Result<&'static TrustStore, TrustError> {
    static STORE: OnceLock<Result<TrustStore, TrustError>> = OnceLock::new();
    STORE
        .get_or_init(|| {
            let file = std::env::var_os("SSL_CERT_FILE").filter(|v| !v.is_empty());
            let dir = std::env::var_os("SSL_CERT_DIR").filter(|v| !v.is_empty());
            load(
                file.as_deref().map(Path::new),
                dir.as_deref().map(Path::new),
                SYSTEM_BUNDLES,
            )
        })
        .as_ref()
        .map_err(|e| *e)
}

/// Loads a trust store: `env_file`/`env_dir` (the values of `SSL_CERT_FILE`/`SSL_CERT_DIR`),
/// else the first usable bundle of `system`, else the bundled roots.
pub fn load(
    env_file: Option<&Path>,
    env_dir: Option<&Path>,
    system: &[&'static str],
) -> Result<TrustStore, TrustError> {
    if env_file.is_some() || env_dir.is_some() {
        let mut roots = RootCertStore::empty();
        if let Some(file) = env_file {
            let pem = read_bundle(file).ok_or(TrustError::Unreadable("SSL_CERT_FILE"))?;
            if add_pem(&mut roots, &pem, &mut HashSet::new()) == 0 {
                return Err(TrustError::NoCertificates("SSL_CERT_FILE"));
            }
        }
        if let Some(dirs) = env_dir {
            let before = roots.len();
            let mut seen = HashSet::new();
            let dirs = dirs.to_string_lossy();
            for dir in dirs.split(':').filter(|d| !d.is_empty()) {
                let entries =
                    std::fs::read_dir(dir).map_err(|_| TrustError::Unreadable("SSL_CERT_DIR"))?;
                let mut paths: Vec<_> = entries.filter_map(|e| e.ok()).map(|e| e.path()).collect();
                paths.sort();
                for path in paths {
                    if let Some(pem) = read_bundle(&path) {
                        add_pem(&mut roots, &pem, &mut seen);
                    }
                }
            }
            if roots.len() == before {
                return Err(TrustError::NoCertificates("SSL_CERT_DIR"));
            }
        }
        return finish(
            TrustSource::Environment {
                file: env_file.is_some(),
                dir: env_dir.is_some(),
            },
            roots,
        );
    }
    for path in system {
        if let Some(pem) = read_bundle(Path::new(path)) {
            let mut roots = RootCertStore::empty();
            if add_pem(&mut roots, &pem, &mut HashSet::new()) > 0 {
                return finish(TrustSource::System(path), roots);
            }
        }
    }
    let roots = RootCertStore {
        roots: webpki_roots::TLS_SERVER_ROOTS.to_vec(),
    };
    finish(TrustSource::Bundled, roots)
}

/// A rustls client configuration (ring provider, safe default versions, no client auth)
/// verifying against `roots`. Used for the process store, and by tests with a private CA.
pub fn client_config(roots: RootCertStore) -> Result<Arc<ClientConfig>, TrustError> {
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let config = ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(|_| TrustError::Tls)?
        .with_root_certificates(roots)
        .with_no_client_auth();
    Ok(Arc::new(config))
}

fn finish(source: TrustSource, roots: RootCertStore) -> Result<TrustStore, TrustError> {
    let certificates = roots.len();
    Ok(TrustStore {
        source,
        certificates,
        config: client_config(roots)?,
    })
}

/// Reads a regular file (following symlinks) of plausible size.
fn read_bundle(path: &Path) -> Option<Vec<u8>> {
    let meta = std::fs::metadata(path).ok()?;
    if !meta.is_file() || meta.len() > MAX_BUNDLE_BYTES {
        return None;
    }
    std::fs::read(path).ok()
}

/// Adds every parsable PEM certificate not seen before; returns how many were added.
fn add_pem(roots: &mut RootCertStore, pem: &[u8], seen: &mut HashSet<Vec<u8>>) -> usize {
    let certs = CertificateDer::pem_slice_iter(pem)
        .filter_map(Result::ok)
        .filter(|c| seen.insert(c.as_ref().to_vec()));
    let (added, _ignored) = roots.add_parsable_certificates(certs);
    added
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::PathBuf;

    /// A scratch directory under the target dir, removed on drop.
    struct Scratch(PathBuf);

    impl Scratch {
        fn new(name: &str) -> Scratch {
            let dir = std::env::temp_dir().join(format!(
                "agenthealth-trust-{}-{}",
                name,
                std::process::id()
            ));
            let _ = std::fs::remove_dir_all(&dir);
            std::fs::create_dir_all(&dir).expect("scratch dir");
            Scratch(dir)
        }
        fn file(&self, name: &str, contents: &[u8]) -> PathBuf {
            let p = self.0.join(name);
            std::fs::write(&p, contents).expect("write");
            p
        }
    }

    impl Drop for Scratch {
        fn drop(&mut self) {
            let _ = std::fs::remove_dir_all(&self.0);
        }
    }

    fn ca_pem(name: &str) -> String {
        let key = rcgen::KeyPair::generate().expect("key");
        let mut params = rcgen::CertificateParams::new(vec![name.to_string()]).expect("params");
        params.is_ca = rcgen::IsCa::Ca(rcgen::BasicConstraints::Unconstrained);
        params.self_signed(&key).expect("cert").pem()
    }

    fn leak(p: &Path) -> &'static str {
        Box::leak(p.to_string_lossy().into_owned().into_boxed_str())
    }

    #[test]
    fn environment_wins_over_system_and_bundled() {
        let s = Scratch::new("env");
        let file = s.file("ca.pem", ca_pem("one.test").as_bytes());
        let system = s.file("system.pem", ca_pem("sys.test").as_bytes());
        let store = load(Some(&file), None, &[leak(&system)]).expect("loads");
        assert_eq!(
            store.source,
            TrustSource::Environment {
                file: true,
                dir: false
            }
        );
        assert_eq!(store.certificates, 1);
        assert_eq!(store.source.origin_word(), "SSL_CERT_FILE");

        let dir = s.0.join("dir");
        std::fs::create_dir_all(&dir).expect("dir");
        std::fs::write(dir.join("a.pem"), ca_pem("a.test")).expect("a");
        std::fs::write(dir.join("b.crt"), ca_pem("b.test")).expect("b");
        std::fs::write(dir.join("README"), "not a certificate").expect("readme");
        let store = load(Some(&file), Some(&dir), &[]).expect("loads");
        assert_eq!(store.certificates, 3);
        assert_eq!(store.source.origin_word(), "SSL_CERT_FILE+SSL_CERT_DIR");
    }

    #[test]
    fn a_broken_environment_setting_is_an_error_not_a_fallback() {
        let s = Scratch::new("broken");
        let missing = s.0.join("missing.pem");
        let empty = s.file("empty.pem", b"no certificates here\n");
        let system = s.file("system.pem", ca_pem("sys.test").as_bytes());
        assert_eq!(
            load(Some(&missing), None, &[leak(&system)]).map(|s| s.source),
            Err(TrustError::Unreadable("SSL_CERT_FILE"))
        );
        assert_eq!(
            load(Some(&empty), None, &[]).map(|s| s.source),
            Err(TrustError::NoCertificates("SSL_CERT_FILE"))
        );
        assert_eq!(
            load(None, Some(&missing), &[]).map(|s| s.source),
            Err(TrustError::Unreadable("SSL_CERT_DIR"))
        );
        let empty_dir = s.0.join("emptydir");
        std::fs::create_dir_all(&empty_dir).expect("dir");
        assert_eq!(
            load(None, Some(&empty_dir), &[]).map(|s| s.source),
            Err(TrustError::NoCertificates("SSL_CERT_DIR"))
        );
    }

    #[test]
    fn first_usable_system_bundle_then_bundled_roots() {
        let s = Scratch::new("system");
        let absent = s.0.join("absent.crt");
        let garbage = s.file("garbage.crt", b"-----BEGIN CERTIFICATE-----\nAAAA\n");
        let good = s.file("good.crt", ca_pem("sys.test").as_bytes());
        let store = load(None, None, &[leak(&absent), leak(&garbage), leak(&good)]).expect("ok");
        assert_eq!(store.source, TrustSource::System(leak(&good)));
        assert_eq!(store.source.kind_word(), "system");

        let store = load(None, None, &[leak(&absent), leak(&garbage)]).expect("ok");
        assert_eq!(store.source, TrustSource::Bundled);
        assert!(store.certificates > 100, "the Mozilla set");
        let mut ev = Evidence::default();
        store.write_evidence(&mut ev);
        assert_eq!(ev.get(Key::TrustStore), Some(&Fact::Word("bundled")));
    }
}
