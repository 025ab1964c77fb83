//! The bodies of the two step kinds that send many requests for one step: a pagination
//! [`Walk`] (with its bounded [`WalkWindow`]) and a rate-limit [`Probe`].

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::check::Matcher;

/// A pagination walk: follow the cursor to the end and check the pages.
#[derive(Clone, Debug, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct Walk {
    /// The method.
    pub call: String,
    /// Parameters besides count and cursor (templates allowed).
    #[serde(default, skip_serializing_if = "Map::is_empty")]
    pub params: Map<String, Value>,
    /// The result member holding the entries (`logs`, `entries`).
    pub items: String,
    /// The result member and parameter carrying the cursor (`continuation`).
    #[serde(
        default = "Walk::default_cursor",
        skip_serializing_if = "crate::case::write::is_default_cursor"
    )]
    pub cursor: String,
    /// Page size of the walk.
    pub count: u32,
    /// Page size of a second walk whose entries must be exactly the same.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub compare_count: Option<u32>,
    /// The entry member that identifies an entry (default: the whole entry).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub key: Option<String>,
    /// The entry member holding its timestamp, checked against the window params.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub timestamp: Option<String>,
    /// Stop after this many pages: a failure where a window bounds the walk, a skip
    /// otherwise (the history may be longer than the walk reads).
    #[serde(
        default = "Walk::default_max_pages",
        skip_serializing_if = "crate::case::write::is_default_max_pages"
    )]
    pub max_pages: u32,
    /// An option that expired out of the money (a template): the walk also checks that
    /// its entries hold one of type `expiry` and nothing else for that expiration (4.8).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub expiry_of: Option<String>,
    /// Matchers every entry of every page is held to, their paths from the entry
    /// (`instrument_name`, `user_id`): a filter the walk's parameters send holds on the
    /// pages after the first as on the first.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub each: Vec<Matcher>,
    /// A bounded walk: the window the walk reads instead of the whole history (unless the
    /// run walks in full, `harness run --full-walks`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub window: Option<WalkWindow>,
}

/// The window of a bounded walk: the parameters that bound it, and how the harness picks
/// its ends. With `around`, the window is that timestamp a day either side; otherwise one
/// page of the walk's parameters is read first (the density probe, with the larger of the
/// walk's counts) and the window's ends are timestamps of entries on it, about `entries`
/// apart, so that an entry stamped with either end is known to belong to the window.
#[derive(Clone, Debug, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct WalkWindow {
    /// The parameter of the window's earliest timestamp (`start_timestamp`).
    pub start: String,
    /// The parameter of the window's latest timestamp (`end_timestamp`).
    pub end: String,
    /// About how many entries of the probed page the window holds (default 50).
    #[serde(
        default = "WalkWindow::default_entries",
        skip_serializing_if = "WalkWindow::is_default_entries"
    )]
    pub entries: u32,
    /// A timestamp in ms (a template) the window is centred on, a day either side; the
    /// walk is skipped with the reason when it resolves to nothing and the run is bounded.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub around: Option<String>,
}

impl WalkWindow {
    /// Half the width of a window centred on `around`: one day.
    pub const AROUND_HALF_MS: i64 = 86_400_000;
    fn default_entries() -> u32 {
        50
    }
    fn is_default_entries(entries: &u32) -> bool {
        *entries == Self::default_entries()
    }
}

impl Walk {
    /// The cursor a walk follows unless it names another: SPEC.md's `continuation`.
    pub(crate) fn default_cursor() -> String {
        "continuation".to_owned()
    }
    fn default_max_pages() -> u32 {
        200
    }
}

/// A rate-limit probe: send requests without pacing until the server refuses one.
#[derive(Clone, Debug, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct Probe {
    /// The method.
    pub call: String,
    /// Its parameters.
    #[serde(default, skip_serializing_if = "Map::is_empty")]
    pub params: Map<String, Value>,
    /// Requests beyond the target's declared burst before concluding there is no limit.
    #[serde(
        default = "Probe::default_margin",
        skip_serializing_if = "crate::case::write::is_default_margin"
    )]
    pub margin: u32,
}

impl Probe {
    fn default_margin() -> u32 {
        5
    }
}
