//! `junit.xml` with quick-junit: one test case per case and transport, grouped in one
//! suite per spec area (the first segment of the case id). A known failure (`xfail`) is a
//! skipped test case whose message gives the expectations file's reason. A run that
//! stopped before its end (a signal, the run timeout, a target that stopped answering or
//! could not be reached) adds an error test case `harness` saying why.

use std::collections::BTreeMap;
use std::time::Duration;

use quick_junit::{NonSuccessKind, Report, TestCase, TestCaseStatus, TestSuite};

use super::{Context, Summary, reproduction};
use crate::check::Verdict;
use crate::results::CaseResult;

/// Renders `junit.xml`.
pub(crate) fn render_junit(context: &Context<'_>, _summary: &Summary) -> String {
    let redactor = &context.report.redactor;
    let mut report = Report::new(format!("harness run against {}", context.report.target));
    report.set_time(context.report.duration);
    let mut suites: BTreeMap<String, TestSuite> = BTreeMap::new();
    for result in &context.report.results {
        let area = result.case.split('.').next().unwrap_or("cases").to_owned();
        let suite = suites
            .entry(area.clone())
            .or_insert_with(|| TestSuite::new(area));
        let status = match result.verdict {
            Verdict::Pass | Verdict::Info | Verdict::Warn | Verdict::Fixed => {
                TestCaseStatus::success()
            }
            Verdict::Skip => {
                let mut status = TestCaseStatus::skipped();
                status.set_message(redactor.text(&result.message));
                status
            }
            Verdict::Xfail => {
                let mut status = TestCaseStatus::skipped();
                status.set_message(redactor.text(&result.message));
                status.set_type("xfail");
                status.set_description(redactor.text(&findings_text(result)));
                status
            }
            Verdict::Fail | Verdict::Error => {
                let kind = if result.verdict == Verdict::Fail {
                    NonSuccessKind::Failure
                } else {
                    NonSuccessKind::Error
                };
                let mut status = TestCaseStatus::non_success(kind);
                status.set_message(redactor.text(&format!(
                    "[{}] {}",
                    result.clauses.join(", "),
                    result.message
                )));
                status.set_type(result.verdict.as_str());
                let mut description = findings_text(result);
                description.push_str(&format!(
                    "\nreproduce:\n{}\n",
                    reproduction(context, result).join("\n")
                ));
                status.set_description(redactor.text(&description));
                status
            }
        };
        let mut test_case =
            TestCase::new(format!("{} [{}]", result.case, result.transport), status);
        test_case.set_classname(result.case.clone());
        test_case.set_time(Duration::from_secs_f64(result.duration_ms / 1000.0));
        if matches!(
            result.verdict,
            Verdict::Warn | Verdict::Info | Verdict::Fixed
        ) {
            test_case
                .set_system_out(redactor.text(&format!("{}: {}", result.verdict, result.message)));
        }
        suite.add_test_case(test_case);
    }
    if let Some(reason) = &context.report.interrupted {
        // A run that stopped early did not run what it left out: a CI reading only this
        // file sees a harness error, never a pass.
        let mut status = TestCaseStatus::non_success(NonSuccessKind::Error);
        status.set_message(redactor.text(reason));
        status.set_type("harness");
        let mut stopped = TestCase::new("the run stopped before its end", status);
        stopped.set_classname("harness");
        let mut suite = TestSuite::new("harness");
        suite.add_test_case(stopped);
        suites.insert("harness".to_owned(), suite);
    }
    report.add_test_suites(suites.into_values());
    let text = report
        .to_string()
        .unwrap_or_else(|error| format!("<!-- failed to render junit: {error} -->\n"));
    redactor.text(&text)
}

/// One line per finding: `verdict [clauses]: message`.
fn findings_text(result: &CaseResult) -> String {
    result
        .findings
        .iter()
        .map(|finding| {
            format!(
                "{} [{}]: {}\n",
                finding.verdict,
                finding.clauses.join(", "),
                finding.message
            )
        })
        .collect()
}
