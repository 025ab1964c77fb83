//! The target file's order reads (`[fixtures] order_read`, `direct_access_order_read`):
//! SPEC.md describes no request that reads an order back and names no open or cancelled
//! `order_state` (3: "not shown beyond the sample state filled"), so a target names the
//! method, the parameter carrying the id and the states. This module checks what serde
//! cannot (names not empty, at least one open state, no state both open and cancelled, the
//! Direct Access read's `id_path`) at the key's line, and writes a read as an inline table.

use std::path::Path;

use harness_protocol::file_error::FileError;

use super::{OrderRead, key_line};

/// Checks both reads, each at its key's line.
pub(super) fn check(
    path: &Path,
    text: &str,
    order_read: &Option<OrderRead>,
    direct_access_order_read: &Option<OrderRead>,
) -> Result<(), FileError> {
    for (key, read, needs_id_path) in [
        ("order_read", order_read, false),
        ("direct_access_order_read", direct_access_order_read, true),
    ] {
        if let Some(read) = read
            && let Some(message) = problem(read, needs_id_path)
        {
            return Err(FileError::new(
                path,
                key_line(text, key),
                format!("{key}: {message}"),
            ));
        }
    }
    Ok(())
}

/// What is wrong with a read, if anything.
fn problem(read: &OrderRead, needs_id_path: bool) -> Option<String> {
    if read.method.trim().is_empty() {
        return Some("method is empty".to_owned());
    }
    if read.param.trim().is_empty() {
        return Some("param is empty".to_owned());
    }
    if read.open_states.is_empty() {
        return Some(
            "open_states names no state (SPEC.md 3 names no open order state: the target must)"
                .to_owned(),
        );
    }
    if let Some(both) = read
        .open_states
        .iter()
        .find(|state| read.cancelled_states.contains(state))
    {
        return Some(format!("\"{both}\" is both open and cancelled"));
    }
    match (&read.id_path, needs_id_path) {
        (None, true) => Some(
            "id_path is missing: where the answer to direct_access_order holds the order id"
                .to_owned(),
        ),
        (Some(id_path), true) if id_path.trim().is_empty() => Some("id_path is empty".to_owned()),
        _ => None,
    }
}

/// A read as an inline table.
pub(super) fn inline(read: &OrderRead) -> String {
    toml::Value::try_from(read)
        .map(|table| table.to_string())
        .unwrap_or_else(|_| "{}".to_owned())
}
