//! Writing a failing sequence as a case file that `harness run --cases DIR` replays: one
//! `call` step per step sent, each with its own `transport` and, over WebSocket, its
//! `connection`, the tokens passed on by captures (`t<N>`, `r<N>` for step N), and each
//! step expecting what the model predicted.
//!
//! Secrets never appear: logins are auth modes the runner fills in. A replayed nonce is
//! `"reuse"` when the step it replays is the latest signed one, else a literal nonce
//! written into both steps.

use super::execute::login_scope;
use super::generate::PACED_METHOD;
use super::model::Outcome;
use super::{Action, Grant, Sequence, Who};
use harness_protocol::auth::nonce::fresh_nonce;

/// The case file of `sequence`, whose steps were predicted `outcomes` (one per step; `None`
/// for a step skipped, which is left out), failing `clause` as `message` says.
pub fn case_file(
    id: &str,
    sequence: &Sequence,
    outcomes: &[Option<Outcome>],
    clause: &str,
    message: &str,
) -> String {
    let quote = |text: &str| toml::Value::String(text.to_owned()).to_string();
    let names = readable_names(&sequence.connection_names());
    let destructive = sequence
        .steps
        .iter()
        .any(|step| harness_protocol::spec::is_state_changing(step.action.method()));
    let mut accounts = vec!["\"main\""];
    if sequence.steps.iter().any(|step| {
        matches!(
            step.action,
            Action::Login { who: Who::Sub, .. } | Action::Exchange { .. }
        )
    }) {
        accounts.push("\"sub\"");
    }
    let mut out = String::new();
    out.push_str("# Found by harness fuzz (stateful); shrunk to the fewest steps that fail.\n");
    out.push_str(&format!("id = {}\n", quote(id)));
    out.push_str(&format!("title = {}\n", quote(&one_line(message))));
    out.push_str(&format!("clauses = [{}]\n", quote(clause)));
    out.push_str("transports = [\"http-body\"]\n");
    out.push_str(&format!(
        "needs = {{ accounts = [{}], destructive = {destructive} }}\n",
        accounts.join(", ")
    ));
    if destructive {
        out.push_str("serial = true\n");
    }
    // Literal nonces for replays that do not follow their original directly.
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
    // Tokens a written step uses: only those are captured, since a step the model let
    // fail has nothing to capture.
    let used: std::collections::BTreeSet<usize> = sequence
        .steps
        .iter()
        .enumerate()
        .filter(|(index, _)| matches!(outcomes.get(*index), Some(Some(_))))
        .filter_map(|(_, step)| step.action.depends_on())
        .collect();
    for (index, step) in sequence.steps.iter().enumerate() {
        let Some(Some(outcome)) = outcomes.get(index) else {
            continue;
        };
        out.push_str(&format!("\n# step {}\n[[step]]\n", index + 1));
        out.push_str(&format!("call = {}\n", quote(step.action.method())));
        out.push_str(&format!("transport = {}\n", quote(step.transport.as_str())));
        if let Some(Some(name)) = names.get(index) {
            out.push_str(&format!("connection = {}\n", quote(name)));
        }
        let token = |of: usize| format!("{{{{t{of}}}}}");
        let refresh = |of: usize| quote(&format!("{{{{r{of}}}}}"));
        let bearer = |of: usize| {
            format!(
                "auth = {{ mode = \"bearer\", token = {} }}\n",
                quote(&token(of))
            )
        };
        let nonce_of = |of: usize| {
            literal
                .get(of)
                .cloned()
                .flatten()
                .map_or_else(|| "\"reuse\"".to_owned(), |nonce| quote(&nonce))
        };
        let own_nonce = literal
            .get(index)
            .cloned()
            .flatten()
            .map(|nonce| format!(", nonce = {}", quote(&nonce)))
            .unwrap_or_default();
        match &step.action {
            Action::Login { .. } | Action::ReplayLogin { .. } => {
                // A replay sends the login of step `of` again, signed with its nonce.
                let (login, replay_nonce) = match step.action {
                    Action::ReplayLogin { of } => (of, Some(format!(", nonce = {}", nonce_of(of)))),
                    _ => (index, None),
                };
                let (who, grant, session) = login_of(sequence, login);
                let (grant, nonce) = match replay_nonce {
                    Some(nonce) => (Grant::ClientSignature, nonce),
                    None => (grant, own_nonce),
                };
                let mode = match grant {
                    Grant::ClientCredentials => "client_credentials",
                    Grant::ClientSignature => "client_signature",
                };
                out.push_str(&format!(
                    "params = {{ scope = {} }}\n",
                    quote(&login_scope(session))
                ));
                out.push_str(&format!(
                    "auth = {{ mode = \"{mode}\", account = {}{nonce} }}\n",
                    quote(who.role())
                ));
            }
            Action::Refresh { of } => out.push_str(&format!(
                "params = {{ grant_type = \"refresh_token\", refresh_token = {} }}\n",
                refresh(*of)
            )),
            Action::Fork { of, name } => out.push_str(&format!(
                "params = {{ refresh_token = {}, session_name = {} }}\n",
                refresh(*of),
                quote(name)
            )),
            Action::Exchange { of } => out.push_str(&format!(
                "params = {{ refresh_token = {}, subject_id = \"{{{{fixtures.subaccount_id}}}}\" }}\n",
                refresh(*of)
            )),
            Action::Logout { token } => out.push_str(&bearer(*token)),
            Action::Toggle { token, enable } => {
                let state = if *enable { "enable" } else { "disable" };
                out.push_str(&format!(
                    "params = {{ sid = \"{{{{fixtures.subaccount_id}}}}\", state = \"{state}\" }}\n"
                ));
                out.push_str(&bearer(*token));
            }
            Action::DeleteMember { token } => {
                out.push_str("params = { member_id = \"{{fixtures.member_id}}\" }\n");
                out.push_str(&bearer(*token));
            }
            Action::Private { token, method } => {
                if method == PACED_METHOD {
                    out.push_str(
                        "params = { currency = \"{{fixtures.currency}}\", start_timestamp = 0, end_timestamp = \"{{now_ms}}\" }\n",
                    );
                }
                if let Some(of) = token {
                    out.push_str(&bearer(*of));
                }
            }
            Action::Signed { replay_of } => {
                let nonce = match replay_of {
                    Some(of) => format!(", nonce = {}", nonce_of(*of)),
                    None => own_nonce,
                };
                out.push_str(&format!("auth = {{ mode = \"signed\"{nonce} }}\n"));
            }
        }
        if issues_token(&step.action) && used.contains(&index) {
            out.push_str(&format!(
                "capture = {{ t{index} = \"result.access_token\", r{index} = \"result.refresh_token\" }}\n"
            ));
        }
        let outcome_name = match outcome {
            Outcome::Result => "result",
            Outcome::Error => "error",
            Outcome::Any => "any",
        };
        match (&step.action, outcome) {
            (Action::Refresh { of }, Outcome::Result) => {
                out.push_str("\n[step.expect]\noutcome = \"result\"\nno_schema = true\n");
                out.push_str(&rotation_matchers(
                    *of,
                    session_of(sequence, *of).as_deref(),
                ));
            }
            (Action::Private { method, .. }, Outcome::Result) if method == PACED_METHOD => {
                // Asked without count: the default page of 4.8.
                out.push_str("\n[step.expect]\noutcome = \"result\"\nno_schema = true\n");
                out.push_str("\n[[step.expect.match]]\npath = \"result.logs\"\nlen_max = 100\nclauses = [\"m.get_transaction_log.count_default\"]\n");
            }
            _ => out.push_str(&format!(
                "expect = {{ outcome = \"{outcome_name}\", no_schema = true }}\n"
            )),
        }
    }
    if disables_at_the_end(sequence, outcomes) {
        out.push_str("\n# Puts the subaccount's login back (runs only when every step above passed).\n[[step]]\ncall = \"private/toggle_subaccount_login\"\ntransport = \"http-body\"\nparams = { sid = \"{{fixtures.subaccount_id}}\", state = \"enable\" }\nauth = { mode = \"bearer\" }\nexpect = { outcome = \"any\", no_schema = true }\n");
    }
    out
}

/// Whether the last toggle written disables the subaccount's login.
fn disables_at_the_end(sequence: &Sequence, outcomes: &[Option<Outcome>]) -> bool {
    sequence
        .steps
        .iter()
        .enumerate()
        .filter(|(index, _)| matches!(outcomes.get(*index), Some(Some(_))))
        .filter_map(|(_, step)| match step.action {
            Action::Toggle { enable, .. } => Some(enable),
            _ => None,
        })
        .next_back()
        == Some(false)
}

/// What a refresh of the token of step `of` must answer beyond a result (5.3): a new
/// refresh token, a fresh access token, and for a session token the same session.
fn rotation_matchers(of: usize, session: Option<&str>) -> String {
    let mut out = String::new();
    for (path, capture) in [("result.refresh_token", 'r'), ("result.access_token", 't')] {
        out.push_str(&format!(
            "\n[[step.expect.match]]\npath = \"{path}\"\nnot_equals = \"{{{{{capture}{of}}}}}\"\nclauses = [\"auth.refresh.rotates\"]\n"
        ));
    }
    if let Some(name) = session {
        out.push_str(&format!(
            "\n[[step.expect.match]]\npath = \"result.scope\"\ncontains = \"session:{name}\"\nclauses = [\"auth.refresh.session_kept\"]\n"
        ));
    }
    out
}

/// The account, grant and session of the login at step `index`; the main account's
/// signature login without a session when that step is no login.
fn login_of(sequence: &Sequence, index: usize) -> (Who, Grant, Option<&str>) {
    match sequence.steps.get(index).map(|step| &step.action) {
        Some(Action::Login {
            who,
            grant,
            session,
        }) => (*who, *grant, session.as_deref()),
        _ => (Who::Main, Grant::ClientSignature, None),
    }
}

/// The session of the token step `index` issued, when the sequence says (a login or fork
/// naming one, or a refresh of such a token).
fn session_of(sequence: &Sequence, index: usize) -> Option<String> {
    let mut index = index;
    for _ in 0..=sequence.steps.len() {
        match &sequence.steps.get(index)?.action {
            Action::Login { session, .. } => return session.clone(),
            Action::Fork { name, .. } => return Some(name.clone()),
            Action::Refresh { of } => index = *of,
            _ => return None,
        }
    }
    None
}

/// Names the case loader cannot take for typos of one another (it refuses a name used
/// once that is close to another): one per connection of a written sequence.
const CONNECTION_NAMES: [&str; 16] = [
    "amber", "cobalt", "indigo", "olive", "scarlet", "teal", "violet", "bronze", "cyan", "maroon",
    "pearl", "sienna", "jade", "fuchsia", "lilac", "khaki",
];

/// The sequence's connection names (`ws0-1`: slot 0 after one logout) as
/// [`CONNECTION_NAMES`], in order of first use.
fn readable_names(names: &[Option<String>]) -> Vec<Option<String>> {
    let mut given: Vec<&str> = Vec::new();
    names
        .iter()
        .map(|name| {
            let name = name.as_deref()?;
            let position = match given.iter().position(|known| *known == name) {
                Some(position) => position,
                None => {
                    given.push(name);
                    given.len() - 1
                }
            };
            Some(match CONNECTION_NAMES.get(position) {
                Some(readable) => (*readable).to_owned(),
                None => format!("connection-{position}-{name}"),
            })
        })
        .collect()
}

fn issues_token(action: &Action) -> bool {
    matches!(
        action,
        Action::Login { .. }
            | Action::Refresh { .. }
            | Action::Fork { .. }
            | Action::Exchange { .. }
    )
}

fn one_line(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

#[cfg(test)]
mod tests;
