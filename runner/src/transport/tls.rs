//! The TLS client configuration both transports share, and the words for a TLS failure.
//!
//! One rustls `ClientConfig` with the ring provider trusts the platform's roots
//! (`rustls-native-certs`, which honours `SSL_CERT_FILE` and `SSL_CERT_DIR`), the webpki
//! roots, and the target file's `ca_file`. With `accept_invalid_certs` it trusts any
//! certificate but still checks the handshake's signatures, so the connection is encrypted
//! to whoever holds the key the server showed. A configuration that cannot be built is a
//! [`TlsConfigError`].

use std::path::PathBuf;
use std::sync::{Arc, OnceLock};

use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::crypto::WebPkiSupportedAlgorithms;
use rustls::pki_types::{CertificateDer, ServerName, UnixTime};
use rustls::{ClientConfig, DigitallySignedStruct, RootCertStore, SignatureScheme};

use harness_model::target_file::{CaFileError, TlsTrust};

/// Why no TLS client configuration could be built for a target.
#[derive(Debug, thiserror::Error)]
pub(crate) enum TlsConfigError {
    /// The provider refused the protocol versions.
    #[error("failed to set up TLS: {source}")]
    Setup {
        /// rustls's complaint.
        #[source]
        source: rustls::Error,
    },
    /// The CA file could not be read.
    #[error(transparent)]
    CaFile(#[from] CaFileError),
    /// A certificate of the CA file is not one a root store takes.
    #[error("{path}: not a usable CA certificate: {source}")]
    UnusableCa {
        /// The CA file (empty if none was named).
        path: PathBuf,
        /// rustls's complaint.
        #[source]
        source: rustls::Error,
    },
}

/// The client configuration for `trust`; an error says what could not be loaded.
pub(crate) fn client_config(trust: &TlsTrust) -> Result<ClientConfig, TlsConfigError> {
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let builder = ClientConfig::builder_with_provider(provider.clone())
        .with_safe_default_protocol_versions()
        .map_err(|source| TlsConfigError::Setup { source })?;
    let config = if trust.accept_invalid_certs {
        builder
            .dangerous()
            .with_custom_certificate_verifier(Arc::new(AcceptAnyCertificate {
                algorithms: provider.signature_verification_algorithms,
            }))
            .with_no_client_auth()
    } else {
        builder
            .with_root_certificates(roots(trust)?)
            .with_no_client_auth()
    };
    Ok(config)
}

/// The platform's roots, the webpki roots and the CA file. A platform store that cannot be
/// read is not an error: the other roots remain, and a server they do not cover fails its
/// handshake with a message that says so.
fn roots(trust: &TlsTrust) -> Result<RootCertStore, TlsConfigError> {
    let mut roots = RootCertStore {
        roots: webpki_roots::TLS_SERVER_ROOTS.to_vec(),
    };
    roots.add_parsable_certificates(native_roots().iter().cloned());
    for certificate in trust.ca_certificates()? {
        roots
            .add(certificate)
            .map_err(|source| TlsConfigError::UnusableCa {
                path: trust.ca_file.clone().unwrap_or_default(),
                source,
            })?;
    }
    Ok(roots)
}

/// The platform's roots, read once per process: every run and fuzz session of the process
/// builds a configuration, and the store does not change under it.
fn native_roots() -> &'static [CertificateDer<'static>] {
    static NATIVE: OnceLock<Vec<CertificateDer<'static>>> = OnceLock::new();
    NATIVE.get_or_init(|| rustls_native_certs::load_native_certs().certs)
}

/// The TLS failure among `error`'s causes, as "TLS with HOST failed: REASON (hint)"; `None`
/// when the failure was not TLS (a refused connection, a timeout).
pub(crate) fn describe_failure(
    error: &(dyn std::error::Error + 'static),
    host: &str,
) -> Option<String> {
    let tls = find_rustls_error(error, 0)?;
    Some(format!("TLS with {host} failed: {tls}{}", hint(tls)))
}

/// The rustls error among `error`'s causes. An `io::Error`'s `source` skips the error it
/// wraps, so wrapped errors are opened with `get_ref` (reqwest nests two `io::Error`s).
fn find_rustls_error<'a>(
    error: &'a (dyn std::error::Error + 'static),
    depth: usize,
) -> Option<&'a rustls::Error> {
    // Error chains are short; the bound only guards against a cycle.
    if depth > 16 {
        return None;
    }
    if let Some(tls) = error.downcast_ref::<rustls::Error>() {
        return Some(tls);
    }
    if let Some(inner) = error
        .downcast_ref::<std::io::Error>()
        .and_then(std::io::Error::get_ref)
        && let Some(tls) = find_rustls_error(inner, depth + 1)
    {
        return Some(tls);
    }
    find_rustls_error(error.source()?, depth + 1)
}

/// What a user can do about a certificate the harness refused.
fn hint(error: &rustls::Error) -> &'static str {
    use rustls::CertificateError;
    match error {
        rustls::Error::InvalidCertificate(
            CertificateError::UnknownIssuer | CertificateError::BadSignature,
        ) => " (trust its CA with ca_file in the target file, or in the platform's trust store)",
        rustls::Error::InvalidCertificate(
            CertificateError::NotValidForName | CertificateError::NotValidForNameContext { .. },
        ) => " (the certificate does not name the host of the URL)",
        rustls::Error::InvalidCertificate(
            CertificateError::Expired | CertificateError::ExpiredContext { .. },
        ) => " (the certificate has expired)",
        rustls::Error::InvalidMessage(_) => " (does the server speak TLS on this port?)",
        _ => "",
    }
}

/// Trusts any certificate; used only for `accept_invalid_certs`.
#[derive(Debug)]
struct AcceptAnyCertificate {
    algorithms: WebPkiSupportedAlgorithms,
}

impl ServerCertVerifier for AcceptAnyCertificate {
    fn verify_server_cert(
        &self,
        _end_entity: &CertificateDer<'_>,
        _intermediates: &[CertificateDer<'_>],
        _server_name: &ServerName<'_>,
        _ocsp_response: &[u8],
        _now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        Ok(ServerCertVerified::assertion())
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        certificate: &CertificateDer<'_>,
        signature: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls12_signature(message, certificate, signature, &self.algorithms)
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        certificate: &CertificateDer<'_>,
        signature: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls13_signature(message, certificate, signature, &self.algorithms)
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.algorithms.supported_schemes()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_io_wrapped_certificate_error_is_described_with_host_and_hint() {
        let tls = rustls::Error::InvalidCertificate(rustls::CertificateError::UnknownIssuer);
        let io = std::io::Error::new(std::io::ErrorKind::InvalidData, tls);
        // As reqwest hands it over: an io::Error in an io::Error.
        let io = std::io::Error::other(io);
        let text = describe_failure(&io, "api.example.com:443").unwrap();
        assert!(
            text.starts_with("TLS with api.example.com:443 failed: invalid peer certificate"),
            "{text}"
        );
        assert!(text.contains("ca_file"), "{text}");
    }

    #[test]
    fn a_refused_connection_is_not_a_tls_failure() {
        let io = std::io::Error::new(std::io::ErrorKind::ConnectionRefused, "refused");
        assert_eq!(describe_failure(&io, "h:1"), None);
    }

    #[test]
    fn a_missing_ca_file_is_an_error_naming_it() {
        let trust = TlsTrust {
            ca_file: Some("/nonexistent/ca.pem".into()),
            accept_invalid_certs: false,
        };
        let error = client_config(&trust).unwrap_err().to_string();
        assert!(error.contains("/nonexistent/ca.pem"), "{error}");
    }
}
