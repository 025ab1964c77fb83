//! Folds the self-proofs' events back into their matrices, as `harness run`'s reports are
//! folded from a run's (`harness_model::events::RunCollector`): `harness selftest` prints
//! its summaries and writes the matrices into `report.html` from the folded values. Each
//! row is announced whole as the `row` of an `Event::RowFinished` (its JSON form here:
//! [`FaultRow::to_json`], [`VariantRow::to_json`]), each matrix's end as an
//! `Event::MatrixFinished`; the clean run, the body of the reports, is folded by the run's
//! collector from the same stream.

use std::time::Duration;

use serde_json::{Value, json};

use super::{FaultMatrix, FaultRow, VariantMatrix, VariantRow};
use harness_model::events::{Event, Matrix, duration_of_ms, precise_ms};
use harness_model::results::RunReport;
use harness_server::serve::{Fault, Variant};

/// The strings of a JSON array of strings (`None` for anything else).
fn strings(value: &Value) -> Option<Vec<String>> {
    value
        .as_array()?
        .iter()
        .map(|item| item.as_str().map(str::to_owned))
        .collect()
}

impl FaultRow {
    /// The row as the `row` of its event.
    pub fn to_json(&self) -> Value {
        let caught_by: Vec<Value> = self
            .caught_by
            .iter()
            .map(|(case, transport, clauses)| {
                json!({"case": case, "transport": transport, "clauses": clauses})
            })
            .collect();
        json!({"fault": self.fault.name(), "caught_by": caught_by,
            "cites_its_clause": self.cites_its_clause,
            "duration_ms": precise_ms(&self.duration)})
    }

    /// The row [`FaultRow::to_json`] wrote (`None` for anything else).
    pub fn from_json(row: &Value) -> Option<FaultRow> {
        let caught_by = row["caught_by"]
            .as_array()?
            .iter()
            .map(|caught| {
                Some((
                    caught["case"].as_str()?.to_owned(),
                    caught["transport"].as_str()?.to_owned(),
                    strings(&caught["clauses"])?,
                ))
            })
            .collect::<Option<Vec<_>>>()?;
        Some(FaultRow {
            fault: Fault::from_name(row["fault"].as_str()?)?,
            caught_by,
            cites_its_clause: row["cites_its_clause"].as_bool()?,
            duration: duration_of_ms(&row["duration_ms"]),
        })
    }
}

impl VariantRow {
    /// The row as the `row` of its event.
    pub fn to_json(&self) -> Value {
        let variants: Vec<&str> = self.variants.iter().map(|variant| variant.name()).collect();
        json!({"variants": variants, "suite_failures": self.suite_failures,
            "suite_warnings": self.suite_warnings, "fuzz_findings": self.fuzz_findings,
            "judge_failures": self.judge_failures, "duration_ms": precise_ms(&self.duration)})
    }

    /// The row [`VariantRow::to_json`] wrote (`None` for anything else).
    pub fn from_json(row: &Value) -> Option<VariantRow> {
        let variants = strings(&row["variants"])?
            .iter()
            .map(|name| Variant::from_name(name))
            .collect::<Option<Vec<_>>>()?;
        Some(VariantRow {
            variants,
            suite_failures: strings(&row["suite_failures"])?,
            suite_warnings: usize::try_from(row["suite_warnings"].as_u64()?).ok()?,
            fuzz_findings: strings(&row["fuzz_findings"])?,
            judge_failures: strings(&row["judge_failures"])?,
            duration: duration_of_ms(&row["duration_ms"]),
        })
    }
}

/// Gathers the rows of both matrices and their ends, in the order they were announced.
#[derive(Debug, Default)]
pub struct MatrixCollector {
    fault_rows: Vec<FaultRow>,
    variant_rows: Vec<VariantRow>,
    faults_finished: Option<(Duration, Vec<String>)>,
    variants_finished: Option<Duration>,
    unreadable: Option<String>,
}

impl MatrixCollector {
    /// Takes in one event; those of other producers are ignored.
    pub fn observe(&mut self, event: &Event<'_>) {
        match event {
            Event::RowFinished {
                matrix: Matrix::Faults,
                name,
                row,
                ..
            } => match FaultRow::from_json(row) {
                Some(row) => self.fault_rows.push(row),
                None => self.unreadable = Some((*name).to_owned()),
            },
            Event::RowFinished {
                matrix: Matrix::Variants,
                name,
                row,
                ..
            } => match VariantRow::from_json(row) {
                Some(row) => self.variant_rows.push(row),
                None => self.unreadable = Some((*name).to_owned()),
            },
            Event::MatrixFinished {
                matrix: Matrix::Faults,
                duration,
                unkillable,
            } => self.faults_finished = Some((*duration, unkillable.to_vec())),
            Event::MatrixFinished {
                matrix: Matrix::Variants,
                duration,
                ..
            } => self.variants_finished = Some(*duration),
            _ => {}
        }
    }

    /// A row that did not fold back, by name.
    fn check(&self) -> Result<(), String> {
        match &self.unreadable {
            Some(name) => Err(format!("the matrix row {name} does not fold back")),
            None => Ok(()),
        }
    }

    /// The fault matrix over `clean` (the clean run, folded from the same stream), once it
    /// has finished; its rows are taken out.
    pub fn fault_matrix(&mut self, clean: RunReport) -> Result<FaultMatrix, String> {
        self.check()?;
        let (duration, unkillable) = self
            .faults_finished
            .take()
            .ok_or("the fault matrix's event stream has no finish")?;
        Ok(FaultMatrix {
            clean,
            rows: std::mem::take(&mut self.fault_rows),
            unkillable,
            duration,
        })
    }

    /// The false-failure matrix, once it has finished; its rows are taken out.
    pub fn variant_matrix(&mut self) -> Result<VariantMatrix, String> {
        self.check()?;
        let duration = self
            .variants_finished
            .take()
            .ok_or("the variant matrix's event stream has no finish")?;
        Ok(VariantMatrix {
            rows: std::mem::take(&mut self.variant_rows),
            duration,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fault_row() -> FaultRow {
        FaultRow {
            fault: Fault::EnvelopeNoJsonrpc,
            caught_by: vec![(
                "transport.ws_messages".to_owned(),
                "ws".to_owned(),
                vec!["env.response.jsonrpc".to_owned()],
            )],
            cites_its_clause: true,
            duration: Duration::from_micros(1_500),
        }
    }

    fn variant_row() -> VariantRow {
        VariantRow {
            variants: vec![Variant::ShortPages, Variant::OldestFirst],
            suite_failures: vec!["a [ws]: broken".to_owned()],
            suite_warnings: 3,
            fuzz_findings: Vec::new(),
            judge_failures: vec!["c [ws]: m".to_owned()],
            duration: Duration::from_millis(2),
        }
    }

    #[test]
    fn rows_fold_back_from_their_events_and_matrices_from_their_ends() {
        let (fault, variant) = (fault_row(), variant_row());
        let mut collector = MatrixCollector::default();
        let unkillable = vec!["auth.scope.enforced".to_owned()];
        for event in [
            Event::RowFinished {
                matrix: Matrix::Faults,
                name: fault.fault.name(),
                passed: true,
                line: &fault.line(),
                row: &fault.to_json(),
            },
            Event::MatrixFinished {
                matrix: Matrix::Faults,
                duration: Duration::from_secs(4),
                unkillable: &unkillable,
            },
            Event::RowFinished {
                matrix: Matrix::Variants,
                name: &variant.name(),
                passed: false,
                line: "",
                row: &variant.to_json(),
            },
        ] {
            collector.observe(&event);
        }
        assert!(collector.variant_matrix().is_err(), "no end yet");
        collector.observe(&Event::MatrixFinished {
            matrix: Matrix::Variants,
            duration: Duration::from_secs(5),
            unkillable: &[],
        });
        let variants = collector.variant_matrix().unwrap();
        assert_eq!(variants.rows[0].name(), "short-pages+oldest-first");
        assert_eq!(variants.rows[0].describe(), variant.describe());
        assert_eq!(variants.rows[0].suite_warnings, 3);
        assert_eq!(variants.rows[0].duration, variant.duration);
        assert_eq!(variants.duration, Duration::from_secs(5));
        let clean = RunReport {
            target: "reference".to_owned(),
            results: Vec::new(),
            duration: Duration::ZERO,
            redactor: Default::default(),
            side: harness_model::check::Side::Server,
            interrupted: None,
        };
        let faults = collector.fault_matrix(clean).unwrap();
        assert_eq!(faults.rows[0].line(), fault.line());
        assert_eq!(faults.rows[0].caught_by, fault.caught_by);
        assert_eq!(faults.rows[0].duration, fault.duration);
        assert_eq!(
            (faults.unkillable, faults.duration),
            (unkillable, Duration::from_secs(4))
        );
    }

    #[test]
    fn a_row_that_does_not_fold_back_is_an_error() {
        let mut row = fault_row().to_json();
        row["fault"] = json!("no-such-fault");
        let mut collector = MatrixCollector::default();
        collector.observe(&Event::RowFinished {
            matrix: Matrix::Faults,
            name: "no-such-fault",
            passed: true,
            line: "",
            row: &row,
        });
        collector.observe(&Event::MatrixFinished {
            matrix: Matrix::Faults,
            duration: Duration::ZERO,
            unkillable: &[],
        });
        assert!(VariantRow::from_json(&json!({"variants": ["nope"]})).is_none());
        let clean = RunReport {
            target: String::new(),
            results: Vec::new(),
            duration: Duration::ZERO,
            redactor: Default::default(),
            side: harness_model::check::Side::Server,
            interrupted: None,
        };
        let error = collector.fault_matrix(clean).unwrap_err();
        assert!(error.contains("no-such-fault"), "{error}");
    }
}
