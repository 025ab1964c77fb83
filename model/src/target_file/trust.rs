//! Which server certificates the harness trusts: the target file's `ca_file` and
//! `accept_invalid_certs`. The transports build their TLS configuration from it.

use std::io::Read;
use std::path::PathBuf;

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

/// The largest CA file read: a bundle of every public root is about 250 KiB.
const MAX_CA_FILE_BYTES: u64 = 4 * 1024 * 1024;

impl TlsTrust {
    /// The certificates of [`TlsTrust::ca_file`] (none without one); an error says what is
    /// wrong with the file.
    pub fn ca_certificates(&self) -> Result<Vec<CertificateDer<'static>>, String> {
        let Some(path) = &self.ca_file else {
            return Ok(Vec::new());
        };
        let mut bytes = Vec::new();
        std::fs::File::open(path)
            .and_then(|file| file.take(MAX_CA_FILE_BYTES).read_to_end(&mut bytes))
            .map_err(|error| format!("failed to read {}: {error}", path.display()))?;
        let certificates = CertificateDer::pem_slice_iter(&bytes)
            .collect::<Result<Vec<_>, _>>()
            .map_err(|error| format!("{} is not a PEM file: {error}", path.display()))?;
        if certificates.is_empty() {
            return Err(format!(
                "{} holds no PEM certificate (BEGIN CERTIFICATE)",
                path.display()
            ));
        }
        Ok(certificates)
    }
}
