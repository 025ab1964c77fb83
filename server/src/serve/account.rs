//! Account management methods: `private/toggle_subaccount_login` (SPEC.md 4.5),
//! `private/get_transaction_log` (4.8), `private/delete_member` (4.11) and the Direct
//! Access `lock_portfolio` (4.13).
//!
//! The transaction log pages newest first (timestamp descending, then id descending). The
//! continuation is the id of the first entry of the next page, found by looking one entry
//! ahead, so a cursor is handed out only when a non-empty page follows; `null` marks the
//! end. Because ids grow with timestamps, "entries at or below the cursor id" is exactly
//! the rest of the walk, and no entry is skipped or repeated between pages.

use serde_json::{Value, json};

use super::ServerState;
use super::Variant;
use super::ctx::{CountFaults, Ctx, PagedFaults, PagedParams};
use super::fault::Fault;
use super::fixtures::{KEYWORDS_PARAM, SECOND_FACTOR_PARAM};
use super::ledger::{LogQuery, Order, PageAsk};
use super::state::lock;
use super::tokens::Ending;
use harness_protocol::auth::scope::Access;
use harness_protocol::auth::{second_factor, sign};
use harness_protocol::jsonrpc::{self, ErrorObject};
use harness_protocol::spec;

/// `private/toggle_subaccount_login`.
pub(crate) fn toggle_subaccount_login(ctx: &mut Ctx<'_>) -> Result<Value, ErrorObject> {
    // The `toggle-scope-enable-only` fault checks the scope for enable alone; the
    // `toggle-scope-any-read-write` fault takes any area's read_write for it.
    let unchecked_disable =
        ctx.fault(Fault::ToggleScopeEnableOnly) && ctx.params.str("state") == Some("disable");
    let any_read_write = ctx.fault(Fault::ToggleScopeAnyReadWrite)
        && ctx.caller().is_ok_and(|caller| {
            caller
                .scope
                .access
                .values()
                .any(|level| *level == Access::ReadWrite)
        });
    if !unchecked_disable && !any_read_write {
        ctx.require_stated_scope()?;
    }
    let sid = ctx.params.required_int("sid")?;
    let login = ctx.params.required_str("state")?;
    // The `toggle-state-any-case` fault reads the state in any letter case.
    let login = if ctx.fault(Fault::ToggleStateAnyCase) {
        login.to_ascii_lowercase()
    } else {
        login.to_owned()
    };
    if !ctx.fault(Fault::ToggleStateAny) && login != "enable" && login != "disable" {
        return Err(ErrorObject::invalid_params(
            "state",
            "must be one of enable, disable",
        ));
    }
    let caller = ctx.caller_user()?;
    require_second_factor(ctx, caller)?;
    let sid = u64::try_from(sid)
        .ok()
        .filter(|sid| {
            ctx.state.is_subaccount_of(*sid, caller.user_id)
                // The `toggle-any-sid` fault takes any main account's subaccount.
                || (ctx.fault(Fault::ToggleAnySid)
                    && ctx.state.user(*sid).is_some_and(super::state::User::is_subaccount))
        })
        .ok_or_else(|| ErrorObject::invalid_params("sid", "not a subaccount of the caller"))?;
    if login == "disable" {
        disable_login(ctx, sid);
    } else {
        lock(&ctx.state.disabled_logins).remove(&sid);
    }
    Ok(if ctx.fault(Fault::ToggleResultTrue) {
        Value::Bool(true)
    } else {
        Value::String("ok".to_owned())
    })
}

/// The caller's second factor, where its user has one (SPEC.md 5.7), checked before the
/// subaccount: the refusal must not depend on whether the account happens to own the sid
/// it was given.
fn require_second_factor(ctx: &Ctx<'_>, caller: &super::state::User) -> Result<(), ErrorObject> {
    // A TOTP code of the user's secret, or the fixed code `harness serve --two-factor-code`
    // sets instead.
    let fixed = ctx.state.knobs().two_factor_code.as_deref();
    let confirmed = caller.totp_secret.as_ref().is_some_and(|secret| {
        ctx.params
            .str(SECOND_FACTOR_PARAM)
            .is_some_and(|code| match fixed {
                Some(fixed) => sign::signatures_match(fixed, code),
                None => {
                    second_factor::totp_accepts(secret.expose(), code, ctx.state.now_ms() / 1_000)
                }
            })
    }) && !ctx.fault(Fault::TwoFactorAlwaysRefused);
    if caller.two_factor && !confirmed && !second_factor_skipped(ctx)? {
        return Err(if ctx.fault(Fault::TwoFactorWrongCode) {
            ErrorObject::unauthorized("second factor required")
        } else if ctx.fault(Fault::TwoFactorUnnamed) {
            ErrorObject::new(
                harness_protocol::spec::SECOND_FACTOR_ERROR_CODE,
                "security_key_required",
            )
        } else {
            ErrorObject::security_key_authorization_error()
        });
    }
    Ok(())
}

/// Disables a subaccount's login and ends its sessions (SPEC.md 4.5), as the faults that
/// keep some of them, or end them late, do instead.
fn disable_login(ctx: &Ctx<'_>, sid: u64) {
    lock(&ctx.state.disabled_logins).insert(sid);
    if ctx.fault(Fault::RaceDisable) {
        // The sessions open now end a few ms after the answer.
        let keep = ctx.variant(Variant::DisableKeepsExchanged);
        let (access, refresh) = lock(&ctx.state.tokens).user_tokens(sid, keep);
        ctx.state.deferred.later(move |state| {
            let mut tokens = lock(&state.tokens);
            access.iter().for_each(|token| tokens.revoke_access(token));
            refresh
                .iter()
                .for_each(|token| tokens.revoke_refresh(token));
        });
    } else if !ctx.fault(Fault::DisableKeepsSessions) {
        let keep = ctx.variant(Variant::DisableKeepsExchanged);
        let mut tokens = lock(&ctx.state.tokens);
        // The `disable-keeps-ws-remembered` fault keeps what a connection remembers.
        if ctx.fault(Fault::DisableKeepsWsRemembered) {
            tokens.set_aside_user(sid, Ending::Disable);
        }
        if ctx.fault(Fault::DisableKeepsRefresh) {
            tokens.revoke_user_access(sid, keep);
        } else {
            tokens.revoke_user(sid, keep);
        }
    }
}

/// Whether a fault lets this call through without its second factor: everywhere
/// (`two-factor-missing`), or on the one authentication path a `two-factor-skipped-*` fault
/// names (SPEC.md 5.7 asks the factor of the method, whatever path the call came by).
fn second_factor_skipped(ctx: &Ctx<'_>) -> Result<bool, ErrorObject> {
    use super::principal::AuthPath;
    let skipped_on = match ctx.caller()?.path {
        AuthPath::HttpBearer => Fault::TwoFactorSkippedOverHttp,
        AuthPath::WsToken => Fault::TwoFactorSkippedOverWs,
        AuthPath::WsRemembered => Fault::TwoFactorSkippedRemembered,
        AuthPath::Signed => Fault::TwoFactorSkippedSigned,
        AuthPath::Basic => Fault::TwoFactorSkippedBasic,
        AuthPath::Anonymous => Fault::TwoFactorMissing,
    };
    Ok(ctx.fault(Fault::TwoFactorMissing) || ctx.fault(skipped_on))
}

/// `private/delete_member`.
pub(crate) fn delete_member(ctx: &mut Ctx<'_>) -> Result<Value, ErrorObject> {
    // The scopes 4.11 states, all of them unless a fault forgets `mainaccount`.
    let forgets_main = ctx.fault(Fault::DeleteMemberNoMainaccount);
    for requirement in ctx.method.scope {
        if !(forgets_main && *requirement == spec::MAINACCOUNT) {
            ctx.require(requirement)?;
        }
    }
    let member_id = ctx.params.required_int("member_id")?;
    let zero_allowed = ctx.fault(Fault::MemberIdZero) && member_id == 0;
    if member_id < 1 && !zero_allowed {
        return Err(ErrorObject::invalid_params("member_id", "must be >= 1"));
    }
    // Members and Direct Access belong to the main account the caller is part of.
    let owner_id = ctx.caller_user()?.main_id;
    let direct_access = ctx
        .state
        .user(owner_id)
        .is_some_and(|owner| owner.direct_access);
    if !direct_access && !ctx.fault(Fault::DeleteMemberNoDirectAccessCheck) {
        return Err(ErrorObject::bad_request(
            "direct access trading is not enabled for the account",
        ));
    }
    let mut by_owner = lock(&ctx.state.members);
    let members = by_owner.entry(owner_id).or_default();
    let position = members
        .iter()
        .position(|member| i64::try_from(member.member_id).ok() == Some(member_id));
    // `delete-member-answer-only`: the member stays, and only this answer leaves it out.
    let mut hidden = None;
    match position {
        Some(index) if ctx.fault(Fault::DeleteMemberAnswerOnly) => hidden = Some(index),
        Some(index) if !ctx.fault(Fault::DeleteMemberKept) => {
            members.remove(index);
            // The member that followed it goes too: one not named.
            if ctx.fault(Fault::DeleteMemberDropsNext) && index < members.len() {
                members.remove(index);
            }
        }
        Some(_) => {}
        None if zero_allowed || ctx.variant(Variant::UnknownIsEmpty) => {}
        None => return Err(ErrorObject::invalid_params("member_id", "unknown member")),
    }
    let renamed = ctx.variant(Variant::MemberFieldNames);
    let mut remaining: Vec<Value> = members
        .iter()
        .enumerate()
        .filter(|(index, _)| hidden != Some(*index))
        .map(|(_, member)| member.to_json(renamed))
        .collect();
    // The first entry, or (the nearest miss of a check of the first entry only) the last
    // of two or more.
    let too_long = if ctx.fault(Fault::MemberNameTooLong) {
        remaining.first_mut()
    } else if ctx.fault(Fault::MemberNameTooLongAfterFirst) && remaining.len() > 1 {
        remaining.last_mut()
    } else {
        None
    };
    if let Some(member) = too_long {
        let (_, name) = super::fixtures::member_field_names(renamed);
        member[name] = Value::from("m".repeat(harness_protocol::spec::MEMBER_NAME_MAX + 1));
    }
    let allowed = if ctx.fault(Fault::DeleteMemberFlagString) {
        json!(direct_access.to_string())
    } else {
        json!(direct_access)
    };
    Ok(jsonrpc::object([
        ("members", Value::Array(remaining)),
        ("is_direct_access_allowed", allowed),
    ]))
}

/// `private/get_transaction_log`.
pub(crate) fn get_transaction_log(ctx: &mut Ctx<'_>) -> Result<Value, ErrorObject> {
    let PagedParams {
        currency,
        count,
        default_count,
    } = ctx.paged_params(&PagedFaults {
        currency_any: Fault::TxlogCurrencyAny,
        currency_last_refused: Fault::TxlogCurrencyLastRefused,
        count: CountFaults {
            zero: Some(Fault::TxlogCount0),
            min_refused: Fault::TxlogCount1Refused,
            over_max: Some(Fault::TxlogCount251),
            max_refused: Fault::TxlogCountMaxRefused,
            default_raised: Fault::TxlogDefault150,
            default_lowered: Fault::TxlogDefault50,
            default_first_page_only: Fault::TxlogDefaultFirstPageOnly,
        },
    })?;
    let params = &ctx.params;
    // Count 0 passes only under `txlog-count-0`, which reads it as no limit.
    let no_limit = count == 0;
    let count = if count == 0 { default_count } else { count };
    let start = non_negative(params.int("start_timestamp"), "start_timestamp")?.unwrap_or(0);
    let end = non_negative(params.int("end_timestamp"), "end_timestamp")?
        .unwrap_or_else(|| ctx.state.now_ms());
    // The `txlog-end-exclusive` fault reads "latest timestamp" as the first one left out.
    let end = if ctx.fault(Fault::TxlogEndExclusive) {
        end.saturating_sub(1)
    } else {
        end
    };
    let cursor = non_negative(params.int("continuation"), "continuation")?;
    let user_id = log_owner(ctx, cursor)?;
    let keywords = log_keywords(ctx)?;
    let query = LogQuery {
        user_id,
        currency,
        start,
        end,
        keywords,
    };
    let page_len = if no_limit {
        usize::MAX / 2
    } else {
        ctx.page_len(count) + usize::from(ctx.fault(Fault::TxlogPageExceedsCount))
    };
    let order = if ctx.variant(Variant::OldestFirst) {
        Order::OldestFirst
    } else {
        Order::NewestFirst
    };
    let log = &ctx.state.ledger.log;
    let (walk, next) = ctx.state.knobs().log_page(
        log,
        &query,
        PageAsk {
            cursor,
            len: page_len,
            order,
        },
    );
    let continuation = log_continuation(ctx, next, &walk, &query);
    let mut logs: Vec<Value> = walk.iter().map(|entry| entry.body.clone()).collect();
    distort_page(ctx, &mut logs, end);
    Ok(jsonrpc::object([
        ("logs", Value::Array(logs)),
        (
            "continuation",
            continuation.map_or(Value::Null, Value::from),
        ),
    ]))
}

/// Whose log a request reads: the caller's, or a subaccount's it names (the faults that
/// ignore the subaccount read the caller's).
fn log_owner(ctx: &Ctx<'_>, cursor: Option<u64>) -> Result<u64, ErrorObject> {
    let params = &ctx.params;
    let caller = ctx.caller()?.user_id;
    let user_id = match non_negative(params.int("subaccount_id"), "subaccount_id")? {
        Some(_) if ctx.fault(Fault::TxlogSubaccountIgnored) => caller,
        Some(_) if ctx.fault(Fault::TxlogSubaccountIgnoredInBody) && ctx.in_http_body() => caller,
        Some(_) if ctx.fault(Fault::TxlogSubaccountFirstPageOnly) && cursor.is_some() => caller,
        Some(sub) if ctx.state.is_subaccount_of(sub, caller) => sub,
        Some(_) => {
            return Err(ErrorObject::invalid_params(
                "subaccount_id",
                "not a subaccount of the caller",
            ));
        }
        None => caller,
    };
    Ok(user_id)
}

/// The log filter's keywords (SPEC.md 4.8), refused where a fault refuses them.
fn log_keywords<'p>(ctx: &'p Ctx<'_>) -> Result<Vec<&'p str>, ErrorObject> {
    let params = &ctx.params;
    let keywords: Vec<&str> = params
        .str(KEYWORDS_PARAM)
        .map(|text| text.split_whitespace().collect())
        .unwrap_or_default();
    // `txlog-keyword-last-refused` refuses only the last keyword 4.8 lists (expiry).
    let last_refused = ctx.fault(Fault::TxlogKeywordLastRefused)
        && keywords
            .iter()
            .any(|keyword| spec::LOG_FILTER_KEYWORDS.last() == Some(keyword));
    if last_refused
        || (ctx.fault(Fault::TxlogKeywordRefused)
            && keywords
                .iter()
                .any(|keyword| spec::LOG_FILTER_KEYWORDS.contains(keyword)))
    {
        return Err(ErrorObject::invalid_params(
            KEYWORDS_PARAM,
            "unknown keyword",
        ));
    }
    Ok(keywords)
}

/// The continuation a page gives: the id after it, or none at the end (the faults that
/// overlap pages, give 0 or never end distort it).
fn log_continuation(
    ctx: &Ctx<'_>,
    next: Option<u64>,
    walk: &[&super::ledger::LogEntry],
    query: &LogQuery,
) -> Option<u64> {
    let log = &ctx.state.ledger.log;
    match next {
        Some(_) if ctx.fault(Fault::TxlogPagesOverlap) => walk.last().map(|entry| entry.id),
        Some(id) => Some(id),
        None if ctx.fault(Fault::TxlogContinuationZero) => Some(0),
        None if ctx.fault(Fault::TxlogEndless) => Some(
            log.iter()
                .rev()
                .find(|entry| query.matches(entry))
                .map_or(0, |entry| entry.id),
        ),
        None => None,
    }
}

/// The page's entries as the reference's knobs and faults shape them.
fn distort_page(ctx: &Ctx<'_>, logs: &mut [Value], end: u64) {
    ctx.state.knobs().decorate_log(logs);
    if ctx.fault(Fault::TxlogOutsideWindow)
        && let Some(Value::Object(first)) = logs.first_mut()
    {
        first.insert("timestamp".to_owned(), json!(end.saturating_add(1)));
    }
    if ctx.fault(Fault::TxlogDeliveryIndexPriceAfterFirst) {
        drop_after_first_delivery(logs, super::fixtures::LOG_DELIVERY_INDEX_PRICE);
    }
    if ctx.fault(Fault::TxlogMissingBalance) {
        for entry in logs.iter_mut() {
            if let Value::Object(object) = entry {
                object.remove("balance");
            }
        }
    }
}

/// Removes `field` from every delivery entry of a page but the first: the fault
/// `txlog-delivery-index-price-after-first`, a rule kept on the first entry only.
fn drop_after_first_delivery(logs: &mut [Value], field: &str) {
    logs.iter_mut()
        .filter_map(Value::as_object_mut)
        .filter(|entry| entry.get("type").and_then(Value::as_str) == Some("delivery"))
        .skip(1)
        .for_each(|entry| {
            entry.remove(field);
        });
}

fn non_negative(value: Option<i64>, name: &str) -> Result<Option<u64>, ErrorObject> {
    value
        .map(|value| {
            u64::try_from(value).map_err(|_| ErrorObject::invalid_params(name, "must be >= 0"))
        })
        .transpose()
}

impl ServerState {
    /// The Direct Access `lock_portfolio` (SPEC.md 4.13): the bearer value must be the
    /// Direct Access API key; it takes no parameters and returns `ok`.
    pub(crate) fn lock_portfolio(
        &self,
        authorization: Option<&str>,
        has_params: bool,
    ) -> Result<Value, ErrorObject> {
        let presented = authorization.and_then(|value| {
            let (scheme, key) = value.trim().split_once(' ')?;
            scheme.eq_ignore_ascii_case("bearer").then(|| key.trim())
        });
        let key_ok = presented.is_some_and(|key| {
            sign::signatures_match(self.direct_access_key.expose(), key)
                || (self.fault(Fault::LockAcceptsAccessToken)
                    && lock(&self.tokens).access(key, self.now_ms()).is_some())
        });
        if !key_ok && !self.fault(Fault::LockNoKey) {
            return Err(ErrorObject::unauthorized(
                "a valid direct access api key is required",
            ));
        }
        if has_params {
            return Err(ErrorObject::invalid_params(
                "params",
                "lock_portfolio takes no parameters",
            ));
        }
        self.portfolio_locked
            .store(true, std::sync::atomic::Ordering::Relaxed);
        self.on_lock();
        Ok(if self.fault(Fault::LockResultTrue) {
            Value::Bool(true)
        } else {
            Value::String("ok".to_owned())
        })
    }
}
