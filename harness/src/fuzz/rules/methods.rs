//! The table of SPEC.md section 4: each method the fuzzer calls, its parameters with their
//! types, lists and ranges, the parameters the spec marks required, the scope it states,
//! and the clause each rule belongs to.

use super::{Check, Fixture, Kind, MethodRule, ParamRule};
use crate::spec::{
    GRANT_TYPES, HISTORY_CURRENCIES as CURRENCIES, INDEX_NAMES, TRANSACTION_LOG_CURRENCIES,
};

const fn param(name: &'static str, kind: Kind, check: Check, clause: &'static str) -> ParamRule {
    ParamRule {
        name,
        kind,
        check,
        clause,
    }
}

use Check::{Fixture as Fix, Free, OneOf, Range};
use Kind::{Bool, Int, Num, Str};

/// The methods of SPEC.md section 4 the fuzzer calls over JSON-RPC. `public/fork_token` is
/// absent: the spec shows none of its parameter names.
pub(crate) const METHODS: &[MethodRule] = &[
    MethodRule {
        name: "public/auth",
        private: false,
        scope: &[],
        params: &[
            param(
                "grant_type",
                Str,
                OneOf(GRANT_TYPES),
                "auth.grant_type.enum",
            ),
            param("client_id", Str, Free, "auth.grant_type.required_params"),
            param(
                "client_secret",
                Str,
                Free,
                "auth.client_credentials.wrong_secret",
            ),
            param(
                "refresh_token",
                Str,
                Free,
                "auth.grant_type.required_params",
            ),
            param("timestamp", Int, Free, "auth.client_signature.window"),
            param("signature", Str, Free, "auth.client_signature.wrong_key"),
            param("nonce", Str, Free, "auth.client_signature.nonce_single_use"),
            param("data", Str, Free, "auth.client_signature.framing"),
            param("scope", Str, Free, "auth.token_set.shape"),
        ],
        required: &["grant_type"],
        clause: "auth.client_credentials.accepted",
        destructive: false,
    },
    MethodRule {
        name: "public/exchange_token",
        private: false,
        scope: &[],
        params: &[
            param("refresh_token", Str, Free, "auth.exchange_token.accepted"),
            param(
                "subject_id",
                Int,
                Fix(Fixture::Subaccount),
                "auth.exchange_token.accepted",
            ),
            param("scope", Str, Free, "auth.exchange_token.scope_bound"),
        ],
        required: &["refresh_token", "subject_id"],
        clause: "auth.exchange_token.accepted",
        destructive: false,
    },
    MethodRule {
        name: "private/logout",
        private: true,
        scope: &[],
        params: &[],
        required: &[],
        clause: "auth.logout.ws_only",
        destructive: true,
    },
    MethodRule {
        name: "private/toggle_subaccount_login",
        private: true,
        scope: &["account:read_write"],
        params: &[
            param(
                "sid",
                Int,
                Fix(Fixture::Subaccount),
                "m.toggle_subaccount_login.params",
            ),
            param(
                "state",
                Str,
                OneOf(&["enable", "disable"]),
                "m.toggle_subaccount_login.params",
            ),
        ],
        required: &["sid", "state"],
        clause: "m.toggle_subaccount_login.result",
        destructive: false,
    },
    MethodRule {
        name: "private/get_mmp_status",
        private: true,
        scope: &["trade:read"],
        params: &[
            param(
                "index_name",
                Str,
                OneOf(INDEX_NAMES),
                "m.get_mmp_status.index_name",
            ),
            param(
                "mmp_group",
                Str,
                Free,
                "m.get_mmp_status.mmp_group_requires_index",
            ),
            param("block_rfq", Bool, Free, "m.get_mmp_status.block_rfq"),
        ],
        required: &[],
        clause: "m.get_mmp_status.result",
        destructive: false,
    },
    MethodRule {
        name: "private/get_trigger_order_history",
        private: true,
        scope: &["trade:read"],
        params: &[
            param(
                "currency",
                Str,
                OneOf(CURRENCIES),
                "m.get_trigger_order_history.currency",
            ),
            param(
                "instrument_name",
                Str,
                Free,
                "m.get_trigger_order_history.instrument_filter",
            ),
            param(
                "count",
                Int,
                Range(1, 1000),
                "m.get_trigger_order_history.count",
            ),
        ],
        required: &[],
        clause: "m.get_trigger_order_history.result",
        destructive: false,
    },
    MethodRule {
        name: "private/get_transaction_log",
        private: true,
        scope: &["account:read"],
        params: &[
            param(
                "currency",
                Str,
                OneOf(TRANSACTION_LOG_CURRENCIES),
                "m.get_transaction_log.currency",
            ),
            param(
                "start_timestamp",
                Int,
                Range(0, i64::MAX),
                "m.get_transaction_log.window",
            ),
            param(
                "end_timestamp",
                Int,
                Range(0, i64::MAX),
                "m.get_transaction_log.window",
            ),
            param("count", Int, Range(1, 250), "m.get_transaction_log.count"),
            param(
                "subaccount_id",
                Int,
                Fix(Fixture::Subaccount),
                "m.get_transaction_log.subaccount",
            ),
        ],
        required: &[],
        clause: "m.get_transaction_log.result",
        destructive: false,
    },
    MethodRule {
        name: "public/get_currencies",
        private: false,
        scope: &[],
        params: &[],
        required: &[],
        clause: "m.get_currencies.result",
        destructive: false,
    },
    MethodRule {
        name: "public/get_historical_volatility",
        private: false,
        scope: &[],
        params: &[param(
            "currency",
            Str,
            OneOf(CURRENCIES),
            "m.get_historical_volatility.currency",
        )],
        required: &[],
        clause: "m.get_historical_volatility.result",
        destructive: false,
    },
    MethodRule {
        name: "private/delete_member",
        private: true,
        scope: &["account:read_write", "mainaccount"],
        params: &[param(
            "member_id",
            Int,
            Range(1, i64::MAX),
            "m.delete_member.member_id",
        )],
        required: &["member_id"],
        clause: "m.delete_member.result",
        destructive: true,
    },
    MethodRule {
        name: "private/close_position",
        private: true,
        scope: &[],
        params: &[
            param(
                "instrument_name",
                Str,
                Fix(Fixture::Instrument),
                "m.close_position.result",
            ),
            param(
                "type",
                Str,
                OneOf(&["limit", "market"]),
                "m.close_position.type",
            ),
            param("price", Num, Free, "m.close_position.result"),
        ],
        required: &[],
        clause: "m.close_position.result",
        destructive: false,
    },
    MethodRule {
        name: "public/get_book_summary_by_instrument",
        private: false,
        scope: &[],
        params: &[param(
            "instrument_name",
            Str,
            Fix(Fixture::Instrument),
            "m.get_book_summary_by_instrument.instrument",
        )],
        required: &["instrument_name"],
        clause: "m.get_book_summary_by_instrument.result",
        destructive: false,
    },
];
