//! What each written step sends: its parameters and its auth mode, the tokens of earlier
//! steps as capture templates (`{{t<N>}}`, `{{r<N>}}`), and the nonces replays reuse
//! (`"reuse"` after the original, else a literal nonce written into both steps).

use serde_json::Value;

use super::{fork_session_name, login_of, login_scope, params, subaccount_template};
use crate::state::{Action, Grant, Sequence};
use harness_model::case::{Auth, ClientSignature, Login, Signature, Signed, Step};
use harness_protocol::auth::nonce::fresh_nonce;
use harness_protocol::spec;

/// What step `index` of `sequence` sends, into `written`: its parameters and its auth
/// mode, with the templates of the tokens and nonces of earlier steps (`literal`: the
/// nonces replayed later, [`literal_nonces`]).
pub(super) fn add_request(
    sequence: &Sequence,
    index: usize,
    literal: &[Option<String>],
    written: &mut Step,
) {
    let step = &sequence.steps[index];
    let own_nonce = literal.get(index).cloned().flatten();
    let subaccount = subaccount_template;
    match &step.action {
        Action::Login { .. } | Action::ReplayLogin { .. } => {
            add_login(sequence, index, literal, written);
        }
        Action::Refresh { of } => {
            written.params = params([
                ("grant_type", Value::from("refresh_token")),
                ("refresh_token", refresh_template(*of)),
            ]);
        }
        Action::Fork { of, name } => {
            written.params = params([
                ("refresh_token", refresh_template(*of)),
                // A fork makes a new session, whose name a server may hold unique
                // (`{{unique}}`: one of this sequence alone).
                ("session_name", Value::from(fork_session_name(name))),
            ]);
        }
        Action::Exchange { of } => {
            written.params = params([
                ("refresh_token", refresh_template(*of)),
                ("subject_id", subaccount()),
            ]);
        }
        Action::Logout { token } => written.auth = bearer_template(*token),
        Action::Toggle { token, enable } => {
            let state = if *enable { "enable" } else { "disable" };
            written.params = params([("sid", subaccount()), ("state", Value::from(state))]);
            written.auth = bearer_template(*token);
        }
        Action::DeleteMember { token } => {
            written.params = params([("member_id", Value::from("{{fixtures.member_id}}"))]);
            written.auth = bearer_template(*token);
        }
        Action::Private { token, method } => {
            if spec::is_paced(method) {
                written.params = params([
                    ("currency", Value::from("{{fixtures.currency}}")),
                    ("start_timestamp", Value::from(0)),
                    ("end_timestamp", Value::from("{{now_ms}}")),
                ]);
            }
            if let Some(of) = token {
                written.auth = bearer_template(*of);
            }
        }
        Action::Signed { replay_of } => {
            written.auth = Auth::Signed(Signed {
                signature: Signature {
                    nonce: match replay_of {
                        Some(of) => Some(replayed_nonce(literal, *of)),
                        None => own_nonce,
                    },
                    ..Signature::default()
                },
                ..Signed::default()
            });
        }
    }
}

/// What login step `index` (or a replay of one) sends, into `written`: the scope of its
/// session and its auth mode; a replay sends the login of step `of` again, signed with its
/// nonce.
fn add_login(sequence: &Sequence, index: usize, literal: &[Option<String>], written: &mut Step) {
    let own_nonce = literal.get(index).cloned().flatten();
    let (login, replay_nonce) = match sequence.steps[index].action {
        Action::ReplayLogin { of } => (of, Some(replayed_nonce(literal, of))),
        _ => (index, None),
    };
    let (who, grant, session) = login_of(sequence, login);
    let (grant, nonce) = match replay_nonce {
        Some(nonce) => (Grant::ClientSignature, Some(nonce)),
        None => (grant, own_nonce),
    };
    written.params = params([("scope", Value::from(login_scope(session)))]);
    let account = Some(who.role().to_owned());
    written.auth = match grant {
        // A nonce is a signature's: a `client_credentials` login has none.
        Grant::ClientCredentials => Auth::ClientCredentials(Login {
            account,
            ..Login::default()
        }),
        Grant::ClientSignature => Auth::ClientSignature(ClientSignature {
            login: Login {
                account,
                ..Login::default()
            },
            signature: Signature {
                nonce,
                ..Signature::default()
            },
            ..ClientSignature::default()
        }),
    };
}

/// The nonce a replay of step `of` sends: its literal one, or `"reuse"` when the step it
/// replays is the latest signed one.
fn replayed_nonce(literal: &[Option<String>], of: usize) -> String {
    literal
        .get(of)
        .cloned()
        .flatten()
        .unwrap_or_else(|| "reuse".to_owned())
}

/// The template of step `of`'s refresh token (`{{r<of>}}`).
fn refresh_template(of: usize) -> Value {
    Value::from(format!("{{{{r{of}}}}}"))
}

/// A bearer auth with step `of`'s access token (`{{t<of>}}`).
fn bearer_template(of: usize) -> Auth {
    Auth::bearer_token(format!("{{{{t{of}}}}}"))
}

/// Literal nonces for replays that do not follow their original directly, by the step
/// whose nonce is replayed.
pub(super) fn literal_nonces(sequence: &Sequence) -> Vec<Option<String>> {
    let mut literal: Vec<Option<String>> = vec![None; sequence.steps.len()];
    let mut last_signed = None;
    for (index, step) in sequence.steps.iter().enumerate() {
        match step.action {
            Action::ReplayLogin { of }
            | Action::Signed {
                replay_of: Some(of),
            } => {
                if last_signed != Some(of) && of < literal.len() {
                    literal[of] = Some(format!("fz{}", fresh_nonce()));
                }
                last_signed = Some(index);
            }
            Action::Login {
                grant: Grant::ClientSignature,
                ..
            }
            | Action::Signed { replay_of: None } => last_signed = Some(index),
            _ => {}
        }
    }
    literal
}
