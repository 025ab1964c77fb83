//! The clause catalog (`cases/clauses.toml`): every testable statement of SPEC.md.

use std::collections::BTreeMap;
use std::path::Path;

use serde::Deserialize;

use crate::file_error::FileError;

/// How binding a clause is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Level {
    /// The spec states a rule: breaking it is a failure.
    Must,
    /// The spec only describes: what is seen is reported, never failed.
    Info,
}

/// Whom a clause binds.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize)]
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
    /// `must` or `info`.
    pub level: Level,
    /// `server` or `client`.
    pub side: Side,
    /// The statement in short.
    pub text: String,
    /// The words of SPEC.md the clause enforces, verbatim.
    #[serde(default)]
    pub quote: Option<String>,
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
}

impl Catalog {
    /// Loads `clauses.toml`.
    pub fn load(path: &Path) -> Result<Catalog, FileError> {
        let text = std::fs::read_to_string(path).map_err(|error| {
            FileError::new(path, 0, format!("failed to read clause catalog: {error}"))
        })?;
        Catalog::parse(path, &text)
    }

    /// Parses catalog text; duplicate ids are an error.
    pub fn parse(path: &Path, text: &str) -> Result<Catalog, FileError> {
        let file: CatalogFile =
            toml::from_str(text).map_err(|error| FileError::from_toml(path, text, &error))?;
        let mut index = BTreeMap::new();
        for (position, clause) in file.clause.iter().enumerate() {
            if index.insert(clause.id.clone(), position).is_some() {
                let line = text
                    .find(&format!("\"{}\"", clause.id))
                    .map_or(0, |offset| crate::file_error::line_of(text, offset));
                return Err(FileError::new(
                    path,
                    line,
                    format!("duplicate clause id \"{}\"", clause.id),
                ));
            }
        }
        Ok(Catalog {
            clauses: file.clause,
            index,
        })
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
}
