//! The corpus a run reads: the clause catalog (`clauses.toml`) with its traceability table
//! (`statements.toml`), the result schemas (`schemas/*.json`) and the case files, parsed from the texts the `harness-cases` crate
//! embeds at build time, from a team's own directory (`--cases DIR`), or from either with a
//! team's case files added (`--add-cases DIR`).
//!
//! Nothing here reads a path compiled in: an installed binary, a release binary or a
//! container image runs the suite from any folder with the source tree gone. A directory
//! and the embedded corpus go through one path ([`Corpus::load`]): the same files, the same
//! roles, the same checks, the same `path:line` errors.

use std::borrow::Cow;
use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::{Arc, LazyLock};

use crate::case::{self, Case};
use crate::check::{Catalog, SchemaError, SchemaSet, Statements};
use harness_protocol::file_error::FileError;

/// SHA-256 of the embedded corpus (every file's path, length and text, in path order).
pub const DIGEST: &str = harness_cases::DIGEST;

/// The catalog, schemas and cases a run reads.
#[derive(Clone, Debug)]
pub struct Corpus {
    /// The clause catalog.
    pub catalog: Arc<Catalog>,
    /// The compiled result schemas.
    pub schemas: Arc<SchemaSet>,
    /// The cases, base corpus first (in path order), then each added directory's.
    pub cases: Vec<Case>,
}

/// Where a corpus comes from.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct CorpusSource {
    /// A whole corpus in a directory (`clauses.toml`, `schemas/`, case files) instead of
    /// the embedded one.
    pub dir: Option<PathBuf>,
    /// Directories of further case files, checked against the base corpus's catalog and
    /// schemas.
    pub added: Vec<PathBuf>,
}

/// Why a corpus could not be loaded: a file names its place.
#[derive(Debug)]
pub enum CorpusError {
    /// A catalog or case file is broken, or a directory cannot be read.
    File(FileError),
    /// A schema is broken.
    Schema(SchemaError),
}

impl fmt::Display for CorpusError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CorpusError::File(error) => write!(f, "{error}"),
            CorpusError::Schema(error) => write!(f, "{error}"),
        }
    }
}

impl std::error::Error for CorpusError {}

impl From<FileError> for CorpusError {
    fn from(error: FileError) -> CorpusError {
        CorpusError::File(error)
    }
}

impl From<SchemaError> for CorpusError {
    fn from(error: SchemaError) -> CorpusError {
        CorpusError::Schema(error)
    }
}

/// One file of a corpus: where it is shown to be (an embedded file as `cases/<path>`), its
/// path inside the corpus, and its text.
struct CorpusFile {
    shown: PathBuf,
    inner: String,
    text: Cow<'static, str>,
}

impl Corpus {
    /// The embedded corpus.
    pub fn embedded() -> Result<Corpus, CorpusError> {
        Corpus::load(&CorpusSource::default())
    }

    /// The corpus `source` names.
    pub fn load(source: &CorpusSource) -> Result<Corpus, CorpusError> {
        let base = match &source.dir {
            None => embedded_files(),
            Some(dir) => {
                if !dir.join("clauses.toml").is_file() {
                    return Err(FileError::new(
                        dir,
                        0,
                        "no clauses.toml here: --cases names a whole corpus (clauses.toml, \
                         schemas/, case files); --add-cases adds case files to the embedded one",
                    )
                    .into());
                }
                dir_files(dir)?
            }
        };
        let catalog_file = base
            .iter()
            .find(|file| file.inner == "clauses.toml")
            .ok_or_else(|| {
                FileError::new(
                    Path::new("cases/clauses.toml"),
                    0,
                    "the corpus has no catalog",
                )
            })?;
        let mut catalog = Catalog::parse(&catalog_file.shown, &catalog_file.text)?;
        if let Some(table) = base.iter().find(|file| file.inner == "statements.toml") {
            catalog = catalog.with_statements(Statements::parse(&table.shown, &table.text)?);
        }
        let schemas = SchemaSet::from_texts(
            base.iter()
                .filter(|file| is_schema(&file.inner))
                .map(|file| (file.shown.as_path(), file.text.as_ref())),
        )?;
        let mut files: Vec<CorpusFile> = base
            .into_iter()
            .filter(|file| !is_schema(&file.inner) && case::is_case_file(Path::new(&file.inner)))
            .collect();
        for dir in &source.added {
            let added: Vec<CorpusFile> = dir_files(dir)?
                .into_iter()
                .filter(|file| case::is_case_file(Path::new(&file.inner)))
                .collect();
            if added.is_empty() {
                return Err(FileError::new(dir, 0, "no case files found").into());
            }
            files.extend(added);
        }
        let cases = case::parse_all(
            files
                .iter()
                .map(|file| (file.shown.as_path(), file.text.as_ref())),
            &catalog,
            &schemas,
        )?;
        Ok(Corpus {
            catalog: Arc::new(catalog),
            schemas: Arc::new(schemas),
            cases,
        })
    }
}

/// What `harness --version` says beside the crate version: the interface version and the
/// embedded corpus (its digest's first 16 hex digits and its size).
pub fn version_line() -> &'static str {
    static LINE: LazyLock<String> = LazyLock::new(|| {
        format!(
            "{} (interface {}; corpus sha256:{}, {} files)",
            env!("CARGO_PKG_VERSION"),
            harness_protocol::spec::INTERFACE_VERSION,
            &DIGEST[..16],
            harness_cases::FILES.len()
        )
    });
    &LINE
}

fn is_schema(inner: &str) -> bool {
    inner.starts_with("schemas/") && inner.ends_with(".json")
}

fn embedded_files() -> Vec<CorpusFile> {
    harness_cases::FILES
        .iter()
        .map(|file| CorpusFile {
            shown: Path::new("cases").join(file.path),
            inner: file.path.to_owned(),
            text: Cow::Borrowed(file.text),
        })
        .collect()
}

/// Every TOML and JSON file under `dir`, in path order.
fn dir_files(dir: &Path) -> Result<Vec<CorpusFile>, FileError> {
    let mut paths = Vec::new();
    let corpus_file = |path: &Path| {
        path.extension()
            .is_some_and(|ext| ext == "toml" || ext == "json")
    };
    case::files_under(dir, &corpus_file, &mut paths)?;
    paths.sort();
    paths
        .into_iter()
        .map(|path| {
            let text = std::fs::read_to_string(&path)
                .map_err(|error| FileError::new(&path, 0, format!("failed to read: {error}")))?;
            let inner = path
                .strip_prefix(dir)
                .unwrap_or(&path)
                .components()
                .map(|part| part.as_os_str().to_string_lossy())
                .collect::<Vec<_>>()
                .join("/");
            Ok(CorpusFile {
                shown: path,
                inner,
                text: Cow::Owned(text),
            })
        })
        .collect()
}

#[cfg(test)]
mod tests;
