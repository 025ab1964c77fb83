//! The points SPEC.md leaves open: for each, the passage that leaves it open (copied
//! exactly), the choice the reference server makes, and the other choices a conforming
//! server may make. Each alternative is one spec-open variant of the reference server
//! (`harness variants`), and every check must pass against every one of them.
//!
//! Each point also names its two edges: the choice of the narrowest server SPEC.md allows
//! (it refuses what it may refuse, remembers and sends no more than it must, takes the
//! first legal choice) and that of the widest (it accepts what it need not refuse, sends
//! every member it may, remembers what it may). `harness serve --variant narrowest` and
//! `--variant widest` are those two servers, so a new point brings its own edges.

/// One point SPEC.md leaves open.
#[derive(Clone, Copy, Debug)]
pub struct OpenPoint {
    /// Stable identifier, e.g. `trigger_history.end_marker`.
    pub id: &'static str,
    /// The SPEC.md section.
    pub section: &'static str,
    /// The SPEC.md words that leave the point open, copied exactly.
    pub passage: &'static str,
    /// What is left open, as a question.
    pub question: &'static str,
    /// What the reference server does.
    pub reference: &'static str,
    /// What else a conforming server may do, one variant each, by variant name.
    pub alternatives: &'static [(&'static str, &'static str)],
    /// The narrowest server's choice: [`REFERENCE`] or an alternative's name.
    pub narrowest: &'static str,
    /// The widest server's choice: [`REFERENCE`] or an alternative's name; never the
    /// narrowest's.
    pub widest: &'static str,
}

/// The name [`OpenPoint::narrowest`] and [`OpenPoint::widest`] give the reference's choice.
pub const REFERENCE: &str = "reference";

const fn point(
    id: &'static str,
    section: &'static str,
    passage: &'static str,
    question: &'static str,
    reference: &'static str,
    alternatives: &'static [(&'static str, &'static str)],
    (narrowest, widest): (&'static str, &'static str),
) -> OpenPoint {
    OpenPoint {
        id,
        section,
        passage,
        question,
        reference,
        alternatives,
        narrowest,
        widest,
    }
}

/// Every open point the harness knows, in section order.
pub const OPEN_POINTS: &[OpenPoint] = &[
    point(
        "envelope.lenient",
        "1",
        "Shape of the error object, all other error codes and the statuses for failures: not shown.",
        "is a request with jsonrpc other than \"2.0\", or params given as an array, refused?",
        "refused with an error",
        &[(
            "lenient-envelope",
            "answers jsonrpc \"1.0\" and array params like a valid request",
        )],
        (REFERENCE, "lenient-envelope"),
    ),
    point(
        "envelope.id_without_request_id",
        "1",
        "| Response | id | integer | echoes the request id |",
        "what id does the answer to a request that carried none (a query-string GET, unparsable bytes) carry?",
        "id: null",
        &[(
            "id-omitted",
            "answers a request that carried no id without an id member",
        )],
        ("id-omitted", REFERENCE),
    ),
    point(
        "transport.bare_url",
        "1",
        "HTTP GET: the method path is appended to `{base_url}`.",
        "what does {base_url}/ itself, which names no method, answer?",
        "an error envelope, HTTP 404",
        &[(
            "bare-url-plain",
            "answers {base_url}/ with HTTP 404 and a plain-text body",
        )],
        ("bare-url-plain", REFERENCE),
    ),
    point(
        "params.unknown",
        "4",
        "Required/optional flags are given where they are stated.",
        "is a parameter the method does not declare refused?",
        "refused with invalid_params",
        &[(
            "unknown-params-ignored",
            "ignores parameters it does not know",
        )],
        (REFERENCE, "unknown-params-ignored"),
    ),
    point(
        "params.coercion",
        "1",
        "Parameters are query parameters, or a JSON-RPC body is sent with the GET request.",
        "is a JSON value of the wrong type (\"5\" for an integer) refused or coerced?",
        "refused with invalid_params",
        &[(
            "coerce-types",
            "coerces numeric strings, numbers and \"true\"/\"false\" to the declared type",
        )],
        (REFERENCE, "coerce-types"),
    ),
    point(
        "params.required_not_shown",
        "4.7",
        "Which parameters are required: not shown.",
        "must a request carry the parameters whose required flag SPEC.md does not show?",
        "member_id and the book summary's instrument_name are required, the others optional",
        &[(
            "require-unflagged",
            "also requires currency on the history, volatility and transaction-log methods, the transaction log's time window, and close_position's instrument_name and type",
        )],
        ("require-unflagged", REFERENCE),
    ),
    point(
        "errors.codes",
        "7",
        "Shape of the error object, all other error codes and the statuses for failures: not shown.",
        "which codes and messages do refusals carry?",
        "JSON-RPC codes (-32600, -32601, -32602), 10028 for throttling and 13009/13004 for credentials",
        &[(
            "other-error-codes",
            "every refusal but 13668 carries another code and message (e.g. 11050 bad_request, 10429 throttled)",
        )],
        ("other-error-codes", REFERENCE),
    ),
    point(
        "errors.http_status",
        "7",
        "Shape of the error object, all other error codes and the statuses for failures: not shown.",
        "which HTTP status does a refusal carry?",
        "429 for throttling, 400 for every other refusal",
        &[(
            "errors-status-200",
            "every refusal is answered with HTTP 200",
        )],
        ("errors-status-200", REFERENCE),
    ),
    point(
        "results.unnamed_members",
        "4.1",
        "Three further fields are described without names",
        "do results carry the members SPEC.md describes without names (2.1, 2.2, 2.3, 2.5, 4.1), and members of their own?",
        "none of them",
        &[(
            "extra-members",
            "token sets, trigger and transaction-log entries, currencies and pages carry further members",
        )],
        (REFERENCE, "extra-members"),
    ),
    point(
        "results.optional_members",
        "2.1",
        "| sid | string | session id; optional |",
        "does a session token's set carry the optional sid?",
        "a session-scoped token set carries sid",
        &[("optional-members-omitted", "no token set carries sid")],
        ("optional-members-omitted", REFERENCE),
    ),
    point(
        "trigger_history.end_marker",
        "4.7",
        "Result: object {entries: array of trigger order history entries (2.2), continuation: string}.",
        "how does the last page of the trigger-order history say there is no further page?",
        "the continuation member is absent",
        &[(
            "trigger-end-null",
            "the last page carries continuation: null",
        )],
        (REFERENCE, "trigger-end-null"),
    ),
    point(
        "paging.short_pages",
        "4.8",
        "| count | integer | 1 to 250; default 100 |",
        "is a page as long as count whenever more entries follow?",
        "every page but the last holds count entries",
        &[(
            "short-pages",
            "pages hold fewer entries than count while a continuation is given",
        )],
        ("short-pages", REFERENCE),
    ),
    point(
        "transaction_log.order",
        "4.8",
        "Result: object {logs: array of transaction log entries (2.3), continuation: integer, null when no further page}.",
        "in which order are the entries of a page?",
        "newest first",
        &[(
            "oldest-first",
            "pages run from the oldest entry to the newest",
        )],
        (REFERENCE, "oldest-first"),
    ),
    point(
        "count.out_of_range",
        "4.7, 4.8",
        "| count | integer | 1 to 250; default 100 |",
        "is a count outside the stated range refused, or taken into the range?",
        "refused with invalid_params",
        &[(
            "counts-clamped",
            "takes a count outside the range as the nearest bound (0 as 1, 251 as 250, 1001 as 1000)",
        )],
        (REFERENCE, "counts-clamped"),
    ),
    point(
        "timestamps.bound",
        "4.8",
        "| start_timestamp | integer | earliest timestamp, ms |",
        "is a timestamp past the 64-bit signed range, or before the epoch, refused?",
        "refused with invalid_params",
        &[(
            "timestamps-unbounded",
            "accepts any integer timestamp, clamped, and answers an empty page where nothing falls in the window",
        )],
        (REFERENCE, "timestamps-unbounded"),
    ),
    point(
        "rate.scope",
        "8",
        "| `private/get_transaction_log` sustained rate | 1 request per second |",
        "what is the rate counted against, and how large a burst is allowed?",
        "per token, with the burst the target file's [limits] state",
        &[(
            "rate-per-user-burst-1",
            "one budget per user across its credentials and transports, burst 1",
        )],
        ("rate-per-user-burst-1", REFERENCE),
    ),
    point(
        "auth.future_timestamp",
        "5.5",
        "The timestamp is valid for 60 seconds from generation; older timestamps are rejected.",
        "is a signature timestamp in the future accepted?",
        "refused when more than 60 s ahead",
        &[(
            "future-timestamps",
            "accepts signature timestamps ahead of its clock",
        )],
        (REFERENCE, "future-timestamps"),
    ),
    point(
        "ws.token_memory",
        "5.2",
        "A WebSocket connection authenticated with a session token remembers it, so later requests on that connection may omit the token.",
        "does a connection remember a connection-scoped token too?",
        "only session tokens are remembered",
        &[(
            "ws-remembers-any-token",
            "a connection remembers any token it authenticated with",
        )],
        (REFERENCE, "ws-remembers-any-token"),
    ),
    point(
        "ws.presented_token",
        "5.2",
        "A WebSocket connection authenticated with a session token remembers it, so later requests on that connection may omit the token.",
        "does a session token passed as access_token in a call authenticate the connection, or only a public/auth on it?",
        "a session token passed in a call is remembered too",
        &[(
            "ws-remembers-auth-only",
            "remembers only a session token that public/auth issued on the connection",
        )],
        ("ws-remembers-auth-only", REFERENCE),
    ),
    point(
        "scope.unnamed_families",
        "5.4",
        "A granted scope is a space-separated list and can also carry `mainaccount`.",
        "which level does a requested scope give the families it does not name?",
        "none: the granted scope lists only the families asked for",
        &[(
            "scope-unnamed-kept",
            "families a requested scope does not name keep the key's level, as the granted scope says",
        )],
        (REFERENCE, "scope-unnamed-kept"),
    ),
    point(
        "params.unlisted_values",
        "4.1",
        "| scope | string | requested access scope (see 5.4) |",
        "is a requested scope naming a value 5.4 does not list, or an empty string filter, accepted?",
        "accepted: unknown scope values are ignored, an empty filter matches nothing",
        &[(
            "refuses-unlisted",
            "refuses a scope value 5.4 does not list and an empty instrument_name",
        )],
        ("refuses-unlisted", REFERENCE),
    ),
    point(
        "exchange_token.wide_scope",
        "4.2",
        "optional `scope` (may carry `session:name` to create a session token; must not exceed the caller's permissions)",
        "is a requested scope wider than the caller's refused, or capped?",
        "refused",
        &[(
            "exchange-scope-capped",
            "caps the requested scope at the caller's permissions",
        )],
        (REFERENCE, "exchange-scope-capped"),
    ),
    point(
        "disable.exchanged_tokens",
        "4.5",
        "when disabled, the subaccount cannot be accessed directly with e-mail and password but remains reachable through the main account.",
        "does disabling a subaccount end the tokens the main account obtained for it through exchange_token?",
        "it ends them with the subaccount's own",
        &[(
            "disable-keeps-exchanged",
            "tokens the main account obtained for the subaccount keep working after a disable",
        )],
        (REFERENCE, "disable-keeps-exchanged"),
    ),
    point(
        "fork_token.parameters",
        "4.3",
        "Parameter names and response shape: not shown.",
        "what are fork_token's parameters called?",
        "refresh_token and session_name",
        &[(
            "fork-token-names",
            "names them refresh_token and name (the target file says so)",
        )],
        (REFERENCE, "fork-token-names"),
    ),
    point(
        "logout.result",
        "4.4",
        "Parameters and result: not shown.",
        "what does private/logout return, and does the connection stay open?",
        "the string ok, and the connection stays open",
        &[(
            "logout-closes",
            "answers null and then closes the websocket connection",
        )],
        ("logout-closes", REFERENCE),
    ),
    point(
        "refresh.session_access_token",
        "5.3",
        "For a session-scoped token the session stays the same and uses no extra session slot.",
        "does the previous access token of a session keep working after a refresh?",
        "it keeps working",
        &[(
            "session-refresh-revokes",
            "a refresh of a session token invalidates the previous access token",
        )],
        ("session-refresh-revokes", REFERENCE),
    ),
    point(
        "public.bad_token",
        "5.1",
        "Public methods need no credentials.",
        "is a public call carrying an invalid token answered or refused?",
        "answered, the token ignored",
        &[(
            "public-refuses-bad-token",
            "refuses a public call that carries an invalid token",
        )],
        ("public-refuses-bad-token", REFERENCE),
    ),
    point(
        "members.field_names",
        "2.6",
        "Field names of the member record: not shown.",
        "what are the member record's fields called?",
        "member_id, name, active, owner_id, account_ids, last_modification_timestamp",
        &[(
            "member-field-names",
            "names the member fields id, member_name, is_active, main_user_id, user_ids, updated_at",
        )],
        (REFERENCE, "member-field-names"),
    ),
    point(
        "mmp_status.none_triggered",
        "4.6",
        "when omitted, all triggered MMP statuses are returned",
        "are there any triggered statuses?",
        "some indexes are frozen",
        &[(
            "mmp-none-triggered",
            "no MMP status is triggered: every answer is empty",
        )],
        ("mmp-none-triggered", REFERENCE),
    ),
    point(
        "nullable.members",
        "2.3",
        "| info | object, string or null |",
        "which of the members typed \"or null\" are null, and which shape does info take?",
        "null only where an entry has no instrument, info an object",
        &[(
            "nulls-and-strings",
            "every member typed \"or null\" is null where it can be, and info is a string",
        )],
        (REFERENCE, "nulls-and-strings"),
    ),
    point(
        "lookup.unknown",
        "4.14",
        "Parameter `instrument_name` (string).",
        "is a lookup of an instrument, member or subaccount that does not exist refused, or answered empty?",
        "refused with invalid_params",
        &[(
            "unknown-is-empty",
            "answers an unknown instrument with an empty list and an unknown member with the unchanged list",
        )],
        (REFERENCE, "unknown-is-empty"),
    ),
    point(
        "close_position.no_position",
        "4.12",
        "| instrument_name | string | instrument whose position is closed |",
        "what does close_position answer for an instrument whose position is already closed?",
        "closes a position of the same size again",
        &[(
            "positions-close-once",
            "refuses to close a position it closed before",
        )],
        ("positions-close-once", REFERENCE),
    ),
    point(
        "close_position.price_tick",
        "4.12",
        "| price | number | optional; price for a limit order |",
        "what does a limit close at a price off the instrument's tick get (SPEC.md gives no tick)?",
        "an order at the price as sent",
        &[(
            "limit-price-rounded",
            "rounds the limit price to the instrument's tick (a fifth of its book's spread)",
        )],
        (REFERENCE, "limit-price-rounded"),
    ),
];

#[cfg(test)]
mod tests;
