//! Loading case files: TOML parsing with `deny_unknown_fields` (the step and auth tables
//! become their enums on the way, refusing a combination the enums cannot hold), then the
//! checks that need the whole case (known clauses and schemas, transports a step kind or auth
//! mode allows, connection names, one race, unique ids), every defect reported as
//! `path:line: message` with a did-you-mean where a name is close to a known one.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use super::{AuthMode, Case, StepKind};
use crate::check::Outcome;
use crate::check::{Catalog, SchemaSet};
use harness_protocol::file_error::{FileError, did_you_mean, line_of};
use harness_protocol::wire::TransportKind;

/// The `*.toml` files of a corpus that are not case files: the clause catalog, the
/// traceability table and the corpus crate's manifest.
pub(crate) const NOT_CASE_FILES: &[&str] = &["clauses.toml", "statements.toml", "Cargo.toml"];

/// Whether a corpus file (by its path) is a case file.
pub(crate) fn is_case_file(path: &Path) -> bool {
    path.extension().is_some_and(|ext| ext == "toml")
        && path
            .file_name()
            .and_then(|name| name.to_str())
            .is_some_and(|name| !NOT_CASE_FILES.contains(&name))
}

/// Loads every `*.toml` case file under `dir` (recursively, in path order), except the
/// clause catalog. Clause ids and schema names are checked against `catalog` and `schemas`.
pub fn discover(
    dir: &Path,
    catalog: &Catalog,
    schemas: &SchemaSet,
) -> Result<Vec<Case>, FileError> {
    let mut paths = Vec::new();
    collect(dir, &mut paths)?;
    paths.sort();
    let mut files = Vec::with_capacity(paths.len());
    for path in paths {
        let text = std::fs::read_to_string(&path).map_err(|error| {
            FileError::new(&path, 0, format!("failed to read case file: {error}"))
        })?;
        files.push((path, text));
    }
    let cases = parse_all(
        files
            .iter()
            .map(|(path, text)| (path.as_path(), text.as_str())),
        catalog,
        schemas,
    )?;
    if cases.is_empty() {
        return Err(FileError::new(dir, 0, "no case files found"));
    }
    Ok(cases)
}

/// Parses case-file texts in the order given; a case id used twice is an error naming both
/// files.
pub(crate) fn parse_all<'a>(
    files: impl IntoIterator<Item = (&'a Path, &'a str)>,
    catalog: &Catalog,
    schemas: &SchemaSet,
) -> Result<Vec<Case>, FileError> {
    let mut cases = Vec::new();
    let mut seen: BTreeMap<String, PathBuf> = BTreeMap::new();
    for (path, text) in files {
        let case = parse_case(path, text, catalog, schemas)?;
        if let Some(first) = seen.insert(case.id.clone(), path.to_owned()) {
            return Err(FileError::new(
                path,
                1,
                format!(
                    "case id \"{}\" is also used by {}",
                    case.id,
                    first.display()
                ),
            ));
        }
        cases.push(case);
    }
    Ok(cases)
}

fn collect(dir: &Path, paths: &mut Vec<PathBuf>) -> Result<(), FileError> {
    files_under(dir, &is_case_file, paths)
}

/// Every file under `dir` (recursively) that `keep` keeps, pushed onto `paths` unsorted; a
/// directory that cannot be read is an error naming it.
pub(crate) fn files_under(
    dir: &Path,
    keep: &dyn Fn(&Path) -> bool,
    paths: &mut Vec<PathBuf>,
) -> Result<(), FileError> {
    let entries = std::fs::read_dir(dir)
        .map_err(|error| FileError::new(dir, 0, format!("failed to read directory: {error}")))?;
    for entry in entries {
        let path = entry
            .map_err(|error| FileError::new(dir, 0, error.to_string()))?
            .path();
        if path.is_dir() {
            files_under(&path, keep, paths)?;
        } else if keep(&path) {
            paths.push(path);
        }
    }
    Ok(())
}

/// Loads one case file.
pub fn load_file(path: &Path, catalog: &Catalog, schemas: &SchemaSet) -> Result<Case, FileError> {
    let text = std::fs::read_to_string(path)
        .map_err(|error| FileError::new(path, 0, format!("failed to read case file: {error}")))?;
    parse_case(path, &text, catalog, schemas)
}

/// Parses and checks case-file text.
pub fn parse_case(
    path: &Path,
    text: &str,
    catalog: &Catalog,
    schemas: &SchemaSet,
) -> Result<Case, FileError> {
    let mut case: Case =
        toml::from_str(text).map_err(|error| FileError::from_toml(path, text, &error))?;
    case.path = path.to_owned();
    let step_lines: Vec<usize> = text
        .lines()
        .enumerate()
        .filter(|(_, line)| line.trim_start().starts_with("[[step]]"))
        .map(|(index, _)| index + 1)
        .collect();
    for (index, step) in case.steps.iter_mut().enumerate() {
        step.line = step_lines.get(index).copied().unwrap_or(1);
    }
    let at = |needle: &str| text.find(needle).map_or(1, |offset| line_of(text, offset));
    if case.id.trim().is_empty() {
        return Err(FileError::new(path, at("id"), "case id is empty"));
    }
    if case.steps.is_empty() {
        return Err(FileError::new(path, 1, "case has no [[step]]"));
    }
    if case.transports.is_empty() {
        return Err(FileError::new(
            path,
            at("transports"),
            "transports is empty",
        ));
    }
    if case.clauses.is_empty() {
        return Err(FileError::new(path, at("clauses"), "case checks no clause"));
    }
    let mut all_clauses: Vec<&String> = case.clauses.iter().collect();
    for step in &case.steps {
        all_clauses.extend(step.clauses.iter().flatten());
        all_clauses.extend(
            step.expect
                .matchers
                .iter()
                .flat_map(|matcher| matcher.clauses.iter().flatten()),
        );
        if let StepKind::Walk(walk) = &step.kind {
            all_clauses.extend(
                walk.each
                    .iter()
                    .flat_map(|matcher| matcher.clauses.iter().flatten()),
            );
        }
    }
    for clause in all_clauses {
        if catalog.get(clause).is_none() {
            let hint = did_you_mean(clause, catalog.ids())
                .map(|known| format!(" (did you mean \"{known}\"?)"))
                .unwrap_or_default();
            return Err(FileError::new(
                path,
                at(&format!("\"{clause}\"")),
                format!("unknown clause \"{clause}\"{hint}"),
            ));
        }
    }
    for step in &case.steps {
        check_step(path, step, &case.transports, schemas)?;
    }
    check_connections(path, &case)?;
    check_races(path, &case)?;
    Ok(case)
}

/// A race goes on a call step, at most one per case; the rest is checked by [`check_race`].
fn check_races(path: &Path, case: &Case) -> Result<(), FileError> {
    let mut races = case.steps.iter().filter(|step| step.race().is_some());
    if let (Some(_), Some(second)) = (races.next(), races.next()) {
        return Err(FileError::new(
            path,
            second.line,
            "a case has at most one race step",
        ));
    }
    Ok(())
}

/// What a race step must be (its table made it a call, not raw or in flight, with a plain
/// call as its lead): 2 to 64 copies, 1 to 1000 rounds, `at_most` a number or a template,
/// over `http-query`, `http-body` or `ws`, and with `outcome = "any"`, since some copies
/// are refused.
fn check_race(
    step: &super::Step,
    race: &super::Race,
    transports: &[TransportKind],
) -> Result<(), String> {
    if !(2..=super::Race::MAX_COPIES).contains(&race.copies) {
        return Err(format!(
            "race.copies is {}; a race releases 2 to {} copies",
            race.copies,
            super::Race::MAX_COPIES
        ));
    }
    if !(1..=super::Race::MAX_ROUNDS).contains(&race.rounds) {
        return Err(format!(
            "race.rounds is {}; a race runs 1 to {} rounds",
            race.rounds,
            super::Race::MAX_ROUNDS
        ));
    }
    let at_most_ok = race.at_most.as_u64().is_some()
        || race
            .at_most
            .as_str()
            .is_some_and(|text| text.contains("{{"));
    if !at_most_ok {
        return Err(
            "race.at_most must be a number or a template such as \"{{limits.transaction_log_burst}}\""
                .to_owned(),
        );
    }
    if race.over.contains(&TransportKind::Rest)
        || (race.over.is_empty() && transports.contains(&TransportKind::Rest))
    {
        return Err("a race goes over \"http-query\", \"http-body\" or \"ws\"".to_owned());
    }
    if step.expect.outcome != Outcome::Any {
        return Err(
            "a race step needs expect.outcome = \"any\": some of its copies are refused".to_owned(),
        );
    }
    if race.again_after_ms.is_some_and(|ms| ms > 10_000) {
        return Err("race.again_after_ms is at most 10000".to_owned());
    }
    match &race.lead {
        Some(_) if !(1..=race.copies).contains(&race.after_lead) => Err(format!(
            "race.after_lead is {}; with a lead, 1 to {} of the copies wait for its answer",
            race.after_lead, race.copies
        )),
        None if race.after_lead != 0 => {
            Err("race.after_lead needs a race.lead to wait for".to_owned())
        }
        _ => Ok(()),
    }
}

/// Connection names: none is empty, and a name used by one step only that is close to
/// another is taken for a typo.
fn check_connections(path: &Path, case: &Case) -> Result<(), FileError> {
    let mut uses: BTreeMap<&str, Vec<usize>> = BTreeMap::new();
    for step in &case.steps {
        let Some(name) = step.connection.as_deref() else {
            continue;
        };
        let error = |message: String| Err(FileError::new(path, step.line, message));
        if name.trim().is_empty() {
            return error("connection is empty".to_owned());
        }
        uses.entry(name).or_default().push(step.line);
    }
    for (name, lines) in &uses {
        if lines.len() != 1 {
            continue;
        }
        let others = uses.keys().copied().filter(|other| other != name);
        if let Some(known) = did_you_mean(name, others) {
            return Err(FileError::new(
                path,
                lines[0],
                format!(
                    "connection \"{name}\" is used by this step only (did you mean \"{known}\"?)"
                ),
            ));
        }
    }
    Ok(())
}

/// Checks what one step's keys cannot show alone: its kind against its transports, then
/// what it expects and how it authenticates over them.
fn check_step(
    path: &Path,
    step: &super::Step,
    transports: &[TransportKind],
    schemas: &SchemaSet,
) -> Result<(), FileError> {
    let at_step = |message: String| FileError::new(path, step.line, message);
    check_kind(step, transports).map_err(at_step)?;
    // The transports the step goes over: its own, or its case's.
    let transports = match &step.transport {
        Some(transport) => std::slice::from_ref(transport),
        None => transports,
    };
    check_expect_and_auth(step, transports, schemas).map_err(at_step)
}

/// A walk's window, a race, `in_flight` and the step's own transport against the case's
/// `transports`.
fn check_kind(step: &super::Step, transports: &[TransportKind]) -> Result<(), String> {
    if let StepKind::Walk(walk) = &step.kind
        && let Some(window) = &walk.window
        && window.around.is_none()
        && walk.timestamp.is_none()
    {
        return Err(
            "a walk's window is put on its entries' timestamps: give the walk `timestamp` (or the window `around`)"
                .to_owned(),
        );
    }
    if let Some(race) = step.race() {
        check_race(step, race, transports)?;
    }
    if let StepKind::InFlight { method, copies } = &step.kind {
        let only_ws = match step.transport {
            Some(transport) => transport == TransportKind::Ws,
            None => transports == [TransportKind::Ws],
        };
        if !(2..=16).contains(copies) || !only_ws {
            return Err(
                "in_flight (2 to 16) goes on a call step that runs over ws only".to_owned(),
            );
        }
        if harness_protocol::spec::is_paced(method) {
            return Err(format!(
                "in_flight cannot send the paced method {method} at once"
            ));
        }
    }
    if step.transport == Some(TransportKind::Rest) {
        return Err(
            "the transport of a step is \"http-query\", \"http-body\" or \"ws\"".to_owned(),
        );
    }
    Ok(())
}

/// The step's expectations (schema, error keys, `refusal_ends_case`), its auth mode and
/// raw text over the `transports` it goes over, and its wait.
fn check_expect_and_auth(
    step: &super::Step,
    transports: &[TransportKind],
    schemas: &SchemaSet,
) -> Result<(), String> {
    if step.raw().is_some() && transports.contains(&TransportKind::HttpQuery) {
        return Err("a raw step cannot run over http-query; list the transports".to_owned());
    }
    if let Some(name) = &step.expect.schema
        && !schemas.contains(name)
    {
        let hint = did_you_mean(name, schemas.names())
            .map(|known| format!(" (did you mean \"{known}\"?)"))
            .unwrap_or_default();
        return Err(format!("unknown schema \"{name}\"{hint}"));
    }
    if step.expect.outcome != Outcome::Error
        && (step.expect.error_code.is_some() || step.expect.error_message.is_some())
    {
        return Err("error_code and error_message need outcome = \"error\"".to_owned());
    }
    let mode = step.auth.mode();
    if matches!(mode, AuthMode::Basic | AuthMode::Signed | AuthMode::ApiKey)
        && transports.contains(&TransportKind::Ws)
    {
        return Err(
            format!("auth mode {mode:?} needs an HTTP transport; list the transports")
                .to_lowercase(),
        );
    }
    if step.expect.refusal_ends_case && step.expect.outcome != Outcome::Any {
        return Err("refusal_ends_case needs outcome = \"any\"".to_owned());
    }
    if let Some(notifications) = &step.expect.notifications {
        if let Some(problem) = notifications.problem() {
            return Err(problem);
        }
        if transports
            .iter()
            .any(|transport| *transport != TransportKind::Ws)
        {
            return Err("notifications are pushed over ws only; list the transports".to_owned());
        }
    }
    if let Some(wait) = &step.wait
        && !(wait.seconds.is_number()
            || wait
                .seconds
                .as_str()
                .is_some_and(|text| text.contains("{{")))
    {
        return Err(
            "wait.seconds must be a number or a template such as \"{{expires_in}}\"".to_owned(),
        );
    }
    if step.call_method().is_none() && !matches!(mode, AuthMode::None | AuthMode::Bearer) {
        return Err("walk, probe and raw steps authenticate with bearer or none".to_owned());
    }
    Ok(())
}

#[cfg(test)]
mod tests;
