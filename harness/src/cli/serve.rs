//! `harness serve`: the reference API on real sockets, usable as a mock by anyone; prints
//! (or writes) the target file that describes it.

use std::net::SocketAddr;
use std::path::PathBuf;

use clap::Args;
use harness::serve::{self, Fault, Variant};

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
}

/// Resolves fault names, with a did-you-mean for a typo.
pub(crate) fn parse_faults(names: &[String]) -> Result<Vec<Fault>, CliError> {
    names
        .iter()
        .map(|name| {
            Fault::from_name(name).ok_or_else(|| {
                let hint = harness::file_error::did_you_mean(
                    name,
                    Fault::ALL.iter().map(|fault| fault.name()),
                )
                .map(|known| format!(" (did you mean \"{known}\"?)"))
                .unwrap_or_default();
                CliError::usage(format!(
                    "unknown fault \"{name}\"{hint}; `harness faults` lists them"
                ))
            })
        })
        .collect()
}

/// Resolves variant names (`all` for every one), with a did-you-mean for a typo.
pub(crate) fn parse_variants(names: &[String]) -> Result<Vec<Variant>, CliError> {
    let mut variants = Vec::new();
    for name in names {
        if name == "all" {
            variants.extend_from_slice(Variant::ALL);
            continue;
        }
        let variant = Variant::from_name(name).ok_or_else(|| {
            let hint = harness::file_error::did_you_mean(
                name,
                Variant::ALL.iter().map(|variant| variant.name()),
            )
            .map(|known| format!(" (did you mean \"{known}\"?)"))
            .unwrap_or_default();
            CliError::usage(format!(
                "unknown variant \"{name}\"{hint}; `harness variants` lists them"
            ))
        })?;
        variants.push(variant);
    }
    variants.sort_unstable();
    variants.dedup();
    Ok(variants)
}

pub(crate) fn serve(args: ServeArgs) -> Result<u8, CliError> {
    let faults = parse_faults(&args.faults)?;
    let variants = parse_variants(&args.variants)?;
    runtime()?.block_on(async move {
        let mut config = serve::Config::loopback();
        config.listen = args.listen;
        config.faults = faults;
        config.variants = variants;
        config.limits.transaction_log_burst = args.burst;
        let running = serve::start(config).await.map_err(|error| {
            CliError::harness(format!("failed to listen on {}: {error}", args.listen))
        })?;
        let target = running.target().to_toml();
        match &args.target_out {
            Some(path) => {
                std::fs::write(path, &target).map_err(|error| {
                    CliError::harness(format!("failed to write {}: {error}", path.display()))
                })?;
                eprintln!(
                    "reference server on http://{}; target file written to {}",
                    running.addr,
                    path.display()
                );
            }
            None => {
                eprintln!(
                    "reference server on http://{}; its target file:",
                    running.addr
                );
                print!("{target}");
            }
        }
        eprintln!("press Ctrl-C to stop");
        let _ = tokio::signal::ctrl_c().await;
        running.shutdown().await;
        Ok(exit::PASS)
    })
}
