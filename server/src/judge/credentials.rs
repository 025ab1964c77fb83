//! How credentials are written (SPEC.md 5.2, 5.4, 5.6): a Basic header is
//! `Basic <BASE64(client_id:client_secret)>`, exactly those bytes; the bearer scheme is
//! written `Bearer` (a warning otherwise: HTTP reads scheme names without regard to case,
//! RFC 9110 11.1); a requested scope is a space-separated list of the values 5.4 lists.

use harness_protocol::auth::scope::Scope;
use harness_protocol::auth::sign;
use harness_protocol::spec;

use super::record::{Call, Record};
use super::{Knowledge, Tally};

/// Checks the Basic header, the bearer scheme's spelling and a requested scope.
pub(crate) fn check_credentials(
    record: &Record,
    call: &Call,
    knowledge: &Knowledge,
    tally: &mut Tally,
) {
    if let Some(value) = record.header("authorization") {
        let value = value.trim();
        let scheme = value.split(' ').next().unwrap_or_default();
        if scheme.eq_ignore_ascii_case("basic") {
            check_basic(record, value, knowledge, tally);
        } else if scheme.eq_ignore_ascii_case("bearer") {
            if scheme == "Bearer" {
                tally.pass("client.token.bearer_case", record.transport);
            } else {
                tally.warn(
                    "client.token.bearer_case",
                    record.transport,
                    Some(record.seq),
                    format!("the scheme is written `{scheme}`; SPEC.md writes `Bearer`"),
                );
            }
        }
    }
    let asks_scope = call.is(spec::AUTH_METHOD) || call.is(spec::EXCHANGE_TOKEN_METHOD);
    if let Some(scope) = call.text("scope").filter(|_| asks_scope) {
        check_scope(record, &scope, tally);
    }
}

fn check_basic(record: &Record, value: &str, knowledge: &Knowledge, tally: &mut Tally) {
    let clause = "client.basic.well_formed";
    let problem = match sign::parse_basic(value) {
        None => Some("the Basic credential is not base64 of `client_id:client_secret`".to_owned()),
        Some((client, secret)) => match knowledge.secrets.get(&client) {
            Some(known) if *known == secret => None,
            Some(known) if secret.trim() == known => Some(format!(
                "the Basic credential of {client} carries whitespace around the secret ({} bytes instead of {})",
                secret.len(),
                known.len()
            )),
            Some(_) => Some(format!(
                "the Basic credential carries a wrong secret for {client}"
            )),
            None if knowledge.secrets.keys().any(|id| id == client.trim()) => Some(format!(
                "the Basic credential's client id carries whitespace (`{client}`)"
            )),
            None if knowledge
                .secrets
                .get(&secret)
                .is_some_and(|known| *known == client) =>
            {
                Some("the Basic credential is client_secret:client_id, the two swapped".to_owned())
            }
            None if knowledge.all_accounts => Some(format!(
                "the Basic credential names client id `{client}`, which no account has"
            )),
            None => {
                tally.note(
                    clause,
                    record.transport,
                    format!("Basic credential of a client id the judge does not know ({client})"),
                );
                return;
            }
        },
    };
    match problem {
        Some(problem) => tally.fail(clause, record.transport, Some(record.seq), problem),
        None => tally.pass(clause, record.transport),
    }
}

/// A requested scope: space-separated words, each a value SPEC.md 5.4 lists.
fn check_scope(record: &Record, scope: &str, tally: &mut Tally) {
    let clause = "client.scope.grammar";
    if let Some(other) = scope
        .chars()
        .find(|char| char.is_whitespace() && *char != ' ')
    {
        tally.fail(
            clause,
            record.transport,
            Some(record.seq),
            format!(
                "the scope separates its values with {other:?}; a scope is a space-separated list"
            ),
        );
        return;
    }
    let joined = scope.split_ascii_whitespace().find(|word| {
        word.contains(',')
            && word
                .split(',')
                .all(|part| Scope::parse(part).listed() && !part.is_empty())
    });
    let unlisted: Vec<&str> = scope
        .split_ascii_whitespace()
        .filter(|word| !Scope::parse(word).listed())
        .collect();
    if let Some(word) = joined {
        tally.fail(
            clause,
            record.transport,
            Some(record.seq),
            format!(
                "the scope `{word}` joins values with commas; a scope is a space-separated list"
            ),
        );
    } else if !unlisted.is_empty() {
        tally.fail(
            clause,
            record.transport,
            Some(record.seq),
            format!(
                "the scope asks for {}, not a value SPEC.md 5.4 lists",
                unlisted.join(", ")
            ),
        );
    } else {
        tally.pass(clause, record.transport);
    }
}

#[cfg(test)]
mod tests;
