//! Result schemas (`cases/schemas/*.json`), compiled once with the `jsonschema` crate.
//!
//! Every file is registered under its `$id`, so files refer to each other with relative
//! `$ref`s. The schema of a method's result is `method.<path with / as .>.json`.

use std::collections::BTreeMap;
use std::fmt;
use std::path::{Path, PathBuf};

use serde_json::Value;

/// Why the schema directory could not be loaded.
#[derive(Debug)]
pub enum SchemaError {
    /// A file or the directory could not be read.
    Read {
        /// The path.
        path: PathBuf,
        /// The cause.
        source: std::io::Error,
    },
    /// A file is not JSON or not a valid schema.
    Invalid {
        /// The path.
        path: PathBuf,
        /// What is wrong.
        message: String,
    },
}

impl fmt::Display for SchemaError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SchemaError::Read { path, source } => {
                write!(f, "failed to read {}: {source}", path.display())
            }
            SchemaError::Invalid { path, message } => write!(f, "{}: {message}", path.display()),
        }
    }
}

impl std::error::Error for SchemaError {}

/// One way an instance departs from a schema.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SchemaViolation {
    /// JSON pointer into the instance, e.g. `/logs/3/balance`.
    pub path: String,
    /// What is wrong.
    pub message: String,
}

impl fmt::Display for SchemaViolation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let path = if self.path.is_empty() {
            "/"
        } else {
            &self.path
        };
        write!(f, "{path}: {}", self.message)
    }
}

/// The compiled schemas, by name (file name without `.json`).
pub struct SchemaSet {
    validators: BTreeMap<String, jsonschema::Validator>,
}

impl fmt::Debug for SchemaSet {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SchemaSet")
            .field("names", &self.validators.keys().collect::<Vec<_>>())
            .finish()
    }
}

impl SchemaSet {
    /// Loads and compiles every `*.json` in a directory.
    pub fn load(dir: &Path) -> Result<SchemaSet, SchemaError> {
        let read_error = |path: &Path, source| SchemaError::Read {
            path: path.to_owned(),
            source,
        };
        let mut files = Vec::new();
        let entries = std::fs::read_dir(dir).map_err(|source| read_error(dir, source))?;
        for entry in entries {
            let path = entry.map_err(|source| read_error(dir, source))?.path();
            if path.extension().and_then(|ext| ext.to_str()) != Some("json") {
                continue;
            }
            let text =
                std::fs::read_to_string(&path).map_err(|source| read_error(&path, source))?;
            files.push((path, text));
        }
        SchemaSet::from_texts(
            files
                .iter()
                .map(|(path, text)| (path.as_path(), text.as_str())),
        )
    }

    /// Compiles schema texts, each named by its path's file stem (`method.public.auth`).
    pub(crate) fn from_texts<'a>(
        files: impl IntoIterator<Item = (&'a Path, &'a str)>,
    ) -> Result<SchemaSet, SchemaError> {
        let mut documents = BTreeMap::new();
        for (path, text) in files {
            let document: Value =
                serde_json::from_str(text).map_err(|error| SchemaError::Invalid {
                    path: path.to_owned(),
                    message: error.to_string(),
                })?;
            let name = path
                .file_stem()
                .and_then(|stem| stem.to_str())
                .unwrap_or_default()
                .to_owned();
            documents.insert(name, (path.to_owned(), document));
        }
        SchemaSet::compile(documents)
    }

    fn compile(documents: BTreeMap<String, (PathBuf, Value)>) -> Result<SchemaSet, SchemaError> {
        let mut options = jsonschema::options().with_draft(jsonschema::Draft::Draft202012);
        for (path, document) in documents.values() {
            let Some(id) = document.get("$id").and_then(Value::as_str) else {
                return Err(SchemaError::Invalid {
                    path: path.clone(),
                    message: "schema has no $id".to_owned(),
                });
            };
            options =
                options.with_resource(id, jsonschema::Resource::from_contents(document.clone()));
        }
        let mut validators = BTreeMap::new();
        for (name, (path, document)) in &documents {
            let validator = options
                .build(document)
                .map_err(|error| SchemaError::Invalid {
                    path: path.clone(),
                    message: error.to_string(),
                })?;
            validators.insert(name.clone(), validator);
        }
        Ok(SchemaSet { validators })
    }

    /// The schema name for a method's result, if there is one.
    pub fn for_method(&self, method: &str) -> Option<String> {
        let name = format!("method.{}", method.replace('/', "."));
        self.validators.contains_key(&name).then_some(name)
    }

    /// Whether a schema of this name exists.
    pub fn contains(&self, name: &str) -> bool {
        self.validators.contains_key(name)
    }

    /// Every schema name.
    pub fn names(&self) -> impl Iterator<Item = &str> {
        self.validators.keys().map(String::as_str)
    }

    /// Validates an instance; `None` when no schema has that name.
    pub fn validate(&self, name: &str, instance: &Value) -> Option<Vec<SchemaViolation>> {
        let validator = self.validators.get(name)?;
        // The common case, a valid instance, takes the fast path without collecting errors.
        if validator.is_valid(instance) {
            return Some(Vec::new());
        }
        Some(
            validator
                .iter_errors(instance)
                .map(|error| SchemaViolation {
                    path: error.instance_path().to_string(),
                    message: error.to_string(),
                })
                .collect(),
        )
    }
}
