//! Fault switches: each one makes the reference server break exactly one rule of SPEC.md,
//! so that the harness can prove its checks catch that departure.
//!
//! The server behaves correctly when no fault is on. A fault is tested at the point of
//! behaviour with [`FaultSet::has`], a bit test, so the correct path pays nothing for the
//! machinery. Every fault names the catalog clauses (`cases/clauses.toml`) whose check
//! should turn red when it is on.

/// Declares [`Fault`] with its kebab-case name, description and clauses in one table, so
/// the four can never drift apart.
macro_rules! faults {
    ($($variant:ident => $name:literal, $description:literal, [$($clause:literal),+ $(,)?];)+) => {
        switches! {
            /// A named way for the reference server to break one rule.
            pub enum Fault ("harness run --fault") in FaultSet {
                $($variant => $name, $description;)+
            }
        }

        impl Fault {
            /// One line saying which rule the fault breaks and how.
            pub fn description(self) -> &'static str {
                match self {
                    $(Fault::$variant => $description,)+
                }
            }

            /// The catalog clause ids whose check should catch this fault.
            pub fn clauses(self) -> &'static [&'static str] {
                match self {
                    $(Fault::$variant => &[$($clause),+],)+
                }
            }
        }
    };
}

faults! {
    EnvelopeNoJsonrpc => "envelope-no-jsonrpc",
        "responses omit the jsonrpc member",
        ["env.response.jsonrpc"];
    EnvelopeIdAsString => "envelope-id-as-string",
        "response ids echo the request id as a string",
        ["env.response.id"];
    EnvelopeIdOffByOne => "envelope-id-off-by-one",
        "response ids echo the request id plus one",
        ["env.response.id"];
    EnvelopeResultAndError => "envelope-result-and-error",
        "success responses also carry an error member",
        ["env.response.exclusive"];
    HttpQueryIgnored => "http-query-ignored",
        "http query parameters are ignored",
        ["transport.http.query"];
    HttpBodyIgnored => "http-body-ignored",
        "the json-rpc body of an http get is ignored",
        ["transport.http.body"];
    WsWrongIds => "ws-wrong-ids",
        "websocket answers carry the id of the connection's previous request",
        ["transport.ws", "env.response.id"];
    HttpStatus201 => "http-status-201",
        "successful http calls are answered with status 201 instead of 200",
        ["http.status.success"];
    PublicRequiresToken => "public-requires-token",
        "public methods other than public/auth demand a token",
        ["auth.public.no_credentials"];
    PrivateWithoutToken => "private-without-token",
        "private methods run as the main account when no token is given",
        ["auth.private.requires_token"];
    GrantTypeAny => "grant-type-any",
        "an unknown grant_type is treated as client_credentials",
        ["auth.grant_type.enum"];
    CredentialsAnySecret => "credentials-any-secret",
        "client_credentials accepts any client_secret",
        ["auth.client_credentials.wrong_secret"];
    CredentialsAnyKeyOfUser => "credentials-any-key-of-user",
        "client_credentials accepts a client id with the secret of another key of the same user (main's id, main_second's secret)",
        ["auth.client_credentials.wrong_secret"];
    CredentialsSecretOptional => "credentials-secret-optional",
        "client_credentials without client_secret is accepted",
        ["auth.grant_type.required_params"];
    TokenTypeMac => "token-type-mac",
        "token sets carry token_type mac instead of bearer",
        ["auth.token_set.shape"];
    SigWindowWide => "sig-window-wide",
        "client_signature timestamps stay valid for 10 minutes instead of 60 s",
        ["auth.client_signature.window"];
    SigWindowNarrow => "sig-window-narrow",
        "client_signature timestamps older than 10 s are rejected instead of 60 s",
        ["auth.client_signature.window"];
    SigWindowWithNonceOnly => "sig-window-with-nonce-only",
        "a client_signature timestamp is held to the 60 s window only when a nonce is given",
        ["auth.client_signature.window"];
    SigNonceReuse => "sig-nonce-reuse",
        "a reused client_signature nonce is accepted",
        ["auth.client_signature.nonce_single_use"];
    SigNoncePerConnection => "sig-nonce-per-connection",
        "client_signature nonces are remembered per websocket connection: another one accepts a used nonce",
        ["auth.client_signature.nonce_single_use"];
    SigNoncePerTransport => "sig-nonce-per-transport",
        "client_signature nonces are remembered per transport: http accepts a nonce used over websocket and back",
        ["auth.client_signature.nonce_single_use"];
    SigNoTrailingLf => "sig-no-trailing-lf",
        "the client_signature string to sign drops the lf after the nonce when data is empty",
        ["auth.client_signature.framing", "auth.client_signature.accepted"];
    SigDataNotUtf8 => "sig-data-not-utf8",
        "the client_signature string to sign carries each non-ascii character of data as ? instead of its utf-8 bytes",
        ["auth.client_signature.framing", "auth.client_signature.accepted"];
    SigUppercaseHex => "sig-uppercase-hex",
        "client_signature must be given in uppercase hex instead of lowercase",
        ["auth.client_signature.hex_lower"];
    SigSignatureOptional => "sig-signature-optional",
        "client_signature without a signature is accepted",
        ["auth.grant_type.required_params"];
    SigTimestampOptional => "sig-timestamp-optional",
        "client_signature without a timestamp is accepted, its signature unchecked",
        ["auth.grant_type.required_params"];
    SigDataNotReturned => "sig-data-not-returned",
        "client_signature does not return the data it was given",
        ["auth.client_signature.data_returned"];
    SigDataNotReturnedWithoutNonce => "sig-data-not-returned-without-nonce",
        "client_signature without a nonce does not return the data it was given (with a nonce it does)",
        ["auth.client_signature.data_returned"];
    SigDataTrimmed => "sig-data-trimmed",
        "the client_signature string to sign carries data without its leading and trailing whitespace",
        ["auth.client_signature.hex_lower", "auth.client_signature.framing"];
    SigUnchecked => "sig-unchecked",
        "client_signature is accepted whatever the signature",
        ["auth.client_signature.wrong_key"];
    SigAnyKeyOfUser => "sig-any-key-of-user",
        "a client_signature is verified against every key of the client id's user: main's id signed with main_second's secret is accepted",
        ["auth.client_signature.wrong_key"];
    SigUncheckedWithData => "sig-unchecked-with-data",
        "a client_signature carrying data is accepted whatever the signature (one without data is verified)",
        ["auth.client_signature.wrong_key"];
    SignedWindowWide => "signed-window-wide",
        "signed-header timestamps stay valid for 10 minutes instead of 60 s",
        ["auth.signed.window"];
    SignedWindowNarrow => "signed-window-narrow",
        "signed-header timestamps older than 10 s are rejected instead of 60 s",
        ["auth.signed.window"];
    SignedNonceReuse => "signed-nonce-reuse",
        "a reused signed-header nonce is accepted",
        ["auth.signed.nonce_single_use"];
    SignedNoncePerConnection => "signed-nonce-per-connection",
        "signed-header nonces are remembered per HTTP connection: one replayed on another connection is accepted",
        ["auth.signed.nonce_single_use"];
    SignedUriWithoutQuery => "signed-uri-without-query",
        "signed-header request data uses the path without the query string",
        ["auth.signed.request_data", "auth.signed.accepted"];
    SignedUnchecked => "signed-unchecked",
        "a signed header is accepted whatever the signature",
        ["auth.signed.wrong_key"];
    SignedAnyKeyOfUser => "signed-any-key-of-user",
        "a signed header is verified against every key of its id's user: main's id signed with main_second's secret is accepted",
        ["auth.signed.wrong_key"];
    SignedDecodedQuery => "signed-decoded-query",
        "signed-header request data carries the query string percent-decoded, not as sent (a value needing percent-encoding shows it)",
        ["auth.signed.request_data", "auth.signed.accepted"];
    SignedBodyUnsigned => "signed-body-unsigned",
        "signed-header request data leaves the body out (an empty body is signed whatever the request carries)",
        ["auth.signed.request_data"];
    SignedMethodAnyCase => "signed-method-any-case",
        "signed-header request data accepts the http method signed in lower case too",
        ["auth.signed.request_data"];
    BasicAnySecret => "basic-any-secret",
        "basic authorization accepts any client secret",
        ["auth.basic.wrong_secret"];
    BasicRefusedAccountRead => "basic-refused-account-read",
        "basic authorization is refused on methods needing account:read (accepted on the others)",
        ["auth.basic.accepted"];
    BasicSecretPrefix => "basic-secret-prefix",
        "basic authorization accepts a secret the right one starts with: an empty or truncated secret",
        ["auth.basic.wrong_secret"];
    BasicAnyKeyOfUser => "basic-any-key-of-user",
        "basic authorization accepts a client id with the secret of another key of the same user (main's id, main_second's secret)",
        ["auth.basic.wrong_secret"];
    SecretLastCharIgnored => "secret-last-char-ignored",
        "client_credentials and basic authorization compare a client secret without its last character (only a secret wrong in its last character shows it)",
        ["auth.client_credentials.wrong_secret", "auth.basic.wrong_secret"];
    SignaturePrefixCompared => "signature-prefix-compared",
        "client_signature and signed-header signatures are compared on their first 32 hex digits only (only a signature wrong in its second half shows it)",
        ["auth.client_signature.wrong_key", "auth.signed.wrong_key"];
    BearerHeaderIgnored => "bearer-header-ignored",
        "the http authorization bearer token is not accepted (13009)",
        ["auth.http.bearer"];
    BearerRefusesForked => "bearer-refuses-forked",
        "the http authorization bearer token is refused when public/fork_token issued it (websocket access_token takes it)",
        ["auth.http.bearer"];
    WsAccessTokenIgnored => "ws-access-token-ignored",
        "params.access_token on websocket is not accepted",
        ["auth.ws.access_token"];
    WsInFlightIdsCrossed => "ws-in-flight-ids-crossed",
        "websocket answers carry the id of the request that arrived last, so requests in flight at once get crossed ids",
        ["transport.ws", "env.response.id"];
    TokenOutlivesExpiresIn => "token-outlives-expires-in",
        "access tokens keep working after expires_in seconds: their expiry is never checked",
        ["auth.token.lifetime"];
    WsRememberedTokenOutlives => "ws-remembered-token-outlives",
        "the session token a websocket connection remembers keeps working after expires_in seconds: expiry is checked only for a token presented in params",
        ["auth.token.lifetime"];
    WsSessionForgotten => "ws-session-forgotten",
        "a websocket connection does not remember its session token",
        ["auth.ws.session_memory"];
    RefreshKeepsOldToken => "refresh-keeps-old-token",
        "refreshing a connection-scoped token leaves the previous access token working",
        ["auth.refresh.connection_invalidates"];
    RefreshTokenOptional => "refresh-token-optional",
        "grant_type refresh_token without refresh_token falls back to the client id and secret given",
        ["auth.grant_type.required_params"];
    RefreshSameToken => "refresh-same-token",
        "refresh returns the same refresh token instead of a new one",
        ["auth.refresh.rotates"];
    RefreshSessionChanged => "refresh-session-changed",
        "refreshing a session-scoped token returns another session name",
        ["auth.refresh.session_kept"];
    RefreshTakesSessionSlot => "refresh-takes-session-slot",
        "each refresh of a session-scoped token takes one more session slot, never given back: a session holding four (its login and three refreshes) is refused its next refresh",
        ["auth.refresh.session_kept"];
    ExchangeTokenForCaller => "exchange-token-for-caller",
        "public/exchange_token issues the token for the caller instead of subject_id",
        ["auth.exchange_token.subject"];
    ExchangeTokenAnySubject => "exchange-token-any-subject",
        "public/exchange_token issues a token for a subaccount of any main account, not only the caller's",
        ["auth.exchange_token.accepted"];
    ExchangeTokenFullScope => "exchange-token-full-scope",
        "public/exchange_token without a scope grants the subaccount's full permissions, not the caller's",
        ["auth.exchange_token.keeps_permissions"];
    ExchangeTokenDropsTrade => "exchange-token-drops-trade",
        "public/exchange_token without a scope keeps the caller's account and wallet permissions but drops its trade ones",
        ["auth.exchange_token.keeps_permissions"];
    ExchangeScopeExceeds => "exchange-scope-exceeds",
        "public/exchange_token grants a scope override wider than the caller's permissions, up to the subaccount key's",
        ["auth.exchange_token.scope_within"];
    ExchangeTokenBroken => "exchange-token-broken",
        "public/exchange_token always answers with an error",
        ["auth.exchange_token.accepted"];
    ForkTokenBroken => "fork-token-broken",
        "public/fork_token always answers with an error",
        ["auth.fork_token.accepted"];
    ForkTokenFullScope => "fork-token-full-scope",
        "public/fork_token gives the new session the account's full permissions, not the forked token's scopes",
        ["auth.fork_token.accepted"];
    ForkEndsOriginal => "fork-ends-original",
        "public/fork_token ends the original session's access token",
        ["auth.fork_token.concurrent"];
    ForkEndsOnRefresh => "fork-ends-on-refresh",
        "refreshing the original session ends the access token of the session forked from it: the two run together only until the original refreshes",
        ["auth.fork_token.concurrent"];
    ForkConnectionAllowed => "fork-connection-allowed",
        "public/fork_token forks connection-only tokens",
        ["auth.fork_token.connection_refused"];
    LogoutOverHttp => "logout-over-http",
        "private/logout succeeds over http instead of being websocket only",
        ["auth.logout.ws_only"];
    LogoutOverHttpApiKey => "logout-over-http-api-key",
        "private/logout over http is refused with a bearer token but runs with basic or signed-header credentials",
        ["auth.logout.ws_only"];
    LogoutHttpEndsToken => "logout-http-ends-token",
        "private/logout over http answers an error, yet ends the bearer token it came with",
        ["auth.logout.ws_only"];
    LogoutKeepsRefresh => "logout-keeps-refresh",
        "private/logout ends the access token but leaves its refresh token working",
        ["auth.logout.invalidates"];
    LogoutNoop => "logout-noop",
        "private/logout answers ok but leaves the tokens working",
        ["auth.logout.invalidates"];
    LogoutKeepsWsRemembered => "logout-keeps-ws-remembered",
        "private/logout ends the token for every request that presents it, but a websocket connection that remembers it (not the one that logged out) goes on running private calls with it",
        ["auth.logout.invalidates"];
    ScopeNotEnforced => "scope-not-enforced",
        "private methods run whatever scope the token has",
        [
            "m.toggle_subaccount_login.scope",
            "m.get_mmp_status.scope",
            "m.get_trigger_order_history.scope",
            "m.get_transaction_log.scope",
            "m.delete_member.scope",
            "auth.scope.enforced",
        ];
    TwoFactorMissing => "two-factor-missing",
        "toggle_subaccount_login succeeds on a 2fa account without the second factor",
        ["auth.two_factor.13668"];
    TwoFactorSkippedOverHttp => "two-factor-skipped-over-http",
        "the second factor is not required of a call authenticated with a bearer header over http (required over every other path)",
        ["auth.two_factor.13668"];
    TwoFactorSkippedOverWs => "two-factor-skipped-over-ws",
        "the second factor is not required of a websocket call presenting its access_token (required over every other path)",
        ["auth.two_factor.13668"];
    TwoFactorSkippedRemembered => "two-factor-skipped-remembered",
        "the second factor is not required of a websocket call made with the session token the connection remembers (required over every other path)",
        ["auth.two_factor.13668"];
    TwoFactorSkippedSigned => "two-factor-skipped-signed",
        "the second factor is not required of a call authenticated with the signed header (required over every other path)",
        ["auth.two_factor.13668"];
    TwoFactorSkippedBasic => "two-factor-skipped-basic",
        "the second factor is not required of a call authenticated with basic authorization (required over every other path)",
        ["auth.two_factor.13668"];
    TwoFactorWrongCode => "two-factor-wrong-code",
        "a missing second factor is answered with 13009 instead of 13668",
        ["auth.two_factor.13668"];
    TwoFactorUnnamed => "two-factor-unnamed",
        "a missing second factor is answered with code 13668 but not the name security_key_authorization_error (message security_key_required)",
        ["auth.two_factor.13668"];
    TwoFactorAlwaysRefused => "two-factor-always-refused",
        "toggle_subaccount_login on a 2fa account is refused with 13668 even with a valid second factor",
        ["m.toggle_subaccount_login.two_factor_confirmed"];
    ToggleScopeEnableOnly => "toggle-scope-enable-only",
        "toggle_subaccount_login checks its scope account:read_write only for state enable: a disable runs with account:read",
        ["m.toggle_subaccount_login.scope"];
    ToggleScopeAnyReadWrite => "toggle-scope-any-read-write",
        "toggle_subaccount_login takes any read_write scope for account:read_write: a token with trade:read_write and account:none toggles",
        ["m.toggle_subaccount_login.scope"];
    ToggleAnySid => "toggle-any-sid",
        "toggle_subaccount_login toggles the login of a subaccount of any main account, not only the caller's",
        ["m.toggle_subaccount_login.params"];
    ToggleStateAny => "toggle-state-any",
        "toggle_subaccount_login accepts any state, not only enable or disable",
        ["m.toggle_subaccount_login.params"];
    ToggleResultTrue => "toggle-result-true",
        "toggle_subaccount_login returns true instead of \"ok\"",
        ["m.toggle_subaccount_login.result"];
    MmpOmittedFirstOnly => "mmp-omitted-first-only",
        "get_mmp_status without index_name returns only the first triggered status",
        ["m.get_mmp_status.all_when_omitted"];
    MmpIndexAny => "mmp-index-any",
        "get_mmp_status accepts any index_name",
        ["m.get_mmp_status.index_name"];
    MmpIndexLastRefused => "mmp-index-last-refused",
        "get_mmp_status rejects the last listed index_name (all)",
        ["m.get_mmp_status.index_name"];
    MmpGroupWithoutIndex => "mmp-group-without-index",
        "get_mmp_status accepts mmp_group without index_name",
        ["m.get_mmp_status.mmp_group_requires_index"];
    MmpEmptyGroupRejected => "mmp-empty-group-rejected",
        "get_mmp_status rejects an empty mmp_group",
        ["m.get_mmp_status.empty_group"];
    MmpHidesFrozenZero => "mmp-hides-frozen-zero",
        "get_mmp_status leaves out every status frozen until manual reset (frozen_until 0)",
        ["m.get_mmp_status.reset_reported"];
    MmpResetLapses => "mmp-reset-lapses",
        "get_mmp_status stops reporting the status frozen until manual reset (frozen_until 0) a second after it first reported it, though nothing reset it",
        ["m.get_mmp_status.reset_stays"];
    MmpFrozenString => "mmp-frozen-string",
        "get_mmp_status returns frozen_until as a string",
        ["m.get_mmp_status.result"];
    TriggerCurrencyAny => "trigger-currency-any",
        "get_trigger_order_history accepts any currency",
        ["m.get_trigger_order_history.currency"];
    TriggerCurrencyLastRefused => "trigger-currency-last-refused",
        "get_trigger_order_history rejects the last listed currency (EURR)",
        ["m.get_trigger_order_history.currency"];
    TriggerCount1Refused => "trigger-count-1-refused",
        "get_trigger_order_history rejects count 1, its minimum",
        ["m.get_trigger_order_history.count"];
    TriggerCountMaxRefused => "trigger-count-max-refused",
        "get_trigger_order_history rejects count 1000, its maximum",
        ["m.get_trigger_order_history.count"];
    TriggerDefault30 => "trigger-default-30",
        "get_trigger_order_history count defaults to 30 instead of 20",
        ["m.get_trigger_order_history.count_default"];
    TriggerDefault10 => "trigger-default-10",
        "get_trigger_order_history count defaults to 10 instead of 20",
        ["m.get_trigger_order_history.count_default_is_20"];
    TriggerIndexValue => "trigger-index-value",
        "one trigger order history entry has trigger \"index\"",
        ["m.get_trigger_order_history.result"];
    TriggerOrderTypeAfterFirst => "trigger-order-type-after-first",
        "trigger order history entries after the first give the requested order type as stop_market, not limit or market",
        ["m.get_trigger_order_history.order_type"];
    TriggerLabelEmpty => "trigger-label-empty",
        "trigger order history entries without a label carry an empty one (label \"\") instead of none",
        ["m.get_trigger_order_history.label"];
    TriggerPostOnlyString => "trigger-post-only-string",
        "trigger order history entries give the post-only flag as a string (\"false\")",
        ["m.get_trigger_order_history.flags_boolean"];
    TriggerPagesOverlap => "trigger-pages-overlap",
        "the next trigger history page repeats the last entry of the previous one",
        ["m.get_trigger_order_history.continuation"];
    TriggerInstrumentFirstPageOnly => "trigger-instrument-first-page-only",
        "get_trigger_order_history applies instrument_name to the first page only: a continuation page holds every instrument's entries after the cursor",
        ["m.get_trigger_order_history.instrument_filter"];
    TxlogCurrencyAny => "txlog-currency-any",
        "get_transaction_log accepts any currency",
        ["m.get_transaction_log.currency"];
    TxlogCurrencyLastRefused => "txlog-currency-last-refused",
        "get_transaction_log rejects the last listed currency (USDE)",
        ["m.get_transaction_log.currency"];
    TxlogCount251 => "txlog-count-251",
        "get_transaction_log takes count 251 as it is: a page holds 251 entries",
        ["m.get_transaction_log.count"];
    TxlogCount0 => "txlog-count-0",
        "get_transaction_log reads count 0 as no limit: the page holds every entry of the window",
        ["m.get_transaction_log.count"];
    TxlogCount1Refused => "txlog-count-1-refused",
        "get_transaction_log rejects count 1, its minimum",
        ["m.get_transaction_log.count"];
    TxlogCountMaxRefused => "txlog-count-max-refused",
        "get_transaction_log rejects count 250, its maximum",
        ["m.get_transaction_log.count"];
    TxlogDefault150 => "txlog-default-150",
        "get_transaction_log count defaults to 150 instead of 100",
        ["m.get_transaction_log.count_default"];
    TxlogDefault50 => "txlog-default-50",
        "get_transaction_log count defaults to 50 instead of 100",
        ["m.get_transaction_log.count_default_is_100"];
    TxlogPageExceedsCount => "txlog-page-exceeds-count",
        "a transaction log page holds count + 1 entries",
        ["m.get_transaction_log.count"];
    TxlogOutsideWindow => "txlog-outside-window",
        "one transaction log entry lies 1 ms outside the requested window",
        ["m.get_transaction_log.window"];
    TxlogEndExclusive => "txlog-end-exclusive",
        "get_transaction_log takes end_timestamp as exclusive: an entry stamped with it is left out",
        ["m.get_transaction_log.window"];
    TxlogContinuationZero => "txlog-continuation-zero",
        "the last transaction log page has continuation 0 instead of null",
        ["m.get_transaction_log.continuation"];
    TxlogPagesOverlap => "txlog-pages-overlap",
        "the next transaction log page repeats the last entry of the previous one",
        ["m.get_transaction_log.continuation"];
    TxlogEndless => "txlog-endless",
        "transaction log continuation is never null: the last page points back to the first",
        ["m.get_transaction_log.continuation"];
    TxlogMissingBalance => "txlog-missing-balance",
        "transaction log entries lack balance",
        ["m.get_transaction_log.result"];
    TxlogSubaccountIgnored => "txlog-subaccount-ignored",
        "get_transaction_log ignores subaccount_id and returns the caller's own entries",
        ["m.get_transaction_log.subaccount"];
    TxlogSubaccountFirstPageOnly => "txlog-subaccount-first-page-only",
        "get_transaction_log applies subaccount_id to the first page only: a continuation page holds the caller's own entries below the cursor",
        ["m.get_transaction_log.subaccount"];
    TxlogRefillHalfRate => "txlog-refill-half-rate",
        "the get_transaction_log rate bucket refills at half the stated rate: a client keeping to 1 request per second is throttled once the declared burst is spent",
        ["limits.transaction_log_rate"];
    TxlogSubaccountIgnoredInBody => "txlog-subaccount-ignored-in-body",
        "get_transaction_log honours subaccount_id in a query string and a websocket message but ignores it in a JSON-RPC body over HTTP: the caller's own entries",
        ["m.get_transaction_log.subaccount"];
    CurrencyDecimalsString => "currency-decimals-string",
        "get_currencies returns decimals as a string",
        ["m.get_currencies.result"];
    CurrencyDecimalsStringAfterFirst => "currency-decimals-string-after-first",
        "get_currencies returns decimals as a string in every entry but the first",
        ["m.get_currencies.result"];
    CurrencyCrossCollateralAfterFirst => "currency-cross-collateral-after-first",
        "get_currencies leaves the cross-collateral-pool flag out of every entry but the first",
        ["m.get_currencies.cross_collateral"];
    CurrencyCrossCollateralString => "currency-cross-collateral-string",
        "get_currencies gives the cross-collateral-pool flag as a string (\"true\")",
        ["m.get_currencies.cross_collateral_boolean"];
    CurrencyNetworksEmpty => "currency-networks-empty",
        "get_currencies gives a currency after the first an empty networks list",
        ["m.get_currencies.networks"];
    CurrencyNetworkUnnamed => "currency-network-unnamed",
        "the last network of a currency's networks list names itself under name, not resource_name",
        ["m.get_currencies.networks"];
    VolatilityCurrencyAny => "volatility-currency-any",
        "get_historical_volatility accepts any currency",
        ["m.get_historical_volatility.currency"];
    VolatilityCurrencyLastRefused => "volatility-currency-last-refused",
        "get_historical_volatility rejects the last listed currency (EURR)",
        ["m.get_historical_volatility.currency"];
    VolatilityFloatTimestamp => "volatility-float-timestamp",
        "historical volatility timestamps are floats instead of integers",
        ["m.get_historical_volatility.result"];
    TxlogKeywordRefused => "txlog-keyword-refused",
        "get_transaction_log refuses the filter keywords SPEC.md lists",
        ["m.get_transaction_log.keywords"];
    ExpiryWithDelivery => "expiry-with-delivery",
        "an option that expired out of the money yields a delivery entry beside its expiry entry",
        ["m.get_transaction_log.expiry_single"];
    MemberIdZero => "member-id-zero",
        "delete_member accepts member_id 0",
        ["m.delete_member.member_id"];
    DeleteMemberNoMainaccount => "delete-member-no-mainaccount",
        "delete_member does not require the mainaccount scope",
        ["m.delete_member.scope"];
    DeleteMemberKept => "delete-member-kept",
        "delete_member leaves the deleted member among the members it returns",
        ["m.delete_member.deleted_absent"];
    DeleteMemberAnswerOnly => "delete-member-answer-only",
        "delete_member leaves the member named out of its answer but does not delete it: the next delete_member's answer lists it again",
        ["m.delete_member.deleted_absent"];
    MemberNameTooLong => "member-name-too-long",
        "delete_member returns a member whose name is 65 characters long",
        ["m.delete_member.name_length"];
    MemberNameTooLongAfterFirst => "member-name-too-long-after-first",
        "delete_member returns a member whose name is 65 characters long, in an entry after the first (the first keeps the length)",
        ["m.delete_member.name_length"];
    DeleteMemberDropsNext => "delete-member-drops-next",
        "delete_member deletes the member named and the member after it: a member that was not named is missing from the members remaining",
        ["m.delete_member.result"];
    DeleteMemberFlagString => "delete-member-flag-string",
        "delete_member returns is_direct_access_allowed as a string",
        ["m.delete_member.result"];
    CloseTypeAny => "close-type-any",
        "close_position accepts any type, not only limit or market",
        ["m.close_position.type"];
    CloseOrderMissing => "close-order-missing",
        "close_position results lack the order",
        ["m.close_position.result"];
    LockNoKey => "lock-no-key",
        "lock_portfolio succeeds without a valid direct access key",
        ["m.lock_portfolio.bearer"];
    LockAcceptsAccessToken => "lock-accepts-access-token",
        "lock_portfolio accepts a live oauth access token as the direct access key",
        ["m.lock_portfolio.bearer"];
    LockKeepsDirectOrders => "lock-keeps-direct-orders",
        "after lock_portfolio, a new Direct Access order (the target file's direct_access_order) is still accepted",
        ["m.lock_portfolio.direct_orders_rejected"];
    LockResultTrue => "lock-result-true",
        "lock_portfolio returns true instead of \"ok\"",
        ["m.lock_portfolio.result"];
    BookSummaryMissingMark => "book-summary-missing-mark",
        "book summary entries lack mark_price",
        ["m.get_book_summary_by_instrument.result"];
    BookSummaryWrongInstrument => "book-summary-wrong-instrument",
        "get_book_summary_by_instrument answers with another instrument's summary",
        ["m.get_book_summary_by_instrument.instrument"];
    BookSummaryExtraInstrument => "book-summary-extra-instrument",
        "get_book_summary_by_instrument answers the requested instrument's summary and another instrument's too",
        ["m.get_book_summary_by_instrument.instrument"];
    BookSummaryFirstInstrument => "book-summary-first-instrument",
        "get_book_summary_by_instrument answers the summary of its first instrument (the fixture's) whatever instrument_name names",
        ["m.get_book_summary_by_instrument.instrument"];
    BookSummaryOptionNullBid => "book-summary-option-null-bid",
        "book summary entries of options carry bid_price null (those of futures and perpetuals a number)",
        ["m.get_book_summary_by_instrument.result"];
    MmpBlockRfqIgnored => "mmp-block-rfq-ignored",
        "get_mmp_status ignores block_rfq and returns the order/quote statuses",
        ["m.get_mmp_status.block_rfq"];
    MmpBlockRfqNone => "mmp-block-rfq-none",
        "get_mmp_status with block_rfq true answers no status, though a Block RFQ status is triggered",
        ["m.get_mmp_status.block_rfq"];
    TriggerInstrumentIgnored => "trigger-instrument-ignored",
        "get_trigger_order_history ignores the instrument_name filter",
        ["m.get_trigger_order_history.instrument_filter"];
    DisabledSubUnreachable => "disabled-sub-unreachable",
        "a subaccount whose login is disabled cannot be reached through the main account (exchange_token refuses it)",
        ["m.toggle_subaccount_login.disabled_reachable"];
    DisableKeepsSessions => "disable-keeps-sessions",
        "disabling a subaccount's login leaves its sessions working",
        ["m.toggle_subaccount_login.disable_ends_sessions"];
    DisableKeepsRefresh => "disable-keeps-refresh",
        "disabling a subaccount's login ends its access tokens but leaves its refresh tokens working: a refresh carries its session on",
        ["m.toggle_subaccount_login.disable_ends_sessions"];
    DisabledExchangedRefused => "disabled-exchanged-refused",
        "a subaccount whose login is disabled is reached by exchange_token, but the token issued is refused every private call while the login stays disabled",
        ["m.toggle_subaccount_login.disabled_reachable"];
    DisableKeepsWsRemembered => "disable-keeps-ws-remembered",
        "disabling a subaccount's login ends every token of it but the session token a websocket connection remembers: that connection goes on running private calls without a token",
        ["m.toggle_subaccount_login.disable_ends_sessions"];
    SigWindow61s => "sig-window-61s",
        "client_signature timestamps stay valid for 61 s instead of 60 s (only a timestamp just past the window shows it)",
        ["auth.client_signature.window"];
    SignedWindow61s => "signed-window-61s",
        "signed-header timestamps stay valid for 61 s instead of 60 s (only a timestamp just past the window shows it)",
        ["auth.signed.window"];
    SigNonceWithTimestamp => "sig-nonce-with-timestamp",
        "the client_signature replay cache keys a nonce with its timestamp: the same nonce with a new timestamp is accepted",
        ["auth.client_signature.nonce_single_use"];
    SignedNonceWithTimestamp => "signed-nonce-with-timestamp",
        "the signed-header replay cache keys a nonce with its timestamp: the same nonce with a new timestamp is accepted",
        ["auth.signed.nonce_single_use"];
    CredentialsAnyAccountSecret => "credentials-any-account-secret",
        "client_credentials accepts a client id with the secret of any account, not only its own",
        ["auth.client_credentials.wrong_secret"];
    TriggerCurrencyLogList => "trigger-currency-log-list",
        "get_trigger_order_history accepts the transaction log's currencies (STETH, SOL, ...) besides its own five",
        ["m.get_trigger_order_history.currency"];
    VolatilityCurrencyLogList => "volatility-currency-log-list",
        "get_historical_volatility accepts the transaction log's currencies (STETH, SOL, ...) besides its own five",
        ["m.get_historical_volatility.currency"];
    MmpIndexResponseValues => "mmp-index-response-values",
        "get_mmp_status accepts as index_name the values only a response may carry (eurr_usdc, ...)",
        ["m.get_mmp_status.index_name"];
    ToggleStateAnyCase => "toggle-state-any-case",
        "toggle_subaccount_login reads state in any letter case: Enable is taken for enable",
        ["m.toggle_subaccount_login.params"];
    WsSessionShared => "ws-session-shared",
        "a session token one websocket connection remembers is remembered by every connection: another one runs private calls without a token",
        ["auth.private.requires_token"];
    GrantTypeAnyCase => "grant-type-any-case",
        "public/auth reads grant_type in any letter case: Client_Credentials is taken for client_credentials",
        ["auth.grant_type.enum"];
    ScopeNotEnforcedForSub => "scope-not-enforced-for-sub",
        "private methods run whatever scope the token has when the caller is a subaccount",
        ["m.get_transaction_log.scope", "auth.scope.enforced"];
    IntUnicodeDigits => "int-unicode-digits",
        "query-string integers pass a digit test that takes any numeric character (char::is_numeric: '٣', '３', '²'), then the integer parse refuses them: http 500 with a plain-text body",
        ["env.response.jsonrpc"];
    IntFloatParse => "int-float-parse",
        "integer parameters are parsed as floats and truncated ('5.7' is 5), and a float no i64 holds (NaN, inf, 1e19) fails the conversion: http 500 with a plain-text body",
        ["env.response.jsonrpc"];
    IntUnicodeTrim => "int-unicode-trim",
        "query-string integers are checked after a trim that eats unicode whitespace (U+00A0, U+2003, U+3000) but parsed after an ascii trim: http 500 with a plain-text body",
        ["env.response.jsonrpc"];
    RaceSigNonce => "race-sig-nonce",
        "a client_signature nonce is checked, then recorded a few ms later: copies released together all pass the check (sequential replays are refused)",
        ["auth.client_signature.nonce_single_use"];
    RaceSignedNonce => "race-signed-nonce",
        "a signed-header nonce is checked, then recorded a few ms later: copies released together all pass the check (sequential replays are refused)",
        ["auth.signed.nonce_single_use"];
    RaceRefresh => "race-refresh",
        "a connection-scoped refresh token is looked up, then revoked a few ms later: refreshes released together all succeed (a sequential second refresh is refused)",
        ["auth.refresh.connection_invalidates"];
    RaceDisable => "race-disable",
        "disabling a subaccount's login answers at once and ends its sessions 50 ms later: requests sent right after the answer still run with its tokens (a request sent later is refused)",
        ["m.toggle_subaccount_login.disable_ends_sessions"];
    RaceLogout => "race-logout",
        "private/logout answers at once and invalidates the tokens 50 ms later: requests sent right after the answer still run with them (a request sent later is refused)",
        ["auth.logout.invalidates"];
    RaceClose => "race-close",
        "a position closes once, but it is marked closed 50 ms after the close is answered: closes released together all trade (a sequential second close is refused)",
        ["m.close_position.closes_once"];
    RaceBucket => "race-bucket",
        "the get_transaction_log rate bucket is read, and its token taken 50 ms after the answer: requests released together all pass while it holds one token",
        ["m.get_transaction_log.rate_race"];
    MmpBlockRfqScopeAny => "mmp-block-rfq-scope-any",
        "get_mmp_status takes block_rfq:read for trade:read on the plain call too, not only when block_rfq is true",
        ["m.get_mmp_status.scope"];
    AuthClientIdDefaultsToMain => "auth-client-id-defaults-to-main",
        "public/auth without client_id (client_credentials or client_signature) takes the main account's",
        ["auth.grant_type.required_params"];
    TriggerDefaultFirstPageOnly => "trigger-default-first-page-only",
        "get_trigger_order_history's default count of 20 holds on the first page only: a continuation page without count holds up to 1000",
        ["m.get_trigger_order_history.count_default"];
    TxlogDefaultFirstPageOnly => "txlog-default-first-page-only",
        "get_transaction_log's default count of 100 holds on the first page only: a continuation page without count holds up to 250",
        ["m.get_transaction_log.count_default"];
    TxlogKeywordLastRefused => "txlog-keyword-last-refused",
        "get_transaction_log refuses expiry, the last filter keyword SPEC.md lists, and takes the others",
        ["m.get_transaction_log.keywords"];
    MmpEmptyGroupEveryIndex => "mmp-empty-group-every-index",
        "get_mmp_status with an empty mmp_group answers the statuses of every index, not what the same call without mmp_group answers",
        ["m.get_mmp_status.empty_group"];
    VolatilitySecondsBesidesBtc => "volatility-seconds-besides-btc",
        "historical volatility timestamps are in seconds for every currency but BTC (the fixture currency's are in ms)",
        ["m.get_historical_volatility.result"];
    DeleteMemberNoDirectAccessCheck => "delete-member-no-direct-access-check",
        "delete_member runs for a main account whose Direct Access trading is not enabled",
        ["m.delete_member.direct_access"];
    CloseLimitPriceIgnored => "close-limit-price-ignored",
        "close_position with type limit ignores price: the closing order takes the mark price",
        ["m.close_position.limit_price"];
    LockBlocksJsonRpc => "lock-blocks-json-rpc",
        "after lock_portfolio, close_position of the locked portfolio's account is refused on the JSON-RPC interface too (SPEC.md: orders submitted through REST are unaffected)",
        ["m.lock_portfolio.rest_unaffected"];
    CloseWrongInstrument => "close-wrong-instrument",
        "close_position closes the position of another instrument than the one named: its order and trades name that other instrument",
        ["m.close_position.instrument"];
    TxlogDefaultIgnoredWithSubaccount => "txlog-default-ignored-with-subaccount",
        "get_transaction_log's default count of 100 holds on the caller's own log only: with subaccount_id and no count a page holds up to 250",
        ["m.get_transaction_log.count_default"];
    SigNonceForgottenAfterWindow => "sig-nonce-forgotten-after-window",
        "client_signature and signed-header nonces are forgotten once the timestamp they came with leaves the 60 s window: the same nonce with a fresh timestamp and signature is accepted again",
        ["auth.client_signature.nonce_single_use", "auth.signed.nonce_single_use"];
    SubscriptionSilentToSecond => "subscription-silent-to-second",
        "a subscription to a channel another connection is already pushed is accepted, but nothing is pushed on it",
        ["events.subscription.pushes"];
    RawFeedRefused => "raw-feed-refused",
        "a subscription to the raw event feed (the target file's raw_feed_subscription) is refused even on an authenticated connection",
        ["auth.raw_feed.authenticated"];
    AuthStateNotCopiedSigned => "auth-state-not-copied-signed",
        "public/auth copies the input state into the token set for client_credentials logins but not for client_signature ones",
        ["auth.token_set.state_copy"];
    AuthIdpFlagTrue => "auth-idp-flag-true",
        "public/auth's token set says a client_credentials login came from an external identity provider",
        ["auth.token_set.idp_login"];
    LogoutCancelsOrders => "logout-cancels-orders",
        "private/logout cancels the account's open orders (SPEC.md 4.4: it does not trigger cancel-on-disconnect)",
        ["auth.logout.keeps_orders"];
    LockKeepsOpenDirectOrders => "lock-keeps-open-direct-orders",
        "lock_portfolio leaves the portfolio's open Direct Access orders open (SPEC.md 4.13: they are cancelled at once)",
        ["m.lock_portfolio.cancels_direct_orders"];
    TxlogDeliveryIndexPriceAfterFirst => "txlog-delivery-index-price-after-first",
        "get_transaction_log's delivery entries carry the index price (the target file's delivery_index_price) on the first delivery of a page only",
        ["m.get_transaction_log.delivery_prices"];
}

/// The pause a race fault puts between a check and its update: long enough for copies
/// released together to pass the check on other worker threads before the update lands.
/// The handlers are synchronous, so the pause blocks its thread, as a slow store would.
pub(crate) fn race_pause() {
    std::thread::sleep(std::time::Duration::from_millis(RACE_PAUSE_MS));
}

/// Milliseconds of [`race_pause`].
pub(crate) const RACE_PAUSE_MS: u64 = 5;

/// Milliseconds a race fault that puts its update off (`deferred.rs`: `race-disable`,
/// `race-logout`, `race-close`, `race-bucket`) waits before the update lands: wider than
/// the pause, since under a full run's load the copies released on an answer, or the copies
/// of one round, reach the handlers several ms apart (BENCHMARKS.md, arrival spread), and
/// the race of closes has only its first round to catch it in.
pub(crate) const RACE_DEFER_MS: u64 = 50;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip_and_are_unique() {
        assert!(Fault::ALL.len() < 256);
        for fault in Fault::ALL {
            assert_eq!(Fault::from_name(fault.name()), Some(*fault));
            assert!(!fault.description().is_empty());
            assert!(!fault.clauses().is_empty());
        }
        let mut names: Vec<&str> = Fault::ALL.iter().map(|fault| fault.name()).collect();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), Fault::ALL.len());
        assert_eq!(Fault::from_name("no-such-fault"), None);
    }

    /// The set `switch.rs` declares, for variants too.
    #[test]
    fn set_holds_exactly_its_members() {
        let set = FaultSet::new(&[Fault::LockNoKey, Fault::EnvelopeNoJsonrpc]);
        assert!(set.has(Fault::LockNoKey));
        assert!(set.has(Fault::EnvelopeNoJsonrpc));
        assert!(!set.has(Fault::LockResultTrue));
        assert!(!FaultSet::default().has(Fault::LockNoKey));
    }
}
