//! Which server certificates the harness trusts: the target file's `ca_file` and
//! `accept_invalid_certs`. The transports build their TLS configuration from it.
//!
//! And the one clear-text policy: credentials never travel unencrypted to another machine
//! unless asked to ([`Target::clear_text_url`]); the command line (which `--allow-plain-http`
//! overrides) and the conformance trials both ask it.
//!
//! A CA file that cannot be used is a [`CaFileError`].

use std::io::Read;
use std::net::IpAddr;
use std::path::PathBuf;

use super::Target;

use rustls::pki_types::CertificateDer;
use rustls::pki_types::pem::PemObject;

/// Which server certificates the harness trusts, beyond the platform's roots and the
/// webpki roots it always trusts.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct TlsTrust {
    /// One more CA bundle (PEM), resolved against the target file's directory.
    pub ca_file: Option<PathBuf>,
    /// Accept any certificate. The command line refuses it for a non-loopback host unless
    /// `--allow-invalid-certs` is given.
    pub accept_invalid_certs: bool,
}

/// Why the target file's `ca_file` gives no certificate to trust.
#[derive(Debug, thiserror::Error)]
pub enum CaFileError {
    /// The file could not be opened or read.
    #[error("failed to read {path}: {source}")]
    Read {
        /// The CA file.
        path: PathBuf,
        /// The read's failure.
        #[source]
        source: std::io::Error,
    },
    /// The file is not PEM.
    #[error("{path} is not a PEM file: {source}")]
    NotPem {
        /// The CA file.
        path: PathBuf,
        /// The PEM decoder's complaint.
        #[source]
        source: rustls::pki_types::pem::Error,
    },
    /// The file is PEM but holds no certificate.
    #[error("{path} holds no PEM certificate (BEGIN CERTIFICATE)")]
    NoCertificate {
        /// The CA file.
        path: PathBuf,
    },
}

/// The largest CA file read: a bundle of every public root is about 250 KiB.
const MAX_CA_FILE_BYTES: u64 = 4 * 1024 * 1024;

impl TlsTrust {
    /// The certificates of [`TlsTrust::ca_file`] (none without one); an error says what is
    /// wrong with the file.
    pub fn ca_certificates(&self) -> Result<Vec<CertificateDer<'static>>, CaFileError> {
        let Some(path) = &self.ca_file else {
            return Ok(Vec::new());
        };
        let mut bytes = Vec::new();
        std::fs::File::open(path)
            .and_then(|file| file.take(MAX_CA_FILE_BYTES).read_to_end(&mut bytes))
            .map_err(|source| CaFileError::Read {
                path: path.clone(),
                source,
            })?;
        let certificates = CertificateDer::pem_slice_iter(&bytes)
            .collect::<Result<Vec<_>, _>>()
            .map_err(|source| CaFileError::NotPem {
                path: path.clone(),
                source,
            })?;
        if certificates.is_empty() {
            return Err(CaFileError::NoCertificate { path: path.clone() });
        }
        Ok(certificates)
    }
}

impl Target {
    /// Every URL of the target: `base_url`, `ws_url`, `direct_access_url`.
    pub fn urls(&self) -> impl Iterator<Item = &str> {
        [
            Some(self.base_url.as_str()),
            self.ws_url.as_deref(),
            self.direct_access_url.as_deref(),
        ]
        .into_iter()
        .flatten()
    }

    /// The first URL that would carry credentials in clear text to another machine:
    /// `http://` or `ws://` to a host that is not loopback.
    pub fn clear_text_url(&self) -> Option<&str> {
        self.urls().find(|url| {
            let plain = url.starts_with("http://") || url.starts_with("ws://");
            plain && !is_loopback(url)
        })
    }
}

/// Whether a URL's host is `localhost` or a loopback address (`127.0.0.1`, `[::1]`); a
/// user part (`user@host`) is not the host.
pub fn is_loopback(url: &str) -> bool {
    let authority = url
        .split_once("://")
        .map_or("", |(_, rest)| rest)
        .split(['/', '?', '#'])
        .next()
        .unwrap_or("");
    let host = authority
        .rsplit_once('@')
        .map_or(authority, |(_, host)| host);
    let host = host.rsplit_once(':').map_or(host, |(name, port)| {
        if port.chars().all(|c| c.is_ascii_digit()) && !name.ends_with(':') {
            name
        } else {
            host
        }
    });
    let host = host.trim_start_matches('[').trim_end_matches(']');
    host == "localhost" || host.parse::<IpAddr>().is_ok_and(|ip| ip.is_loopback())
}
