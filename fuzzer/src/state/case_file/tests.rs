//! Unit tests of the sequence case-file writer: every action becomes a case the loader accepts.

use std::path::Path;

use super::*;
use crate::state::SeqStep;
use harness_model::case::AuthMode;
use harness_model::check::{Catalog, SchemaSet};
use harness_protocol::wire::TransportKind;
use serde_json::Value;

fn cases_dir() -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../cases")
}

fn step(transport: TransportKind, connection: u8, action: Action) -> SeqStep {
    SeqStep {
        transport,
        connection,
        action,
    }
}

/// A signed request on connection 0, a fresh one or the replay of step `replay_of`'s.
fn signed(transport: TransportKind, replay_of: Option<usize>) -> SeqStep {
    step(transport, 0, Action::Signed { replay_of })
}

/// A sequence touching every action, as a case file the loader accepts.
#[test]
fn every_action_writes_a_case_the_loader_accepts() {
    let login = |who, grant, session: Option<&str>| Action::Login {
        who,
        grant,
        session: session.map(str::to_owned),
    };
    let sequence = Sequence {
        steps: vec![
            step(
                TransportKind::HttpQuery,
                0,
                login(Who::Main, Grant::ClientSignature, Some("a")),
            ),
            step(TransportKind::Ws, 1, Action::ReplayLogin { of: 0 }),
            step(
                TransportKind::HttpBody,
                0,
                login(Who::Main, Grant::ClientCredentials, None),
            ),
            step(TransportKind::Ws, 0, Action::Refresh { of: 0 }),
            step(
                TransportKind::HttpBody,
                0,
                Action::Fork {
                    of: 3,
                    name: "f".to_owned(),
                },
            ),
            step(TransportKind::HttpBody, 0, Action::Exchange { of: 2 }),
            step(
                TransportKind::Ws,
                0,
                Action::Private {
                    token: Some(3),
                    method: crate::state::generate::paced_method().unwrap().to_owned(),
                },
            ),
            step(
                TransportKind::Ws,
                0,
                Action::Private {
                    token: None,
                    method: "private/get_mmp_status".to_owned(),
                },
            ),
            signed(TransportKind::HttpQuery, None),
            signed(TransportKind::HttpBody, Some(8)),
            step(
                TransportKind::HttpBody,
                0,
                Action::Toggle {
                    token: 2,
                    enable: false,
                },
            ),
            step(
                TransportKind::HttpBody,
                0,
                Action::DeleteMember { token: 2 },
            ),
            step(TransportKind::Ws, 0, Action::Logout { token: 3 }),
            step(
                TransportKind::Ws,
                0,
                Action::Private {
                    token: Some(5),
                    method: "private/get_mmp_status".to_owned(),
                },
            ),
        ],
    };
    let mut outcomes = vec![Some(Outcome::Result); sequence.steps.len()];
    outcomes[1] = Some(Outcome::Error);
    outcomes[7] = Some(Outcome::Any);
    outcomes[11] = None;
    let text = case_file(
        "fuzz.s1.q0",
        &sequence,
        &outcomes,
        "auth.logout.invalidates",
        "expected an error",
    );
    let catalog = Catalog::load(&cases_dir().join("clauses.toml")).unwrap();
    let schemas = SchemaSet::load(&cases_dir().join("schemas")).unwrap();
    let case = harness_model::case::parse_case(Path::new("c.toml"), &text, &catalog, &schemas)
        .unwrap_or_else(|error| panic!("{error}\n{text}"));
    // 13 steps, and the toggle enabling the subaccount's login again at the end.
    assert_eq!(case.steps.len(), 14, "{text}");
    let last = case.steps.last().unwrap();
    assert_eq!(last.call_method(), Some("private/toggle_subaccount_login"));
    assert_eq!(last.params.get("state"), Some(&Value::from("enable")));
    assert_eq!(last.auth.mode(), AuthMode::Bearer);
    assert_eq!(last.auth.given_token(), None);
    assert_eq!(last.expect.outcome, Outcome::Any);
    assert!(last.expect.no_schema);
    let connections: Vec<&str> = case
        .steps
        .iter()
        .filter_map(|step| step.connection.as_deref())
        .collect();
    assert!(connections.contains(&"amber"), "{text}");
    assert!(connections.contains(&"cobalt"), "{text}");
    assert!(
        case.steps.iter().any(|step| {
            step.auth
                .signature()
                .and_then(|signature| signature.nonce.as_deref())
                == Some("reuse")
        }),
        "{text}"
    );
    let captures: Vec<&str> = case
        .steps
        .iter()
        .flat_map(|step| step.capture.keys().map(String::as_str))
        .collect();
    assert!(captures.contains(&"t3"), "{text}");
    assert!(
        !captures.contains(&"t4"),
        "the fork's token is not used: {text}"
    );
    assert!(
        !case
            .steps
            .iter()
            .any(|step| step.params.contains_key("member_id")),
        "a skipped step is left out: {text}"
    );
    assert!(case.needs.destructive, "{text}");
    assert!(case.serial, "{text}");
}

#[test]
fn a_replay_after_another_signed_step_gets_a_literal_nonce() {
    let sequence = Sequence {
        steps: vec![
            signed(TransportKind::HttpQuery, None),
            signed(TransportKind::HttpQuery, None),
            signed(TransportKind::HttpBody, Some(0)),
        ],
    };
    let outcomes = vec![
        Some(Outcome::Result),
        Some(Outcome::Result),
        Some(Outcome::Error),
    ];
    let text = case_file(
        "x",
        &sequence,
        &outcomes,
        "auth.signed.nonce_single_use",
        "m",
    );
    let catalog = Catalog::load(&cases_dir().join("clauses.toml")).unwrap();
    let schemas = SchemaSet::load(&cases_dir().join("schemas")).unwrap();
    let case = harness_model::case::parse_case(Path::new("c.toml"), &text, &catalog, &schemas)
        .unwrap_or_else(|error| panic!("{error}\n{text}"));
    let nonces: Vec<&str> = case
        .steps
        .iter()
        .filter_map(|step| step.auth.signature()?.nonce.as_deref())
        .collect();
    assert!(!nonces.contains(&"reuse"), "{text}");
    assert_eq!(nonces.len(), 2, "{text}");
    assert!(nonces.iter().all(|nonce| nonce.starts_with("fz")), "{text}");
    assert_eq!(nonces[0], nonces[1], "{text}");
}

#[test]
fn no_connection_name_reads_as_a_typo_of_another() {
    for (index, name) in CONNECTION_NAMES.iter().enumerate() {
        let others = CONNECTION_NAMES
            .iter()
            .enumerate()
            .filter(|(other, _)| *other != index)
            .map(|(_, other)| *other);
        assert_eq!(
            harness_protocol::file_error::did_you_mean(name, others),
            None,
            "{name}"
        );
    }
}
