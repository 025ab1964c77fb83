//! Unit tests of expectation files: entries read with their lines, known failures becoming xfail or fixed, and the file `--write-expect` writes.

use std::path::Path;

use super::*;
use crate::check::{Finding, Redactor};

use TransportKind::{HttpBody, HttpQuery, Ws};

fn known() -> Known {
    Known::new(
        [
            ("auth.nonce_reuse".to_owned(), vec![HttpQuery, HttpBody, Ws]),
            (
                "m.get_transaction_log.count".to_owned(),
                vec![HttpQuery, Ws],
            ),
        ],
        [
            "auth.client_signature.nonce_single_use".to_owned(),
            "m.get_transaction_log.result".to_owned(),
            "env.response.id".to_owned(),
        ],
    )
}

fn parse_text(text: &str) -> Result<KnownFailures, String> {
    parse(Path::new("expect.toml"), text, &known()).map_err(|error| error.to_string())
}

fn result(case: &str, transport: TransportKind, findings: &[(Verdict, &str)]) -> CaseResult {
    let findings: Vec<Finding> = findings
        .iter()
        .map(|(verdict, clause)| {
            Finding::new(
                *verdict,
                vec![(*clause).to_owned()],
                format!("{clause} broke"),
            )
        })
        .collect();
    let verdict = findings
        .iter()
        .map(|finding| finding.verdict)
        .reduce(Verdict::worst)
        .unwrap_or(Verdict::Pass);
    CaseResult {
        case: case.to_owned(),
        title: String::new(),
        path: String::new(),
        transport,
        verdict,
        clauses: findings
            .iter()
            .filter(|finding| finding.verdict == verdict)
            .flat_map(|finding| finding.clauses.clone())
            .collect(),
        checks: vec!["auth.client_signature.nonce_single_use".to_owned()],
        message: findings
            .first()
            .map(|finding| finding.message.clone())
            .unwrap_or_default(),
        findings,
        notes: Vec::new(),
        exchanges: Vec::new(),
        duration_ms: 1.0,
        points: Vec::new(),
    }
}

const NONCE: &str = "auth.client_signature.nonce_single_use";
const RESULT: &str = "m.get_transaction_log.result";

#[test]
fn entries_read_with_their_lines() {
    let expectations = parse_text(
        "[[known_failure]]\ncase = \"auth.nonce_reuse\"\ntransport = \"ws\"\nreason = \"per-connection cache\"\n\n[[known_failure]]\nclause = \"m.get_transaction_log.result\"\nreason = \"string continuation\"\n",
    )
    .unwrap();
    assert_eq!(
        expectations.entries,
        vec![
            Entry {
                selector: Selector::case("auth.nonce_reuse"),
                transport: Some(Ws),
                reason: "per-connection cache".to_owned(),
                line: 1,
            },
            Entry {
                selector: Selector::clause(RESULT),
                transport: None,
                reason: "string continuation".to_owned(),
                line: 6,
            },
        ]
    );
}

#[test]
fn an_empty_file_tolerates_nothing() {
    assert_eq!(parse_text("").unwrap().entries, vec![]);
}

#[test]
fn entries_matching_nothing_are_errors_with_line_and_suggestion() {
    let cases = [
        (
            "[[known_failure]]\ncase = \"auth.nonce_reuze\"\nreason = \"r\"\n",
            "expect.toml:2: unknown case \"auth.nonce_reuze\" (did you mean \"auth.nonce_reuse\"?)",
        ),
        (
            "[[known_failure]]\nreason = \"r\"\nclause = \"env.response.ids\"\n",
            "expect.toml:3: unknown clause \"env.response.ids\" (did you mean \"env.response.id\"?)",
        ),
        (
            "[[known_failure]]\ncase = \"auth.nonce_reuse\"\ntransport = \"http-qeury\"\nreason = \"r\"\n",
            "expect.toml:3: unknown transport \"http-qeury\" (did you mean \"http-query\"?)",
        ),
        (
            "[[known_failure]]\ncase = \"m.get_transaction_log.count\"\ntransport = \"http-body\"\nreason = \"r\"\n",
            "expect.toml:3: case \"m.get_transaction_log.count\" does not run over http-body (it runs over http-query, ws)",
        ),
        (
            "\n[[known_failure]]\nreason = \"r\"\n",
            "expect.toml:2: a known_failure needs a case, a clause, or both",
        ),
        (
            "[[known_failure]]\ncase = \"auth.nonce_reuse\"\nclause = \"env.response.idd\"\nreason = \"r\"\n",
            "expect.toml:3: unknown clause \"env.response.idd\" (did you mean \"env.response.id\"?)",
        ),
        (
            "[[known_failure]]\ncase = \"auth.nonce_reuse\"\n",
            "expect.toml:1: a known_failure needs a reason: say why the failure is accepted",
        ),
        (
            "[[known_failure]]\ncase = \"auth.nonce_reuse\"\nreason = \" \"\n",
            "expect.toml:3: reason is empty",
        ),
        (
            "[[known_failure]]\ncase = \"auth.nonce_reuse\"\nreason = \"a\"\n[[known_failure]]\ncase = \"auth.nonce_reuse\"\nreason = \"b\"\n",
            "expect.toml:4: the same failure as the entry at line 1",
        ),
        (
            "[[known_failures]]\ncase = \"auth.nonce_reuse\"\nreason = \"a\"\n",
            "expect.toml:1: unknown field \"known_failures\" (did you mean \"known_failure\"?)",
        ),
        (
            "[[known_failure]]\ncase = \"auth.nonce_reuse\"\nreasn = \"a\"\n",
            "expect.toml:3: unknown field \"reasn\" (did you mean \"reason\"?)",
        ),
    ];
    for (text, expected) in cases {
        assert_eq!(parse_text(text).unwrap_err(), expected, "{text}");
    }
}

fn file(text: &str) -> KnownFailures {
    parse_text(text).unwrap()
}

#[test]
fn a_known_failure_becomes_xfail_with_its_reason_and_others_stay() {
    let expectations = file(
        "[[known_failure]]\ncase = \"auth.nonce_reuse\"\ntransport = \"ws\"\nreason = \"per-connection cache\"\n",
    );
    let mut results = vec![
        result("auth.nonce_reuse", Ws, &[(Verdict::Fail, NONCE)]),
        result("auth.nonce_reuse", HttpQuery, &[(Verdict::Fail, NONCE)]),
    ];
    let outcomes = expectations.apply(&mut results);
    assert_eq!(results[0].verdict, Verdict::Xfail);
    assert_eq!(
        results[0].message,
        format!("known failure (expect.toml:1): per-connection cache; {NONCE} broke")
    );
    assert_eq!(results[0].findings[0].verdict, Verdict::Xfail);
    assert_eq!(
        results[1].verdict,
        Verdict::Fail,
        "another transport is new"
    );
    assert_eq!(outcomes[0].status, EntryStatus::Failing);
    assert_eq!(outcomes[0].executions, 1);
}

#[test]
fn a_clause_entry_tolerates_only_findings_citing_that_clause() {
    let expectations = file(&format!(
        "[[known_failure]]\nclause = \"{RESULT}\"\nreason = \"string continuation\"\n"
    ));
    let mut results = vec![
        result(
            "m.get_transaction_log.count",
            HttpQuery,
            &[(Verdict::Fail, RESULT)],
        ),
        result(
            "m.get_transaction_log.count",
            Ws,
            &[(Verdict::Fail, RESULT), (Verdict::Fail, "env.response.id")],
        ),
    ];
    let outcomes = expectations.apply(&mut results);
    assert_eq!(results[0].verdict, Verdict::Xfail);
    assert_eq!(
        results[1].verdict,
        Verdict::Fail,
        "a new clause still fails"
    );
    assert_eq!(results[1].findings[0].verdict, Verdict::Xfail);
    assert_eq!(results[1].findings[1].verdict, Verdict::Fail);
    assert!(
        results[1]
            .message
            .starts_with("a failure expect.toml does not list (clause env.response.id) besides a known one (expect.toml:1)"),
        "{}",
        results[1].message
    );
    assert_eq!(outcomes[0].status, EntryStatus::Failing);
}

#[test]
fn a_known_failure_that_passes_is_fixed() {
    let expectations = file("[[known_failure]]\ncase = \"auth.nonce_reuse\"\nreason = \"cache\"\n");
    let mut results = vec![
        result("auth.nonce_reuse", Ws, &[]),
        result("auth.nonce_reuse", HttpQuery, &[(Verdict::Info, NONCE)]),
        result("m.get_transaction_log.count", Ws, &[]),
    ];
    let outcomes = expectations.apply(&mut results);
    assert_eq!(outcomes[0].status, EntryStatus::Fixed);
    assert_eq!(outcomes[0].executions, 2);
    assert_eq!(results[0].verdict, Verdict::Fixed);
    assert!(
        results[0]
            .message
            .contains("expect.toml:1 lists this as a known failure (cache), and it passes: remove it from expect.toml"),
        "{}",
        results[0].message
    );
    assert_eq!(results[1].verdict, Verdict::Fixed);
    assert_eq!(results[2].verdict, Verdict::Pass, "not named by the entry");
}

#[test]
fn an_entry_whose_cases_did_not_run_is_neither_failing_nor_fixed() {
    let expectations = file("[[known_failure]]\ncase = \"auth.nonce_reuse\"\nreason = \"cache\"\n");
    let mut skipped = result("auth.nonce_reuse", Ws, &[]);
    skipped.verdict = Verdict::Skip;
    let mut results = vec![skipped, result("m.get_transaction_log.count", Ws, &[])];
    let outcomes = expectations.apply(&mut results);
    assert_eq!(outcomes[0].status, EntryStatus::NotRun);
    assert_eq!(results[0].verdict, Verdict::Skip);
}

#[test]
fn a_harness_error_is_known_only_by_a_case_entry() {
    let mut errored = result("auth.nonce_reuse", Ws, &[]);
    errored.verdict = Verdict::Error;
    errored.message = "no answer".to_owned();
    let by_clause = file(&format!(
        "[[known_failure]]\nclause = \"{NONCE}\"\nreason = \"r\"\n"
    ));
    let mut results = vec![errored.clone()];
    by_clause.apply(&mut results);
    assert_eq!(results[0].verdict, Verdict::Error);
    let by_case = file("[[known_failure]]\ncase = \"auth.nonce_reuse\"\nreason = \"r\"\n");
    let mut results = vec![errored];
    let outcomes = by_case.apply(&mut results);
    assert_eq!(results[0].verdict, Verdict::Xfail);
    assert_eq!(outcomes[0].status, EntryStatus::Failing);
}

#[test]
fn written_file_keeps_needed_entries_adds_new_failures_and_reads_back() {
    let expectations = file(
        "[[known_failure]]\nclause = \"m.get_transaction_log.result\"\nreason = \"kept\"\n\n[[known_failure]]\nclause = \"env.response.id\"\nreason = \"fixed now\"\n",
    );
    let mut results = vec![
        result(
            "m.get_transaction_log.count",
            HttpQuery,
            &[(Verdict::Fail, RESULT)],
        ),
        result("m.get_transaction_log.count", Ws, &[]),
        result("auth.nonce_reuse", HttpQuery, &[(Verdict::Fail, NONCE)]),
        result("auth.nonce_reuse", Ws, &[]),
    ];
    results[3].checks.push("env.response.id".to_owned());
    let outcomes = expectations.apply(&mut results);
    assert_eq!(outcomes[1].status, EntryStatus::Fixed);
    let redactor = Redactor::new(Vec::new());
    let entries = entries_for(&results, &outcomes, &redactor);
    assert_eq!(entries.len(), 2, "{entries:?}");
    assert_eq!(entries[0].reason, "kept");
    assert_eq!(
        entries[1].selector,
        Selector::case_clause("auth.nonce_reuse", NONCE)
    );
    assert_eq!(entries[1].transport, Some(HttpQuery));
    assert!(entries[1].reason.starts_with(write::PLACEHOLDER));
    assert!(entries[1].reason.contains(NONCE));
    let text = render(&entries);
    let again = parse_text(&text).unwrap();
    assert_eq!(again.entries.len(), 2);
    assert_eq!(again.entries[1].selector, entries[1].selector);
    assert_eq!(again.entries[1].transport, Some(HttpQuery));
    assert_eq!(again.entries[0].reason, "kept");
    assert!(again.warnings.is_empty(), "{:?}", again.warnings);
    assert!(parse_text(&render(&[])).unwrap().entries.is_empty());
}

#[test]
fn written_entries_are_one_per_case_clause_and_transport() {
    let results = vec![
        result(
            "auth.nonce_reuse",
            HttpQuery,
            &[(Verdict::Fail, NONCE), (Verdict::Fail, "env.response.id")],
        ),
        result("auth.nonce_reuse", Ws, &[(Verdict::Fail, NONCE)]),
    ];
    let entries = entries_for(&results, &[], &Redactor::new(Vec::new()));
    let written: Vec<(Selector, Option<TransportKind>)> = entries
        .into_iter()
        .map(|entry| (entry.selector, entry.transport))
        .collect();
    assert_eq!(
        written,
        vec![
            (
                Selector::case_clause("auth.nonce_reuse", NONCE),
                Some(HttpQuery)
            ),
            (
                Selector::case_clause("auth.nonce_reuse", "env.response.id"),
                Some(HttpQuery)
            ),
            (Selector::case_clause("auth.nonce_reuse", NONCE), Some(Ws)),
        ]
    );
}

/// The scenario of a gate that hid a regression: a file written under one fault, a run
/// under a second fault that breaks another clause of the same case.
#[test]
fn a_new_clause_in_a_known_failing_case_fails_the_run() {
    let first = vec![result(
        "auth.nonce_reuse",
        Ws,
        &[(Verdict::Fail, "env.response.id")],
    )];
    let entries = entries_for(&first, &[], &Redactor::new(Vec::new()));
    let expectations = file(&render(&entries));
    let mut second = vec![result("auth.nonce_reuse", Ws, &[(Verdict::Fail, NONCE)])];
    second[0].checks.push("env.response.id".to_owned());
    let outcomes = expectations.apply(&mut second);
    assert_eq!(second[0].verdict, Verdict::Fail);
    assert_eq!(second[0].findings[0].verdict, Verdict::Fail);
    assert_eq!(outcomes[0].status, EntryStatus::Fixed);
}

#[test]
fn a_case_only_entry_tolerates_every_clause_with_a_warning() {
    let expectations = file("[[known_failure]]\ncase = \"auth.nonce_reuse\"\nreason = \"r\"\n");
    assert_eq!(expectations.warnings.len(), 1);
    assert!(
        expectations.warnings[0].starts_with(
            "expect.toml:1: warning: known failure of case \"auth.nonce_reuse\" names no clause"
        ),
        "{:?}",
        expectations.warnings
    );
    let mut results = vec![result(
        "auth.nonce_reuse",
        Ws,
        &[(Verdict::Fail, NONCE), (Verdict::Fail, "env.response.id")],
    )];
    expectations.apply(&mut results);
    assert_eq!(results[0].verdict, Verdict::Xfail);
}

#[test]
fn a_case_only_entry_of_a_client_clause_needs_no_warning() {
    let known = Known::new([(NONCE.to_owned(), vec![HttpQuery])], [NONCE.to_owned()]);
    let text = format!("[[known_failure]]\ncase = \"{NONCE}\"\nreason = \"r\"\n");
    let expectations = parse(Path::new("expect.toml"), &text, &known).unwrap();
    assert!(expectations.warnings.is_empty());
}

#[test]
fn a_case_and_clause_entry_tolerates_only_that_clause_of_that_case() {
    let expectations = file(&format!(
        "[[known_failure]]\ncase = \"auth.nonce_reuse\"\nclause = \"{NONCE}\"\nreason = \"r\"\n"
    ));
    let mut results = vec![
        result("auth.nonce_reuse", Ws, &[(Verdict::Fail, NONCE)]),
        result("m.get_transaction_log.count", Ws, &[(Verdict::Fail, NONCE)]),
    ];
    expectations.apply(&mut results);
    assert_eq!(results[0].verdict, Verdict::Xfail);
    assert_eq!(results[1].verdict, Verdict::Fail, "another case is new");
}
