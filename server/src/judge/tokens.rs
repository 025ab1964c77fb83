//! Token state (SPEC.md 4.1 to 4.5, 5.2 to 5.4, 5.7): the judge's server issued every
//! token, so the judge knows each one's kind, scope, session, lifetime and fate, and holds
//! every request that uses one to it, whatever the server answered.
//!
//! A private call presents an access token (not a refresh token), alive (not refreshed
//! away, logged out, ended by a disable of its subaccount, nor past its `expires_in`), whose
//! granted scope holds what the method states; a refresh, an exchange or a fork hands over
//! a refresh token (not an access token) that is still alive; a fork starts from a session
//! token and names a new session; an exchange asks no more than the caller holds; a call
//! that needs the second factor carries it when its account has one. Tokens the judge did
//! not issue are not judged here (a garbage token is the server's to refuse).

use harness_protocol::auth::scope::Scope;
use harness_protocol::spec;
use harness_protocol::wire::TransportKind;

use super::record::{Call, Record};
use super::sessions::{Caller, EndCause, Sessions, TokenSet};
use super::{Knowledge, Tally};

/// Slack on a token's lifetime: the client counts it from when the answer reached it, and
/// its request takes a moment to arrive.
const LIFETIME_SLACK_MS: u64 = 1_000;

/// Checks the tokens a request uses against what became of them.
pub(crate) fn check_tokens(
    record: &Record,
    call: &Call,
    sessions: &Sessions,
    knowledge: &Knowledge,
    tally: &mut Tally,
) {
    let Some(method) = call.method.as_deref() else {
        return;
    };
    if record.transport != TransportKind::Rest && method.starts_with("private/") {
        check_presented(record, call, method, sessions, knowledge, tally);
    }
    let refresh_param = if call.is(spec::FORK_TOKEN_METHOD) {
        knowledge.fork_param("refresh_token")
    } else if call.is(spec::EXCHANGE_TOKEN_METHOD)
        || (call.is(spec::AUTH_METHOD)
            && call.text("grant_type").as_deref() == Some("refresh_token"))
    {
        "refresh_token"
    } else {
        return;
    };
    let Some(token) = call.text(refresh_param) else {
        return;
    };
    check_handed_over(record, call, method, &token, sessions, knowledge, tally);
}

/// The access token a private call presents: an access token, alive, with the scope the
/// method states.
fn check_presented(
    record: &Record,
    call: &Call,
    method: &str,
    sessions: &Sessions,
    knowledge: &Knowledge,
    tally: &mut Tally,
) {
    let Some(token) = sessions.presented(record, call) else {
        return;
    };
    let Some(set) = sessions.access_set(&token) else {
        if sessions.refresh_set(&token).is_some() {
            tally.fail(
                "client.token.kind",
                record.transport,
                Some(record.seq),
                format!("{method} presents a refresh token where the access token goes"),
            );
        }
        return;
    };
    tally.pass("client.token.kind", record.transport);
    let unknown_owner = set.subject.is_none() && own_login_user(set, sessions, knowledge).is_none();
    if !sessions.disables().is_empty() && unknown_owner {
        // `harness proxy` in front of a server with accounts its target file does not
        // describe: whose sessions a disable ended is the server's to know.
        tally.note(
            "client.token.live",
            record.transport,
            "a subaccount's login was disabled, and whose account this token acts for is not known (the target file names a subaccount's login as `sub` with `fixtures.subaccount_id`): its use after the disable was not judged",
        );
    }
    match ended(record, set, sessions, knowledge, Use::Access) {
        Some(why) => tally.fail(
            "client.token.live",
            record.transport,
            Some(record.seq),
            format!("{method} uses an access token {why}"),
        ),
        None => tally.pass("client.token.live", record.transport),
    }
    let Some(granted) = &set.scope else {
        return;
    };
    let missing: Vec<&str> = needed_scope(call, method)
        .into_iter()
        .filter(|need| !granted.grants(need))
        .collect();
    if missing.is_empty() {
        tally.pass("client.token.scope", record.transport);
    } else {
        tally.fail(
            "client.token.scope",
            record.transport,
            Some(record.seq),
            format!(
                "{method} needs {} and the token's granted scope `{granted}` lacks it",
                missing.join(" and ")
            ),
        );
    }
}

/// The scope a call needs: the method's stated scope, and for `get_mmp_status` with `block_rfq` true `block_rfq:read` instead
/// of `trade:read` (SPEC.md 4.6: "Scope `trade:read`, or `block_rfq:read` when `block_rfq`
/// is true", read as the reference server reads it).
fn needed_scope(call: &Call, method: &str) -> Vec<&'static str> {
    let Some(entry) = spec::method(method) else {
        return Vec::new();
    };
    let block_rfq = call.is(spec::MMP_STATUS_METHOD)
        && call
            .params
            .get("block_rfq")
            .is_some_and(|value| value == true || value == "true" || value == "1");
    entry
        .scope
        .iter()
        .map(|need| {
            if block_rfq {
                spec::MMP_BLOCK_RFQ_SCOPE
            } else {
                *need
            }
        })
        .collect()
}

/// The refresh token a refresh, an exchange or a fork hands over: a refresh token, alive;
/// a fork's from a session token, naming a new session; an exchange's scope within the
/// caller's.
fn check_handed_over(
    record: &Record,
    call: &Call,
    method: &str,
    token: &str,
    sessions: &Sessions,
    knowledge: &Knowledge,
    tally: &mut Tally,
) {
    let Some(set) = sessions.refresh_set(token) else {
        if sessions.access_set(token).is_some() {
            tally.fail(
                "client.token.kind",
                record.transport,
                Some(record.seq),
                format!("{method} hands over an access token where a refresh token goes"),
            );
        }
        return;
    };
    tally.pass("client.token.kind", record.transport);
    match ended(record, set, sessions, knowledge, Use::Refresh) {
        Some(why) => tally.fail(
            "client.token.live",
            record.transport,
            Some(record.seq),
            format!("{method} hands over a refresh token {why}"),
        ),
        None => tally.pass("client.token.live", record.transport),
    }
    if call.is(spec::FORK_TOKEN_METHOD) {
        check_fork(record, call, set, sessions, knowledge, tally);
    }
    if call.is(spec::EXCHANGE_TOKEN_METHOD)
        && let (Some(asked), Some(held)) = (call.text("scope"), &set.scope)
    {
        let asked_scope = Scope::parse(&asked);
        if asked_scope.within(held) {
            tally.pass("client.exchange.scope_bound", record.transport);
        } else {
            tally.fail(
                "client.exchange.scope_bound",
                record.transport,
                Some(record.seq),
                format!(
                    "exchange_token asks for scope `{asked}`, wider than the caller's `{held}`"
                ),
            );
        }
    }
}

/// A fork starts from a session-scoped token and names a new session (SPEC.md 4.3).
fn check_fork(
    record: &Record,
    call: &Call,
    set: &TokenSet,
    sessions: &Sessions,
    knowledge: &Knowledge,
    tally: &mut Tally,
) {
    let Some(source) = set.session_name() else {
        if set.scope.is_some() {
            tally.fail(
                "client.fork.session_token",
                record.transport,
                Some(record.seq),
                "fork_token hands over the refresh token of a connection-scoped token (its granted scope names no session)",
            );
        }
        return;
    };
    tally.pass("client.fork.session_token", record.transport);
    let Some(name) = call.text(knowledge.fork_param("session_name")) else {
        return;
    };
    let client = sessions.client_of(set);
    let live_elsewhere = sessions.sets().iter().any(|other| {
        other.session_name() == Some(name.as_str())
            && sessions.client_of(other) == client
            && other.access_end.is_none()
    });
    if name == source {
        tally.fail(
            "client.fork.new_session",
            record.transport,
            Some(record.seq),
            format!("fork_token names session `{name}`, the session of the token it forks, not a new one"),
        );
    } else if live_elsewhere {
        tally.fail(
            "client.fork.new_session",
            record.transport,
            Some(record.seq),
            format!("fork_token names session `{name}`, a session of this client still alive, not a new one"),
        );
    } else {
        tally.pass("client.fork.new_session", record.transport);
    }
}

/// A call that needs the second factor carries it when its account has one (SPEC.md 5.7),
/// or is sent again with it: a client may send the call, read the 13668 refusal and
/// complete the second factor (the flow of a security key), so only a call never sent with
/// its factor fails.
pub(crate) fn check_second_factor(
    records: &[Record],
    callers: &[Caller],
    knowledge: &Knowledge,
    tally: &mut Tally,
) {
    let clause = "client.second_factor.sent";
    let needing: Vec<(usize, Call, &str)> = records
        .iter()
        .enumerate()
        .filter_map(|(index, record)| {
            let call = record.call();
            let method = spec::NEEDS_SECOND_FACTOR
                .iter()
                .find(|method| call.is(method))?;
            Some((index, call, *method))
        })
        .collect();
    for (position, (index, call, method)) in needing.iter().enumerate() {
        let record = &records[*index];
        let Some(client) = callers[*index].client.as_deref() else {
            continue;
        };
        let Some(parameter) = knowledge.second_factor.get(client) else {
            if !knowledge.secrets.contains_key(client) {
                tally.note(
                    clause,
                    record.transport,
                    format!("{method} from client {client}, an account the target file does not describe: whether it has 2FA enabled is the server's to know"),
                );
            }
            continue;
        };
        let carries = |call: &Call| {
            call.params
                .get(parameter)
                .is_some_and(|value| !value.is_null() && value != "")
        };
        let same_call = |later: &Call| {
            ["sid", "state"]
                .iter()
                .all(|name| later.params.get(*name) == call.params.get(*name))
        };
        let sent_again = needing[position + 1..]
            .iter()
            .any(|(later, later_call, later_method)| {
                later_method == method
                    && callers[*later].client.as_deref() == Some(client)
                    && same_call(later_call)
                    && carries(later_call)
            });
        if carries(call) || sent_again {
            tally.pass(clause, record.transport);
        } else {
            tally.fail(
                clause,
                record.transport,
                Some(record.seq),
                format!("{method} from an account with 2FA enabled carries no second factor (`{parameter}`), and is not sent again with it"),
            );
        }
    }
}

/// Which token of a set a request uses.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Use {
    Access,
    Refresh,
}

/// The user whose own login a token set comes from, when the target file tells it; `None`
/// for a token an exchange made act for a subaccount: SPEC.md 4.5 says a disabled
/// subaccount "remains reachable through the main account", and an exchange is that way.
fn own_login_user(set: &TokenSet, sessions: &Sessions, knowledge: &Knowledge) -> Option<u64> {
    if set.subject.is_some() {
        return None;
    }
    let client = sessions.client_of(set)?;
    knowledge.users.get(client).copied()
}

/// Why a token is no longer valid when `record` arrives, if it is not.
fn ended(
    record: &Record,
    set: &TokenSet,
    sessions: &Sessions,
    knowledge: &Knowledge,
    which: Use,
) -> Option<String> {
    let end = match which {
        Use::Access => &set.access_end,
        Use::Refresh => &set.refresh_end,
    };
    if let Some(end) = end.as_ref().filter(|end| end.precedes(record)) {
        let cause = match end.cause {
            EndCause::Refreshed => "refreshed away",
            EndCause::LoggedOut | EndCause::Disabled => "logged out",
        };
        return Some(format!(
            "{cause} by request #{}, {} ms after its answer (the token was issued by request #{})",
            end.seq,
            record.at_ms.saturating_sub(end.answered_ms),
            set.issued_seq
        ));
    }
    let user = own_login_user(set, sessions, knowledge);
    if let Some(disable) = sessions.disables().iter().find(|disable| {
        Some(disable.user) == user
            && set.issued_event < disable.end.event
            && disable.end.precedes(record)
    }) {
        return Some(format!(
            "of subaccount {} {} ms after request #{} disabled its login, which ends its sessions",
            disable.user,
            record.at_ms.saturating_sub(disable.end.answered_ms),
            disable.end.seq
        ));
    }
    let lifetime_ms = set.expires_in?.saturating_mul(1_000);
    let age_ms = record.at_ms.saturating_sub(set.issued_ms);
    (which == Use::Access && age_ms > lifetime_ms.saturating_add(LIFETIME_SLACK_MS)).then(|| {
        format!(
            "{age_ms} ms after request #{} issued it with expires_in {} s",
            set.issued_seq,
            set.expires_in.unwrap_or_default()
        )
    })
}

#[cfg(test)]
mod tests;
