//! `harness serve`: the reference API on real sockets, usable as a mock by anyone; prints
//! (or writes) the target file that describes it. With `--tls` (shared with `harness
//! judge`) it serves https:// and wss:// and writes the CA a client must trust.

use std::net::SocketAddr;
use std::path::{Path, PathBuf};

use clap::Args;
use harness_model::target_file::Target;
use harness_server::serve::{self, Extreme, Fault, TlsIdentity, Variant};

use super::{CliError, exit, runtime};

#[derive(Debug, Args)]
pub(crate) struct ServeArgs {
    /// Address to listen on.
    #[arg(long, default_value = "127.0.0.1:8700")]
    listen: SocketAddr,
    /// Inject a named fault (see `harness faults`); may be repeated.
    #[arg(long = "fault", value_name = "NAME")]
    faults: Vec<String>,
    /// Switch on a spec-open variant (see `harness variants`), or `all`; may be repeated.
    #[arg(long = "variant", value_name = "NAME")]
    variants: Vec<String>,
    /// Write the target file here instead of printing it.
    #[arg(long, value_name = "FILE")]
    target_out: Option<PathBuf>,
    /// Transaction-log burst the server allows per token.
    #[arg(long, default_value_t = 100)]
    burst: u32,
    /// The main account's transaction log holds N generated entries over six months in
    /// several currencies (default: the fixed history of 960 the snapshots are taken from).
    #[arg(long, value_name = "N")]
    log_entries: Option<usize>,
    /// The 2FA accounts take this fixed code as their second factor instead of a TOTP code,
    /// as test environments often do; the target file gives it as `second_factor = {
    /// parameter = "...", code = "..." }`.
    #[arg(long, value_name = "CODE")]
    two_factor_code: Option<String>,
    #[command(flatten)]
    tls: TlsArgs,
}

/// How the server speaks TLS, for `serve` and `judge`.
#[derive(Debug, Args)]
pub(crate) struct TlsArgs {
    /// Serve https:// and wss:// with a certificate for the listen address signed by a CA
    /// generated now; the CA is written beside the target file (or to the temporary
    /// directory) and the target file names it as ca_file.
    #[arg(long)]
    tls: bool,
    /// Serve TLS with this certificate chain (PEM, leaf first) instead of a generated one.
    #[arg(long, value_name = "FILE", requires = "tls_key")]
    tls_cert: Option<PathBuf>,
    /// The private key (PEM) of --tls-cert.
    #[arg(long, value_name = "FILE", requires = "tls_cert")]
    tls_key: Option<PathBuf>,
    /// With --tls-cert: the CA file (PEM) the target file names as ca_file.
    #[arg(long, value_name = "FILE", requires = "tls_cert")]
    tls_ca: Option<PathBuf>,
}

impl TlsArgs {
    /// The identity to serve with, if TLS was asked for.
    pub(crate) fn identity(&self, listen: SocketAddr) -> Result<Option<TlsIdentity>, CliError> {
        match (&self.tls_cert, &self.tls_key) {
            (Some(cert), Some(key)) => TlsIdentity::from_pem_files(cert, key)
                .map(Some)
                .map_err(CliError::usage),
            _ if self.tls => TlsIdentity::generate(listen, &[])
                .map(Some)
                .map_err(CliError::harness),
            _ => Ok(None),
        }
    }

    /// Writes the target file of a server listening on `addr` to `target_out`, or prints it
    /// when none is given, with its CA named first (see [`TlsArgs::name_ca`]).
    pub(crate) fn write_target(
        &self,
        identity: Option<&TlsIdentity>,
        mut target: Target,
        target_out: Option<&Path>,
        addr: SocketAddr,
    ) -> Result<(), CliError> {
        self.name_ca(identity, &mut target, target_out, addr)?;
        let text = target.to_toml();
        match target_out {
            Some(path) => std::fs::write(path, &text).map_err(|error| {
                CliError::harness(format!("failed to write {}: {error}", path.display()))
            }),
            None => {
                out!("{text}");
                Ok(())
            }
        }
    }

    /// Names the CA in `target` when the server speaks TLS (`identity`): `--tls-ca`, or the
    /// generated CA written beside `target_out` (`NAME.ca.pem`) or into the temporary
    /// directory. Prints where it is.
    fn name_ca(
        &self,
        identity: Option<&TlsIdentity>,
        target: &mut Target,
        target_out: Option<&Path>,
        addr: SocketAddr,
    ) -> Result<(), CliError> {
        let Some(identity) = identity else {
            return Ok(());
        };
        let ca_file = match (&self.tls_ca, identity.ca_pem()) {
            (Some(given), _) => given.clone(),
            (None, Some(pem)) => {
                let path = match target_out {
                    Some(target_out) => target_out.with_extension("ca.pem"),
                    None => std::env::temp_dir().join(format!(
                        "harness-{}-{}.ca.pem",
                        addr.port(),
                        std::process::id()
                    )),
                };
                std::fs::write(&path, pem).map_err(|error| {
                    CliError::harness(format!("failed to write {}: {error}", path.display()))
                })?;
                eprintln!("TLS: the CA to trust is {}", path.display());
                path
            }
            (None, None) => {
                eprintln!(
                    "TLS: the target file names no ca_file; clients must trust the certificate's issuer"
                );
                return Ok(());
            }
        };
        // Absolute, so the target file works wherever it is read from.
        target.tls.ca_file = Some(std::path::absolute(&ca_file).unwrap_or(ca_file));
        Ok(())
    }
}

impl ServeArgs {
    fn scheme(&self) -> &'static str {
        if self.tls.tls || self.tls.tls_cert.is_some() {
            "https"
        } else {
            "http"
        }
    }
}

/// The usage error for an unknown fault or variant `name`, with a did-you-mean among
/// `known` and the command (`harness faults`, `harness variants`) that lists them.
fn unknown_name<'a>(what: &str, name: &str, known: impl Iterator<Item = &'a str>) -> CliError {
    let hint = harness_protocol::file_error::did_you_mean(name, known)
        .map(|known| format!(" (did you mean \"{known}\"?)"))
        .unwrap_or_default();
    CliError::usage(format!(
        "unknown {what} \"{name}\"{hint}; `harness {what}s` lists them"
    ))
}

/// Resolves fault names, with a did-you-mean for a typo.
pub(crate) fn parse_faults(names: &[String]) -> Result<Vec<Fault>, CliError> {
    names
        .iter()
        .map(|name| {
            Fault::from_name(name).ok_or_else(|| {
                unknown_name("fault", name, Fault::ALL.iter().map(|fault| fault.name()))
            })
        })
        .collect()
}

/// Resolves variant names (`all` for every one, `narrowest` and `widest` for the two
/// extreme servers), with a did-you-mean for a typo.
pub(crate) fn parse_variants(names: &[String]) -> Result<Vec<Variant>, CliError> {
    let mut variants = Vec::new();
    for group in parse_variant_groups(names)? {
        variants.extend(group);
    }
    variants.sort_unstable();
    variants.dedup();
    Ok(variants)
}

/// Resolves each variant name to the variants it switches on: one, every one (`all`), or
/// an extreme server's (`narrowest`, `widest`).
pub(crate) fn parse_variant_groups(names: &[String]) -> Result<Vec<Vec<Variant>>, CliError> {
    names
        .iter()
        .map(|name| {
            if name == "all" {
                return Ok(Variant::ALL.to_vec());
            }
            if let Some(extreme) = Extreme::from_name(name) {
                return Ok(extreme.variants());
            }
            let known = Variant::ALL
                .iter()
                .map(|variant| variant.name())
                .chain(Extreme::ALL.iter().map(|extreme| extreme.name()));
            Variant::from_name(name)
                .map(|variant| vec![variant])
                .ok_or_else(|| unknown_name("variant", name, known))
        })
        .collect()
}

pub(crate) fn serve(args: ServeArgs) -> Result<u8, CliError> {
    let faults = parse_faults(&args.faults)?;
    let variants = parse_variants(&args.variants)?;
    let identity = args.tls.identity(args.listen)?;
    runtime()?.block_on(async move {
        let mut config = serve::ServeConfig::loopback();
        config.listen = args.listen;
        config.faults = faults;
        config.variants = variants;
        config.limits.transaction_log_burst = args.burst;
        config.log_entries = args.log_entries;
        config.tls = identity.clone();
        if let Some(code) = args.two_factor_code.clone() {
            config = config.with_two_factor_code(code);
        }
        let running = serve::start(config).await.map_err(|error| {
            CliError::harness(format!("failed to listen on {}: {error}", args.listen))
        })?;
        let scheme = args.scheme();
        if args.target_out.is_none() {
            eprintln!(
                "reference server on {scheme}://{}; its target file:",
                running.addr
            );
        }
        args.tls.write_target(
            identity.as_ref(),
            running.target(),
            args.target_out.as_deref(),
            running.addr,
        )?;
        if let Some(path) = &args.target_out {
            eprintln!(
                "reference server on {scheme}://{}; target file written to {}",
                running.addr,
                path.display()
            );
        }
        eprintln!("press Ctrl-C to stop");
        let _ = tokio::signal::ctrl_c().await;
        running.shutdown().await;
        Ok(exit::PASS)
    })
}
