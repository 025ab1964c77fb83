//! The tally of a judged session: for each (client clause, transport), how many requests
//! held, the [`Finding`]s against the others, and the notes that are neither.
//!
//! The judge speaks the harness's one verdict vocabulary: a failure or a warning is a
//! [`Finding`] with its [`Verdict`], and a cell's verdict is the most severe of them by
//! [`Verdict::worst`]. A note (a scheme name seen, a signature that cannot be checked) is
//! not a verdict: it ends up in the result's notes, and a cell that only has notes was not
//! judged.
//!
//! Findings are kept per cell up to a cap, with the count of the rest, so a client that
//! breaks a rule on every one of a million requests costs bounded memory and a readable
//! report.

use std::collections::BTreeMap;

use harness_model::check::{Finding, Verdict};
use harness_protocol::wire::TransportKind;

/// Failures kept per (clause, transport); further ones are only counted.
const KEPT_PER_CELL: usize = 20;

/// Warnings and notes kept per (clause, transport): a repeated one says nothing new, and
/// must not crowd out the failures.
const KEPT_ADVISORIES: usize = 3;

/// What was seen for one clause over one transport.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Cell {
    /// Requests (or sequences) that held.
    pub passes: usize,
    /// Failures (at most `KEPT_PER_CELL`) and warnings (at most `KEPT_ADVISORIES`),
    /// in the order seen.
    pub findings: Vec<Finding>,
    /// The request each finding concerns ([`super::Record::seq`]), index for index.
    pub(crate) requests: Vec<Option<u64>>,
    /// Observations that are not verdicts, each once (at most `KEPT_ADVISORIES`).
    pub notes: Vec<String>,
    /// Failures beyond those kept.
    pub(crate) more_failures: usize,
}

impl Cell {
    /// The verdict of the cell: the most severe of its findings and passes, by
    /// [`Verdict::worst`]. `None` when nothing was judged (notes alone judge nothing).
    pub fn verdict(&self) -> Option<Verdict> {
        self.findings
            .iter()
            .map(|finding| finding.verdict)
            .chain((self.passes > 0).then_some(Verdict::Pass))
            .chain((self.more_failures > 0).then_some(Verdict::Fail))
            .reduce(Verdict::worst)
    }

    /// Failures seen, kept or not.
    pub fn failures(&self) -> usize {
        self.findings
            .iter()
            .filter(|finding| finding.verdict == Verdict::Fail)
            .count()
            + self.more_failures
    }

    /// The kept findings with the request each concerns.
    pub(crate) fn findings_with_requests(&self) -> impl Iterator<Item = (&Finding, Option<u64>)> {
        self.findings.iter().zip(self.requests.iter().copied())
    }
}

/// Everything seen, by clause and transport.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Tally {
    cells: BTreeMap<(String, TransportKind), Cell>,
}

impl Tally {
    /// A request (or sequence) that held `clause`.
    pub(crate) fn pass(&mut self, clause: &str, transport: TransportKind) {
        self.cell(clause, transport).passes += 1;
    }

    /// A request that broke `clause`.
    pub fn fail(
        &mut self,
        clause: &str,
        transport: TransportKind,
        seq: Option<u64>,
        message: impl Into<String>,
    ) {
        self.find(Verdict::Fail, clause, transport, seq, message.into());
    }

    /// Request `seq` held `clause` when `held`; otherwise it broke it, as `message` (built
    /// only then) says.
    pub(crate) fn judge(
        &mut self,
        clause: &str,
        transport: TransportKind,
        seq: u64,
        held: bool,
        message: impl FnOnce() -> String,
    ) {
        if held {
            self.pass(clause, transport);
        } else {
            self.fail(clause, transport, Some(seq), message());
        }
    }

    /// Something SPEC.md does not forbid but that is likely a bug, with the explanation.
    pub fn warn(
        &mut self,
        clause: &str,
        transport: TransportKind,
        seq: Option<u64>,
        message: impl Into<String>,
    ) {
        self.find(Verdict::Warn, clause, transport, seq, message.into());
    }

    /// An observation that is no verdict at all; the same note is kept once.
    pub fn note(&mut self, clause: &str, transport: TransportKind, message: impl Into<String>) {
        let message = message.into();
        let cell = self.cell(clause, transport);
        if cell.notes.len() < KEPT_ADVISORIES && !cell.notes.contains(&message) {
            cell.notes.push(message);
        }
    }

    fn find(
        &mut self,
        verdict: Verdict,
        clause: &str,
        transport: TransportKind,
        seq: Option<u64>,
        message: String,
    ) {
        let cell = self.cell(clause, transport);
        let kept = cell
            .findings
            .iter()
            .filter(|finding| finding.verdict == verdict)
            .count();
        let cap = if verdict == Verdict::Fail {
            KEPT_PER_CELL
        } else {
            KEPT_ADVISORIES
        };
        if kept < cap {
            cell.findings
                .push(Finding::new(verdict, vec![clause.to_owned()], message));
            cell.requests.push(seq);
        } else if verdict == Verdict::Fail {
            cell.more_failures += 1;
        }
    }

    fn cell(&mut self, clause: &str, transport: TransportKind) -> &mut Cell {
        self.cells
            .entry((clause.to_owned(), transport))
            .or_default()
    }

    /// The cell of a clause over a transport, if anything was seen.
    pub fn get(&self, clause: &str, transport: TransportKind) -> Option<&Cell> {
        self.cells.get(&(clause.to_owned(), transport))
    }

    /// Every cell, by clause then transport.
    pub fn iter(&self) -> impl Iterator<Item = (&str, TransportKind, &Cell)> {
        self.cells
            .iter()
            .map(|((clause, transport), cell)| (clause.as_str(), *transport, cell))
    }

    /// The clauses with at least one failure, in order, each once.
    pub fn failed_clauses(&self) -> Vec<&str> {
        let mut clauses: Vec<&str> = self
            .iter()
            .filter(|(_, _, cell)| cell.failures() > 0)
            .map(|(clause, _, _)| clause)
            .collect();
        clauses.dedup();
        clauses
    }

    /// Every failure kept, as (clause, message), by clause: what a live refusal cites.
    pub fn failures(&self) -> impl Iterator<Item = (&str, &str)> {
        self.iter().flat_map(|(clause, _, cell)| {
            cell.findings
                .iter()
                .filter(|finding| finding.verdict == Verdict::Fail)
                .map(move |finding| (clause, finding.message.as_str()))
        })
    }

    /// Every finding as `verdict clause [transport] #seq: message`, for test output.
    pub fn describe(&self) -> Vec<String> {
        self.iter()
            .flat_map(|(clause, transport, cell)| {
                cell.findings_with_requests().map(move |(finding, seq)| {
                    format!(
                        "{} {clause} [{transport}] #{}: {}",
                        finding.verdict,
                        seq.unwrap_or(0),
                        finding.message
                    )
                })
            })
            .collect()
    }

    /// Every note as `note clause [transport]: message`, for test output.
    pub fn describe_notes(&self) -> Vec<String> {
        self.iter()
            .flat_map(|(clause, transport, cell)| {
                cell.notes
                    .iter()
                    .map(move |note| format!("note {clause} [{transport}]: {note}"))
            })
            .collect()
    }
}

/// Test support: asserts that `findings` (as [`Tally::describe`] writes them) are exactly
/// one, of `verdict` when given, containing every one of `parts`.
#[cfg(test)]
pub(crate) fn assert_only_finding(findings: &[String], verdict: Option<Verdict>, parts: &[&str]) {
    assert_eq!(findings.len(), 1, "{findings:?}");
    let finding = &findings[0];
    assert!(
        verdict.is_none_or(|verdict| finding.starts_with(&format!("{verdict} "))),
        "{findings:?}"
    );
    assert!(
        parts.iter().all(|part| finding.contains(part)),
        "{findings:?}"
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_cell_keeps_each_note_once_and_a_few_at_most() {
        let mut tally = Tally::default();
        for round in 0..2 {
            for n in 0..KEPT_ADVISORIES + 2 {
                tally.note(
                    "client.env.id",
                    TransportKind::Ws,
                    format!("note {n} {round}"),
                );
            }
        }
        tally.note("client.env.jsonrpc", TransportKind::Ws, "once");
        tally.note("client.env.jsonrpc", TransportKind::Ws, "once");
        let notes = |clause: &str| tally.get(clause, TransportKind::Ws).unwrap().notes.clone();
        assert_eq!(notes("client.env.id").len(), KEPT_ADVISORIES);
        assert_eq!(notes("client.env.jsonrpc"), ["once"]);
    }

    #[test]
    fn a_failure_outweighs_any_number_of_passes() {
        let mut tally = Tally::default();
        tally.pass("client.env.id", TransportKind::Ws);
        tally.pass("client.env.id", TransportKind::Ws);
        let verdict = |tally: &Tally| tally.get("client.env.id", TransportKind::Ws)?.verdict();
        assert_eq!(verdict(&tally), Some(Verdict::Pass));
        tally.fail(
            "client.env.id",
            TransportKind::Ws,
            Some(3),
            "id is a string",
        );
        assert_eq!(verdict(&tally), Some(Verdict::Fail));
        assert_eq!(tally.failed_clauses(), vec!["client.env.id"]);
        assert_eq!(
            tally.failures().next(),
            Some(("client.env.id", "id is a string"))
        );
    }

    #[test]
    fn notes_are_no_verdict_and_do_not_change_one() {
        let mut tally = Tally::default();
        let clause = "client.signed.well_formed";
        tally.note(clause, TransportKind::HttpQuery, "scheme x");
        tally.note(clause, TransportKind::HttpQuery, "scheme x");
        let cell = tally.get(clause, TransportKind::HttpQuery).unwrap();
        assert_eq!(cell.verdict(), None);
        assert_eq!(cell.notes, vec!["scheme x"]);
        tally.pass(clause, TransportKind::HttpQuery);
        let cell = tally.get(clause, TransportKind::HttpQuery).unwrap();
        assert_eq!(cell.verdict(), Some(Verdict::Pass));
    }

    /// A tally with `n` findings of `verdict` (warn, else fail) on one cell, one a request.
    fn flooded(clause: &str, transport: TransportKind, verdict: Verdict, n: u64) -> Tally {
        let mut tally = Tally::default();
        for seq in 0..n {
            match verdict {
                Verdict::Warn => tally.warn(clause, transport, Some(seq), "ts nonce"),
                _ => tally.fail(clause, transport, Some(seq), "array"),
            }
        }
        tally
    }

    #[test]
    fn warnings_do_not_crowd_out_failures() {
        let (clause, ws) = ("client.sig.nonce_unique", TransportKind::Ws);
        let mut tally = flooded(clause, ws, Verdict::Warn, 30);
        tally.fail(clause, ws, Some(31), "reused");
        let cell = tally.get(clause, ws).unwrap();
        assert_eq!(cell.findings.len(), KEPT_ADVISORIES + 1);
        assert_eq!(cell.requests.last(), Some(&Some(31)));
        assert_eq!(cell.verdict(), Some(Verdict::Fail));
    }

    #[test]
    fn findings_beyond_the_cap_are_counted_not_kept() {
        let (clause, body) = ("client.env.params", TransportKind::HttpBody);
        let tally = flooded(clause, body, Verdict::Fail, 100);
        let cell = tally.get(clause, body).unwrap();
        assert_eq!(cell.findings.len(), KEPT_PER_CELL);
        assert_eq!(cell.failures(), 100);
    }
}
