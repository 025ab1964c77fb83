//! The tally of a judged session: for each (client clause, transport), how many requests
//! held and what was found against the others.
//!
//! Findings are kept per cell up to a cap, with the count of the rest, so a client that
//! breaks a rule on every one of a million requests costs bounded memory and a readable
//! report.

use std::collections::BTreeMap;

use crate::case::TransportKind;
use crate::check::Verdict;

/// Failures kept per (clause, transport); further ones are only counted.
const KEPT_PER_CELL: usize = 20;

/// Warnings and notes kept per (clause, transport): a repeated one says nothing new, and
/// must not crowd out the failures.
const KEPT_ADVISORIES: usize = 3;

/// One observation against a clause: a failure, a warning or a note.
#[derive(Clone, Debug, PartialEq)]
pub struct Noted {
    /// `Fail`, `Warn` or `Info`.
    pub verdict: Verdict,
    /// What was seen, as a lowercase fragment.
    pub message: String,
    /// The request it concerns ([`super::Record::seq`]), if one.
    pub seq: Option<u64>,
}

/// What was seen for one clause over one transport.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Cell {
    /// Requests (or sequences) that held.
    pub passes: usize,
    /// Failures (at most [`KEPT_PER_CELL`]), warnings and notes (at most
    /// [`KEPT_ADVISORIES`] each), in the order seen.
    pub noted: Vec<Noted>,
    /// Failures beyond those kept.
    pub more_failures: usize,
}

impl Cell {
    /// The verdict of the cell: the most severe of its failures, warnings and passes (by
    /// [`Verdict::worst`]); notes count only when nothing else was seen. `None` when the
    /// cell is empty.
    pub fn verdict(&self) -> Option<Verdict> {
        let judged = self
            .noted
            .iter()
            .map(|noted| noted.verdict)
            .filter(|verdict| *verdict != Verdict::Info)
            .chain((self.passes > 0).then_some(Verdict::Pass))
            .chain((self.more_failures > 0).then_some(Verdict::Fail))
            .max();
        judged.or_else(|| (!self.noted.is_empty()).then_some(Verdict::Info))
    }

    /// Failures seen, kept or not.
    pub fn failures(&self) -> usize {
        self.noted
            .iter()
            .filter(|noted| noted.verdict == Verdict::Fail)
            .count()
            + self.more_failures
    }
}

/// Everything seen, by clause and transport.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Tally {
    cells: BTreeMap<(String, TransportKind), Cell>,
}

impl Tally {
    /// A request (or sequence) that held `clause`.
    pub fn pass(&mut self, clause: &str, transport: TransportKind) {
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
        self.note(Verdict::Fail, clause, transport, seq, message.into());
    }

    /// Something that is not yet a failure but makes one likely.
    pub fn warn(
        &mut self,
        clause: &str,
        transport: TransportKind,
        seq: Option<u64>,
        message: impl Into<String>,
    ) {
        self.note(Verdict::Warn, clause, transport, seq, message.into());
    }

    /// An observation that is neither a pass nor a failure.
    pub fn info(
        &mut self,
        clause: &str,
        transport: TransportKind,
        seq: Option<u64>,
        message: impl Into<String>,
    ) {
        self.note(Verdict::Info, clause, transport, seq, message.into());
    }

    fn note(
        &mut self,
        verdict: Verdict,
        clause: &str,
        transport: TransportKind,
        seq: Option<u64>,
        message: String,
    ) {
        let cell = self.cell(clause, transport);
        let kept = cell
            .noted
            .iter()
            .filter(|noted| noted.verdict == verdict)
            .count();
        let cap = if verdict == Verdict::Fail {
            KEPT_PER_CELL
        } else {
            KEPT_ADVISORIES
        };
        if kept < cap {
            cell.noted.push(Noted {
                verdict,
                message,
                seq,
            });
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

    /// Every failure and warning as `clause [transport] #seq: message`, for test output.
    pub fn describe(&self) -> Vec<String> {
        self.iter()
            .flat_map(|(clause, transport, cell)| {
                cell.noted
                    .iter()
                    .filter(|noted| matches!(noted.verdict, Verdict::Fail | Verdict::Warn))
                    .map(move |noted| {
                        format!(
                            "{} {clause} [{transport}] #{}: {}",
                            noted.verdict,
                            noted.seq.unwrap_or(0),
                            noted.message
                        )
                    })
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_failure_outweighs_any_number_of_passes() {
        let mut tally = Tally::default();
        tally.pass("client.env.id", TransportKind::Ws);
        tally.pass("client.env.id", TransportKind::Ws);
        assert_eq!(
            tally
                .get("client.env.id", TransportKind::Ws)
                .unwrap()
                .verdict(),
            Some(Verdict::Pass)
        );
        tally.fail(
            "client.env.id",
            TransportKind::Ws,
            Some(3),
            "id is a string",
        );
        assert_eq!(
            tally
                .get("client.env.id", TransportKind::Ws)
                .unwrap()
                .verdict(),
            Some(Verdict::Fail)
        );
        assert_eq!(tally.failed_clauses(), vec!["client.env.id"]);
    }

    #[test]
    fn warnings_do_not_crowd_out_failures() {
        let mut tally = Tally::default();
        for seq in 0..30 {
            tally.warn(
                "client.sig.nonce_unique",
                TransportKind::Ws,
                Some(seq),
                "ts nonce",
            );
        }
        tally.fail(
            "client.sig.nonce_unique",
            TransportKind::Ws,
            Some(31),
            "reused",
        );
        let cell = tally
            .get("client.sig.nonce_unique", TransportKind::Ws)
            .unwrap();
        assert_eq!(cell.noted.len(), KEPT_ADVISORIES + 1);
        assert_eq!(cell.verdict(), Some(Verdict::Fail));
    }

    #[test]
    fn findings_beyond_the_cap_are_counted_not_kept() {
        let mut tally = Tally::default();
        for seq in 0..100 {
            tally.fail(
                "client.env.params",
                TransportKind::HttpBody,
                Some(seq),
                "array",
            );
        }
        let cell = tally
            .get("client.env.params", TransportKind::HttpBody)
            .unwrap();
        assert_eq!(cell.noted.len(), KEPT_PER_CELL);
        assert_eq!(cell.failures(), 100);
    }
}
