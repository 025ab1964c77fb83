//! Unit tests of `harness diff`: reading `report.json` and listing what changed between two runs.

use super::*;

fn row(case: &str, transport: &str, verdict: Verdict) -> Row {
    Row {
        case: case.to_owned(),
        transport: transport.to_owned(),
        verdict,
        clauses: vec![format!("{case}.clause")],
        message: format!("{case} says {verdict}"),
    }
}

#[test]
fn reads_report_json_as_the_json_writer_writes_it() {
    let text = r#"{
  "target": "reference",
  "summary": {"pass": 1},
  "results": [
    {"case": "a", "title": "t", "path": "p", "transport": "ws", "verdict": "xfail",
     "clauses": ["c.one"], "checks": ["c.one"], "message": "m", "findings": [], "notes": [],
     "duration_ms": 1.5, "exchanges": []}
  ]
}"#;
    assert_eq!(
        read_report(text).unwrap(),
        vec![Row {
            case: "a".to_owned(),
            transport: "ws".to_owned(),
            verdict: Verdict::Xfail,
            clauses: vec!["c.one".to_owned()],
            message: "m".to_owned(),
        }]
    );
}

#[test]
fn a_file_that_is_not_a_report_says_where() {
    let error = read_report("{\n  \"target\": 1\n}").unwrap_err();
    assert_eq!(error.line, 3);
    assert!(
        error.message.contains("missing field `results`"),
        "{error:?}"
    );
    let error =
        read_report(r#"{"results": [{"case": "a", "transport": "ws", "verdict": "passed"}]}"#)
            .unwrap_err();
    assert_eq!(error.message, "unknown verdict \"passed\" of a [ws]");
}

#[test]
fn lists_regressions_newly_known_newly_passing_added_and_removed() {
    use Verdict::{Error, Fail, Info, Pass, Skip, Warn, Xfail};
    // Each execution with its verdict in the old report and in the new one (`None`: absent).
    let executions = [
        ("stays", "ws", Some(Pass), Some(Pass)),
        ("breaks", "ws", Some(Pass), Some(Fail)),
        ("breaks", "http-query", Some(Info), Some(Error)),
        ("mends", "ws", Some(Fail), Some(Warn)),
        ("known", "ws", Some(Xfail), Some(Fail)),
        ("accepted", "ws", Some(Pass), Some(Xfail)),
        ("was-skipped", "ws", Some(Skip), Some(Fail)),
        ("gone", "ws", Some(Pass), None),
        ("new", "rest", None, Some(Pass)),
    ];
    let old: Vec<Row> = executions
        .iter()
        .filter_map(|(case, transport, old, _)| old.map(|verdict| row(case, transport, verdict)))
        .collect();
    let new: Vec<Row> = executions
        .iter()
        .filter_map(|(case, transport, _, new)| new.map(|verdict| row(case, transport, verdict)))
        .collect();
    let diff = diff(&old, &new);
    let listed = |changes: &[Change]| -> Vec<(String, String, Verdict)> {
        changes
            .iter()
            .map(|change| {
                (
                    change.after.case.clone(),
                    change.after.transport.clone(),
                    change.before.verdict,
                )
            })
            .collect()
    };
    let expected = |rows: &[(&str, &str, Verdict)]| -> Vec<(String, String, Verdict)> {
        rows.iter()
            .map(|(case, transport, verdict)| {
                ((*case).to_owned(), (*transport).to_owned(), *verdict)
            })
            .collect()
    };
    assert_eq!(
        listed(&diff.regressions),
        expected(&[
            ("breaks", "ws", Pass),
            ("breaks", "http-query", Info),
            ("known", "ws", Xfail),
            ("was-skipped", "ws", Skip),
        ]),
        "a known-failing case that fails beyond its entries fails the gate again"
    );
    assert_eq!(
        listed(&diff.newly_known),
        expected(&[("accepted", "ws", Pass)]),
        "an accepted known failure is listed apart, no regression"
    );
    assert_eq!(diff.newly_passing.len(), 1);
    assert_eq!(diff.newly_passing[0].after.case, "mends");
    assert_eq!(diff.added, vec![row("new", "rest", Verdict::Pass)]);
    assert_eq!(diff.removed, vec![row("gone", "ws", Verdict::Pass)]);
}

#[test]
fn identical_runs_differ_in_nothing() {
    let run = vec![row("a", "ws", Verdict::Pass), row("b", "ws", Verdict::Fail)];
    let diff = diff(&run, &run);
    assert!(diff.is_empty());
    assert!(diff.regressions.is_empty());
    assert!(render_markdown(&diff).contains("No execution changed its outcome."));
}

#[test]
fn markdown_suits_a_pull_request_comment() {
    let mut broken = row("breaks", "ws", Verdict::Fail);
    broken.message = "result | was `odd`\nsecond line".to_owned();
    let diff = diff(&[row("breaks", "ws", Verdict::Pass)], &[broken]);
    let markdown = render_markdown(&diff);
    assert!(
        markdown.starts_with(
            "### Conformance: 1 regression; 0 newly known failures, 0 newly passing, 0 added, 0 removed\n"
        ),
        "{markdown}"
    );
    assert!(markdown.contains("#### Regressions (1)"), "{markdown}");
    assert!(
        markdown.contains(
            "| fail | pass | `breaks` | ws | breaks.clause | result \\| was 'odd' second line |"
        ),
        "{markdown}"
    );
    let text = render_text(&diff);
    assert!(
        text.contains(
            "  FAIL  breaks [ws] {breaks.clause}: result | was `odd` second line (was pass)"
        ),
        "{text}"
    );
}
