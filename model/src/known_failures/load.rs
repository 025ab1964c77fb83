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
    let reader = EntryReader {
        path,
        text,
        known,
        cases: known.cases.keys().map(String::as_str).collect(),
        clauses: known.clauses.iter().map(String::as_str).collect(),
    };
    for spanned in file.known_failure {
        let entry = reader.entry(spanned, &mut warnings)?;
        if let Some(first) = seen.insert((entry.selector.clone(), entry.transport), entry.line) {
            return Err(FileError::new(
                path,
                entry.line,
                format!("the same failure as the entry at line {first}"),
            ));
        }
        entries.push(entry);
    }
    Ok(KnownFailures {
        path: path.to_owned(),
        entries,
        warnings,
    })
}

/// What each entry is read against: the file (for lines) and the names a run knows.
struct EntryReader<'a> {
    path: &'a Path,
    text: &'a str,
    known: &'a Known,
    cases: Vec<&'a str>,
    clauses: Vec<&'a str>,
}

impl EntryReader<'_> {
    /// One entry, checked but for duplicates; a case entry naming no clause adds a
    /// warning.
    fn entry(
        &self,
        spanned: Spanned<EntryFile>,
        warnings: &mut Vec<String>,
    ) -> Result<Entry, FileError> {
        let line = line_of(self.text, spanned.span().start);
        let raw = spanned.into_inner();
        let selector = self.selector(raw.case, raw.clause, line, warnings)?;
        let transport = match raw.transport {
            None => None,
            Some(name) => Some(transport(
                self.path,
                self.at(&name),
                name.get_ref(),
                &selector,
                self.known,
            )?),
        };
        let reason = self.reason(raw.reason, line)?;
        Ok(Entry {
            selector,
            transport,
            reason,
            line,
        })
    }

    /// The line of a value.
    fn at(&self, value: &Spanned<String>) -> usize {
        line_of(self.text, value.span().start)
    }

    /// A case or clause the run knows, or the error naming the nearest known one.
    fn named(
        &self,
        value: Spanned<String>,
        what: &str,
        names: &[&str],
    ) -> Result<String, FileError> {
        if names.contains(&value.get_ref().as_str()) {
            Ok(value.into_inner())
        } else {
            Err(unknown(
                self.path,
                self.at(&value),
                what,
                value.get_ref(),
                names.iter().copied(),
            ))
        }
    }

    /// The entry's case and clause, at least one of them, each one the run knows.
    fn selector(
        &self,
        case: Option<Spanned<String>>,
        clause: Option<Spanned<String>>,
        line: usize,
        warnings: &mut Vec<String>,
    ) -> Result<Selector, FileError> {
        let case = case
            .map(|case| self.named(case, "case", &self.cases))
            .transpose()?;
        let clause = clause
            .map(|clause| self.named(clause, "clause", &self.clauses))
            .transpose()?;
        if case.is_none() && clause.is_none() {
            return Err(FileError::new(
                self.path,
                line,
                "a known_failure needs a case, a clause, or both",
            ));
        }
        if let (Some(case), None) = (&case, &clause)
            && !self.known.clauses.contains(case)
        {
            warnings.push(format!(
                "{}:{line}: warning: known failure of case \"{case}\" names no clause, so it \
                 hides every failure of the case, new ones included; name the clause it \
                 breaks (clause = \"...\"), as `--write-expect` writes",
                self.path.display()
            ));
        }
        Ok(Selector { case, clause })
    }

    /// The entry's reason, which must say something.
    fn reason(&self, reason: Option<Spanned<String>>, line: usize) -> Result<String, FileError> {
        match reason {
            Some(reason) if !reason.get_ref().trim().is_empty() => Ok(reason.into_inner()),
            Some(reason) => Err(FileError::new(
                self.path,
                self.at(&reason),
                "reason is empty",
            )),
            None => Err(FileError::new(
                self.path,
                line,
                "a known_failure needs a reason: say why the failure is accepted",
            )),
        }
    }
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
