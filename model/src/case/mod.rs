//! The case-file model: one behaviour per file, in TOML, under `cases/<area>/`.
//!
//! A [`Case`] names the clauses it checks, the transports it applies to, what it needs
//! from the target file, and its [`Step`]s. What a step sends is its [`StepKind`], one of: a
//! call (a method, maybe sent [`StepKind::InFlight`] or as a [`Race`] of copies released
//! together), a raw message, a pagination [`Walk`], or a rate-limit [`Probe`]; every kind
//! shares params, an [`Auth`] (one variant per mode), an [`ExpectedAnswer`] and captures.
//! String values may hold templates such as `{{fixtures.currency}}`, `{{capture_name}}`,
//! `{{now_ms - 61000}}` or `{{nonce}}`.
//!
//! The file format is the flat tables serde reads (`step_table.rs`, `auth/table.rs`, unknown
//! keys refused); their conversion into the enums refuses a combination the enums cannot
//! hold, and the loader in `load.rs` adds the checks that need the whole case, every defect
//! a `path:line: message` error.

mod auth;
mod domain;
mod load;
mod notifications;
mod property;
mod step_table;
mod walk;
mod write;

pub use auth::{
    ApiKey, Auth, AuthMode, Basic, Bearer, BearerLogin, BearerToken, ClientSignature, Login,
    LoginParam, SecondFactorCode, ShortSecret, Signature, Signed, SkewSide,
};
pub use domain::{reached, reached_by_execution};
pub use load::{discover, load_file, parse_case};
pub(crate) use load::{files_under, is_case_file, parse_all};
pub use notifications::ExpectedNotifications;
pub use property::{CasePropertyError, case_parse_no_panic};
pub use walk::{Probe, Walk, WalkWindow};
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

/// One step of a case: what it sends ([`StepKind`]) and what every kind shares.
#[derive(Clone, Debug, PartialEq, Deserialize, Serialize)]
#[serde(try_from = "step_table::StepTable", into = "step_table::StepTable")]
pub struct Step {
    /// What the step sends: a call, a raw message, a walk, a probe, or a race.
    pub kind: StepKind,
    /// Parameters of the call (templates allowed).
    pub params: Map<String, Value>,
    /// How the step authenticates.
    pub auth: Auth,
    /// What the answer must be.
    pub expect: ExpectedAnswer,
    /// Values to keep for later steps: name -> path in the response.
    pub capture: BTreeMap<String, String>,
    /// Clauses this step checks, when they are narrower than the case's.
    pub clauses: Option<Vec<String>>,
    /// The step runs even when an earlier one ended the execution: it puts the target back
    /// as the case found it (enables what the case disabled). After a stop, what it
    /// observes is a note.
    pub always: bool,
    /// The named connection the step goes over, opened on first use and kept for later
    /// steps of the name: a WebSocket of its own, or over HTTP a client with a connection
    /// pool of its own. Steps without it share the execution's default connection.
    pub connection: Option<String>,
    /// The transport of this step, whatever the execution's transport (`http-query`,
    /// `http-body` or `ws`).
    pub transport: Option<TransportKind>,
    /// Waits before the step: a lifetime captured from an earlier answer, so a step can
    /// check what holds once it has passed.
    pub wait: Option<Wait>,
    /// Line of the step in its file (set by the loader; 0 for a race's lead).
    pub line: usize,
}

/// What a step sends, one variant per kind; the case file says it with one of the keys
/// `call`, `raw`, `walk` and `probe`, and `in_flight` or `race` beside a `call`.
#[derive(Clone, Debug, PartialEq)]
pub enum StepKind {
    /// A call of this method (`call`).
    Call(String),
    /// Over WebSocket, the call goes this many times at once on one connection, each with
    /// its own id, and every answer is matched to its request by id and checked (2 to 16;
    /// `call` with `in_flight`).
    InFlight {
        /// The method.
        method: String,
        /// How many copies.
        copies: usize,
    },
    /// A raw message sent as the body (HTTP) or text frame (WebSocket) (`raw`).
    Raw {
        /// The message (templates allowed).
        text: String,
        /// Over HTTP, the method whose URL the text goes to (a `call` beside the `raw`);
        /// else the method the text names.
        url_of: Option<String>,
    },
    /// A pagination walk (`walk`; boxed, as the largest kind).
    Walk(Box<Walk>),
    /// A rate-limit probe (`probe`).
    Probe(Probe),
    /// The call released several times at once, over connections opened beforehand, for
    /// several rounds, with the results of a round held to `at_most` (`call` with `race`).
    Race {
        /// The method.
        method: String,
        /// How the copies go.
        race: Box<Race>,
    },
}

impl Step {
    /// A step of `kind` with nothing else said: no params, no auth, a result expected.
    pub fn new(kind: StepKind) -> Step {
        Step {
            kind,
            params: Map::new(),
            auth: Auth::None,
            expect: ExpectedAnswer::default(),
            capture: BTreeMap::new(),
            clauses: None,
            always: false,
            connection: None,
            transport: None,
            wait: None,
            line: 0,
        }
    }

    /// A call of `method` with nothing else said.
    pub fn call(method: impl Into<String>) -> Step {
        Step::new(StepKind::Call(method.into()))
    }

    /// The transport the step goes over when its execution runs over `execution`.
    pub fn transport_in(&self, execution: TransportKind) -> TransportKind {
        self.transport.unwrap_or(execution)
    }

    /// The method a call, in-flight or race step calls, and the one whose URL a raw step
    /// names (`call` in the case file): not a walk's or a probe's.
    pub fn call_method(&self) -> Option<&str> {
        match &self.kind {
            StepKind::Call(method)
            | StepKind::InFlight { method, .. }
            | StepKind::Race { method, .. } => Some(method),
            StepKind::Raw { url_of, .. } => url_of.as_deref(),
            StepKind::Walk(_) | StepKind::Probe(_) => None,
        }
    }

    /// The method the step sends to: its call's, its walk's or its probe's; a raw step's
    /// is the one whose URL it names, else the `method` its text names.
    pub fn method(&self) -> Option<String> {
        match &self.kind {
            StepKind::Walk(walk) => Some(walk.call.clone()),
            StepKind::Probe(probe) => Some(probe.call.clone()),
            StepKind::Raw { text, url_of } => url_of.clone().or_else(|| raw_method(text)),
            _ => self.call_method().map(str::to_owned),
        }
    }

    /// The raw text of a raw step.
    pub fn raw(&self) -> Option<&str> {
        match &self.kind {
            StepKind::Raw { text, .. } => Some(text),
            _ => None,
        }
    }

    /// The race of a race step.
    pub fn race(&self) -> Option<&Race> {
        match &self.kind {
            StepKind::Race { race, .. } => Some(race),
            _ => None,
        }
    }
}

/// The `method` a raw message names, when it is a JSON object naming one.
pub fn raw_method(text: &str) -> Option<String> {
    let raw: Value = serde_json::from_str(text).ok()?;
    raw.get("method").and_then(Value::as_str).map(str::to_owned)
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

impl Case {
    /// Whether a step leaves its account to the run ([`Auth::ANY_ACCOUNT`]).
    pub fn spreads(&self) -> bool {
        self.steps
            .iter()
            .any(|step| step.auth.account() == Some(Auth::ANY_ACCOUNT))
    }

    /// The roles an `any` account of this case may be put on: every spread role when none
    /// of its steps reads what an account's history holds (each expects a refusal, or
    /// judges only that the call is answered: no matcher, no capture), else the reading
    /// roles, whose histories the target file's fixtures describe.
    pub fn spread_roles(&self) -> &'static [&'static str] {
        let reads_no_history = self.steps.iter().all(|step| {
            step.expect.outcome == crate::check::Outcome::Error
                || (step.expect.matchers.is_empty() && step.capture.is_empty())
        });
        if reads_no_history {
            &Auth::SPREAD_ROLES
        } else {
            &Auth::READING_ROLES
        }
    }

    /// The case with every `any` account put on `role`.
    pub fn on_account(&self, role: &str) -> Case {
        let mut case = self.clone();
        for step in &mut case.steps {
            if let Some(account) = step.auth.account_slot_mut()
                && account.as_deref() == Some(Auth::ANY_ACCOUNT)
            {
                *account = Some(role.to_owned());
            }
        }
        case
    }
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
    /// passing, and the later steps (which check what a result granted) do not run. A
    /// result is held to the method's schema, as with `outcome = "result"`.
    #[serde(default, skip_serializing_if = "crate::case::write::is_false")]
    pub refusal_ends_case: bool,
    /// Notifications the step's WebSocket connection must be pushed after the answer
    /// (SPEC.md 6), for a step that subscribes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub notifications: Option<ExpectedNotifications>,
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
    /// It is a plain call step ([`StepKind::Call`]): the loader refuses another kind.
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
            methods.extend(step.call_method().map(str::to_owned));
            match &step.kind {
                StepKind::Walk(walk) => methods.push(walk.call.clone()),
                StepKind::Probe(probe) => methods.push(probe.call.clone()),
                StepKind::Raw { text, .. } => methods.extend(raw_method(text)),
                _ => {}
            }
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
