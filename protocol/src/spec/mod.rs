//! SPEC.md (interface 2.1.1) as one typed table: every fact of the spec that code acts on is
//! stated here and nowhere else.
//!
//! - [`METHODS`]: each method of section 4 with its interface, parameters (kind, listed
//!   values or bounds, default, whether the spec marks it required or leaves that "not
//!   shown"), the scope it states, whether it is paged, paced or state-changing, and its
//!   result schema. The reference server attaches its handlers to it; the fuzzer's generator
//!   and oracle, the judge, the runner's pacer and the case-safety check read it.
//! - the enumerations of sections 2, 4 and 9 ([`INDEX_NAMES`], the currency lists, ...);
//! - [`OPEN_POINTS`]: what SPEC.md leaves open, each with the passage that leaves it open and
//!   the alternatives a conforming server may choose; the reference server's spec-open
//!   variants draw from them.
//! - [`SECTIONS`]: every section with its title, the rows of the report's coverage table.
//! - [`UNNAMED_FIELDS`]: the fields it describes without showing their names, which a
//!   target file names in `[field_names]`.
//!
//! The rules themselves (clause id, level and the SPEC.md words each `must` clause quotes)
//! live in `cases/clauses.toml`; the table names clause ids, and a test checks every id it
//! names exists there. A second test reads SPEC.md's section 4 and compares it with the
//! table.

mod enums;
mod methods;
mod open;
mod sections;
mod unnamed;

pub use enums::{
    GRANT_TYPES, HISTORY_CURRENCIES, INDEX_NAMES, LISTED_LOG_TYPES, LOG_FILTER_KEYWORDS,
    RESPONSE_INDEX_NAMES, TRANSACTION_LOG_CURRENCIES,
};
pub use methods::{AUTH_METHOD, LOGOUT_METHOD, METHODS, TYPED_LOG_METHOD};
pub use open::{OPEN_POINTS, OpenPoint, REFERENCE};
pub use sections::{SECTIONS, Section};
pub use unnamed::{UNNAMED_FIELDS, UnnamedField, unnamed_field};

/// The interface version SPEC.md describes ("The interface version is 2.1.1").
pub const INTERFACE_VERSION: &str = "2.1.1";

/// The HTTP path prefix of every method ("the HTTP path prefix is `/api/v2`";
/// "`{base_url}` ends in `/api/v2`"), under `{direct_access_url}` too.
pub const API_PREFIX: &str = "/api/v2";

/// Where the reference server and the proxy take WebSocket connections: the prefix under
/// `/ws`. SPEC.md gives `{ws_url}` whole, so this path is the harness's own choice.
pub const WS_PATH: &str = "/ws/api/v2";

/// The JSON type a parameter is declared with.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// A string.
    Str,
    /// An integer.
    Int,
    /// Any number.
    Num,
    /// `true` or `false`.
    Bool,
}

impl Kind {
    /// The JSON type's name, as error messages and reports print it.
    pub fn name(self) -> &'static str {
        match self {
            Kind::Str => "string",
            Kind::Int => "integer",
            Kind::Num => "number",
            Kind::Bool => "boolean",
        }
    }

    /// The value a text stands for as this type, as an HTTP query string carries every
    /// value: the text itself for a string, a whole `i64`, a finite number, `true` or
    /// `false`; `None` when the text is no such value.
    pub fn from_text(self, text: &str) -> Option<serde_json::Value> {
        use serde_json::Value;
        match self {
            Kind::Str => Some(Value::String(text.to_owned())),
            Kind::Int => text.parse::<i64>().ok().map(Value::from),
            Kind::Num => text
                .parse::<f64>()
                .ok()
                .filter(|number| number.is_finite())
                .map(Value::from),
            Kind::Bool => match text {
                "true" => Some(Value::Bool(true)),
                "false" => Some(Value::Bool(false)),
                _ => None,
            },
        }
    }
}

/// Which values a parameter takes, as far as SPEC.md states them.
#[derive(Clone, Copy, Debug)]
pub enum Values {
    /// One of these strings (a listed enumeration).
    OneOf(&'static [&'static str]),
    /// An integer in this inclusive range.
    Range(i64, i64),
    /// Something of the target account (an instrument, a subaccount, a member): the value the
    /// target file names is valid; another may or may not exist.
    Fixture(Fixture),
    /// A token from a previous response: one the server handed out is valid, any other value
    /// may or may not be refused.
    Token,
    /// Any value of the declared kind.
    Free,
}

/// What a [`Values::Fixture`] parameter names.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Fixture {
    /// `fixtures.instrument_name`.
    Instrument,
    /// `fixtures.subaccount_id`, a subaccount of the main account.
    Subaccount,
    /// `fixtures.member_id`, a Direct Access member of the main account.
    Member,
}

/// Whether a request must carry a parameter.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Required {
    /// SPEC.md says it is required (or lists the others as optional beside it).
    Yes,
    /// SPEC.md says it is optional, or gives a default.
    No,
    /// SPEC.md gives the condition under which it is required (e.g. per grant type).
    When(&'static str),
    /// SPEC.md does not say: a server may require it or not.
    NotShown,
}

/// One parameter of a method.
#[derive(Clone, Copy, Debug)]
pub struct Param {
    /// Its name.
    pub name: &'static str,
    /// Its JSON type.
    pub kind: Kind,
    /// The values it takes.
    pub values: Values,
    /// Whether a request must carry it.
    pub required: Required,
    /// The default SPEC.md states, if any.
    pub default: Option<i64>,
    /// The clause a bad value of this parameter breaks.
    pub clause: &'static str,
    /// Whether SPEC.md states the type (4.2 names `subject_id` with none: "`subject_id`
    /// (target subaccount id)"); where it does not, the harness sends the type of its kin
    /// and holds no client to any.
    pub kind_shown: bool,
}

impl Param {
    /// The listed values, for an enumeration.
    pub fn listed(&self) -> Option<&'static [&'static str]> {
        match self.values {
            Values::OneOf(values) => Some(values),
            _ => None,
        }
    }

    /// The inclusive bounds, for a range.
    pub fn range(&self) -> Option<(i64, i64)> {
        match self.values {
            Values::Range(min, max) => Some((min, max)),
            _ => None,
        }
    }
}

/// Where a method is served.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Interface {
    /// JSON-RPC over HTTP GET (query or body) and WebSocket.
    JsonRpc,
    /// JSON-RPC over WebSocket only.
    WsOnly,
    /// The Direct Access REST interface (`{direct_access_url}/api/v2/private/<name>`).
    DirectAccess,
}

/// How a paged method pages.
#[derive(Clone, Copy, Debug)]
pub struct Paging {
    /// The result member holding the entries.
    pub items: &'static str,
    /// The JSON type of `continuation`.
    pub cursor: Kind,
    /// Whether the spec says the last page's continuation is `null` (4.8), rather than not
    /// saying how the end is marked (4.7).
    pub null_at_end: bool,
    /// The clause of following continuations.
    pub clause: &'static str,
    /// The clause of a page asked for without `count` (no more entries than the default).
    pub default_clause: &'static str,
}

/// One method of SPEC.md section 4.
#[derive(Clone, Copy, Debug)]
pub struct Method {
    /// `public/<name>` or `private/<name>`.
    pub name: &'static str,
    /// The SPEC.md section.
    pub section: &'static str,
    /// Needs credentials (a `private/` method).
    pub private: bool,
    /// Where it is served.
    pub interface: Interface,
    /// The scope requirements it states (section 5.4); all must be granted.
    pub scope: &'static [&'static str],
    /// The clause a token lacking that scope breaks when it is not refused.
    pub scope_clause: &'static str,
    /// Its parameters, as far as SPEC.md names them.
    pub params: &'static [Param],
    /// Whether SPEC.md names the parameters at all (4.3 does not).
    pub params_shown: bool,
    /// Parameters SPEC.md describes without naming, by the harness's name for each (4.8's
    /// filter keywords, "Parameter name: not shown"): the target file names them in
    /// `[param_names."<method>"]`.
    pub unnamed_params: &'static [&'static str],
    /// How it pages, for a paged method.
    pub paging: Option<Paging>,
    /// Rate-limited by section 8: calls are paced by the target file's `[limits]`.
    pub paced: bool,
    /// The clause a throttling answer to a call within the declared budget breaks (section
    /// 8's rate as a floor), for a paced method.
    pub rate_clause: Option<&'static str>,
    /// Its effect outlives the call and reaches beyond the request's own token (logout,
    /// disabling a login, deleting a member, closing a position, locking a portfolio):
    /// a run calls it only when the target file allows destructive calls.
    pub state_changing: bool,
    /// The clause a valid request's result (or a refusal of it) concerns.
    pub clause: &'static str,
    /// The clause of the result's shape (its JSON Schema), for a method whose result
    /// SPEC.md shows; `None` where the response shape is "not shown".
    pub result_clause: Option<&'static str>,
    /// Hands out an access token (4.1 "Issues a token set", 4.2 "Turns a refresh token into
    /// an access token", 4.3 "returns a new access token").
    pub issues_tokens: bool,
}

impl Method {
    /// The declared parameter of this name.
    pub fn param(&self, name: &str) -> Option<&'static Param> {
        self.params.iter().find(|param| param.name == name)
    }

    /// The name of the result's JSON Schema under `cases/schemas/`.
    pub fn schema(&self) -> String {
        format!("method.{}", self.name.replace('/', "."))
    }

    /// Served over WebSocket only (section 4 says so of `private/logout`): an HTTP call of it
    /// must be refused.
    pub fn ws_only(&self) -> bool {
        self.interface == Interface::WsOnly
    }

    /// The default of `count` SPEC.md states, for a method with one (a page's size when the
    /// request does not give `count`).
    pub fn default_count(&self) -> Option<i64> {
        self.param("count")?.default
    }

    /// The `count` parameter's bounds and default, for a paged method.
    pub fn count_bounds(&self) -> Option<(i64, i64, i64)> {
        let count = self.param("count")?;
        let (min, max) = count.range()?;
        Some((min, max, count.default?))
    }
}

/// The method of this name.
pub fn method(name: &str) -> Option<&'static Method> {
    METHODS.iter().find(|method| method.name == name)
}

/// The paged methods.
pub fn paged_methods() -> impl Iterator<Item = &'static Method> {
    METHODS.iter().filter(|method| method.paging.is_some())
}

/// The methods section 8 paces (`private/get_transaction_log`): every caller of one of them
/// takes its account's budget first.
pub fn paced_methods() -> impl Iterator<Item = &'static Method> {
    METHODS.iter().filter(|method| method.paced)
}

/// Whether calls to `name` are paced (section 8).
pub fn is_paced(name: &str) -> bool {
    method(name).is_some_and(|method| method.paced)
}

/// The methods that hand out access tokens (see [`Method::issues_tokens`]).
pub fn token_issuing_methods() -> impl Iterator<Item = &'static Method> {
    METHODS.iter().filter(|method| method.issues_tokens)
}

/// The methods whose effect outlives the call (see [`Method::state_changing`]).
pub fn state_changing_methods() -> impl Iterator<Item = &'static str> {
    METHODS
        .iter()
        .filter(|method| method.state_changing)
        .map(|method| method.name)
}

/// Whether `name` changes state beyond the call (see [`Method::state_changing`]).
pub fn is_state_changing(name: &str) -> bool {
    method(name).is_some_and(|method| method.state_changing)
}

/// Section 8's sustained rate of the paced methods, in requests per second.
pub const PACED_PER_SECOND: f64 = 1.0;

/// How long a signature timestamp stays valid, in milliseconds (SPEC.md 5.5, 5.6 and 8).
pub const SIGNATURE_WINDOW_MS: u64 = 60_000;

/// Section 2.6 and 8: a member name has at most this many characters.
pub const MEMBER_NAME_MAX: usize = 64;

/// Section 5.4: the scope word that grants what "`mainaccount`" requires (a method may
/// state it beside another requirement, as 4.11 does).
pub const MAINACCOUNT: &str = "mainaccount";

/// Section 4.6: the scope `private/get_mmp_status` needs instead of its stated one when
/// `block_rfq` is true ("Scope `trade:read`, or `block_rfq:read` when `block_rfq` is true").
pub const MMP_BLOCK_RFQ_SCOPE: &str = "block_rfq:read";

/// Section 7: the error code of a call that needs the second factor and lacks it.
pub const SECOND_FACTOR_ERROR_CODE: i64 = 13668;

/// Section 7: the error name SPEC.md gives to [`SECOND_FACTOR_ERROR_CODE`].
pub const SECOND_FACTOR_ERROR_NAME: &str = "security_key_authorization_error";

/// Section 5.7: the methods SPEC.md says need the second factor when the account has 2FA
/// enabled (withdrawals and the security actions it also names are not described).
pub const NEEDS_SECOND_FACTOR: &[&str] = &["private/toggle_subaccount_login"];

/// Section 4.1 and 5.4: the widest grant of each area 5.4 lists (`trade`, `wallet`,
/// `account` at `read_write`) and `mainaccount`; a token lacking one of them is narrower
/// than an unrestricted login.
pub const WIDEST_GRANTS: &[&str] = &[
    "account:read_write",
    "trade:read_write",
    "wallet:read_write",
    MAINACCOUNT,
];

/// Section 4.2's method, which turns a refresh token into an access token (optionally for
/// a subaccount and a narrower scope).
pub const EXCHANGE_TOKEN_METHOD: &str = "public/exchange_token";

/// Section 4.3's method, which returns a new access token for a named session.
pub const FORK_TOKEN_METHOD: &str = "public/fork_token";

/// Section 4.5's method, which enables or disables a subaccount's login (it needs the
/// second factor, [`NEEDS_SECOND_FACTOR`]).
pub const TOGGLE_LOGIN_METHOD: &str = "private/toggle_subaccount_login";

/// Section 4.6's method, the MMP status (scope `trade:read`, or [`MMP_BLOCK_RFQ_SCOPE`]).
pub const MMP_STATUS_METHOD: &str = "private/get_mmp_status";

/// Section 4.7's paged method, the trigger-order history.
pub const TRIGGER_HISTORY_METHOD: &str = "private/get_trigger_order_history";

/// Section 4.11's method, which deletes a Direct Access member.
pub const DELETE_MEMBER_METHOD: &str = "private/delete_member";

/// Section 4.13's Direct Access method, which locks the portfolio.
pub const LOCK_PORTFOLIO_METHOD: &str = "private/lock_portfolio";

/// Section 4.14's method, which summarises one instrument's book.
pub const BOOK_SUMMARY_METHOD: &str = "public/get_book_summary_by_instrument";

/// Section 4.9's method, which lists the currencies.
pub const CURRENCIES_METHOD: &str = "public/get_currencies";

/// The methods named by a constant above, each of which must be a method of [`METHODS`].
#[cfg(test)]
const NAMED_METHODS: &[&str] = &[
    EXCHANGE_TOKEN_METHOD,
    FORK_TOKEN_METHOD,
    TOGGLE_LOGIN_METHOD,
    MMP_STATUS_METHOD,
    TRIGGER_HISTORY_METHOD,
    DELETE_MEMBER_METHOD,
    LOCK_PORTFOLIO_METHOD,
    BOOK_SUMMARY_METHOD,
    CURRENCIES_METHOD,
];

#[cfg(test)]
mod named_methods {
    use super::*;

    /// Each method named by a constant is in the table, and the constants that say what
    /// a method is (second factor, scope, paging) agree with its entry.
    #[test]
    fn every_named_method_is_a_method_of_the_table() {
        for name in NAMED_METHODS {
            assert!(method(name).is_some(), "{name} is not in METHODS");
        }
        assert!(NEEDS_SECOND_FACTOR.contains(&TOGGLE_LOGIN_METHOD));
        assert!(method(TRIGGER_HISTORY_METHOD).is_some_and(|m| m.paging.is_some()));
        assert!(method(DELETE_MEMBER_METHOD).is_some_and(|m| m.scope.contains(&MAINACCOUNT)));
        assert!(
            method(LOCK_PORTFOLIO_METHOD).is_some_and(|m| m.interface == Interface::DirectAccess)
        );
        assert!(method(MMP_STATUS_METHOD).is_some_and(|m| m.param("block_rfq").is_some()));
    }

    /// The widest grants are words 5.4 lists, and cover the area of every scope a method
    /// states.
    #[test]
    fn the_widest_grants_are_listed_and_cover_every_stated_scope() {
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../cases/SPEC.md");
        let text = std::fs::read_to_string(path).expect("cases/SPEC.md is in the repository");
        let listed = text
            .lines()
            .find(|line| line.starts_with("5.4 Scope values"))
            .expect("5.4 lists the scope values");
        for grant in WIDEST_GRANTS {
            assert!(
                listed.contains(&format!("`{grant}`")),
                "5.4 does not list {grant}"
            );
        }
        for method in METHODS {
            for needed in method.scope {
                let area = needed.split(':').next().unwrap_or(needed);
                assert!(
                    WIDEST_GRANTS.iter().any(|grant| grant.starts_with(area)),
                    "{needed} of {} is not covered",
                    method.name
                );
            }
        }
    }
}

#[cfg(test)]
mod tests;
