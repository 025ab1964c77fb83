//! The case-file model: one behaviour per file, in TOML, under `cases/<area>/`.
//!
//! A [`Case`] names the clauses it checks, the transports it applies to, what it needs
//! from the target file, and its [`Step`]s. A step is one of: a `call` (a method with
//! params, an [`Auth`] mode, an [`ExpectedAnswer`] and captures), a `raw` message, a pagination
//! [`Walk`], or a rate-limit [`Probe`]; a call may be a [`Race`] of copies released together. String values may hold templates such as
//! `{{fixtures.currency}}`, `{{capture_name}}`, `{{now_ms - 61000}}` or `{{nonce}}`.
//! The loader in `load.rs` turns defects into `path:line: message` errors.

mod load;
mod property;
mod write;

pub use load::{discover, load_file, parse_case};
pub(crate) use load::{files_under, is_case_file, parse_all};
pub use property::case_parse_no_panic;
pub use write::{literal, literal_text, storable};

use std::collections::BTreeMap;
use std::path::PathBuf;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::check::{Matcher, Outcome};
use harness_protocol::wire::TransportKind;

/// One case file.
#[derive(Clone, Debug, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct Case {
    /// Stable id, e.g. `auth.client_signature.stale_timestamp`.
    pub id: String,
    /// One line on what behaviour the case checks.
    pub title: String,
    /// The catalog clauses the case checks.
    pub clauses: Vec<String>,
    /// The transports the case runs over.
    #[serde(
        default = "default_transports",
        skip_serializing_if = "crate::case::write::is_default_transports"
    )]
    pub transports: Vec<TransportKind>,
    /// What the case needs from the target file.
    #[serde(default, skip_serializing_if = "crate::case::write::is_default")]
    pub needs: Needs,
    /// The case changes state others may see: it runs alone, after the parallel cases.
    #[serde(default, skip_serializing_if = "crate::case::write::is_false")]
    pub serial: bool,
    /// The steps, in order.
    #[serde(rename = "step")]
    pub steps: Vec<Step>,
    /// The file the case came from (set by the loader).
    #[serde(skip)]
    pub path: PathBuf,
}

fn default_transports() -> Vec<TransportKind> {
    TransportKind::DEFAULT.to_vec()
}

/// Requirements on the target; a case whose needs are unmet is skipped with the reason.
#[derive(Clone, Debug, Default, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct Needs {
    /// Account roles from `[accounts.*]`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub accounts: Vec<String>,
    /// Fixture names from `[fixtures]`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub fixtures: Vec<String>,
    /// The case changes server state: it runs only when `allow_destructive = true`.
    #[serde(default, skip_serializing_if = "crate::case::write::is_false")]
    pub destructive: bool,
}

/// One step of a case.
#[derive(Clone, Debug, Default, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct Step {
    /// The method to call.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub call: Option<String>,
    /// A raw message sent as the body (HTTP) or text frame (WebSocket); over HTTP to the
    /// URL of the step's `call` when it has one, else of the method the text names.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub raw: Option<String>,
    /// A pagination walk.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub walk: Option<Walk>,
    /// A rate-limit probe.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub probe: Option<Probe>,
    /// The call released several times at once, over connections opened beforehand, for
    /// several rounds, with the results of a round held to `at_most`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub race: Option<Race>,
    /// Parameters of the call (templates allowed).
    #[serde(default, skip_serializing_if = "Map::is_empty")]
    pub params: Map<String, Value>,
    /// How the call authenticates.
    #[serde(default, skip_serializing_if = "crate::case::write::is_default")]
    pub auth: Auth,
    /// What the answer must be.
    #[serde(default, skip_serializing_if = "crate::case::write::is_default")]
    pub expect: ExpectedAnswer,
    /// Values to keep for later steps: name -> path in the response.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub capture: BTreeMap<String, String>,
    /// Clauses this step checks, when they are narrower than the case's.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub clauses: Option<Vec<String>>,
    /// Over WebSocket, the call goes this many times at once on one connection, each with
    /// its own id, and every answer is matched to its request by id and checked (2 to 16).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub in_flight: Option<usize>,
    /// The step runs even when an earlier one ended the execution: it puts the target back
    /// as the case found it (enables what the case disabled). After a stop, what it
    /// observes is a note.
    #[serde(default, skip_serializing_if = "crate::case::write::is_false")]
    pub always: bool,
    /// The named connection the step goes over, opened on first use and kept for later
    /// steps of the name: a WebSocket of its own, or over HTTP a client with a connection
    /// pool of its own. Steps without it share the execution's default connection.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub connection: Option<String>,
    /// The transport of this step, whatever the execution's transport (`http-query`,
    /// `http-body` or `ws`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub transport: Option<TransportKind>,
    /// Waits before the step: a lifetime captured from an earlier answer, so a step can
    /// check what holds once it has passed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub wait: Option<Wait>,
    /// Line of the step in its file (set by the loader).
    #[serde(skip)]
    pub line: usize,
}

/// A wait before a step: `seconds` (a template, e.g. a captured `expires_in`) plus
/// `margin_ms`. A wait longer than `at_most_s` skips the execution with the reason, so a
/// target granting long lifetimes costs no time.
#[derive(Clone, Debug, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct Wait {
    /// Seconds to wait (a number or a template resolving to one).
    pub seconds: Value,
    /// Milliseconds added to `seconds`.
    #[serde(default, skip_serializing_if = "crate::case::write::is_zero")]
    pub margin_ms: i64,
    /// The longest wait the case accepts, in seconds.
    pub at_most_s: u64,
}

/// How a step authenticates.
#[derive(Clone, Debug, Default, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct Auth {
    /// The mechanism.
    #[serde(default, skip_serializing_if = "crate::case::write::is_default")]
    pub mode: AuthMode,
    /// Account role whose credentials are used (default `main`), or [`Auth::ANY_ACCOUNT`].
    #[serde(skip_serializing_if = "Option::is_none")]
    pub account: Option<String>,
    /// `bearer`: a token (template) instead of logging in as `account`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub token: Option<String>,
    /// `bearer` login: the scope to request.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub scope: Option<String>,
    /// `bearer` login: a requirement (`account:read`, `block_rfq:read`, ...) the token must
    /// lack for the step to mean anything. SPEC.md does not say what a requested scope grants
    /// beyond what it names, so when the granted `scope` grants this requirement the case is
    /// skipped with that reason instead of expecting a refusal.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub lacks: Option<String>,
    /// `bearer` login: a requirement (`mainaccount`, ...) the token must carry for the step
    /// to mean anything, since a requested scope cannot ask for it (5.4 does not list it
    /// among the values to request): when the granted scope lacks it, the case is skipped.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub grants: Option<String>,
    /// Sign or log in with a wrong secret.
    #[serde(default, skip_serializing_if = "crate::case::write::is_false")]
    pub wrong_secret: bool,
    /// Signatures: milliseconds added to the current time.
    #[serde(default, skip_serializing_if = "crate::case::write::is_zero")]
    pub timestamp_offset_ms: i64,
    /// Signatures: the side of the 60 s window the timestamp must stay on whatever the
    /// target's clock skew (`[limits] clock_skew_ms`): the offset moves toward now by the
    /// skew for `inside`, further back for `outside`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub clock_skew: Option<SkewSide>,
    /// Signatures: the nonce; `"reuse"` reuses the nonce of the previous signed step.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub nonce: Option<String>,
    /// `client_signature`: the data field.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub data: Option<String>,
    /// `client_signature`: send no `nonce` and sign with an empty one.
    #[serde(default, skip_serializing_if = "crate::case::write::is_false")]
    pub no_nonce: bool,
    /// `client_signature`: drop the LF after the nonce when data is empty.
    #[serde(default, skip_serializing_if = "crate::case::write::is_false")]
    pub no_trailing_lf: bool,
    /// Signatures: send the hex upper-case.
    #[serde(default, skip_serializing_if = "crate::case::write::is_false")]
    pub uppercase_hex: bool,
    /// Signatures: the right signature with its last hex digit changed, the nearest miss of
    /// a wrong key (a server comparing only a prefix accepts it).
    #[serde(default, skip_serializing_if = "crate::case::write::is_false")]
    pub altered_signature: bool,
    /// `signed`: sign this URI instead of the one requested.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sign_uri: Option<String>,
    /// Sends the account's second factor (SPEC.md 5.7) in the parameter the target file
    /// names (`[accounts.<role>] second_factor`): its current code, or a wrong one. A
    /// target file without it skips the execution with the reason.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub second_factor: Option<SecondFactorCode>,
    /// `client_credentials` and `client_signature`: parameters the mode fills in
    /// (`grant_type`, `client_id`) that this step leaves out, to send a login missing them.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub omit: Vec<String>,
}

impl Auth {
    /// `account = "any"`: the rule holds whatever account the step goes as, so the run puts
    /// the execution on the account whose paced budget has the most room (`main` or
    /// `two_factor`, among those the target file gives; `main` outside a planned run).
    pub const ANY_ACCOUNT: &'static str = "any";
    /// The roles an `any` account is drawn from, in order of preference, for a case whose
    /// every step expects a refusal: it reads no one's history.
    pub const SPREAD_ROLES: [&'static str; 3] = ["main", "two_factor", "sub"];
    /// The roles of a case that reads a page: not `sub`, whose last request of a run would
    /// then be a page with a continuation it does not follow, which a client judge
    /// (`harness judge`, its self-play in the variant matrix) takes for a client gone
    /// silent; its history is read by cases of its own.
    pub const READING_ROLES: [&'static str; 2] = ["main", "two_factor"];
}

impl Case {
    /// Whether a step leaves its account to the run ([`Auth::ANY_ACCOUNT`]).
    pub fn spreads(&self) -> bool {
        self.steps
            .iter()
            .any(|step| step.auth.account.as_deref() == Some(Auth::ANY_ACCOUNT))
    }

    /// The roles an `any` account of this case may be put on: every spread role when each
    /// of its steps expects a refusal, else the reading roles.
    pub fn spread_roles(&self) -> &'static [&'static str] {
        let refuses = self
            .steps
            .iter()
            .all(|step| step.expect.outcome == crate::check::Outcome::Error);
        if refuses {
            &Auth::SPREAD_ROLES
        } else {
            &Auth::READING_ROLES
        }
    }

    /// The case with every `any` account put on `role`.
    pub fn on_account(&self, role: &str) -> Case {
        let mut case = self.clone();
        for step in &mut case.steps {
            if step.auth.account.as_deref() == Some(Auth::ANY_ACCOUNT) {
                step.auth.account = Some(role.to_owned());
            }
        }
        case
    }
}

/// Which second-factor code a step sends.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum SecondFactorCode {
    /// The current code of the account's TOTP secret.
    Valid,
    /// A well-formed code that is not the current one.
    Wrong,
}

/// Which side of the signature window a timestamp is meant for.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum SkewSide {
    /// Just inside: the skew moves the timestamp toward now (never past it).
    Inside,
    /// Just outside: the skew moves the timestamp further into the past.
    Outside,
}

impl SkewSide {
    /// `offset_ms` moved by `skew_ms` to this side of the window.
    pub fn apply(self, offset_ms: i64, skew_ms: u64) -> i64 {
        let skew = i64::try_from(skew_ms).unwrap_or(i64::MAX);
        match self {
            SkewSide::Inside => offset_ms.saturating_add(skew).min(0),
            SkewSide::Outside => offset_ms.saturating_sub(skew),
        }
    }
}

/// Authentication mechanisms.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum AuthMode {
    /// No credentials.
    #[default]
    None,
    /// A bearer token: header on HTTP, `params.access_token` on WebSocket.
    Bearer,
    /// `public/auth` params for `client_credentials`.
    ClientCredentials,
    /// `public/auth` params for `client_signature`.
    ClientSignature,
    /// `Authorization: Basic`.
    Basic,
    /// `Authorization: <scheme> id=..,ts=..,nonce=..,sig=..`.
    Signed,
    /// The Direct Access API key as bearer (`fixtures.direct_access_key`).
    ApiKey,
}

/// What the answer of a call must be.
#[derive(Clone, Debug, Default, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct ExpectedAnswer {
    /// `result` (default), `error`, or `any`.
    #[serde(default, skip_serializing_if = "crate::case::write::is_default")]
    pub outcome: Outcome,
    /// An error code SPEC.md gives (only 13668 today).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error_code: Option<i64>,
    /// The error name SPEC.md gives with that code.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error_message: Option<String>,
    /// Result schema name; default: the method's schema when one exists.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub schema: Option<String>,
    /// Skip the default result schema.
    #[serde(default, skip_serializing_if = "crate::case::write::is_false")]
    pub no_schema: bool,
    /// HTTP status of the answer (HTTP transports only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub http_status: Option<u16>,
    /// Matchers on paths of the response envelope.
    #[serde(default, rename = "match", skip_serializing_if = "Vec::is_empty")]
    pub matchers: Vec<Matcher>,
    /// With `outcome = "any"`: an error answer keeps the rule the case checks (a request
    /// SPEC.md lets the server refuse or honour within bounds), so it ends the execution,
    /// passing, and the later steps (which check what a result granted) do not run.
    #[serde(default, skip_serializing_if = "crate::case::write::is_false")]
    pub refusal_ends_case: bool,
}

/// A pagination walk: follow the cursor to the end and check the pages.
#[derive(Clone, Debug, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct Walk {
    /// The method.
    pub call: String,
    /// Parameters besides count and cursor (templates allowed).
    #[serde(default, skip_serializing_if = "Map::is_empty")]
    pub params: Map<String, Value>,
    /// The result member holding the entries (`logs`, `entries`).
    pub items: String,
    /// The result member and parameter carrying the cursor (`continuation`).
    #[serde(
        default = "Walk::default_cursor",
        skip_serializing_if = "crate::case::write::is_default_cursor"
    )]
    pub cursor: String,
    /// Page size of the walk.
    pub count: u32,
    /// Page size of a second walk whose entries must be exactly the same.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub compare_count: Option<u32>,
    /// The entry member that identifies an entry (default: the whole entry).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub key: Option<String>,
    /// The entry member holding its timestamp, checked against the window params.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub timestamp: Option<String>,
    /// Stop and fail after this many pages.
    #[serde(
        default = "Walk::default_max_pages",
        skip_serializing_if = "crate::case::write::is_default_max_pages"
    )]
    pub max_pages: u32,
    /// An option that expired out of the money (a template): the walk also checks that
    /// its entries hold one of type `expiry` and nothing else for that expiration (4.8).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub expiry_of: Option<String>,
    /// A bounded walk: the window the walk reads instead of the whole history (unless the
    /// run walks in full, `harness run --full-walks`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub window: Option<WalkWindow>,
}

/// The window of a bounded walk: the parameters that bound it, and how the harness picks
/// its ends. With `around`, the window is that timestamp a day either side; otherwise one
/// page of the walk's parameters is read first (the density probe, with the larger of the
/// walk's counts) and the window's ends are timestamps of entries on it, about `entries`
/// apart, so that an entry stamped with either end is known to belong to the window.
#[derive(Clone, Debug, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct WalkWindow {
    /// The parameter of the window's earliest timestamp (`start_timestamp`).
    pub start: String,
    /// The parameter of the window's latest timestamp (`end_timestamp`).
    pub end: String,
    /// About how many entries of the probed page the window holds (default 50).
    #[serde(
        default = "WalkWindow::default_entries",
        skip_serializing_if = "WalkWindow::is_default_entries"
    )]
    pub entries: u32,
    /// A timestamp in ms (a template) the window is centred on, a day either side; the
    /// walk is skipped with the reason when it resolves to nothing and the run is bounded.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub around: Option<String>,
}

impl WalkWindow {
    /// Half the width of a window centred on `around`: one day.
    pub const AROUND_HALF_MS: i64 = 86_400_000;
    fn default_entries() -> u32 {
        50
    }
    fn is_default_entries(entries: &u32) -> bool {
        *entries == Self::default_entries()
    }
}

impl Walk {
    fn default_cursor() -> String {
        "continuation".to_owned()
    }
    fn default_max_pages() -> u32 {
        200
    }
}

/// A rate-limit probe: send requests without pacing until the server refuses one.
#[derive(Clone, Debug, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct Probe {
    /// The method.
    pub call: String,
    /// Its parameters.
    #[serde(default, skip_serializing_if = "Map::is_empty")]
    pub params: Map<String, Value>,
    /// Requests beyond the target's declared burst before concluding there is no limit.
    #[serde(
        default = "Probe::default_margin",
        skip_serializing_if = "crate::case::write::is_default_margin"
    )]
    pub margin: u32,
}

impl Probe {
    fn default_margin() -> u32 {
        5
    }
}

/// A race: copies of the step's call, each over a connection of its own opened beforehand,
/// released together (over HTTP/1.1 everything but each request's final byte is written
/// first, then the final bytes back to back; over WebSocket the same with each frame's last
/// byte). Each round runs the steps before the race again, then releases the copies; a round
/// breaks the rule when more than `at_most` copies got a result.
#[derive(Clone, Debug, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct Race {
    /// How many copies go at once (2 to 64).
    pub copies: usize,
    /// How many rounds (1 to 1000; default 20): a race may need more than one try.
    #[serde(
        default = "Race::default_rounds",
        skip_serializing_if = "crate::case::write::is_default_rounds"
    )]
    pub rounds: u32,
    /// The most copies of one round that may get a result: a number, or a template such as
    /// `"{{limits.transaction_log_burst}}"`.
    pub at_most: Value,
    /// The transports the copies go over in turn (`http-query`, `http-body`, `ws`): several
    /// make a mixed race. Default: the step's transport.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub over: Vec<TransportKind>,
    /// A call released with the first wave of copies, whose answer the last `after_lead`
    /// copies wait for: a disable or a logout, with copies carrying the token it ends. The
    /// copies that raced it are open (either outcome) and only those released after its
    /// answer count against `at_most`. The lead's answer is checked as its `expect` says.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub lead: Option<Box<Step>>,
    /// With a `lead`: how many of the copies are released once its answer has arrived (1 to
    /// `copies`); the others go with it.
    #[serde(default, skip_serializing_if = "crate::case::write::is_zero_usize")]
    pub after_lead: usize,
    /// What makes a copy count against `at_most`: a path in its answer that must hold a
    /// value other than null, false, 0 or an empty text, list or object (`result.trades`:
    /// a close that traded). Default: the answer has a `result`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub counts: Option<String>,
    /// One more copy, sent alone this many milliseconds after the copies' answers: when it
    /// counts too, the target does it again whatever came before (a close of a closed
    /// position may trade again: SPEC.md 4.12 leaves it open), so the round says nothing and
    /// is not judged. A race none of whose rounds could be judged passes with that note, and
    /// its clauses count as unchecked.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub again_after_ms: Option<u64>,
    /// The copies that count over every round so far stay within the target's declared
    /// budget for the paced method: its `[limits]` burst plus its rate times the seconds
    /// since the first release (a token bucket, full or not at the start, gives no more).
    #[serde(default, skip_serializing_if = "crate::case::write::is_false")]
    pub within_declared_rate: bool,
}

impl Race {
    /// Rounds of a race that does not say.
    pub const DEFAULT_ROUNDS: u32 = 20;
    /// The most copies a race may release at once.
    pub const MAX_COPIES: usize = 64;
    /// The most rounds a race may run.
    pub const MAX_ROUNDS: u32 = 1000;

    fn default_rounds() -> u32 {
        Race::DEFAULT_ROUNDS
    }
}

impl Step {
    /// The transport the step goes over when its execution runs over `execution`.
    pub fn transport_in(&self, execution: TransportKind) -> TransportKind {
        self.transport.unwrap_or(execution)
    }
}

impl Case {
    /// The clauses a step checks: its own, or the case's.
    pub fn step_clauses<'a>(&'a self, step: &'a Step) -> &'a [String] {
        step.clauses.as_deref().unwrap_or(&self.clauses)
    }

    /// Every method the steps call: a `call`, a walk's or probe's `call`, and the `method`
    /// a raw step's text names.
    pub fn methods(&self) -> Vec<String> {
        let mut methods = Vec::new();
        for step in &self.steps {
            let raw_method = step
                .raw
                .as_deref()
                .and_then(|raw| serde_json::from_str::<Value>(raw).ok())
                .and_then(|raw| raw.get("method").and_then(Value::as_str).map(str::to_owned));
            methods.extend(step.call.clone());
            methods.extend(step.walk.as_ref().map(|walk| walk.call.clone()));
            methods.extend(step.probe.as_ref().map(|probe| probe.call.clone()));
            methods.extend(raw_method);
        }
        methods
    }

    /// The first state-changing method (see [`harness_protocol::spec::Method::state_changing`]) the case
    /// calls, if any.
    pub fn state_changing_method(&self) -> Option<String> {
        self.methods()
            .into_iter()
            .find(|method| harness_protocol::spec::is_state_changing(method))
    }
}
