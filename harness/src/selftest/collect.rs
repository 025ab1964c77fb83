//! The self-proofs' events and their fold back into the matrices. Each row is announced
//! whole ([`MatrixEvent::Row`], `type` `row`) and each matrix's end
//! ([`MatrixEvent::Matrix`], `type` `matrix`), through one [`MatrixSink`]
//! (`harness_model::events`: typed events whose JSON form is derived); the clean run, the
//! body of the reports, goes to the run's own sink. [`MatrixCollector`] folds the rows and
//! ends back, live or read back from a `--events` file, so `harness selftest` prints its
//! summaries and writes the matrices into `report.html` from the folded values; a matrix
//! asked for before its end has come is a [`MatrixCollectError`].

use std::borrow::Cow;
use std::time::Duration;

use serde::{Deserialize, Serialize};

use super::{FaultMatrix, FaultRow, VariantMatrix, VariantRow};
use harness_model::events::{Events, Sink, duration_ms};
use harness_model::results::RunReport;

/// Which self-proof a matrix row belongs to.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Matrix {
    /// Every check fails against a seeded fault.
    Faults,
    /// No check fails against a spec-open variant.
    Variants,
}

/// The events of the self-proofs' matrices.
#[derive(Debug)]
pub struct MatrixEvents;

impl Events for MatrixEvents {
    type Event<'a> = MatrixEvent<'a>;
}

/// Where the self-proofs send their [`MatrixEvent`]s.
pub type MatrixSink = Sink<MatrixEvents>;

/// What a matrix reports as it goes: its lines have `type` `row` or `matrix`.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum MatrixEvent<'a> {
    /// One row ended.
    Row(RowEvent<'a>),
    /// A matrix ended; every row of it was announced before.
    Matrix(MatrixEnd<'a>),
}

/// One row (`type` `row`).
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(tag = "event", rename_all = "snake_case")]
pub enum RowEvent<'a> {
    /// The row ended.
    Finished {
        /// The fault or the variants of the row.
        name: Cow<'a, str>,
        /// Whether the row proves what it should (fault caught, no false failure).
        passed: bool,
        /// The row as the terminal prints it.
        line: Cow<'a, str>,
        /// The matrix (`matrix`) and the row whole (`row`).
        #[serde(flatten)]
        row: MatrixRow<'a>,
    },
}

/// A row whole, of either matrix.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(tag = "matrix", content = "row", rename_all = "snake_case")]
pub enum MatrixRow<'a> {
    /// A fault's row: what caught it.
    Faults(Cow<'a, FaultRow>),
    /// A row of variants: the false failures found.
    Variants(Cow<'a, VariantRow>),
}

/// A matrix's end (`type` `matrix`).
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(tag = "event", rename_all = "snake_case")]
pub enum MatrixEnd<'a> {
    /// The matrix ended.
    Finished {
        /// The matrix.
        matrix: Matrix,
        /// Wall time of the whole matrix.
        #[serde(rename = "duration_ms", with = "duration_ms")]
        duration: Duration,
        /// Server `must` clauses no fault made fail (empty for the variant matrix).
        unkillable: Cow<'a, [String]>,
    },
}

/// A fault by its name, for `#[serde(with = "fault_name")]`.
pub(super) mod fault_name {
    use harness_server::serve::Fault;
    use serde::{Deserialize, Deserializer, Serializer, de::Error};

    pub(crate) fn serialize<S: Serializer>(
        fault: &Fault,
        serializer: S,
    ) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(fault.name())
    }

    pub(crate) fn deserialize<'de, D: Deserializer<'de>>(
        deserializer: D,
    ) -> Result<Fault, D::Error> {
        let name = String::deserialize(deserializer)?;
        Fault::from_name(&name).ok_or_else(|| D::Error::custom(format!("no fault is named {name}")))
    }
}

/// Variants by their names, for `#[serde(with = "variant_names")]`.
pub(super) mod variant_names {
    use harness_server::serve::Variant;
    use serde::{Deserialize, Deserializer, Serializer, de::Error};

    pub(crate) fn serialize<S: Serializer>(
        variants: &[Variant],
        serializer: S,
    ) -> Result<S::Ok, S::Error> {
        serializer.collect_seq(variants.iter().map(|variant| variant.name()))
    }

    pub(crate) fn deserialize<'de, D: Deserializer<'de>>(
        deserializer: D,
    ) -> Result<Vec<Variant>, D::Error> {
        Vec::<String>::deserialize(deserializer)?
            .iter()
            .map(|name| {
                Variant::from_name(name)
                    .ok_or_else(|| D::Error::custom(format!("no variant is named {name}")))
            })
            .collect()
    }
}

/// Why a [`MatrixCollector`] gives no matrix.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
pub enum MatrixCollectError {
    /// The matrix's end event has not come: the event stream stopped (or has not yet come)
    /// before the matrix finished.
    #[error("the {} matrix's event stream has no finish", match .matrix {
        Matrix::Faults => "fault",
        Matrix::Variants => "variant",
    })]
    Unfinished {
        /// The matrix asked for.
        matrix: Matrix,
    },
}

/// Gathers the rows of both matrices and their ends, in the order they were announced.
#[derive(Debug, Default)]
pub struct MatrixCollector {
    fault_rows: Vec<FaultRow>,
    variant_rows: Vec<VariantRow>,
    faults_finished: Option<(Duration, Vec<String>)>,
    variants_finished: Option<Duration>,
}

impl MatrixCollector {
    /// Takes in one event whole (a row read back is moved in, one announced is copied).
    pub fn observe(&mut self, event: MatrixEvent<'_>) {
        match event {
            MatrixEvent::Row(RowEvent::Finished { row, .. }) => match row {
                MatrixRow::Faults(row) => self.fault_rows.push(row.into_owned()),
                MatrixRow::Variants(row) => self.variant_rows.push(row.into_owned()),
            },
            MatrixEvent::Matrix(MatrixEnd::Finished {
                matrix: Matrix::Faults,
                duration,
                unkillable,
            }) => self.faults_finished = Some((duration, unkillable.into_owned())),
            MatrixEvent::Matrix(MatrixEnd::Finished {
                matrix: Matrix::Variants,
                duration,
                ..
            }) => self.variants_finished = Some(duration),
        }
    }

    /// Whether the fault matrix has finished.
    pub fn has_fault_matrix(&self) -> bool {
        self.faults_finished.is_some()
    }

    /// The fault matrix over `clean` (the clean run), once it has finished; its rows are
    /// taken out.
    pub fn fault_matrix(&mut self, clean: RunReport) -> Result<FaultMatrix, MatrixCollectError> {
        let (duration, unkillable) =
            self.faults_finished
                .take()
                .ok_or(MatrixCollectError::Unfinished {
                    matrix: Matrix::Faults,
                })?;
        Ok(FaultMatrix {
            clean,
            rows: std::mem::take(&mut self.fault_rows),
            unkillable,
            duration,
        })
    }

    /// The false-failure matrix, once it has finished; its rows are taken out.
    pub fn variant_matrix(&mut self) -> Result<VariantMatrix, MatrixCollectError> {
        let duration = self
            .variants_finished
            .take()
            .ok_or(MatrixCollectError::Unfinished {
                matrix: Matrix::Variants,
            })?;
        Ok(VariantMatrix {
            rows: std::mem::take(&mut self.variant_rows),
            duration,
        })
    }
}

#[cfg(test)]
mod tests {
    use harness_server::serve::{Fault, Variant};

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

    /// An event as its line, read back.
    fn read_back(event: &MatrixEvent<'_>) -> MatrixEvent<'static> {
        serde_json::from_str(&serde_json::to_string(event).unwrap()).unwrap()
    }

    fn clean() -> RunReport {
        RunReport {
            target: "reference".to_owned(),
            results: Vec::new(),
            duration: Duration::ZERO,
            redactor: Default::default(),
            side: harness_model::check::Side::Server,
            interrupted: None,
        }
    }

    #[test]
    fn rows_read_back_fold_into_the_matrices() {
        let (fault, variant) = (fault_row(), variant_row());
        let mut collector = MatrixCollector::default();
        let unkillable = vec!["auth.scope.enforced".to_owned()];
        for event in [
            MatrixEvent::Row(RowEvent::Finished {
                name: Cow::Borrowed(fault.fault.name()),
                passed: true,
                line: Cow::Owned(fault.line()),
                row: MatrixRow::Faults(Cow::Borrowed(&fault)),
            }),
            MatrixEvent::Matrix(MatrixEnd::Finished {
                matrix: Matrix::Faults,
                duration: Duration::from_secs(4),
                unkillable: Cow::Borrowed(&unkillable),
            }),
            MatrixEvent::Row(RowEvent::Finished {
                name: Cow::Owned(variant.name()),
                passed: false,
                line: Cow::Borrowed(""),
                row: MatrixRow::Variants(Cow::Borrowed(&variant)),
            }),
        ] {
            collector.observe(read_back(&event));
        }
        assert_eq!(
            collector.variant_matrix().unwrap_err().to_string(),
            "the variant matrix's event stream has no finish",
            "no end yet"
        );
        collector.observe(read_back(&MatrixEvent::Matrix(MatrixEnd::Finished {
            matrix: Matrix::Variants,
            duration: Duration::from_secs(5),
            unkillable: Cow::Borrowed(&[]),
        })));
        let variants = collector.variant_matrix().unwrap();
        assert_eq!(variants.rows[0].name(), "short-pages+oldest-first");
        assert_eq!(variants.rows[0].describe(), variant.describe());
        assert_eq!(variants.rows[0].suite_warnings, 3);
        assert_eq!(variants.rows[0].duration, variant.duration);
        assert_eq!(variants.duration, Duration::from_secs(5));
        let faults = collector.fault_matrix(clean()).unwrap();
        assert_eq!(faults.rows[0].line(), fault.line());
        assert_eq!(faults.rows[0].caught_by, fault.caught_by);
        assert_eq!(faults.rows[0].duration, fault.duration);
        assert_eq!(
            (faults.unkillable, faults.duration),
            (unkillable, Duration::from_secs(4))
        );
    }

    #[test]
    fn a_row_naming_no_fault_does_not_read_back() {
        let fault = fault_row();
        let line = serde_json::to_string(&MatrixEvent::Row(RowEvent::Finished {
            name: Cow::Borrowed("f"),
            passed: true,
            line: Cow::Borrowed(""),
            row: MatrixRow::Faults(Cow::Borrowed(&fault)),
        }))
        .unwrap();
        let value: serde_json::Value = serde_json::from_str(&line).unwrap();
        assert_eq!(
            (&value["type"], &value["event"], &value["matrix"]),
            (&"row".into(), &"finished".into(), &"faults".into())
        );
        assert_eq!(value["row"]["fault"], fault.fault.name());
        let broken = line.replace(fault.fault.name(), "no-such-fault");
        let error = serde_json::from_str::<MatrixEvent<'_>>(&broken).unwrap_err();
        assert!(error.to_string().contains("no-such-fault"), "{error}");
        let mut collector = MatrixCollector::default();
        assert_eq!(
            collector.fault_matrix(clean()).unwrap_err().to_string(),
            "the fault matrix's event stream has no finish",
            "no end"
        );
    }
}
