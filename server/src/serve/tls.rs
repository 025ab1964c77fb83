//! TLS for the reference server (`harness serve --tls`, `harness judge --tls`): a
//! certificate for the listen address signed by a throwaway CA generated at start (rcgen),
//! or a given pair of PEM files; and [`TlsListener`], which completes TLS handshakes
//! before axum sees a connection, so HTTP, WebSocket and Direct Access are all served over
//! TLS.
//!
//! Handshakes run side by side, each bounded in time, and at most [`MAX_HANDSHAKES`] at
//! once: a client that opens a connection and says nothing delays no one else. An identity
//! that cannot be made or read is a [`TlsError`].

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::pin::Pin;
use std::sync::Arc;
use std::time::Duration;

use futures_util::StreamExt;
use futures_util::stream::FuturesUnordered;
use rcgen::{
    BasicConstraints, CertificateParams, DnType, ExtendedKeyUsagePurpose, IsCa, Issuer, KeyPair,
    KeyUsagePurpose,
};
use rustls::ServerConfig;
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer, PrivatePkcs8KeyDer};
use tokio::net::{TcpListener, TcpStream};
use tokio_rustls::TlsAcceptor;
use tokio_rustls::server::TlsStream;

use harness_model::target_file::Target;

/// Handshakes in progress at most; further connections wait in the kernel's backlog.
pub(crate) const MAX_HANDSHAKES: usize = 256;

/// How long a client has to complete its TLS handshake.
const HANDSHAKE_TIMEOUT: Duration = Duration::from_secs(10);

/// Why no TLS identity could be made, read or served with.
#[derive(Debug, thiserror::Error)]
pub enum TlsError {
    /// rcgen failed to generate the CA, the certificate or a key.
    #[error("failed to generate a certificate: {source}")]
    Generate {
        /// rcgen's complaint.
        #[source]
        source: rcgen::Error,
    },
    /// The certificate file could not be read as PEM.
    #[error("{path}: {source}")]
    Certificates {
        /// The certificate file.
        path: PathBuf,
        /// The PEM reader's complaint.
        #[source]
        source: rustls::pki_types::pem::Error,
    },
    /// The certificate file holds no certificate.
    #[error("{path} holds no PEM certificate")]
    NoCertificate {
        /// The certificate file.
        path: PathBuf,
    },
    /// The key file could not be read as a PEM private key.
    #[error("{path}: {source}")]
    Key {
        /// The key file.
        path: PathBuf,
        /// The PEM reader's complaint.
        #[source]
        source: rustls::pki_types::pem::Error,
    },
    /// rustls refused the chain and key as a server's.
    #[error("the certificate and key do not make a TLS server: {source}")]
    NotAServer {
        /// rustls's complaint.
        #[source]
        source: rustls::Error,
    },
}

/// The certificate chain and key the server presents.
pub struct TlsIdentity {
    chain: Vec<CertificateDer<'static>>,
    key: PrivateKeyDer<'static>,
    ca_pem: Option<String>,
}

impl TlsIdentity {
    /// A certificate for `localhost`, `127.0.0.1`, `::1`, the listen address and
    /// `extra_names`, signed by a CA generated now (see [`TlsIdentity::ca_pem`]).
    pub fn generate(listen: SocketAddr, extra_names: &[&str]) -> Result<TlsIdentity, TlsError> {
        let failed = |source: rcgen::Error| TlsError::Generate { source };
        let mut ca_params = CertificateParams::new(Vec::<String>::new()).map_err(failed)?;
        ca_params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
        // A name of its own: a client trusting another run's CA then reports an unknown
        // issuer, not a bad signature from a CA of the same name.
        ca_params.distinguished_name.push(
            DnType::CommonName,
            format!("harness test CA {:016x}", rand::random::<u64>()),
        );
        ca_params.key_usages = vec![
            KeyUsagePurpose::KeyCertSign,
            KeyUsagePurpose::CrlSign,
            KeyUsagePurpose::DigitalSignature,
        ];
        let ca_key = KeyPair::generate().map_err(failed)?;
        let ca_certificate = ca_params.self_signed(&ca_key).map_err(failed)?;
        let issuer = Issuer::new(ca_params, ca_key);

        let mut names = vec![
            "localhost".to_owned(),
            "127.0.0.1".to_owned(),
            "::1".to_owned(),
        ];
        if !listen.ip().is_unspecified() {
            names.push(listen.ip().to_string());
        }
        names.extend(extra_names.iter().map(|name| (*name).to_owned()));
        names.sort();
        names.dedup();
        let mut leaf_params = CertificateParams::new(names).map_err(failed)?;
        leaf_params
            .distinguished_name
            .push(DnType::CommonName, "harness reference server");
        leaf_params.use_authority_key_identifier_extension = true;
        leaf_params.key_usages = vec![KeyUsagePurpose::DigitalSignature];
        leaf_params.extended_key_usages = vec![ExtendedKeyUsagePurpose::ServerAuth];
        let leaf_key = KeyPair::generate().map_err(failed)?;
        let leaf = leaf_params.signed_by(&leaf_key, &issuer).map_err(failed)?;
        Ok(TlsIdentity {
            chain: vec![leaf.der().clone()],
            key: PrivateKeyDer::Pkcs8(PrivatePkcs8KeyDer::from(leaf_key.serialize_der())),
            ca_pem: Some(ca_certificate.pem()),
        })
    }

    /// The certificate chain of `cert` (PEM, leaf first) and the private key of `key`.
    pub fn from_pem_files(cert: &Path, key: &Path) -> Result<TlsIdentity, TlsError> {
        let chain = CertificateDer::pem_file_iter(cert)
            .and_then(|certificates| certificates.collect::<Result<Vec<_>, _>>())
            .map_err(|source| TlsError::Certificates {
                path: cert.to_owned(),
                source,
            })?;
        if chain.is_empty() {
            return Err(TlsError::NoCertificate {
                path: cert.to_owned(),
            });
        }
        let key = PrivateKeyDer::from_pem_file(key).map_err(|source| TlsError::Key {
            path: key.to_owned(),
            source,
        })?;
        let identity = TlsIdentity {
            chain,
            key,
            ca_pem: None,
        };
        identity.server_config()?;
        Ok(identity)
    }

    /// The generated CA's certificate (PEM), for a client to trust; `None` for a given pair.
    pub fn ca_pem(&self) -> Option<&str> {
        self.ca_pem.as_deref()
    }

    fn server_config(&self) -> Result<ServerConfig, TlsError> {
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let mut config = ServerConfig::builder_with_provider(provider)
            .with_safe_default_protocol_versions()
            .and_then(|builder| {
                builder
                    .with_no_client_auth()
                    .with_single_cert(self.chain.clone(), self.key.clone_key())
            })
            .map_err(|source| TlsError::NotAServer { source })?;
        // The server speaks HTTP/1.1 only (WebSocket upgrades included).
        config.alpn_protocols = vec![b"http/1.1".to_vec()];
        Ok(config)
    }
}

impl Clone for TlsIdentity {
    fn clone(&self) -> TlsIdentity {
        TlsIdentity {
            chain: self.chain.clone(),
            key: self.key.clone_key(),
            ca_pem: self.ca_pem.clone(),
        }
    }
}

impl std::fmt::Debug for TlsIdentity {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TlsIdentity")
            .field("chain", &self.chain.len())
            .field("generated", &self.ca_pem.is_some())
            .finish_non_exhaustive()
    }
}

/// The target with `https://` and `wss://` URLs in place of `http://` and `ws://`.
pub(crate) fn over_tls(target: Target) -> Target {
    let secure = |url: String| {
        if let Some(rest) = url.strip_prefix("http://") {
            format!("https://{rest}")
        } else if let Some(rest) = url.strip_prefix("ws://") {
            format!("wss://{rest}")
        } else {
            url
        }
    };
    Target {
        base_url: secure(target.base_url),
        ws_url: target.ws_url.map(secure),
        direct_access_url: target.direct_access_url.map(secure),
        ..target
    }
}

type Handshake = Pin<Box<dyn Future<Output = Option<(TlsStream<TcpStream>, SocketAddr)>> + Send>>;

/// A TCP listener whose connections come out with their TLS handshake done.
pub(crate) struct TlsListener {
    tcp: TcpListener,
    acceptor: TlsAcceptor,
    handshakes: FuturesUnordered<Handshake>,
}

impl TlsListener {
    pub(crate) fn new(tcp: TcpListener, identity: &TlsIdentity) -> std::io::Result<TlsListener> {
        let config = identity.server_config().map_err(std::io::Error::other)?;
        Ok(TlsListener {
            tcp,
            acceptor: TlsAcceptor::from(Arc::new(config)),
            handshakes: FuturesUnordered::new(),
        })
    }
}

impl axum::serve::Listener for TlsListener {
    type Io = TlsStream<TcpStream>;
    type Addr = SocketAddr;

    async fn accept(&mut self) -> (Self::Io, Self::Addr) {
        loop {
            let room = self.handshakes.len() < MAX_HANDSHAKES;
            tokio::select! {
                accepted = self.tcp.accept(), if room => match accepted {
                    Ok((stream, peer)) => {
                        let acceptor = self.acceptor.clone();
                        self.handshakes.push(Box::pin(async move {
                            let _ = stream.set_nodelay(true);
                            let handshake = acceptor.accept(stream);
                            match tokio::time::timeout(HANDSHAKE_TIMEOUT, handshake).await {
                                Ok(Ok(tls)) => Some((tls, peer)),
                                // A failed or slow handshake is the client's problem: it
                                // sees the connection closed.
                                _ => None,
                            }
                        }));
                    }
                    // Out of file descriptors or the like: wait instead of spinning.
                    Err(_) => tokio::time::sleep(Duration::from_millis(100)).await,
                },
                Some(done) = self.handshakes.next(), if !self.handshakes.is_empty() => {
                    if let Some(connection) = done {
                        return connection;
                    }
                }
            }
        }
    }

    fn local_addr(&self) -> std::io::Result<SocketAddr> {
        self.tcp.local_addr()
    }
}
