//! The conformance suite from a Rust server's own `cargo test`: every case over every
//! transport it applies to, as one [`libtest_mimic::Trial`] each, against a target file, a
//! URL plus credentials, or a server the suite starts itself (such as the embedded
//! reference server of `harness-server`, through [`Launch`]).
//!
//! A server crate adds `harness-runner` with its `conformance` feature (and `libtest-mimic`)
//! as dev-dependencies, and one test file, declared with `harness = false`:
//!
//! ```toml
//! [dev-dependencies]
//! harness-runner = { version = "0.1", features = ["conformance"] }
//! libtest-mimic = "0.8"
//!
//! [[test]]
//! name = "conformance"
//! harness = false
//! ```
//!
//! ```no_run
//! // tests/conformance.rs
//! use harness_runner::conformance::{self, TargetSource};
//!
//! fn main() -> std::process::ExitCode {
//!     // Start the server under test here (or in CI), then describe it:
//!     let trials = conformance::trials(TargetSource::File("target.toml".into()));
//!     libtest_mimic::run(&conformance::arguments(), trials).exit_code()
//! }
//! ```
//!
//! `cargo test --test conformance -- auth.` then runs the `auth` cases, and `--list` lists
//! them. A passing execution is an `ok` trial; a failure fails its trial with the findings
//! and their clauses; a skip (missing account, fixture or permission) and a known failure
//! of [`Suite::expect`] are ignored trials with the reason. Cases marked `serial` change
//! state other cases may see: each runs alone (against a launched server, on a fresh
//! server of its own). Setup defects (a broken target file, a broken case file of an
//! added directory) fail one trial, `conformance setup`, that says what is wrong. A
//! [`Launch`] that cannot start its server says why with a [`LaunchError`].

use std::future::Future;
use std::path::PathBuf;
use std::pin::Pin;
use std::sync::{Arc, RwLock};

use libtest_mimic::{Arguments, Completion, Failed, Trial};

use crate::run::{self, Runner};

use crate::transport::RequestLimits;
use harness_model::case::Case;
use harness_model::check::Verdict;
use harness_model::corpus::{Corpus, CorpusError, CorpusSource};
use harness_model::known_failures::{self, Known, KnownFailures};
use harness_model::results::CaseResult;
use harness_model::target_file::{Account, Fixtures, RateLimits, Secret, Target};
use harness_protocol::file_error::FileError;
use harness_protocol::wire::TransportKind;

/// Where the server under test is described.
#[derive(Clone, Debug)]
pub enum TargetSource {
    /// A target file (see `harness serve --target-out` for an example).
    File(PathBuf),
    /// A server by URL with the `main` account's credentials; cases that need other
    /// accounts, fixtures or the Direct Access interface are skipped with the reason.
    Url {
        /// `{base_url}`, ending in `/api/v2`.
        base_url: String,
        /// The WebSocket JSON-RPC URL, if the server has one.
        ws_url: Option<String>,
        /// The `main` account's client id.
        client_id: String,
        /// Its client secret.
        client_secret: String,
    },
    /// A target already described.
    Target(Box<Target>),
    /// A server the suite starts itself on a loopback port, and starts afresh for each
    /// `serial` case (the reference server of `harness-server` is one).
    Launched(Arc<dyn Launch>),
}

impl std::fmt::Debug for dyn Launch {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Launch")
    }
}

/// A future the suite awaits, boxed so that [`Launch`] is object safe.
pub type BoxFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

/// A server the suite can start: each call starts a fresh one.
pub trait Launch: Send + Sync {
    /// Starts a server and describes it; the error says why it could not start.
    fn launch(&self) -> BoxFuture<'_, Result<Launched, LaunchError>>;
}

/// Why a [`Launch`] started no server.
#[derive(Debug, thiserror::Error)]
pub enum LaunchError {
    /// The server did not start (shown as "SERVER did not start: SOURCE").
    #[error("{server} did not start: {source}")]
    NotStarted {
        /// The server, as the message names it ("the reference server").
        server: String,
        /// Why it did not start.
        #[source]
        source: Box<dyn std::error::Error + Send + Sync>,
    },
}

/// A defect of the suite's setup: the one failing `conformance setup` trial says it.
#[derive(Debug, thiserror::Error)]
enum SetupError {
    /// The corpus did not load.
    #[error(transparent)]
    Corpus(#[from] CorpusError),
    /// The known-failures file did not load.
    #[error(transparent)]
    KnownFailures(FileError),
    /// The target file did not load.
    #[error(transparent)]
    TargetFile(FileError),
    /// No tokio runtime.
    #[error("failed to start a tokio runtime: {source}")]
    Runtime {
        /// The runtime builder's failure.
        #[source]
        source: std::io::Error,
    },
    /// A [`TargetSource::Url`] base URL of another scheme.
    #[error("base_url \"{base_url}\" must start with http:// or https://")]
    BaseUrlScheme {
        /// The base URL given.
        base_url: String,
    },
    /// The launched server did not start.
    #[error("failed to start the server: {source}")]
    Launch {
        /// The launcher's error.
        #[source]
        source: LaunchError,
    },
    /// A URL of the target does not parse.
    #[error("\"{url}\" is not a URL")]
    NotAUrl {
        /// The URL.
        url: String,
    },
    /// A URL in clear text to another host.
    #[error(
        "{url} is plain text to a non-loopback host; credentials would travel unencrypted (use https:// or wss://)"
    )]
    PlainText {
        /// The URL.
        url: String,
    },
    /// The runner could not be built.
    #[error(transparent)]
    Runner(#[from] run::RunError),
}

/// A server the suite started.
pub struct Launched {
    /// The server as a target.
    pub target: Target,
    /// Stops the server and waits until it has stopped; the server runs until this is
    /// awaited or dropped.
    pub stop: BoxFuture<'static, ()>,
}

/// The suite and how to run it; [`trials`] is `Suite::new(source).trials()`.
#[derive(Clone)]
pub struct Suite {
    /// The server under test.
    pub source: TargetSource,
    /// The corpus (default: the one embedded in this crate).
    pub corpus: CorpusSource,
    /// Only these transports (all when `None`).
    pub transports: Option<Vec<TransportKind>>,
    /// Per-request limits.
    pub limits: RequestLimits,
    /// Known failures (`harness run --expect`): ignored trials with their reason.
    pub expect: Option<PathBuf>,
    /// Fail the trial of a known failure that passes now.
    pub strict_expect: bool,
    /// Fail the trial of a skipped execution, for a target that should run every case
    /// (the reference server).
    pub skips_fail: bool,
    /// A further check of each passing execution (e.g. a snapshot), given its target.
    pub on_pass: Option<Arc<OnPass>>,
}

/// A further check of a passing execution.
pub type OnPass = dyn Fn(&CaseResult, &Target) -> Result<(), Failed> + Send + Sync;

/// Trials at once when neither `--test-threads` nor `RUST_TEST_THREADS` says: the trials
/// mostly wait (lifetimes waited out, nonce windows, paced calls), not compute, so more of
/// them than cores overlap their waits (the reference's suite on 2 cores: 36 s at 2 at once,
/// 21 s at 8, no faster at 16 or 32).
pub const TRIALS_AT_ONCE: usize = 8;

/// The test command line's arguments ([`Arguments::from_args`]), with the trials at once
/// [`TRIALS_AT_ONCE`] unless `--test-threads` or `RUST_TEST_THREADS` gives a number
/// (libtest-mimic itself reads only the flag, and defaults to one trial per core).
pub fn arguments() -> Arguments {
    let mut arguments = Arguments::from_args();
    if arguments.test_threads.is_none() {
        let from_env = std::env::var("RUST_TEST_THREADS")
            .ok()
            .and_then(|threads| threads.parse().ok());
        arguments.test_threads = Some(from_env.unwrap_or(TRIALS_AT_ONCE));
    }
    arguments
}

/// One trial per case and transport against `source` (see the module doc).
pub fn trials(source: TargetSource) -> Vec<Trial> {
    Suite::new(source).trials()
}

impl Suite {
    /// The whole suite against `source`, with default limits.
    pub fn new(source: TargetSource) -> Suite {
        Suite {
            source,
            corpus: CorpusSource::default(),
            transports: None,
            limits: RequestLimits::default(),
            expect: None,
            strict_expect: false,
            skips_fail: false,
            on_pass: None,
        }
    }

    /// One trial per case and transport; a setup defect is one failing trial.
    pub fn trials(self) -> Vec<Trial> {
        match self.prepare() {
            Ok(trials) => trials,
            Err(error) => {
                let message = error.to_string();
                vec![Trial::test("conformance setup", move || {
                    Err(Failed::from(message))
                })]
            }
        }
    }

    fn prepare(self) -> Result<Vec<Trial>, SetupError> {
        let Corpus {
            catalog,
            schemas,
            cases,
        } = Corpus::load(&self.corpus)?;
        let expectations = match &self.expect {
            None => None,
            Some(path) => {
                let known = Known::new(
                    cases
                        .iter()
                        .map(|case| (case.id.clone(), case.transports.clone())),
                    catalog.ids().map(str::to_owned),
                );
                Some(known_failures::load(path, &known).map_err(SetupError::KnownFailures)?)
            }
        };
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .map_err(|source| SetupError::Runtime { source })?;
        let (target, reference) = match self.source.clone() {
            TargetSource::File(path) => {
                (Target::load(&path).map_err(SetupError::TargetFile)?, None)
            }
            TargetSource::Url {
                base_url,
                ws_url,
                client_id,
                client_secret,
            } => (
                url_target(base_url, ws_url, client_id, client_secret)?,
                None,
            ),
            TargetSource::Target(target) => (*target, None),
            TargetSource::Launched(launcher) => {
                let launched = runtime
                    .block_on(launcher.launch())
                    .map_err(|source| SetupError::Launch { source })?;
                (
                    launched.target.clone(),
                    Some((std::sync::Mutex::new(launched), launcher)),
                )
            }
        };
        refuse_plain_text_to_another_host(&target)?;
        let config = run::RunConfig {
            limits: self.limits,
            ..run::RunConfig::new(target.clone(), Vec::new(), catalog, schemas)
        };
        let runner = Runner::new(&config)?;
        let shared = Arc::new(Shared {
            launched: reference,
            runtime,
            config,
            runner,
            expectations,
            strict_expect: self.strict_expect,
            skips_fail: self.skips_fail,
            on_pass: self.on_pass,
            serial: RwLock::new(()),
        });
        let mut trials = Vec::new();
        for (case, transport) in run::select(cases, None, self.transports.as_deref()) {
            let shared = shared.clone();
            trials.push(Trial::ignorable_test(
                format!("{} [{transport}]", case.id),
                move || shared.trial(&case, transport),
            ));
        }
        Ok(trials)
    }
}

/// What every trial shares. The launched server is declared before the runtime, so it is
/// dropped first.
struct Shared {
    /// The server started for the suite (in a mutex: its stop future is not `Sync`).
    launched: Option<(std::sync::Mutex<Launched>, Arc<dyn Launch>)>,
    runtime: tokio::runtime::Runtime,
    config: run::RunConfig,
    runner: Runner,
    expectations: Option<KnownFailures>,
    strict_expect: bool,
    skips_fail: bool,
    on_pass: Option<Arc<OnPass>>,
    /// Held shared by parallel cases and exclusively by a `serial` one.
    serial: RwLock<()>,
}

impl Shared {
    fn trial(&self, case: &Case, transport: TransportKind) -> Result<Completion, Failed> {
        let (mut result, target) = if case.serial {
            let _alone = self
                .serial
                .write()
                .unwrap_or_else(|poison| poison.into_inner());
            self.run_serial(case, transport)?
        } else {
            let _shared = self
                .serial
                .read()
                .unwrap_or_else(|poison| poison.into_inner());
            let result = self.runtime.block_on(self.runner.execute(case, transport));
            (result, self.config.target.clone())
        };
        if let Some(expectations) = &self.expectations {
            expectations.apply(std::slice::from_mut(&mut result));
        }
        let redactor = self.runner.redactor();
        match result.verdict {
            Verdict::Skip if self.skips_fail => Err(redactor.text(&result.message).into()),
            Verdict::Skip | Verdict::Xfail => {
                Ok(Completion::ignored_with(redactor.text(&result.message)))
            }
            Verdict::Fixed if self.strict_expect => Err(redactor.text(&result.message).into()),
            Verdict::Pass | Verdict::Info | Verdict::Warn | Verdict::Fixed => {
                if let Some(on_pass) = &self.on_pass {
                    on_pass(&result, &target)?;
                }
                Ok(Completion::Completed)
            }
            Verdict::Fail | Verdict::Error => Err(redactor.text(&failure_text(&result)).into()),
        }
    }

    /// A serial case against a launched server runs on a fresh one; against another
    /// target, on the shared runner while no other case runs.
    fn run_serial(
        &self,
        case: &Case,
        transport: TransportKind,
    ) -> Result<(CaseResult, Target), Failed> {
        let Some((_, launcher)) = &self.launched else {
            let result = self.runtime.block_on(self.runner.execute(case, transport));
            return Ok((result, self.config.target.clone()));
        };
        self.runtime.block_on(async {
            let launched = launcher
                .launch()
                .await
                .map_err(|error| format!("failed to start a fresh server: {error}"))?;
            let target = launched.target;
            let fresh = run::RunConfig {
                target: target.clone(),
                ..self.config.clone()
            };
            let result = match Runner::new(&fresh) {
                Ok(runner) => Ok(runner.execute(case, transport).await),
                Err(error) => Err(Failed::from(error.to_string())),
            };
            launched.stop.await;
            Ok((result?, target))
        })
    }
}

/// The verdict, message and every finding of a failed execution.
fn failure_text(result: &CaseResult) -> String {
    let mut text = format!(
        "{} [{}]: {}",
        result.verdict,
        result.clauses.join(", "),
        result.message
    );
    for finding in &result.findings {
        text.push_str(&format!(
            "\n  {} [{}]: {}",
            finding.verdict,
            finding.clauses.join(", "),
            finding.message
        ));
    }
    text
}

/// A target with only a base URL, a WebSocket URL and the `main` account.
fn url_target(
    base_url: String,
    ws_url: Option<String>,
    client_id: String,
    client_secret: String,
) -> Result<Target, SetupError> {
    if !(base_url.starts_with("http://") || base_url.starts_with("https://")) {
        return Err(SetupError::BaseUrlScheme { base_url });
    }
    Ok(Target {
        name: base_url.clone(),
        base_url: base_url.trim_end_matches('/').to_owned(),
        ws_url,
        direct_access_url: None,
        signature_scheme: harness_protocol::auth::sign::DEFAULT_SCHEME.to_owned(),
        allow_destructive: false,
        races: true,
        race_rounds: None,
        accounts: [(
            "main".to_owned(),
            Account {
                client_id,
                client_secret: Secret::new(client_secret),
                second_factor: None,
            },
        )]
        .into_iter()
        .collect(),
        fixtures: Fixtures::default(),
        limits: RateLimits::default(),
        tls: Default::default(),
        param_names: Default::default(),
        field_names: Default::default(),
    })
}

/// Credentials never travel in clear text to another machine: `http://` and `ws://` are
/// for loopback only (use `https://` and `wss://` elsewhere).
fn refuse_plain_text_to_another_host(target: &Target) -> Result<(), SetupError> {
    let urls = [
        Some(&target.base_url),
        target.ws_url.as_ref(),
        target.direct_access_url.as_ref(),
    ];
    for url in urls.into_iter().flatten() {
        if reqwest::Url::parse(url).is_err() {
            return Err(SetupError::NotAUrl { url: url.clone() });
        }
    }
    match target.clear_text_url() {
        Some(url) => Err(SetupError::PlainText {
            url: url.to_owned(),
        }),
        None => Ok(()),
    }
}
