//! Writing a failing sequence as a case file that `harness run --cases DIR` replays: one
//! `call` step per step sent, each with its own `transport` and, over WebSocket, its
//! `connection`, the tokens passed on by captures (`t<N>`, `r<N>` for step N), and each
//! step expecting what the model predicted. The file is a [`Case`] value written by
//! [`Case::to_toml`]: the fuzzer has no case-file syntax of its own.
//!
//! Secrets never appear: logins are auth modes the runner fills in. A replayed nonce is
//! `"reuse"` when the step it replays is the latest signed one, else a literal nonce
//! written into both steps.

mod request;

use std::collections::BTreeMap;

use serde_json::{Map, Value};

use super::{Action, Grant, Sequence, Who};
use harness_model::case::{Auth, Case, ExpectedAnswer, Needs, Step};
use harness_model::check::Matcher;
use harness_model::check::Outcome;
use harness_protocol::spec;
use harness_protocol::wire::TransportKind;
use request::{add_request, literal_nonces};

/// The case file of `sequence`, whose steps were predicted `outcomes` (one per step; `None`
/// for a step skipped, which is left out), failing `clause` as `message` says.
pub fn case_file(
    id: &str,
    sequence: &Sequence,
    outcomes: &[Option<Outcome>],
    clause: &str,
    message: &str,
) -> String {
    let mut comment =
        "Found by harness fuzz (stateful); shrunk to the fewest steps that fail.".to_owned();
    if disables_at_the_end(sequence, outcomes) {
        comment.push_str(
            "\nThe last step puts the subaccount's login back (it runs only when every step \
             before it passed).",
        );
    }
    let case = sequence_case(id, sequence, outcomes, clause, message);
    // Every parameter is a string or an integer: TOML holds them all.
    case.to_toml(&comment)
        .unwrap_or_else(|error| format!("# {comment}\n# not written: {error}\n"))
}

/// The sequence as the case the fuzzer runs (`execute.rs`): one step per step of the
/// sequence, in order, each capturing the tokens it issues, the last putting the
/// subaccount's login back when the sequence ends disabling it.
pub(crate) fn sequence_steps(sequence: &Sequence) -> Case {
    let outcomes = vec![Some(Outcome::Any); sequence.steps.len()];
    sequence_case("fuzz.sequence", sequence, &outcomes, "", "")
}

/// The step that puts the subaccount's login back: a toggle as the main account, over HTTP,
/// either answer accepted.
pub(crate) fn enable_step() -> Step {
    Step {
        transport: Some(TransportKind::HttpBody),
        params: params([
            ("sid", subaccount_template()),
            ("state", Value::from("enable")),
        ]),
        auth: Auth::bearer(None),
        expect: ExpectedAnswer {
            outcome: Outcome::Any,
            no_schema: true,
            ..ExpectedAnswer::default()
        },
        ..Step::call(spec::TOGGLE_LOGIN_METHOD)
    }
}

/// The sequence as a [`Case`].
fn sequence_case(
    id: &str,
    sequence: &Sequence,
    outcomes: &[Option<Outcome>],
    clause: &str,
    message: &str,
) -> Case {
    let names = readable_names(&sequence.connection_names());
    let destructive = sequence
        .steps
        .iter()
        .any(|step| harness_protocol::spec::is_state_changing(step.action.method()));
    let mut accounts = vec![Who::Main.role().to_owned()];
    if sequence.steps.iter().any(|step| {
        matches!(
            step.action,
            Action::Login { who: Who::Sub, .. } | Action::Exchange { .. }
        )
    }) {
        accounts.push(Who::Sub.role().to_owned());
    }
    let literal = literal_nonces(sequence);
    // Tokens a written step uses: only those are captured, since a step the model let
    // fail has nothing to capture.
    let used: std::collections::BTreeSet<usize> = sequence
        .steps
        .iter()
        .enumerate()
        .filter(|(index, _)| matches!(outcomes.get(*index), Some(Some(_))))
        .filter_map(|(_, step)| step.action.depends_on())
        .collect();
    let mut steps = Vec::new();
    for (index, step) in sequence.steps.iter().enumerate() {
        let Some(Some(outcome)) = outcomes.get(index) else {
            continue;
        };
        let mut written = Step {
            transport: Some(step.transport),
            connection: names.get(index).cloned().flatten(),
            ..Step::call(step.action.method())
        };
        add_request(sequence, index, &literal, &mut written);
        if issues_token(&step.action) && used.contains(&index) {
            written.capture = BTreeMap::from([
                (format!("t{index}"), "result.access_token".to_owned()),
                (format!("r{index}"), "result.refresh_token".to_owned()),
            ]);
        }
        written.expect = expectation(sequence, &step.action, *outcome);
        steps.push(written);
    }
    if disables_at_the_end(sequence, outcomes) {
        // Puts the subaccount's login back (runs only when every step above passed).
        steps.push(enable_step());
    }
    Case {
        id: id.to_owned(),
        title: one_line(message),
        clauses: vec![clause.to_owned()],
        transports: vec![TransportKind::HttpBody],
        needs: Needs {
            accounts,
            fixtures: Vec::new(),
            destructive,
        },
        serial: destructive,
        steps,
        path: std::path::PathBuf::new(),
    }
}

/// What a written step expects: the model's outcome, and what a result must show (a
/// refresh rotates its tokens, a transaction-log page holds at most the default count).
fn expectation(sequence: &Sequence, action: &Action, outcome: Outcome) -> ExpectedAnswer {
    let mut expect = ExpectedAnswer {
        outcome,
        no_schema: true,
        ..ExpectedAnswer::default()
    };
    match (action, outcome) {
        (Action::Refresh { of }, Outcome::Result | Outcome::Any) => {
            // Where the refresh may be refused (a token bound to another connection), a
            // result it gives must still rotate: the matchers check only what is there.
            expect.matchers = rotation_matchers(*of, session_of(sequence, *of).as_deref())
                .into_iter()
                .map(|matcher| Matcher {
                    optional: outcome == Outcome::Any,
                    ..matcher
                })
                .collect();
        }
        (Action::Private { method, .. }, Outcome::Result) if spec::is_paced(method) => {
            // Asked without count: the default page of 4.8.
            let default = spec::method(method).and_then(spec::Method::default_count);
            expect.matchers = vec![Matcher {
                path: "result.logs".to_owned(),
                len_max: default.and_then(|count| usize::try_from(count).ok()),
                clauses: Some(vec!["m.get_transaction_log.count_default".to_owned()]),
                ..Matcher::default()
            }];
        }
        _ => {}
    }
    expect
}

fn subaccount_template() -> Value {
    Value::from("{{fixtures.subaccount_id}}")
}

/// Parameters from name-value pairs.
fn params<const N: usize>(pairs: [(&str, Value); N]) -> Map<String, Value> {
    pairs
        .into_iter()
        .map(|(name, value)| (name.to_owned(), value))
        .collect()
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
fn rotation_matchers(of: usize, session: Option<&str>) -> Vec<Matcher> {
    let mut matchers: Vec<Matcher> = [("result.refresh_token", 'r'), ("result.access_token", 't')]
        .into_iter()
        .map(|(path, capture)| Matcher {
            path: path.to_owned(),
            not_equals: Some(Value::from(format!("{{{{{capture}{of}}}}}"))),
            clauses: Some(vec!["auth.refresh.rotates".to_owned()]),
            ..Matcher::default()
        })
        .collect();
    if let Some(name) = session {
        matchers.push(Matcher {
            path: "result.scope".to_owned(),
            word: Some(format!("session:{name}")),
            clauses: Some(vec!["auth.refresh.session_kept".to_owned()]),
            ..Matcher::default()
        });
    }
    matchers
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

/// The session name a fork step asks for: a fork makes a new session, whose name a server
/// may hold unique (`{{unique}}`: one of this sequence alone).
fn fork_session_name(name: &str) -> String {
    format!("{name}-{{{{unique}}}}")
}

/// The session of the token step `index` issued, when the sequence says (a login or fork
/// naming one, or a refresh of such a token).
fn session_of(sequence: &Sequence, index: usize) -> Option<String> {
    let mut index = index;
    for _ in 0..=sequence.steps.len() {
        match &sequence.steps.get(index)?.action {
            Action::Login { session, .. } => return session.clone(),
            // As the fork step writes it (`session_name`).
            Action::Fork { name, .. } => return Some(fork_session_name(name)),
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

/// The scope every login asks for (with `session:<name>` when it names one): enough for
/// the private calls, the toggle, and a `delete_member` that must be refused for lack of
/// `mainaccount`.
const LOGIN_SCOPE: &str = "account:read_write trade:read";

/// The scope a login asks for: [`LOGIN_SCOPE`], and `session:<name>` with a session name.
fn login_scope(session: Option<&str>) -> String {
    match session {
        // The same names in every sequence: a login naming a session in use joins it, and
        // a server may count its session slots (8: "the number of session slots: not
        // shown"), so sequences do not make new ones at every login.
        Some(name) => format!("{LOGIN_SCOPE} session:{name}"),
        None => LOGIN_SCOPE.to_owned(),
    }
}

#[cfg(test)]
mod tests;
