//! The client judge: the reference server as the server a client (an SDK, a trading bot)
//! talks to, recording every request and judging it against the client-side clauses of the
//! catalog (`side = "client"` in `cases/clauses.toml`).
//!
//! [`start`] serves the reference API with a [`Recorder`] as its
//! [`Observer`](crate::serve::Observer). Each request is checked as it arrives; one that
//! breaks a rule of a single request (envelope, token placement, a signature, a count) is
//! refused with the error the reference server uses for that kind of defect, so the client
//! sees realistic behaviour. When the session ends, [`assess`] judges the whole recording
//! again, adding what only a sequence shows (nonce reuse, ids in flight, pagination, pacing,
//! tolerance of unknown log types), into a [`Tally`]; [`to_run_report`] turns it into the
//! same report as `harness run`, one result per client clause and transport seen.
//!
//! Every check here is a pure function over recorded requests, so each can be tested
//! without sockets. A signature that does not verify is diagnosed: the known wrong framings
//! are tried and the one that matches is named in the finding.

mod credentials;
mod direct;
mod envelope;
mod nonces;
mod pace;
mod paging;
mod params;
mod placement;
mod record;
mod recorder;
mod results;
mod route;
mod scenario;
mod sessions;
mod signature;
mod signed;
mod tally;
mod tokens;
mod walks;

pub use record::{Answer, Call, Record};
pub use recorder::Recorder;
pub use results::{Judged, to_run_report};
pub(crate) use results::{exchange, result as clause_result};
pub use scenario::Scenario;
pub use tally::{Cell, Tally};

use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::sync::Arc;

use crate::serve::{self, Knobs};
use harness_model::target_file::{CountedPer, RateLimits, Target};
use harness_protocol::auth::clock::Clock;

use sessions::Sessions;

/// How to run the judge.
#[derive(Clone, Debug)]
pub struct JudgeConfig {
    /// Where to listen; port 0 picks a free port.
    pub listen: SocketAddr,
    /// What the server serves (see [`Scenario`]).
    pub scenario: Scenario,
    /// The transaction-log rate the server enforces, the target file advertises and the
    /// judge holds clients to.
    pub limits: RateLimits,
    /// The scheme name the signed `Authorization` header must carry (e.g.
    /// `deri-hmac-sha256`). `None` (the default): SPEC.md 5.6 only says that
    /// `svc-hmac-sha256` "stands for the scheme name", so any name is accepted, its
    /// signature verified, and the name seen noted.
    pub signature_scheme: Option<String>,
    /// The server's and the judge's clock.
    pub clock: Clock,
    /// Requests kept at most; later ones are answered but not recorded.
    pub max_records: usize,
    /// Serve over TLS with this certificate; plain HTTP when `None`.
    pub tls: Option<serve::TlsIdentity>,
    /// Spec-open variants of the server the client talks to: a client must cope with every
    /// legal server, so the judge can serve each of them.
    pub variants: Vec<serve::Variant>,
}

impl JudgeConfig {
    /// Loopback on a free port, the default scenario, SPEC.md's sustained rate with the
    /// judge's burst of [`DEFAULT_BURST`], counted per account (SPEC.md 8 does not say per
    /// what; a client must cope with the narrowest reading, so all the tokens of one
    /// account share one budget), any signature scheme name.
    pub fn loopback() -> JudgeConfig {
        let server = serve::ServeConfig::loopback();
        JudgeConfig {
            listen: server.listen,
            scenario: Scenario::Default,
            limits: RateLimits {
                transaction_log_burst: DEFAULT_BURST,
                transaction_log_counted_per: CountedPer::Account,
                ..server.limits
            },
            signature_scheme: None,
            clock: server.clock,
            max_records: 200_000,
            tls: None,
            variants: Vec::new(),
        }
    }
}

/// The transaction-log burst the judge allows, advertises in its target file and has its
/// server enforce, unless told otherwise (`--burst`).
///
/// SPEC.md section 8 states a sustained rate of 1 request per second and no burst.
/// "Sustained" leaves room for a short burst, not a long one: five lets a client read the
/// first page of a few currencies at once, and still fails an unpaced walk of more than
/// five pages, where a burst of 100 hid a walk of 93 pages at 20 per second.
pub const DEFAULT_BURST: u32 = 5;

/// What the judge knows besides the traffic: whose secret is what, and the limits.
#[derive(Clone, Debug, Default)]
pub struct Knowledge {
    /// Client secrets by client id.
    pub(crate) secrets: BTreeMap<String, String>,
    /// The scheme name the signed header must carry; `None`: any name (see
    /// [`JudgeConfig::signature_scheme`]).
    pub signature_scheme: Option<String>,
    /// The advertised transaction-log rate.
    pub limits: RateLimits,
    /// The parameter carrying the second factor, by the client id of each account that
    /// has one (SPEC.md 5.7: "when the account has 2FA enabled"; the target file names it).
    pub(crate) second_factor: BTreeMap<String, String>,
    /// The user id each client id logs in as, where the target file tells it (the `sub`
    /// account is `fixtures.subaccount_id`): whose sessions a disable ends (SPEC.md 4.5).
    pub(crate) users: BTreeMap<String, u64>,
    /// The API key of the Direct Access interface (SPEC.md 5.8), when the target names one.
    pub(crate) direct_access_key: Option<String>,
    /// The parameter names of `public/fork_token` the target file gives (SPEC.md 4.3:
    /// "Parameter names and response shape: not shown"): the refresh token's and the new
    /// session's name's, by the harness's name for each.
    pub(crate) fork_params: BTreeMap<String, String>,
    /// Every account that exists is in [`Self::secrets`]: true for the judge, whose server
    /// has no others, so a credential naming another client id is wrong; false for the
    /// proxy, in front of a server with accounts its target file does not describe.
    pub(crate) all_accounts: bool,
}

impl Knowledge {
    /// What a target file tells about its accounts and limits.
    pub fn from_target(target: &Target) -> Knowledge {
        let accounts = target.accounts.values();
        Knowledge {
            secrets: accounts
                .clone()
                .map(|account| {
                    (
                        account.client_id.clone(),
                        account.client_secret.expose().to_owned(),
                    )
                })
                .collect(),
            signature_scheme: Some(target.signature_scheme.clone()),
            limits: target.limits.clone(),
            second_factor: accounts
                .filter_map(|account| {
                    let factor = account.second_factor.as_ref()?;
                    Some((account.client_id.clone(), factor.parameter.clone()))
                })
                .collect(),
            users: target
                .accounts
                .get("sub")
                .zip(target.fixtures.subaccount_id)
                .map(|(account, user)| (account.client_id.clone(), user))
                .into_iter()
                .collect(),
            direct_access_key: target
                .fixtures
                .direct_access_key
                .as_ref()
                .map(|key| key.expose().to_owned()),
            fork_params: target
                .param_names
                .get(harness_protocol::spec::FORK_TOKEN_METHOD)
                .cloned()
                .unwrap_or_default(),
            all_accounts: false,
        }
    }

    /// The name `public/fork_token`'s parameter `name` goes by (the harness's name when the
    /// target file gives none).
    pub(crate) fn fork_param<'a>(&'a self, name: &'a str) -> &'a str {
        self.fork_params.get(name).map_or(name, String::as_str)
    }
}

/// A running judge.
#[derive(Debug)]
pub struct Judge {
    /// The address it listens on.
    pub addr: SocketAddr,
    server: serve::Running,
    recorder: Arc<Recorder>,
    target: Target,
    signature_scheme: Option<String>,
}

/// Starts the reference server with a recorder on the current tokio runtime.
pub async fn start(config: JudgeConfig) -> std::io::Result<Judge> {
    let mut server = serve::ServeConfig::loopback();
    server.listen = config.listen;
    server.limits = config.limits.clone();
    if let Some(scheme) = &config.signature_scheme {
        server.signature_scheme = scheme.clone();
    }
    server.clock = config.clock.clone();
    server.knobs = Knobs {
        any_signature_scheme: config.signature_scheme.is_none(),
        ..config.scenario.knobs()
    };
    server.tls = config.tls.clone();
    server.variants = config.variants.clone();
    // The server's secrets are random per start, so the recorder learns them once the
    // server is up; until then no client can have sent a request.
    let recorder = Arc::new(
        Recorder::new(config.max_records).refusing_refresh(config.scenario.refuses_refresh()),
    );
    server.observer = Some(recorder.clone());
    let running = serve::start(server).await?;
    let mut target = running.target();
    target.name = format!("client judge ({})", config.scenario.name());
    let knowledge = Knowledge {
        signature_scheme: config.signature_scheme.clone(),
        all_accounts: true,
        ..Knowledge::from_target(&target)
    };
    recorder.set_knowledge(knowledge, target.secrets());
    Ok(Judge {
        addr: running.addr,
        server: running,
        recorder,
        target,
        signature_scheme: config.signature_scheme,
    })
}

impl Judge {
    /// The target file a client needs: URLs, credentials, fixtures and limits.
    pub fn target(&self) -> &Target {
        &self.target
    }

    /// What the judge knows about the accounts and limits.
    pub fn knowledge(&self) -> Knowledge {
        Knowledge {
            signature_scheme: self.signature_scheme.clone(),
            all_accounts: true,
            ..Knowledge::from_target(&self.target)
        }
    }

    /// The recorder, for waiting on traffic and reading records while running.
    pub fn recorder(&self) -> &Arc<Recorder> {
        &self.recorder
    }

    /// Stops the server and returns every recorded request in arrival order.
    pub async fn stop(self) -> Vec<Record> {
        self.server.shutdown().await;
        self.recorder.records()
    }
}

/// Judges a whole recording against every client clause.
pub fn assess(records: &[Record], knowledge: &Knowledge) -> Tally {
    let mut tally = Tally::default();
    let mut sessions = Sessions::default();
    let mut nonces = nonces::NonceBook::default();
    let mut callers = Vec::with_capacity(records.len());
    for record in records {
        let call = record.call();
        check_request(record, &call, knowledge, &sessions, &mut tally);
        placement::check_ws_token_omitted(record, &call, &sessions, &mut tally);
        tokens::check_tokens(record, &call, &sessions, knowledge, &mut tally);
        nonces.check(record, &call, knowledge, &mut tally);
        callers.push(sessions.caller(record, &call, knowledge.signature_scheme.as_deref()));
        sessions.learn(record, &call);
    }
    envelope::check_ids_in_flight(records, &mut tally);
    walks::check_pagination(records, &callers, &mut tally);
    paging::check_log_type_tolerance(records, &mut tally);
    pace::check_transaction_log_rate(
        records,
        &callers,
        &knowledge.limits,
        &knowledge.users,
        &mut tally,
    );
    tokens::check_second_factor(records, &callers, knowledge, &mut tally);
    tally
}

/// The checks one request needs nothing else for (besides the tokens issued before it):
/// also what decides whether the live judge refuses it.
pub(crate) fn check_request(
    record: &Record,
    call: &Call,
    knowledge: &Knowledge,
    sessions: &Sessions,
    tally: &mut Tally,
) {
    envelope::check_http_method(record, tally);
    envelope::check_envelope(record, call, tally);
    placement::check_placement(record, call, sessions, knowledge, tally);
    placement::check_required_params(record, call, tally);
    params::check_params(record, call, tally);
    route::check_route(record, call, tally);
    direct::check_direct_access(record, call, sessions, knowledge, tally);
    credentials::check_credentials(record, call, knowledge, tally);
    paging::check_count(record, call, tally);
    signature::check_client_signature(record, call, knowledge, tally);
    signed::check_signed_header(record, knowledge, tally);
}
