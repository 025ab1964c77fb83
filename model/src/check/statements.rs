//! The traceability table (`cases/statements.toml`, beside the clause catalog): every
//! normative statement of SPEC.md, with the clauses that check it or a one-line excuse why
//! it cannot be checked from outside. [`Statements::problems`] compares the table with
//! SPEC.md itself (the statements [`spec_statements`] finds), so a statement the catalog
//! skipped, a statement whose words changed and a clause id that does not exist all show.

mod extract;

pub use extract::{SpecStatement, StatementKind, spec_statements};

use std::collections::BTreeMap;
use std::path::Path;

use serde::Deserialize;

use super::Catalog;
use harness_protocol::file_error::FileError;

/// The longest excuse, in characters: an excuse is one line of a report.
pub(crate) const EXCUSE_MAX_CHARS: usize = 160;

/// One statement of SPEC.md and what accounts for it.
#[derive(Clone, Debug, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Statement {
    /// Section plus ordinal, e.g. `5.5.4`: stable, never reused.
    pub id: String,
    /// The statement exactly as [`spec_statements`] extracts it.
    pub text: String,
    /// The clause ids that check it.
    #[serde(default)]
    pub clauses: Vec<String>,
    /// Why it is not (or only in part) checked from outside, in one line.
    #[serde(default)]
    pub excuse: Option<String>,
    /// Line of its `[[statement]]` header (set by the loader).
    #[serde(skip)]
    pub line: usize,
}

impl Statement {
    /// The section of its id: everything before the last dot (`5.5` of `5.5.4`).
    pub fn section(&self) -> &str {
        self.id.rsplit_once('.').map_or("", |(section, _)| section)
    }
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct StatementsFile {
    statement: Vec<Statement>,
}

/// The table, in file order.
#[derive(Clone, Debug, Default)]
pub struct Statements {
    statements: Vec<Statement>,
}

impl Statements {
    /// Loads `statements.toml`.
    pub fn load(path: &Path) -> Result<Statements, FileError> {
        let text = std::fs::read_to_string(path).map_err(|error| {
            FileError::new(path, 0, format!("failed to read statement table: {error}"))
        })?;
        Statements::parse(path, &text)
    }

    /// Parses table text. Duplicate ids, an id that is not a section plus an ordinal, an
    /// empty text, an entry with neither clauses nor excuse, and an excuse that is not one
    /// short line are errors.
    pub fn parse(path: &Path, text: &str) -> Result<Statements, FileError> {
        let mut file: StatementsFile =
            toml::from_str(text).map_err(|error| FileError::from_toml(path, text, &error))?;
        let headers = text
            .lines()
            .enumerate()
            .filter(|(_, line)| line.trim() == "[[statement]]")
            .map(|(number, _)| number + 1);
        let mut ids = BTreeMap::new();
        for (statement, header) in file.statement.iter_mut().zip(headers) {
            statement.line = header;
            let fault = entry_fault(statement);
            let fault = fault.or_else(|| {
                ids.insert(statement.id.clone(), header).map(|first| {
                    format!(
                        "duplicate statement id \"{}\" (first at line {first})",
                        statement.id
                    )
                })
            });
            if let Some(message) = fault {
                return Err(FileError::new(path, header, message));
            }
        }
        Ok(Statements {
            statements: file.statement,
        })
    }

    /// Every statement, in file order.
    pub fn iter(&self) -> impl Iterator<Item = &Statement> {
        self.statements.iter()
    }

    /// How many statements the table holds.
    pub fn len(&self) -> usize {
        self.statements.len()
    }

    /// Whether the table is empty (a corpus without `statements.toml`).
    pub fn is_empty(&self) -> bool {
        self.statements.is_empty()
    }

    /// What is wrong with the table against the text of SPEC.md and the catalog, one
    /// `line: message` each (line 0 for a statement the table lacks): a SPEC.md statement
    /// neither mapped nor excused, a table text SPEC.md no longer holds, an id whose section
    /// is not the statement's, and a clause id the catalog does not know.
    pub fn problems(&self, spec: &str, catalog: &Catalog) -> Vec<String> {
        let found = spec_statements(spec);
        let mut problems = Vec::new();
        let mut unmatched: Vec<&Statement> = self.statements.iter().collect();
        let mut next_ordinal: BTreeMap<&str, usize> = BTreeMap::new();
        for statement in &self.statements {
            let ordinal = statement
                .id
                .rsplit_once('.')
                .and_then(|(_, ordinal)| ordinal.parse::<usize>().ok())
                .unwrap_or(0);
            let next = next_ordinal.entry(statement.section()).or_insert(1);
            *next = (*next).max(ordinal + 1);
        }
        for spec_statement in &found {
            let position = unmatched
                .iter()
                .position(|statement| statement.text == spec_statement.text);
            match position.map(|position| unmatched.remove(position)) {
                Some(statement) if statement.section() != spec_statement.section => {
                    problems.push(format!(
                        "{}: statement \"{}\" is in SPEC.md section {} (SPEC.md line {}): give it an id {}.<n>",
                        statement.line,
                        statement.id,
                        spec_statement.section,
                        spec_statement.line,
                        spec_statement.section
                    ));
                }
                Some(_) => {}
                None => {
                    let next = next_ordinal
                        .get(spec_statement.section.as_str())
                        .copied()
                        .unwrap_or(1);
                    problems.push(format!(
                        "0: SPEC.md line {} states \"{}\", which the table neither maps nor excuses: add it as id \"{}.{next}\" with its clauses or an excuse",
                        spec_statement.line, spec_statement.text, spec_statement.section
                    ));
                }
            }
        }
        for statement in unmatched {
            problems.push(format!(
                "{}: the text of statement \"{}\" is no longer a statement of SPEC.md: \"{}\"",
                statement.line, statement.id, statement.text
            ));
        }
        for statement in &self.statements {
            for clause in statement
                .clauses
                .iter()
                .filter(|clause| catalog.get(clause).is_none())
            {
                problems.push(format!(
                    "{}: statement \"{}\" maps to clause \"{clause}\", which is not in the catalog",
                    statement.line, statement.id
                ));
            }
        }
        problems
    }
}

/// What is wrong with one entry on its own, if anything.
fn entry_fault(statement: &Statement) -> Option<String> {
    let id = &statement.id;
    let ordinal_ok = statement
        .id
        .rsplit_once('.')
        .is_some_and(|(section, ordinal)| {
            !section.is_empty()
                && section
                    .split('.')
                    .all(|piece| !piece.is_empty() && piece.bytes().all(|b| b.is_ascii_digit()))
                && ordinal.parse::<usize>().is_ok_and(|ordinal| ordinal >= 1)
        });
    if !ordinal_ok {
        return Some(format!(
            "statement id \"{id}\" is not a section plus an ordinal, e.g. \"5.5.4\""
        ));
    }
    if statement.text.trim().is_empty() {
        return Some(format!("statement \"{id}\" has an empty text"));
    }
    match &statement.excuse {
        None if statement.clauses.is_empty() => Some(format!(
            "statement \"{id}\" has neither clauses nor an excuse: map it to the clauses that check it, or say in one line why none can"
        )),
        Some(excuse) if excuse.trim().is_empty() => {
            Some(format!("statement \"{id}\" has an empty excuse"))
        }
        Some(excuse) if excuse.contains('\n') || excuse.chars().count() > EXCUSE_MAX_CHARS => {
            Some(format!(
                "the excuse of statement \"{id}\" is not one line of at most {EXCUSE_MAX_CHARS} characters"
            ))
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests;
