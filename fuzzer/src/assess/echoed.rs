//! The rules of SPEC.md section 4 a result shows directly: page sizes against `count`,
//! entries inside the window asked for, and filters and signed data that come back echoed.

use serde_json::Value;

use super::str_param;
use crate::FuzzRequest;
use harness_model::check::pages::{CountBounds, PageLimit, TimeWindow};
use harness_protocol::spec;

/// An integer parameter as sent, whether as a JSON number or as query text.
fn int_param(request: &FuzzRequest, name: &str) -> Option<i64> {
    match request.params.get(name)? {
        Value::Number(number) => number.as_i64(),
        Value::String(text) => text.parse().ok(),
        _ => None,
    }
}

/// The entries of a result's list member, none when it has no such list.
fn entries<'a>(result: &'a Value, member: &str) -> &'a [Value] {
    result
        .get(member)
        .and_then(Value::as_array)
        .map_or(&[], Vec::as_slice)
}

/// What is wrong when a page holds more entries than the request's `count`, or than the
/// method's default `count` of the spec table when it gave none. A count outside the
/// table's range bounds the page by the range's maximum only: SPEC.md does not say what
/// such a count is read as (the `counts-clamped` variant takes it to the nearest bound; a
/// server may read 0 as the default). So does a count the harness cannot read as an
/// integer (`"𝟚7𝟛"`, digits of another script): a server may read it its own way.
fn over_count(request: &FuzzRequest, list: &[Value]) -> Option<String> {
    let bounds = CountBounds::of(&request.method)?;
    let count = match (request.params.get("count"), int_param(request, "count")) {
        (_, Some(count)) => count,
        (None, None) => bounds.default,
        (Some(_), None) => bounds.max,
    };
    let limit = bounds
        .limit(Some(count))
        .unwrap_or(PageLimit::Count(bounds.max));
    (!limit.allows(list.len())).then(|| format!("{} entries for count {count}", list.len()))
}

/// Rules a result shows directly: at most `count` entries (or the default), entries inside
/// the window, and filters that come back echoed.
pub(super) fn echoed_rules(
    request: &FuzzRequest,
    result: &Value,
) -> Option<(&'static str, String)> {
    // A raw body's parameters are not the request's (an array, another envelope): nothing
    // was asked that the result could echo.
    if request.raw.is_some() {
        return None;
    }
    match request.method.as_str() {
        spec::TYPED_LOG_METHOD => transaction_log_rules(request, result),
        spec::TRIGGER_HISTORY_METHOD => trigger_history_rules(request, result),
        spec::BOOK_SUMMARY_METHOD => book_summary_rules(request, result),
        spec::AUTH_METHOD if str_param(request, "grant_type") == Some("client_signature") => {
            signature_data_rule(request, result)
        }
        spec::MMP_STATUS_METHOD => mmp_status_rules(request, result),
        _ => None,
    }
}

/// An entry's member, `null` when it has none.
fn field(entry: &Value, name: &str) -> Value {
    entry.get(name).cloned().unwrap_or(Value::Null)
}

/// The transaction log: at most `count` entries, each inside the window and of the
/// subaccount asked for.
fn transaction_log_rules(request: &FuzzRequest, result: &Value) -> Option<(&'static str, String)> {
    let logs = entries(result, "logs");
    if let Some(message) = over_count(request, logs) {
        return Some(("m.get_transaction_log.count", message));
    }
    let window = TimeWindow {
        start: int_param(request, "start_timestamp"),
        end: int_param(request, "end_timestamp"),
    };
    for entry in logs {
        let timestamp = entry.get("timestamp").and_then(Value::as_i64);
        if timestamp.is_some_and(|at| !window.contains(at)) {
            return Some((
                "m.get_transaction_log.window",
                format!(
                    "entry at {timestamp:?} outside {:?}..={:?}",
                    window.start, window.end
                ),
            ));
        }
        if let Some(sub) = int_param(request, "subaccount_id")
            && field(entry, "user_id").as_i64() != Some(sub)
        {
            return Some((
                "m.get_transaction_log.subaccount",
                format!(
                    "entry of user {} for subaccount_id {sub}",
                    field(entry, "user_id")
                ),
            ));
        }
    }
    None
}

/// The trigger order history: at most `count` entries, each of the instrument asked for.
fn trigger_history_rules(request: &FuzzRequest, result: &Value) -> Option<(&'static str, String)> {
    let list = entries(result, "entries");
    if let Some(message) = over_count(request, list) {
        return Some(("m.get_trigger_order_history.count", message));
    }
    if let Some(name) = str_param(request, "instrument_name")
        && let Some(entry) = list
            .iter()
            .find(|entry| field(entry, "instrument_name") != name)
    {
        return Some((
            "m.get_trigger_order_history.instrument_filter",
            format!(
                "entry of {} for filter {name}",
                field(entry, "instrument_name")
            ),
        ));
    }
    None
}

/// The book summary: each summary of the instrument asked for.
fn book_summary_rules(request: &FuzzRequest, result: &Value) -> Option<(&'static str, String)> {
    let name = str_param(request, "instrument_name")?;
    let list = result.as_array()?;
    let entry = list
        .iter()
        .find(|entry| field(entry, "instrument_name") != name)?;
    Some((
        "m.get_book_summary_by_instrument.instrument",
        format!("summary of {} for {name}", field(entry, "instrument_name")),
    ))
}

/// A `client_signature` login: the token set returns the signed `data`.
fn signature_data_rule(request: &FuzzRequest, result: &Value) -> Option<(&'static str, String)> {
    let data = str_param(request, "data")?;
    if !harness_model::check::holds(result, &Value::from(data)) {
        return Some((
            "auth.client_signature.data_returned",
            format!("the token set does not return the data {data:?}"),
        ));
    }
    None
}

/// The MMP status: `block_rfq` true answers Block RFQ statuses only.
fn mmp_status_rules(request: &FuzzRequest, result: &Value) -> Option<(&'static str, String)> {
    let list = result.as_array()?;
    let block_rfq = matches!(request.params.get("block_rfq"), Some(Value::Bool(true)))
        || str_param(request, "block_rfq") == Some("true");
    if block_rfq
        && list
            .iter()
            .any(|entry| field(entry, "block_rfq") != Value::Bool(true))
    {
        return Some((
            "m.get_mmp_status.block_rfq",
            "block_rfq true answered with order/quote statuses".to_owned(),
        ));
    }
    None
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::RequestAuth;
    use harness_protocol::wire::TransportKind;

    fn trigger_history(count: Value) -> FuzzRequest {
        let mut params = serde_json::Map::new();
        params.insert("count".to_owned(), count);
        FuzzRequest {
            transport: TransportKind::HttpQuery,
            method: spec::TRIGGER_HISTORY_METHOD.to_owned(),
            params,
            auth: RequestAuth::NONE,
            raw: None,
            why: String::new(),
            walk: false,
            class: None,
        }
    }

    #[test]
    fn a_count_the_harness_cannot_read_bounds_a_page_by_the_maximum_only() {
        let page: Vec<Value> = (0..69).map(|index| json!({ "id": index })).collect();
        // Digits of another script: a server may read them (Python's int() does) or not.
        assert_eq!(over_count(&trigger_history(json!("𝟚7𝟛")), &page), None);
        assert!(over_count(&trigger_history(json!(20)), &page).is_some());
        assert!(over_count(&trigger_history(json!("20")), &page).is_some());
    }
}
