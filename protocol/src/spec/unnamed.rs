//! The fields SPEC.md describes without showing their names. A check on one of them reads
//! the name from the target file's `[field_names.<record>]` table, and is skipped with the
//! reason where the target file does not give it.

/// One field SPEC.md describes but does not name.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct UnnamedField {
    /// The record, as the target file's table names it (`[field_names.member]`).
    pub record: &'static str,
    /// The field, as the target file's key names it.
    pub field: &'static str,
    /// The section that describes it.
    pub section: &'static str,
    /// SPEC.md's description of the field.
    pub described: &'static str,
}

/// Every field a check reads whose name SPEC.md does not show.
pub const UNNAMED_FIELDS: &[UnnamedField] = &[
    UnnamedField {
        record: "member",
        field: "identifier",
        section: "2.6",
        described: "member identifier (integer >= 1)",
    },
    UnnamedField {
        record: "member",
        field: "name",
        section: "2.6",
        described: "name (string, maximum 64 characters)",
    },
    UnnamedField {
        record: "trigger_history",
        field: "order_type",
        section: "2.2",
        described: "the requested order type (`limit` or `market`)",
    },
    UnnamedField {
        record: "trigger_history",
        field: "label",
        section: "2.2",
        described: "a user label (only when set)",
    },
    UnnamedField {
        record: "trigger_history",
        field: "post_only",
        section: "2.2",
        described: "a post-only flag",
    },
    UnnamedField {
        record: "trigger_history",
        field: "reduce_only",
        section: "2.2",
        described: "a reduce-only flag (optional, absent for spot)",
    },
    UnnamedField {
        record: "currency",
        field: "cross_collateral",
        section: "2.5",
        described: "a cross-collateral-pool flag",
    },
    UnnamedField {
        record: "currency",
        field: "networks",
        section: "2.5",
        described: "for external-custody wallet accounts, a list of networks with at least one entry whose `resource_name` values are used as the `network` parameter of wallet methods",
    },
    UnnamedField {
        record: "exchange_token",
        field: "access_token",
        section: "4.2",
        described: "an access token for another subaccount (\"Response shape: not shown.\")",
    },
    UnnamedField {
        record: "fork_token",
        field: "access_token",
        section: "4.3",
        described: "a new access token for a new, named session (\"Parameter names and response shape: not shown.\")",
    },
    UnnamedField {
        record: "transaction_log",
        field: "delivery_settlement_price",
        section: "2.3",
        described: "settlement and index price during delivery",
    },
    UnnamedField {
        record: "transaction_log",
        field: "delivery_index_price",
        section: "2.3",
        described: "settlement and index price during delivery",
    },
    UnnamedField {
        record: "token_set",
        field: "state_copy",
        section: "4.1",
        described: "a copy of the input `state`",
    },
    UnnamedField {
        record: "token_set",
        field: "idp_login",
        section: "4.1",
        described: "a flag that the token came from an external identity-provider login",
    },
];

/// The unnamed field `field` of `record`, if SPEC.md describes one.
pub fn unnamed_field(record: &str, field: &str) -> Option<&'static UnnamedField> {
    UNNAMED_FIELDS
        .iter()
        .find(|unnamed| unnamed.record == record && unnamed.field == field)
}
