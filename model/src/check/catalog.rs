//! The clause catalog (`cases/clauses.toml`): every testable statement of SPEC.md, with
//! its level and, for a `must` clause, the SPEC.md words it enforces (its quote).

use std::collections::BTreeMap;
use std::path::Path;

use serde::Deserialize;

use super::Verdict;
use super::domain::Domain;
use super::quote::{self, SpecText};
use super::statements::Statements;
use harness_protocol::file_error::FileError;

/// How binding a clause is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Level {
    /// SPEC.md states the rule (the clause quotes it): breaking it is a failure.
    Must,
    /// What is seen is suspicious but legal (no quote makes it wrong): a warning.
    Warn,
    /// SPEC.md only describes, or leaves the point open: what is seen is reported.
    Info,
}

impl Level {
    /// The verdict of a finding on a clause of this level.
    pub fn verdict(self) -> Verdict {
        match self {
            Level::Must => Verdict::Fail,
            Level::Warn => Verdict::Warn,
            Level::Info => Verdict::Info,
        }
    }

    /// The lowercase name used in the catalog and the reports.
    pub fn as_str(self) -> &'static str {
        match self {
            Level::Must => "must",
            Level::Warn => "warn",
            Level::Info => "info",
        }
    }
}

/// Whom a clause binds.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Side {
    /// The server.
    Server,
    /// The client.
    Client,
}

/// One testable statement.
#[derive(Clone, Debug, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Clause {
    /// Stable dotted id, e.g. `auth.client_signature.window`.
    pub id: String,
    /// SPEC.md section.
    pub section: String,
    /// `must`, `warn` or `info`.
    pub level: Level,
    /// `server` or `client`.
    pub side: Side,
    /// The statement in short.
    pub text: String,
    /// The SPEC.md words the clause enforces, each a contiguous run of SPEC.md text
    /// (`quote = "..."` or `quote = ["...", "..."]`); every `must` clause has one.
    #[serde(default, deserialize_with = "quote::one_or_many")]
    pub quote: Vec<String>,
    /// Why the clause has its level where that is not obvious, e.g. what SPEC.md leaves open.
    #[serde(default)]
    pub note: Option<String>,
    /// The points of the space the rule ranges over that its cases must reach (every
    /// `must` clause has one; `tests/it/domains.rs`).
    #[serde(default)]
    pub domain: Option<Domain>,
    /// Line of the clause's `[[clause]]` header in its file (set by the loader).
    #[serde(skip)]
    pub line: usize,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct CatalogFile {
    clause: Vec<Clause>,
}

/// All clauses, by id, in catalog order.
#[derive(Clone, Debug, Default)]
pub struct Catalog {
    clauses: Vec<Clause>,
    index: BTreeMap<String, usize>,
    statements: Statements,
}

impl Catalog {
    /// Loads `clauses.toml`, and the traceability table `statements.toml` beside it when
    /// there is one (a corpus without it has an empty table).
    pub fn load(path: &Path) -> Result<Catalog, FileError> {
        let text = std::fs::read_to_string(path).map_err(|error| {
            FileError::new(path, 0, format!("failed to read clause catalog: {error}"))
        })?;
        let mut catalog = Catalog::parse(path, &text)?;
        let table = path.with_file_name("statements.toml");
        if table.is_file() {
            catalog.statements = Statements::load(&table)?;
        }
        Ok(catalog)
    }

    /// Parses catalog text; duplicate ids and empty quotes are errors.
    pub fn parse(path: &Path, text: &str) -> Result<Catalog, FileError> {
        let mut file: CatalogFile =
            toml::from_str(text).map_err(|error| FileError::from_toml(path, text, &error))?;
        let headers: Vec<usize> = text
            .lines()
            .enumerate()
            .filter(|(_, line)| line.trim() == "[[clause]]")
            .map(|(number, _)| number + 1)
            .collect();
        let mut index = BTreeMap::new();
        for (position, clause) in file.clause.iter_mut().enumerate() {
            clause.line = headers.get(position).copied().unwrap_or(0);
            if index.insert(clause.id.clone(), position).is_some() {
                return Err(FileError::new(
                    path,
                    clause.line,
                    format!("duplicate clause id \"{}\"", clause.id),
                ));
            }
            if clause
                .quote
                .iter()
                .any(|text| quote::normalize_quote(text).is_empty())
            {
                return Err(FileError::new(
                    path,
                    clause.line,
                    format!("clause \"{}\" has an empty quote", clause.id),
                ));
            }
        }
        Ok(Catalog {
            clauses: file.clause,
            index,
            statements: Statements::default(),
        })
    }

    /// The traceability table: SPEC.md's statements and the clauses that check them.
    pub fn statements(&self) -> &Statements {
        &self.statements
    }

    /// The clause with this id.
    pub fn get(&self, id: &str) -> Option<&Clause> {
        self.index.get(id).map(|&position| &self.clauses[position])
    }

    /// Every clause, in catalog order.
    pub fn iter(&self) -> impl Iterator<Item = &Clause> {
        self.clauses.iter()
    }

    /// Every clause id, in catalog order.
    pub fn ids(&self) -> impl Iterator<Item = &str> {
        self.clauses.iter().map(|clause| clause.id.as_str())
    }

    /// The level of a clause; unknown ids count as `must`.
    pub fn level(&self, id: &str) -> Level {
        self.get(id).map_or(Level::Must, |clause| clause.level)
    }

    /// The embedded clause catalog (`cases/clauses.toml` with its statements table),
    /// without loading the cases: for code that needs only the clauses' levels.
    pub fn embedded() -> Result<Catalog, FileError> {
        let file = |inner: &str| {
            harness_cases::FILES
                .iter()
                .find(|file| file.path == inner)
                .map(|file| (Path::new("cases").join(file.path), file.text))
        };
        let (shown, text) = file("clauses.toml").ok_or_else(|| {
            FileError::new(
                Path::new("cases/clauses.toml"),
                0,
                "the corpus has no catalog",
            )
        })?;
        let mut catalog = Catalog::parse(&shown, text)?;
        if let Some((shown, text)) = file("statements.toml") {
            catalog = catalog.with_statements(Statements::parse(&shown, text)?);
        }
        Ok(catalog)
    }

    /// The verdict of a finding on these clauses: the most severe their levels give (fail
    /// if any is `must`, else warn if any is `warn`, else info).
    pub fn finding_verdict(&self, clauses: &[String]) -> Verdict {
        clauses
            .iter()
            .map(|clause| self.level(clause).verdict())
            .fold(Verdict::Info, Verdict::worst)
    }

    /// The known clauses among these ids, each once, in the order given.
    pub(crate) fn clauses_of<'a>(
        &'a self,
        ids: impl IntoIterator<Item = &'a String>,
    ) -> Vec<&'a Clause> {
        let mut seen = Vec::new();
        for id in ids {
            if let Some(clause) = self.get(id)
                && !seen.iter().any(|known: &&Clause| known.id == clause.id)
            {
                seen.push(clause);
            }
        }
        seen
    }

    /// What is wrong with the quotes against the text of SPEC.md, one `line: message` each:
    /// a `must` clause without a quote, or a quote SPEC.md does not contain (compared as
    /// [`quote::normalize_quote`] says).
    pub fn quote_problems(&self, spec: &str) -> Vec<String> {
        let spec = SpecText::new(spec);
        let mut problems = Vec::new();
        for clause in &self.clauses {
            if clause.level == Level::Must && clause.quote.is_empty() {
                problems.push(format!(
                    "{}: must clause \"{}\" has no quote: give the SPEC.md words it enforces, or make it warn or info",
                    clause.line, clause.id
                ));
            }
            for text in clause.quote.iter().filter(|text| !spec.contains(text)) {
                problems.push(format!(
                    "{}: a quote of clause \"{}\" is not in SPEC.md: \"{text}\"",
                    clause.line, clause.id
                ));
            }
        }
        problems
    }
}

impl Catalog {
    /// This catalog with this traceability table (a corpus that is not a directory, such
    /// as the embedded one, parses the table itself).
    pub(crate) fn with_statements(mut self, statements: Statements) -> Catalog {
        self.statements = statements;
        self
    }
}

#[cfg(test)]
impl Catalog {
    /// Gives the clause `id` this domain (for tests of the reports).
    pub(crate) fn set_domain(&mut self, id: &str, domain: Domain) {
        if let Some(&position) = self.index.get(id) {
            self.clauses[position].domain = Some(domain);
        }
    }

    /// A catalog for tests of these `(id, section, level, side)` clauses, each with text `t`
    /// and no quote.
    pub(crate) fn of_clauses(clauses: &[(&str, &str, Level, Side)]) -> Catalog {
        let clauses: Vec<Clause> = clauses
            .iter()
            .map(|&(id, section, level, side)| Clause {
                id: id.to_owned(),
                section: section.to_owned(),
                level,
                side,
                text: "t".to_owned(),
                quote: Vec::new(),
                note: None,
                domain: None,
                line: 0,
            })
            .collect();
        let index = clauses
            .iter()
            .enumerate()
            .map(|(position, clause)| (clause.id.clone(), position))
            .collect();
        Catalog {
            clauses,
            index,
            statements: Statements::default(),
        }
    }
}

#[cfg(test)]
mod tests;
