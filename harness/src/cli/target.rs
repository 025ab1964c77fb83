//! Where a command's target comes from: a target file (refused when it would send
//! credentials in clear text to another machine, or accept any certificate from one), or
//! the embedded reference server started in-process, optionally with seeded faults or
//! spec-open variants. Shared by `run` and `fuzz`.

use std::path::PathBuf;

use harness_model::target_file::Target;
use harness_server::serve::{self, Fault, Variant};

use super::CliError;
use super::serve::{parse_faults, parse_variants};

/// The options of `run` and `fuzz` that choose their target: a target file, or the
/// reference server with faults or variants; and what the command line allows.
#[derive(Clone, Debug, clap::Args)]
pub(crate) struct TargetArgs {
    /// Target file describing the server (default: start the reference server in-process).
    #[arg(long, value_name = "FILE")]
    pub(crate) target: Option<PathBuf>,
    /// Inject a fault into the reference server (see `harness faults`); not with --target.
    #[arg(long = "fault", value_name = "NAME")]
    pub(crate) faults: Vec<String>,
    /// Switch on a spec-open variant of the reference server (see `harness variants`), or
    /// `all`; not with --target.
    #[arg(long = "variant", value_name = "NAME")]
    pub(crate) variants: Vec<String>,
    #[command(flatten)]
    pub(crate) allowances: Allowances,
}

/// What the command line allows beyond the safe defaults.
#[derive(Clone, Copy, Debug, Default, clap::Args)]
pub(crate) struct Allowances {
    /// Send credentials over plain HTTP to a non-loopback address.
    #[arg(long = "allow-plain-http")]
    pub(crate) plain_http: bool,
    /// Let the target file's accept_invalid_certs apply to a non-loopback address.
    #[arg(long = "allow-invalid-certs")]
    pub(crate) invalid_certs: bool,
}

/// How long the harness waits for a target.
#[derive(Clone, Copy, Debug, clap::Args)]
pub(crate) struct Timeouts {
    /// Per-request timeout in milliseconds.
    #[arg(long, default_value_t = 5_000)]
    pub(crate) timeout_ms: u64,
    /// Wall time in seconds for the requests (for fuzz, and again for shrinking).
    #[arg(long, default_value_t = 600)]
    pub(crate) run_timeout_s: u64,
    /// Requests in a row without an answer (timed out, refused, reset) after which the run
    /// stops with exit 3: the target stopped answering (0: never).
    #[arg(long, value_name = "N", default_value_t = harness_runner::run::DEFAULT_LIMIT)]
    pub(crate) no_answer_limit: usize,
}

/// The target a command was asked for, not yet started.
pub(crate) struct TargetChoice {
    external: Option<Target>,
    faults: Vec<Fault>,
    variants: Vec<Variant>,
    flags: String,
}

impl TargetChoice {
    /// Reads `--target FILE` or prepares the reference server with `--fault NAME`s.
    pub(crate) fn from_args(args: &TargetArgs) -> Result<TargetChoice, CliError> {
        let (target, fault_names, variant_names) =
            (args.target.as_deref(), &args.faults, &args.variants);
        let allowances = args.allowances;
        let faults = parse_faults(fault_names)?;
        let variants = parse_variants(variant_names)?;
        if target.is_some() && !(faults.is_empty() && variants.is_empty()) {
            return Err(CliError::usage(
                "--fault and --variant apply to the embedded reference server, not to --target",
            ));
        }
        let mut flags = String::new();
        let external = match target {
            Some(path) => {
                let target = Target::load(path).map_err(CliError::usage)?;
                check_plain_http(&target, allowances.plain_http)?;
                check_invalid_certs(&target, allowances.invalid_certs)?;
                flags.push_str(&format!(" --target {}", path.display()));
                Some(target)
            }
            None => None,
        };
        for fault in fault_names {
            flags.push_str(&format!(" --fault {fault}"));
        }
        for variant in variant_names {
            flags.push_str(&format!(" --variant {variant}"));
        }
        Ok(TargetChoice {
            external,
            faults,
            variants,
            flags,
        })
    }

    /// The flags that choose this target again, for reproduction commands.
    pub(crate) fn flags(&self) -> &str {
        &self.flags
    }

    /// The target, starting the reference server when no target file was given; the
    /// caller shuts the returned server down when done.
    pub(crate) async fn start(self) -> Result<(Target, Option<serve::Running>), CliError> {
        match self.external {
            Some(target) => Ok((target, None)),
            None => {
                let mut config = serve::ServeConfig::loopback();
                config.faults = self.faults;
                config.variants = self.variants;
                let running = serve::start(config).await.map_err(|error| {
                    CliError::harness(format!("failed to start the reference server: {error}"))
                })?;
                Ok((running.target(), Some(running)))
            }
        }
    }
}

/// Refuses to send credentials in clear text to another machine unless asked to (the
/// target file's one policy, `Target::clear_text_url`).
pub(crate) fn check_plain_http(target: &Target, allowed: bool) -> Result<(), CliError> {
    match target.clear_text_url() {
        Some(url) if !allowed => Err(CliError::usage(format!(
            "{url} is plain text to a non-loopback host; credentials would travel unencrypted (pass --allow-plain-http to do it anyway)"
        ))),
        _ => Ok(()),
    }
}

/// Refuses `accept_invalid_certs` for a non-loopback host unless asked to: anyone on the
/// path could then read the credentials.
pub(crate) fn check_invalid_certs(target: &Target, allowed: bool) -> Result<(), CliError> {
    if !target.tls.accept_invalid_certs || allowed {
        return Ok(());
    }
    match target
        .urls()
        .find(|url| !harness_model::target_file::is_loopback(url))
    {
        Some(url) => Err(CliError::usage(format!(
            "accept_invalid_certs is set and {url} is not a loopback host; anyone on the path could read the credentials (pass --allow-invalid-certs to do it anyway)"
        ))),
        None => Ok(()),
    }
}
