//! The method table of SPEC.md section 4, one entry per method, in the spec's order.
//!
//! Where SPEC.md states a parameter's requirement it is `Yes`/`No`/`When`; where it says
//! "Which parameters are required: not shown" or states none, it is `NotShown`, and the
//! oracle accepts either answer to a request that omits it. Scopes are those a method's
//! section states; `close_position`'s is "not shown".

use super::enums::{GRANT_TYPES, HISTORY_CURRENCIES, INDEX_NAMES, TRANSACTION_LOG_CURRENCIES};
use super::{Fixture, Interface, Kind, Method, Paging, Param, Required, Values};

use Kind::{Bool, Int, Num, Str};
use Required::{NotShown, When};
use Values::{Free, OneOf, Range, Token};

const fn param(
    name: &'static str,
    kind: Kind,
    values: Values,
    required: Required,
    clause: &'static str,
) -> Param {
    Param {
        name,
        kind,
        values,
        required,
        default: None,
        clause,
        kind_shown: true,
    }
}

const fn count(max: i64, default: i64, clause: &'static str) -> Param {
    Param {
        name: "count",
        kind: Int,
        values: Range(1, max),
        required: Required::No,
        default: Some(default),
        clause,
        kind_shown: true,
    }
}

/// A method with the defaults most entries share: JSON-RPC, no scope, no paging, no pacing.
const fn method(
    name: &'static str,
    section: &'static str,
    params: &'static [Param],
    clause: &'static str,
) -> Method {
    Method {
        name,
        section,
        private: is_private(name),
        interface: Interface::JsonRpc,
        scope: &[],
        scope_clause: "auth.scope.enforced",
        params,
        params_shown: true,
        unnamed_params: &[],
        paging: None,
        paced: false,
        rate_clause: None,
        state_changing: false,
        clause,
        result_clause: Some(clause),
        issues_tokens: false,
    }
}

/// Whether a method name starts with `private/`.
const fn is_private(name: &str) -> bool {
    let (name, prefix) = (name.as_bytes(), b"private/");
    if name.len() < prefix.len() {
        return false;
    }
    let mut index = 0;
    while index < prefix.len() {
        if name[index] != prefix[index] {
            return false;
        }
        index += 1;
    }
    true
}

/// Section 4.1's method, where tokens come from by grant type (the one with `grant_type`).
pub const AUTH_METHOD: &str = "public/auth";

/// Section 4.4's method, which invalidates the tokens (WebSocket only).
pub const LOGOUT_METHOD: &str = "private/logout";

/// Sections 2.3, 4.8 and 9: the method whose entries carry a transaction-log `type`
/// ([`super::LISTED_LOG_TYPES`] and any value added later, which clients must tolerate).
pub const TYPED_LOG_METHOD: &str = "private/get_transaction_log";

const CLIENT_SIGNATURE: Required = When("client_signature");

/// The methods of SPEC.md section 4.
pub const METHODS: &[Method] = &[
    Method {
        result_clause: Some("auth.token_set.shape"),
        issues_tokens: true,
        ..method(
            AUTH_METHOD,
            "4.1",
            &[
                param(
                    "grant_type",
                    Str,
                    OneOf(GRANT_TYPES),
                    NotShown,
                    "auth.grant_type.enum",
                ),
                param(
                    "client_id",
                    Str,
                    Free,
                    When("client_credentials client_signature"),
                    "auth.grant_type.required_params",
                ),
                param(
                    "client_secret",
                    Str,
                    Free,
                    When("client_credentials"),
                    "auth.client_credentials.wrong_secret",
                ),
                param(
                    "refresh_token",
                    Str,
                    Token,
                    When("refresh_token"),
                    "auth.grant_type.required_params",
                ),
                param(
                    "timestamp",
                    Int,
                    Free,
                    CLIENT_SIGNATURE,
                    "auth.client_signature.window",
                ),
                param(
                    "signature",
                    Str,
                    Free,
                    CLIENT_SIGNATURE,
                    "auth.client_signature.wrong_key",
                ),
                param(
                    "nonce",
                    Str,
                    Free,
                    Required::No,
                    "auth.client_signature.nonce_single_use",
                ),
                param(
                    "data",
                    Str,
                    Free,
                    Required::No,
                    "auth.client_signature.framing",
                ),
                param("scope", Str, Free, NotShown, "auth.token_set.shape"),
                // Not in the table: 4.1's result is described with "a copy of the input
                // `state`", an input of no stated type.
                Param {
                    kind_shown: false,
                    ..param(
                        "state",
                        Str,
                        Free,
                        Required::No,
                        "auth.token_set.state_copy",
                    )
                },
            ],
            "auth.client_credentials.accepted",
        )
    },
    Method {
        result_clause: None,
        issues_tokens: true,
        ..method(
            "public/exchange_token",
            "4.2",
            &[
                param(
                    "refresh_token",
                    Str,
                    Token,
                    Required::Yes,
                    "auth.exchange_token.accepted",
                ),
                // "`subject_id` (target subaccount id)": no type shown; an integer like
                // every user id when the harness sends it.
                Param {
                    kind_shown: false,
                    ..param(
                        "subject_id",
                        Int,
                        Values::Fixture(Fixture::Subaccount),
                        Required::Yes,
                        "auth.exchange_token.accepted",
                    )
                },
                param(
                    "scope",
                    Str,
                    Free,
                    Required::No,
                    "auth.exchange_token.scope_bound",
                ),
            ],
            "auth.exchange_token.accepted",
        )
    },
    Method {
        params_shown: false,
        result_clause: None,
        issues_tokens: true,
        ..method("public/fork_token", "4.3", &[], "auth.fork_token.accepted")
    },
    Method {
        interface: Interface::WsOnly,
        params_shown: false,
        state_changing: true,
        result_clause: None,
        ..method(LOGOUT_METHOD, "4.4", &[], "auth.logout.ws_only")
    },
    Method {
        scope: &["account:read_write"],
        scope_clause: "m.toggle_subaccount_login.scope",
        state_changing: true,
        ..method(
            "private/toggle_subaccount_login",
            "4.5",
            &[
                param(
                    "sid",
                    Int,
                    Values::Fixture(Fixture::Subaccount),
                    Required::Yes,
                    "m.toggle_subaccount_login.params",
                ),
                param(
                    "state",
                    Str,
                    OneOf(&["enable", "disable"]),
                    Required::Yes,
                    "m.toggle_subaccount_login.params",
                ),
            ],
            "m.toggle_subaccount_login.result",
        )
    },
    Method {
        scope: &["trade:read"],
        scope_clause: "m.get_mmp_status.scope",
        ..method(
            "private/get_mmp_status",
            "4.6",
            &[
                param(
                    "index_name",
                    Str,
                    OneOf(INDEX_NAMES),
                    Required::No,
                    "m.get_mmp_status.index_name",
                ),
                param(
                    "mmp_group",
                    Str,
                    Free,
                    Required::No,
                    "m.get_mmp_status.mmp_group_requires_index",
                ),
                param(
                    "block_rfq",
                    Bool,
                    Free,
                    Required::No,
                    "m.get_mmp_status.block_rfq",
                ),
            ],
            "m.get_mmp_status.result",
        )
    },
    Method {
        scope: &["trade:read"],
        scope_clause: "m.get_trigger_order_history.scope",
        paging: Some(Paging {
            items: "entries",
            cursor: Str,
            null_at_end: false,
            clause: "m.get_trigger_order_history.continuation",
            default_clause: "m.get_trigger_order_history.count_default",
        }),
        ..method(
            "private/get_trigger_order_history",
            "4.7",
            &[
                param(
                    "currency",
                    Str,
                    OneOf(HISTORY_CURRENCIES),
                    NotShown,
                    "m.get_trigger_order_history.currency",
                ),
                param(
                    "instrument_name",
                    Str,
                    Free,
                    NotShown,
                    "m.get_trigger_order_history.instrument_filter",
                ),
                count(1000, 20, "m.get_trigger_order_history.count"),
                param(
                    "continuation",
                    Str,
                    Token,
                    NotShown,
                    "m.get_trigger_order_history.continuation",
                ),
            ],
            "m.get_trigger_order_history.result",
        )
    },
    Method {
        scope: &["account:read"],
        scope_clause: "m.get_transaction_log.scope",
        paging: Some(Paging {
            items: "logs",
            cursor: Int,
            null_at_end: true,
            clause: "m.get_transaction_log.continuation",
            default_clause: "m.get_transaction_log.count_default",
        }),
        paced: true,
        rate_clause: Some("limits.transaction_log_rate"),
        unnamed_params: &["keywords"],
        ..method(
            TYPED_LOG_METHOD,
            "4.8",
            &[
                param(
                    "currency",
                    Str,
                    OneOf(TRANSACTION_LOG_CURRENCIES),
                    NotShown,
                    "m.get_transaction_log.currency",
                ),
                param(
                    "start_timestamp",
                    Int,
                    Range(0, i64::MAX),
                    NotShown,
                    "m.get_transaction_log.window",
                ),
                param(
                    "end_timestamp",
                    Int,
                    Range(0, i64::MAX),
                    NotShown,
                    "m.get_transaction_log.window",
                ),
                count(250, 100, "m.get_transaction_log.count"),
                param(
                    "subaccount_id",
                    Int,
                    Values::Fixture(Fixture::Subaccount),
                    NotShown,
                    "m.get_transaction_log.subaccount",
                ),
                param(
                    "continuation",
                    Int,
                    Token,
                    NotShown,
                    "m.get_transaction_log.continuation",
                ),
            ],
            "m.get_transaction_log.result",
        )
    },
    method(
        "public/get_currencies",
        "4.9",
        &[],
        "m.get_currencies.result",
    ),
    method(
        "public/get_historical_volatility",
        "4.10",
        &[param(
            "currency",
            Str,
            OneOf(HISTORY_CURRENCIES),
            NotShown,
            "m.get_historical_volatility.currency",
        )],
        "m.get_historical_volatility.result",
    ),
    Method {
        scope: &["account:read_write", super::MAINACCOUNT],
        scope_clause: "m.delete_member.scope",
        state_changing: true,
        ..method(
            "private/delete_member",
            "4.11",
            &[param(
                "member_id",
                Int,
                Range(1, i64::MAX),
                NotShown,
                "m.delete_member.member_id",
            )],
            "m.delete_member.result",
        )
    },
    Method {
        state_changing: true,
        ..method(
            "private/close_position",
            "4.12",
            &[
                param(
                    "instrument_name",
                    Str,
                    Values::Fixture(Fixture::Instrument),
                    NotShown,
                    "m.close_position.result",
                ),
                param(
                    "type",
                    Str,
                    OneOf(&["limit", "market"]),
                    NotShown,
                    "m.close_position.type",
                ),
                param("price", Num, Free, Required::No, "m.close_position.result"),
            ],
            "m.close_position.result",
        )
    },
    Method {
        interface: Interface::DirectAccess,
        state_changing: true,
        ..method(
            "private/lock_portfolio",
            "4.13",
            &[],
            "m.lock_portfolio.result",
        )
    },
    method(
        "public/get_book_summary_by_instrument",
        "4.14",
        &[param(
            "instrument_name",
            Str,
            Values::Fixture(Fixture::Instrument),
            NotShown,
            "m.get_book_summary_by_instrument.instrument",
        )],
        "m.get_book_summary_by_instrument.result",
    ),
];
