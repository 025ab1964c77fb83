//! The fuzz property of the case-file loader, shared by the cargo-fuzz target
//! `case_parse_no_panic` and the proptest test below: any text either loads as a case that
//! keeps the loader's promises or is refused with a `path:line` inside the file.

use std::path::Path;
use std::sync::LazyLock;

use harness_protocol::file_error::FileError;

use super::{Case, parse_case};
use crate::check::{Catalog, SchemaSet};

/// The path the property's texts are reported under.
const FUZZ_PATH: &str = "fuzz.toml";

/// The rule of [`case_parse_no_panic`] that does not hold.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum CasePropertyError {
    /// An accepted case lacks an id, clauses or transports.
    #[error("accepted a case without id, clauses or transports: {0:?}")]
    Incomplete(Box<Case>),
    /// An accepted case has no steps.
    #[error("accepted a case without steps")]
    NoSteps,
    /// An accepted case's step is placed outside the file.
    #[error("step placed at line {line} of {last_line}")]
    StepOutside {
        /// The step's line.
        line: usize,
        /// The last line of the file, and one more.
        last_line: usize,
    },
    /// A refusal names another file, a line past its end, or no message.
    #[error("refusal {0:?} does not point into the file")]
    RefusalOutside(FileError),
}

/// Fuzz and proptest property `case_parse_no_panic`: [`parse_case`] never panics; a case it
/// accepts has an id, clauses, transports and steps, each at a line of the file (and of one
/// kind, by its type); a refusal names the file and a line no further than its end.
///
/// The clause catalog and schemas are the embedded corpus's.
///
/// # Panics
///
/// When the embedded corpus's catalog or schemas do not load: they are built into the
/// crate, and the tests load them.
pub fn case_parse_no_panic(bytes: &[u8]) -> Result<(), CasePropertyError> {
    // The embedded corpus is ours, not the fuzzer's input: failing to load it is a bug of
    // this crate, which the corpus's own tests catch first.
    static CORPUS: LazyLock<(Catalog, SchemaSet)> = LazyLock::new(|| {
        let file = |path: &str| harness_cases::FILES.iter().find(|file| file.path == path);
        let catalog_text = file("clauses.toml").map_or("", |file| file.text);
        let catalog = Catalog::parse(Path::new("clauses.toml"), catalog_text)
            .unwrap_or_else(|error| panic!("the embedded catalog loads: {error}"));
        let schemas = SchemaSet::from_texts(
            harness_cases::FILES
                .iter()
                .filter(|file| file.path.starts_with("schemas/"))
                .map(|file| (Path::new(file.path), file.text)),
        )
        .unwrap_or_else(|error| panic!("the embedded schemas load: {error}"));
        (catalog, schemas)
    });
    let (catalog, schemas) = &*CORPUS;
    let Ok(text) = std::str::from_utf8(bytes) else {
        return Ok(());
    };
    let path = Path::new(FUZZ_PATH);
    let last_line = text.lines().count().max(1) + 1;
    match parse_case(path, text, catalog, schemas) {
        Ok(case) => {
            if case.id.trim().is_empty() || case.clauses.is_empty() || case.transports.is_empty() {
                return Err(CasePropertyError::Incomplete(Box::new(case)));
            }
            if case.steps.is_empty() {
                return Err(CasePropertyError::NoSteps);
            }
            // Each step is of exactly one kind by its type (`StepKind`).
            for step in &case.steps {
                if step.line == 0 || step.line > last_line {
                    return Err(CasePropertyError::StepOutside {
                        line: step.line,
                        last_line,
                    });
                }
            }
        }
        Err(error) => {
            if error.path != path || error.line > last_line || error.message.is_empty() {
                return Err(CasePropertyError::RefusalOutside(error));
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;

    /// Real keys and tables of case files.
    const CASE_LINES: &[&str] = &[
        "id = \"x.y\"",
        "title = \"t\"",
        "clauses = [\"env.response.id\"]",
        "transports = [\"ws\", \"http-query\"]",
        "[[step]]",
        "call = \"public/get_currencies\"",
        "raw = \"{\"",
        "auth = { mode = \"signed\", nonce = \"reuse\" }",
        "expect = { outcome = \"error\", error_code = 13668 }",
        "[step.walk]",
        "items = \"logs\"",
        "count = 5",
    ];

    /// Lines of case files: real keys and tables, and keys with values of every TOML type.
    fn case_text() -> impl Strategy<Value = String> {
        let line = prop_oneof![
            12 => prop::sample::select(CASE_LINES).prop_map(str::to_owned),
            1 => "[a-z_]{1,6} = (1|\"\"|\\[\\]|\\{\\})".prop_map(|line| line),
            1 => "[\\[\\]{}=\"\\n]{0,4}".prop_map(|line| line),
        ];
        prop::collection::vec(line, 0..14).prop_map(|lines| lines.join("\n"))
    }

    #[test]
    fn every_committed_case_holds_the_property() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../cases/envelope");
        for entry in std::fs::read_dir(root).unwrap() {
            let text = std::fs::read(entry.unwrap().path()).unwrap();
            assert_eq!(case_parse_no_panic(&text), Ok(()));
        }
    }

    proptest! {
        #[test]
        fn case_like_text_loads_or_is_refused_with_a_line(text in case_text()) {
            prop_assert_eq!(case_parse_no_panic(text.as_bytes()), Ok(()));
        }
    }
}
