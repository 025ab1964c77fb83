//! The oracle's value rules: whether a parameter's value is one SPEC.md allows, one it
//! refuses, or one it says nothing of, by the parameter's type (and how a query string
//! coerces text to it) and its listed values, range or fixture.

use serde_json::Value;

use super::OracleKnowledge;
use crate::FuzzRequest;
use harness_protocol::auth::scope::Scope;
use harness_protocol::spec::{Fixture, Kind, Param, Values};

/// Whether a parameter value is one SPEC.md allows, not, or not said.
pub(super) enum ValueValidity {
    /// SPEC.md allows it.
    Valid,
    /// SPEC.md does not say.
    Unsure,
    /// SPEC.md refuses it, for this reason.
    Invalid(String),
}

/// Whether `value` is one SPEC.md allows for parameter `spec`: coerced to its type as it
/// travels, then held to its listed values, range or fixture.
pub(super) fn judge_value(
    spec: &Param,
    value: &Value,
    query: bool,
    knowledge: &OracleKnowledge,
) -> ValueValidity {
    if value.is_null() {
        return ValueValidity::Unsure;
    }
    let coerced = match coerced(spec, value, query) {
        Ok(coerced) => coerced,
        Err(validity) => return validity,
    };
    // SPEC.md gives each parameter a type but does not say that a value of another type is
    // refused: a server may coerce it, or ignore it (the `coerce-types` variant).
    let Some(value) = coerced else {
        return ValueValidity::Unsure;
    };
    judge_typed(spec, &value, knowledge)
}

/// `value` as the parameter's type reads it (`None`: not of the type), or `Err` with the
/// verdict when its form alone decides it.
fn coerced(spec: &Param, value: &Value, query: bool) -> Result<Option<Value>, ValueValidity> {
    // Over a query string every value is text: what matters is whether it coerces.
    Ok(match (spec.kind, value) {
        (Kind::Str, Value::String(_)) => Some(value.clone()),
        // Over a query string even an object arrives as text.
        (Kind::Str, _) if query => Some(Value::String(
            harness_protocol::wire::query_value(value).unwrap_or_default(),
        )),
        (Kind::Int, Value::Number(number)) if number.is_i64() => Some(value.clone()),
        // SPEC.md states no bound for a timestamp (the spec table's `i64::MAX`): a server
        // may answer an empty page or refuse.
        (Kind::Int, Value::Number(number)) if number.is_u64() => {
            return Err(match spec.values {
                Values::Range(_, i64::MAX) => ValueValidity::Unsure,
                _ => ValueValidity::Invalid("is beyond any range".to_owned()),
            });
        }
        (Kind::Num, Value::Number(_)) => Some(value.clone()),
        (Kind::Bool, Value::Bool(_)) => Some(value.clone()),
        (Kind::Int | Kind::Num | Kind::Bool, Value::String(text)) => {
            match spec.kind.from_text(text) {
                // A JSON string holding a number: a lenient server may take it.
                Some(_) if !query => return Err(ValueValidity::Unsure),
                Some(parsed) if plainly_written(text, &parsed) => Some(parsed),
                // `+5`, `-0`, `05`, `5.`: a number only some parsers read as one.
                Some(_) => return Err(ValueValidity::Unsure),
                None => None,
            }
        }
        _ => None,
    })
}

/// A value of the parameter's type against its listed values, range or fixture.
fn judge_typed(spec: &Param, value: &Value, knowledge: &OracleKnowledge) -> ValueValidity {
    match spec.values {
        Values::OneOf(allowed) => match value.as_str() {
            Some(text) if allowed.contains(&text) => ValueValidity::Valid,
            _ => ValueValidity::Invalid(format!("{value} is not one of the listed values")),
        },
        Values::Range(min, max) => match value.as_i64() {
            // No stated bound, and past what a JSON number holds exactly wherever it is
            // parsed (RFC 8259 section 6: 2^53): a server may read it as another number.
            Some(number) if max == i64::MAX && number.unsigned_abs() > EXACT_IN_EVERY_PARSER => {
                ValueValidity::Unsure
            }
            Some(number) if (min..=max).contains(&number) => ValueValidity::Valid,
            // No stated bound (a timestamp): outside the table's range is either. A stated
            // range (a count) says what is valid, not that a value outside it is refused: a
            // server may take it into the range (the `counts-clamped` variant).
            _ => ValueValidity::Unsure,
        },
        Values::Fixture(Fixture::Instrument) => {
            if knowledge.instrument.as_deref() == value.as_str() {
                ValueValidity::Valid
            } else {
                ValueValidity::Unsure
            }
        }
        // The fixture subaccount belongs to the main account.
        Values::Fixture(Fixture::Subaccount) => {
            let main = knowledge
                .account
                .as_deref()
                .is_none_or(|account| account == "main");
            if main && knowledge.subaccount.is_some() && knowledge.subaccount == value.as_u64() {
                ValueValidity::Valid
            } else {
                ValueValidity::Unsure
            }
        }
        // A member or a continuation the target did not hand out may or may not exist.
        Values::Fixture(Fixture::Member) | Values::Token => ValueValidity::Unsure,
        Values::Free => free_value(spec.name, value, knowledge),
    }
}

/// Whether `value` is of the declared `kind` as it travels: its JSON type, or over a query
/// string text in the type's plain form.
pub(super) fn well_typed(kind: Kind, value: &Value, query: bool) -> bool {
    match (kind, value) {
        (_, Value::Null) => false,
        (Kind::Str, Value::String(_)) => true,
        (Kind::Str, _) => query,
        (Kind::Int, Value::Number(number)) => number.is_i64(),
        (Kind::Num, Value::Number(_)) | (Kind::Bool, Value::Bool(_)) => true,
        (_, Value::String(text)) if query => kind
            .from_text(text)
            .is_some_and(|parsed| plainly_written(text, &parsed)),
        _ => false,
    }
}

/// The largest integer every JSON parser holds exactly (RFC 8259 section 6).
const EXACT_IN_EVERY_PARSER: u64 = (1 << 53) - 1;

/// Whether query text that parses as `parsed` is that value's plain form: the JSON text of
/// the number (no sign but `-`, no leading zero, no `-0`), which every parser of integers
/// or numbers reads alike.
fn plainly_written(text: &str, parsed: &Value) -> bool {
    match parsed {
        Value::Number(number) if number.is_i64() || number.is_u64() => text == number.to_string(),
        Value::Number(_) => {
            serde_json::from_str::<serde_json::Number>(text).is_ok()
                && !(text.starts_with('-') && parsed.as_f64() == Some(0.0))
        }
        _ => true,
    }
}

/// The longest string length SPEC.md states anywhere: a member's name, "up to 64
/// characters" (section 8's table). A string parameter has no length stated, and RFC 8259
/// section 9 lets a server's parser limit it: "An implementation may set limits on the
/// length and character contents of strings."
const LONGEST_STATED_LENGTH: usize = 64;

/// A value of a parameter SPEC.md gives a type but no list: valid only where nothing but
/// the type is asked. An empty string (but the `mmp_group` SPEC.md 4.6 says may be empty),
/// a scope naming a value 5.4 does not list, an instrument filter other than the fixture's,
/// a group SPEC.md does not name, or a string longer than any length SPEC.md states
/// ([`LONGEST_STATED_LENGTH`]) may be refused.
fn free_value(name: &str, value: &Value, knowledge: &OracleKnowledge) -> ValueValidity {
    let Some(text) = value.as_str() else {
        return ValueValidity::Valid;
    };
    if text.chars().count() > LONGEST_STATED_LENGTH {
        return ValueValidity::Unsure;
    }
    let valid = match name {
        "mmp_group" => text.is_empty(),
        "scope" => !text.trim().is_empty() && Scope::parse(text).listed(),
        "instrument_name" => knowledge.instrument.as_deref() == Some(text),
        _ => !text.is_empty(),
    };
    if valid {
        ValueValidity::Valid
    } else {
        ValueValidity::Unsure
    }
}

/// Whether the request's `end_timestamp` is before its `start_timestamp`: SPEC.md does not
/// say whether such a window is refused or answered empty.
pub(super) fn window_reversed(request: &FuzzRequest, query: bool) -> bool {
    let timestamp = |name: &str| -> Option<i64> {
        match request.params.get(name)? {
            Value::String(text) if query => text.parse().ok(),
            other => other.as_i64(),
        }
    };
    matches!(
        (timestamp("start_timestamp"), timestamp("end_timestamp")),
        (Some(start), Some(end)) if end < start
    )
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn a_free_string_past_any_length_spec_md_states_may_be_refused() {
        let knowledge = OracleKnowledge::default();
        let judged = |length: usize| {
            let text = "x".repeat(length);
            free_value("data", &json!(text), &knowledge)
        };
        assert!(matches!(judged(1), ValueValidity::Valid));
        assert!(matches!(
            judged(LONGEST_STATED_LENGTH),
            ValueValidity::Valid
        ));
        // A signed login's `data` of 4,097 characters, refused by the independent Python
        // server (RFC 8259 9): not a finding.
        assert!(matches!(judged(4097), ValueValidity::Unsure));
        assert!(matches!(
            judged(LONGEST_STATED_LENGTH + 1),
            ValueValidity::Unsure
        ));
        // Characters, not bytes: 64 two-byte characters are still within it.
        let accented = "é".repeat(LONGEST_STATED_LENGTH);
        assert!(matches!(
            free_value("label", &json!(accented), &knowledge),
            ValueValidity::Valid
        ));
    }
}
