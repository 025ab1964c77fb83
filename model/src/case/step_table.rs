//! A `[[step]]` table of a case file as serde reads and writes it: one flat table with a
//! key per step kind (`call`, `raw`, `walk`, `probe`, and `in_flight` or `race` beside a
//! `call`), unknown keys refused. Its conversion into a [`Step`] picks the one [`StepKind`]
//! the keys say and refuses keys that say more than one ([`StepTableError`]); the
//! conversion back writes the same keys, so a case written by `Case::to_toml` loads as it
//! was.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::{Auth, ExpectedAnswer, Probe, Race, Step, StepKind, Wait, Walk};
use harness_protocol::wire::TransportKind;

/// The keys of a `[[step]]` table, as the case-file format names them.
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct StepTable {
    #[serde(skip_serializing_if = "Option::is_none")]
    call: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    raw: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    walk: Option<Walk>,
    #[serde(skip_serializing_if = "Option::is_none")]
    probe: Option<Probe>,
    #[serde(skip_serializing_if = "Option::is_none")]
    race: Option<Race>,
    #[serde(default, skip_serializing_if = "Map::is_empty")]
    params: Map<String, Value>,
    #[serde(default, skip_serializing_if = "crate::case::write::is_default")]
    auth: Auth,
    #[serde(default, skip_serializing_if = "crate::case::write::is_default")]
    expect: ExpectedAnswer,
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    capture: BTreeMap<String, String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    clauses: Option<Vec<String>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    in_flight: Option<usize>,
    #[serde(default, skip_serializing_if = "crate::case::write::is_false")]
    always: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    connection: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    transport: Option<TransportKind>,
    #[serde(skip_serializing_if = "Option::is_none")]
    wait: Option<Wait>,
}

/// Why the keys of a step table make no one [`StepKind`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
pub(crate) enum StepTableError {
    /// The table names no step kind, or more than one.
    #[error(
        "a step has exactly one of call, raw (with an optional call naming its URL), walk or probe"
    )]
    NotOneKind,
    /// A race's lead is not a plain call.
    #[error("race.lead is a plain call (not raw, walk, probe, race or in_flight)")]
    LeadNotACall,
    /// A race beside something other than a plain call.
    #[error("a race goes on a call step (not raw, and not in_flight)")]
    RaceNotOnACall,
    /// `in_flight` beside something other than a call.
    #[error("in_flight (2 to 16) goes on a call step that runs over ws only")]
    InFlightNotOnACall,
}

impl TryFrom<StepTable> for Step {
    type Error = StepTableError;

    fn try_from(table: StepTable) -> Result<Step, StepTableError> {
        let kind = kind_of(
            table.call,
            table.raw,
            table.walk,
            table.probe,
            table.race,
            table.in_flight,
        )?;
        Ok(Step {
            kind,
            params: table.params,
            auth: table.auth,
            expect: table.expect,
            capture: table.capture,
            clauses: table.clauses,
            always: table.always,
            connection: table.connection,
            transport: table.transport,
            wait: table.wait,
            line: 0,
        })
    }
}

/// The one kind the kind keys of a step table say.
fn kind_of(
    call: Option<String>,
    raw: Option<String>,
    walk: Option<Walk>,
    probe: Option<Probe>,
    race: Option<Race>,
    in_flight: Option<usize>,
) -> Result<StepKind, StepTableError> {
    let kind = match (call, raw, walk, probe) {
        (url_of, Some(text), None, None) => StepKind::Raw { text, url_of },
        (Some(method), None, None, None) => StepKind::Call(method),
        (None, None, Some(walk), None) => StepKind::Walk(Box::new(walk)),
        (None, None, None, Some(probe)) => StepKind::Probe(probe),
        _ => return Err(StepTableError::NotOneKind),
    };
    match (kind, race, in_flight) {
        (kind, None, None) => Ok(kind),
        (StepKind::Call(method), Some(race), None) => {
            if race
                .lead
                .as_ref()
                .is_some_and(|lead| !matches!(lead.kind, StepKind::Call(_)))
            {
                return Err(StepTableError::LeadNotACall);
            }
            Ok(StepKind::Race {
                method,
                race: Box::new(race),
            })
        }
        (_, Some(_), _) => Err(StepTableError::RaceNotOnACall),
        (StepKind::Call(method), None, Some(copies)) => Ok(StepKind::InFlight { method, copies }),
        (_, None, Some(_)) => Err(StepTableError::InFlightNotOnACall),
    }
}

impl From<Step> for StepTable {
    fn from(step: Step) -> StepTable {
        let mut table = StepTable {
            call: None,
            raw: None,
            walk: None,
            probe: None,
            race: None,
            params: step.params,
            auth: step.auth,
            expect: step.expect,
            capture: step.capture,
            clauses: step.clauses,
            in_flight: None,
            always: step.always,
            connection: step.connection,
            transport: step.transport,
            wait: step.wait,
        };
        match step.kind {
            StepKind::Call(method) => table.call = Some(method),
            StepKind::InFlight { method, copies } => {
                table.call = Some(method);
                table.in_flight = Some(copies);
            }
            StepKind::Raw { text, url_of } => {
                table.raw = Some(text);
                table.call = url_of;
            }
            StepKind::Walk(walk) => table.walk = Some(*walk),
            StepKind::Probe(probe) => table.probe = Some(probe),
            StepKind::Race { method, race } => {
                table.call = Some(method);
                table.race = Some(*race);
            }
        }
        table
    }
}
