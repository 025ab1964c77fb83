//! Reading an expectations file: TOML with `deny_unknown_fields`, then the checks serde
//! cannot express (a `case`, a `clause` or both, a reason, a known case, clause and
//! transport, no duplicate), each defect reported as `path:line: message` with a
//! did-you-mean where a name is close to a known one.

use std::collections::BTreeMap;
use std::path::Path;

use serde::Deserialize;
use toml::Spanned;

use super::{Entry, Known, KnownFailures, Selector};
use harness_protocol::file_error::{FileError, did_you_mean, line_of};
use harness_protocol::wire::TransportKind;

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ExpectFile {
    #[serde(default)]
    known_failure: Vec<Spanned<EntryFile>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct EntryFile {
    case: Option<Spanned<String>>,
    clause: Option<Spanned<String>>,
    transport: Option<Spanned<String>>,
    reason: Option<Spanned<String>>,
}

/// Reads an expectations file and checks every entry against what a run may name.
pub fn load(path: &Path, known: &Known) -> Result<KnownFailures, FileError> {
    let text = std::fs::read_to_string(path).map_err(|error| {
        FileError::new(
            path,
            0,
            format!("failed to read expectations file: {error}"),
        )
    })?;
    parse(path, &text, known)
}

/// Parses expectations-file text (see [`load`]).
pub fn parse(path: &Path, text: &str, known: &Known) -> Result<KnownFailures, FileError> {
    let file: ExpectFile =
        toml::from_str(text).map_err(|error| FileError::from_toml(path, text, &error))?;
    let mut entries = Vec::with_capacity(file.known_failure.len());
    let mut warnings = Vec::new();
    let mut seen: BTreeMap<(Selector, Option<TransportKind>), usize> = BTreeMap::new();
    let cases: Vec<&str> = known.cases.keys().map(String::as_str).collect();
    let clauses: Vec<&str> = known.clauses.iter().map(String::as_str).collect();
    for spanned in file.known_failure {
        let line = line_of(text, spanned.span().start);
        let raw = spanned.into_inner();
        let at = |value: &Spanned<String>| line_of(text, value.span().start);
        // A case or clause the run knows, or the error naming the nearest known one.
        let named = |value: Spanned<String>, what: &str, names: &[&str]| {
            if names.contains(&value.get_ref().as_str()) {
                Ok(value.into_inner())
            } else {
                Err(unknown(
                    path,
                    at(&value),
                    what,
                    value.get_ref(),
                    names.iter().copied(),
                ))
            }
        };
        let case = raw
            .case
            .map(|case| named(case, "case", &cases))
            .transpose()?;
        let clause = raw
            .clause
            .map(|clause| named(clause, "clause", &clauses))
            .transpose()?;
        if case.is_none() && clause.is_none() {
            return Err(FileError::new(
                path,
                line,
                "a known_failure needs a case, a clause, or both",
            ));
        }
        if let (Some(case), None) = (&case, &clause)
            && !known.clauses.contains(case)
        {
            warnings.push(format!(
                "{}:{line}: warning: known failure of case \"{case}\" names no clause, so it \
                 hides every failure of the case, new ones included; name the clause it \
                 breaks (clause = \"...\"), as `--write-expect` writes",
                path.display()
            ));
        }
        let selector = Selector { case, clause };
        let transport = match raw.transport {
            None => None,
            Some(name) => Some(transport(
                path,
                at(&name),
                name.get_ref(),
                &selector,
                known,
            )?),
        };
        let reason = match raw.reason {
            Some(reason) if !reason.get_ref().trim().is_empty() => reason.into_inner(),
            Some(reason) => {
                return Err(FileError::new(path, at(&reason), "reason is empty"));
            }
            None => {
                return Err(FileError::new(
                    path,
                    line,
                    "a known_failure needs a reason: say why the failure is accepted",
                ));
            }
        };
        if let Some(first) = seen.insert((selector.clone(), transport), line) {
            return Err(FileError::new(
                path,
                line,
                format!("the same failure as the entry at line {first}"),
            ));
        }
        entries.push(Entry {
            selector,
            transport,
            reason,
            line,
        });
    }
    Ok(KnownFailures {
        path: path.to_owned(),
        entries,
        warnings,
    })
}

/// Parses a transport name and checks a case entry's case runs over it.
fn transport(
    path: &Path,
    line: usize,
    name: &str,
    selector: &Selector,
    known: &Known,
) -> Result<TransportKind, FileError> {
    let Some(kind) = TransportKind::from_name(name) else {
        return Err(unknown(
            path,
            line,
            "transport",
            name,
            TransportKind::ALL.iter().map(|kind| kind.as_str()),
        ));
    };
    if let Some(case) = &selector.case
        && let Some(transports) = known.cases.get(case)
        && !transports.contains(&kind)
    {
        let names: Vec<&str> = transports.iter().map(|kind| kind.as_str()).collect();
        return Err(FileError::new(
            path,
            line,
            format!(
                "case \"{case}\" does not run over {name} (it runs over {})",
                names.join(", ")
            ),
        ));
    }
    Ok(kind)
}

/// `unknown case "x" (did you mean "y"?)`.
fn unknown<'a>(
    path: &Path,
    line: usize,
    what: &str,
    name: &str,
    known: impl IntoIterator<Item = &'a str>,
) -> FileError {
    let hint = did_you_mean(name, known)
        .map(|close| format!(" (did you mean \"{close}\"?)"))
        .unwrap_or_default();
    FileError::new(path, line, format!("unknown {what} \"{name}\"{hint}"))
}
