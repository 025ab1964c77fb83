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
) -> Result<(), StepError> {
    if !(2..=super::Race::MAX_COPIES).contains(&race.copies) {
        return Err(StepError::RaceCopies {
            copies: race.copies,
        });
    }
    if !(1..=super::Race::MAX_ROUNDS).contains(&race.rounds) {
        return Err(StepError::RaceRounds {
            rounds: race.rounds,
        });
    }
    let at_most_ok = race.at_most.as_u64().is_some()
        || race
            .at_most
            .as_str()
            .is_some_and(|text| text.contains("{{"));
    if !at_most_ok {
        return Err(StepError::RaceAtMost);
    }
    if race.over.contains(&TransportKind::Rest)
        || (race.over.is_empty() && transports.contains(&TransportKind::Rest))
    {
        return Err(StepError::RaceOverRest);
    }
    if step.expect.outcome != Outcome::Any {
        return Err(StepError::RaceOutcome);
    }
    if race.again_after_ms.is_some_and(|ms| ms > 10_000) {
        return Err(StepError::RaceAgainAfter);
    }
    match &race.lead {
        Some(_) if !(1..=race.copies).contains(&race.after_lead) => Err(StepError::RaceAfterLead {
            after_lead: race.after_lead,
            copies: race.copies,
        }),
        None if race.after_lead != 0 => Err(StepError::RaceAfterLeadWithoutLead),
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
    let at_step = |error: StepError| FileError::new(path, step.line, error.to_string());
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
fn check_kind(step: &super::Step, transports: &[TransportKind]) -> Result<(), StepError> {
    if let StepKind::Walk(walk) = &step.kind
        && let Some(window) = &walk.window
        && window.around.is_none()
        && walk.timestamp.is_none()
    {
        return Err(StepError::WindowWithoutTimestamp);
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
            return Err(StepError::InFlight);
        }
        if harness_protocol::spec::is_paced(method) {
            return Err(StepError::InFlightPaced {
                method: method.clone(),
            });
        }
    }
    if step.transport == Some(TransportKind::Rest) {
        return Err(StepError::StepOverRest);
    }
    Ok(())
}

/// The step's expectations (schema, error keys, `refusal_ends_case`), its auth mode and
/// raw text over the `transports` it goes over, and its wait.
fn check_expect_and_auth(
    step: &super::Step,
    transports: &[TransportKind],
    schemas: &SchemaSet,
) -> Result<(), StepError> {
    if step.raw().is_some() && transports.contains(&TransportKind::HttpQuery) {
        return Err(StepError::RawOverQuery);
    }
    if let Some(name) = &step.expect.schema
        && !schemas.contains(name)
    {
        return Err(StepError::UnknownSchema {
            name: name.clone(),
            known: did_you_mean(name, schemas.names()).map(str::to_owned),
        });
    }
    if step.expect.outcome != Outcome::Error
        && (step.expect.error_code.is_some() || step.expect.error_message.is_some())
    {
        return Err(StepError::ErrorKeysWithoutError);
    }
    let mode = step.auth.mode();
    if matches!(mode, AuthMode::Basic | AuthMode::Signed | AuthMode::ApiKey)
        && transports.contains(&TransportKind::Ws)
    {
        return Err(StepError::AuthOverWs { mode });
    }
    if step.expect.refusal_ends_case && step.expect.outcome != Outcome::Any {
        return Err(StepError::RefusalEndsCaseOutcome);
    }
    if let Some(notifications) = &step.expect.notifications {
        if let Some(problem) = notifications.problem() {
            return Err(StepError::Notifications(problem));
        }
        if transports
            .iter()
            .any(|transport| *transport != TransportKind::Ws)
        {
            return Err(StepError::NotificationsOverHttp);
        }
    }
    if let Some(wait) = &step.wait
        && !(wait.seconds.is_number()
            || wait
                .seconds
                .as_str()
                .is_some_and(|text| text.contains("{{")))
    {
        return Err(StepError::WaitSeconds);
    }
    if step.call_method().is_none() && !matches!(mode, AuthMode::None | AuthMode::Bearer) {
        return Err(StepError::AuthOfNonCall);
    }
    Ok(())
}

/// Why a step cannot run as written, over the transports it goes over; reported at the
/// step's line.
#[derive(Debug, thiserror::Error)]
enum StepError {
    /// `race.copies` out of its range.
    #[error(
        "race.copies is {copies}; a race releases 2 to {} copies",
        super::Race::MAX_COPIES
    )]
    RaceCopies {
        /// The copies asked for.
        copies: usize,
    },
    /// `race.rounds` out of its range.
    #[error(
        "race.rounds is {rounds}; a race runs 1 to {} rounds",
        super::Race::MAX_ROUNDS
    )]
    RaceRounds {
        /// The rounds asked for.
        rounds: u32,
    },
    /// `race.at_most` neither a number nor a template.
    #[error(
        "race.at_most must be a number or a template such as \"{{{{limits.transaction_log_burst}}}}\""
    )]
    RaceAtMost,
    /// A race over Direct Access REST.
    #[error("a race goes over \"http-query\", \"http-body\" or \"ws\"")]
    RaceOverRest,
    /// A race step expecting a given outcome.
    #[error("a race step needs expect.outcome = \"any\": some of its copies are refused")]
    RaceOutcome,
    /// `race.again_after_ms` past its bound.
    #[error("race.again_after_ms is at most 10000")]
    RaceAgainAfter,
    /// `race.after_lead` out of its range with a lead.
    #[error(
        "race.after_lead is {after_lead}; with a lead, 1 to {copies} of the copies wait for its answer"
    )]
    RaceAfterLead {
        /// The copies waiting for the lead.
        after_lead: usize,
        /// The race's copies.
        copies: usize,
    },
    /// `race.after_lead` without a lead.
    #[error("race.after_lead needs a race.lead to wait for")]
    RaceAfterLeadWithoutLead,
    /// A walk's window with nothing to put it on.
    #[error(
        "a walk's window is put on its entries' timestamps: give the walk `timestamp` (or the window `around`)"
    )]
    WindowWithoutTimestamp,
    /// `in_flight` out of its range, or not over ws only.
    #[error("in_flight (2 to 16) goes on a call step that runs over ws only")]
    InFlight,
    /// `in_flight` of a paced method.
    #[error("in_flight cannot send the paced method {method} at once")]
    InFlightPaced {
        /// The method.
        method: String,
    },
    /// A step's own transport is Direct Access REST.
    #[error("the transport of a step is \"http-query\", \"http-body\" or \"ws\"")]
    StepOverRest,
    /// A raw step over `http-query`.
    #[error("a raw step cannot run over http-query; list the transports")]
    RawOverQuery,
    /// `expect.schema` names no schema.
    #[error("unknown schema \"{name}\"{}", did_you_mean_hint(.known.as_deref()))]
    UnknownSchema {
        /// The name.
        name: String,
        /// The known schema it is close to.
        known: Option<String>,
    },
    /// `error_code` or `error_message` without an error outcome.
    #[error("error_code and error_message need outcome = \"error\"")]
    ErrorKeysWithoutError,
    /// An auth mode of HTTP headers over ws.
    #[error("auth mode {} needs an http transport; list the transports", format!("{mode:?}").to_lowercase())]
    AuthOverWs {
        /// The mode.
        mode: AuthMode,
    },
    /// `refusal_ends_case` without `outcome = "any"`.
    #[error("refusal_ends_case needs outcome = \"any\"")]
    RefusalEndsCaseOutcome,
    /// `expect.notifications` that cannot be judged as written.
    #[error("{0}")]
    Notifications(String),
    /// `expect.notifications` over a transport other than ws.
    #[error("notifications are pushed over ws only; list the transports")]
    NotificationsOverHttp,
    /// `wait.seconds` neither a number nor a template.
    #[error("wait.seconds must be a number or a template such as \"{{{{expires_in}}}}\"")]
    WaitSeconds,
    /// A walk, probe or raw step with an auth mode other than bearer or none.
    #[error("walk, probe and raw steps authenticate with bearer or none")]
    AuthOfNonCall,
}

/// ` (did you mean "known"?)`, or nothing.
fn did_you_mean_hint(known: Option<&str>) -> String {
    known
        .map(|known| format!(" (did you mean \"{known}\"?)"))
        .unwrap_or_default()
}

#[cfg(test)]
mod tests;
