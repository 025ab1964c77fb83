//! Method parameters: each method declares its parameters and their types, and every
//! request is checked against that list before the method runs.
//!
//! Over HTTP with a query string every value arrives as a string and is coerced to the
//! declared type; a JSON-RPC body or a WebSocket message must carry the declared JSON type
//! itself. Unknown parameters are refused, so a misspelt parameter is never silently
//! dropped. A JSON `null` counts as an omitted parameter: clients commonly send it for
//! "not given", and no parameter of SPEC.md section 4 gives `null` a meaning of its own.

use serde_json::{Map, Value};

use harness_protocol::jsonrpc::ErrorObject;
use harness_protocol::spec::Kind;

/// One declared parameter.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Declared {
    pub(crate) name: &'static str,
    pub(crate) kind: Kind,
}

/// Shorthand for a declared parameter.
pub(crate) const fn declared(name: &'static str, kind: Kind) -> Declared {
    Declared { name, kind }
}

/// Where the parameter values came from, which decides how strictly they are typed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Origin {
    /// An HTTP query string: every value is a string to coerce.
    Query,
    /// A JSON-RPC body or WebSocket message: values carry their JSON type.
    Json,
}

/// How forgiving the check is: the reference server refuses unknown parameters and JSON
/// values of another type; the `unknown-params-ignored` and `coerce-types` variants make
/// the other legal choices.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Leniency {
    /// Drop parameters the method does not declare instead of refusing them.
    pub(crate) ignore_unknown: bool,
    /// Coerce JSON values of another type as query-string text is coerced.
    pub(crate) coerce: bool,
    /// The parsing faults switched on (none on the reference).
    pub(crate) faults: ParseFaults,
}

/// The faults of [`super::Fault`] that live in the parameter parser: each makes an integer
/// parameter's digit test and its parse disagree, and the disagreement an internal error
/// ([`crash`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct ParseFaults {
    /// `int-unicode-digits`: the digit test is `char::is_numeric`.
    pub(crate) unicode_digits: bool,
    /// `int-float-parse`: integers are parsed as `f64` and truncated.
    pub(crate) float_parse: bool,
    /// `int-unicode-trim`: the digit test trims unicode whitespace, the parse ascii only.
    pub(crate) unicode_trim: bool,
}

/// The member of an internal error's data [`crash`] makes.
const CRASH: &str = "crash";

/// An internal error: what a server whose parser panicked answers. The transports answer it
/// with no JSON-RPC envelope at all (`http.rs`: status 500 and a plain-text body; `ws.rs`:
/// a plain-text frame); only a parsing fault makes one.
pub(crate) fn crash(what: &str) -> ErrorObject {
    ErrorObject {
        data: Some(serde_json::json!({ CRASH: what })),
        ..ErrorObject::new(INTERNAL_ERROR, "internal_error")
    }
}

/// `-32603`, JSON-RPC 2.0's internal error.
const INTERNAL_ERROR: i64 = -32603;

/// Whether `error` is one [`crash`] made.
pub(crate) fn is_crash(error: &ErrorObject) -> bool {
    error.code == INTERNAL_ERROR
        && error
            .data
            .as_ref()
            .is_some_and(|data| data.get(CRASH).is_some())
}

/// An integer parameter's value as a parsing fault reads it: `Ok(Some)` where the fault
/// takes it, `Ok(None)` where the ordinary check decides, `Err` where the fault crashes.
fn faulty_int(
    value: &Value,
    origin: Origin,
    faults: ParseFaults,
) -> Result<Option<Value>, ErrorObject> {
    let text = match (origin, value) {
        (Origin::Query, Value::String(text)) => Some(text.as_str()),
        _ => None,
    };
    if faults.unicode_digits
        && let Some(text) = text
        && !text.is_ascii()
        && text.chars().all(|c| c.is_numeric() || c == '-')
    {
        // The digit test passed; `parse::<i64>` takes ASCII digits only.
        return text
            .parse::<i64>()
            .map(|number| Some(Value::from(number)))
            .map_err(|_| crash("integer parse of digits the digit test passed"));
    }
    if faults.unicode_trim
        && let Some(text) = text
        && text.trim() != text
        && text.trim().parse::<i64>().is_ok()
    {
        return text
            .trim_ascii()
            .parse::<i64>()
            .map(|number| Some(Value::from(number)))
            .map_err(|_| crash("integer parse of text the trimmed digit test passed"));
    }
    if faults.float_parse {
        let float = match value {
            Value::String(text) if origin == Origin::Query => text.parse::<f64>().ok(),
            Value::Number(number) => number.as_f64(),
            _ => None,
        };
        if let Some(float) = float {
            // `i64::MAX as f64` is 2^63, which no i64 holds.
            return if float.is_finite() && float.abs() < 9_223_372_036_854_775_807_f64 {
                Ok(Some(Value::from(float.trunc() as i64)))
            } else {
                Err(crash("float to integer conversion"))
            };
        }
    }
    Ok(None)
}

/// Parameters that passed the declared list: each present value has its declared type.
#[derive(Clone, Debug, Default)]
pub(crate) struct Params {
    values: Map<String, Value>,
}

impl Params {
    /// The checked values, by name.
    pub(crate) fn into_values(self) -> Map<String, Value> {
        self.values
    }

    /// Checks raw parameters against the declared list.
    pub(crate) fn check(
        raw: Map<String, Value>,
        specs: &[Declared],
        origin: Origin,
        leniency: Leniency,
    ) -> Result<Params, ErrorObject> {
        let mut values = Map::new();
        for (name, value) in raw {
            let Some(spec) = specs.iter().find(|spec| spec.name == name) else {
                if leniency.ignore_unknown {
                    continue;
                }
                return Err(ErrorObject::invalid_params(&name, "unknown parameter"));
            };
            if value.is_null() {
                continue;
            }
            if spec.kind == Kind::Int
                && let Some(typed) = faulty_int(&value, origin, leniency.faults)?
            {
                values.insert(name, typed);
                continue;
            }
            let typed = match (origin, value) {
                (Origin::Query, Value::String(text)) => spec.kind.from_text(&text),
                (_, value) if leniency.coerce => lenient_json(value, spec.kind),
                (_, value) => typed_json(value, spec.kind),
            };
            match typed {
                Some(typed) => {
                    values.insert(name, typed);
                }
                None => {
                    return Err(ErrorObject::invalid_params(
                        spec.name,
                        &format!("must be of type {}", spec.kind.name()),
                    ));
                }
            }
        }
        Ok(Params { values })
    }

    /// Whether a parameter was given (and not `null`).
    pub(crate) fn has(&self, name: &str) -> bool {
        self.values.contains_key(name)
    }

    /// A string parameter, if given.
    pub(crate) fn str(&self, name: &str) -> Option<&str> {
        self.values.get(name).and_then(Value::as_str)
    }

    /// An integer parameter, if given.
    pub(crate) fn int(&self, name: &str) -> Option<i64> {
        self.values.get(name).and_then(Value::as_i64)
    }

    /// A number parameter, if given.
    pub(crate) fn num(&self, name: &str) -> Option<f64> {
        self.values.get(name).and_then(Value::as_f64)
    }

    /// A boolean parameter, if given.
    pub(crate) fn bool(&self, name: &str) -> Option<bool> {
        self.values.get(name).and_then(Value::as_bool)
    }

    /// A string parameter the method cannot do without.
    pub(crate) fn required_str(&self, name: &str) -> Result<&str, ErrorObject> {
        self.str(name)
            .ok_or_else(|| ErrorObject::invalid_params(name, "missing required parameter"))
    }

    /// An integer parameter the method cannot do without.
    pub(crate) fn required_int(&self, name: &str) -> Result<i64, ErrorObject> {
        self.int(name)
            .ok_or_else(|| ErrorObject::invalid_params(name, "missing required parameter"))
    }

    /// A string parameter restricted to `allowed`, unless `any` lets every value through
    /// (the fault switches that widen an enumeration).
    pub(crate) fn one_of(
        &self,
        name: &str,
        allowed: &[&str],
        any: bool,
    ) -> Result<Option<&str>, ErrorObject> {
        match self.str(name) {
            Some(value) if !any && !allowed.contains(&value) => Err(ErrorObject::invalid_params(
                name,
                &format!("must be one of {}", allowed.join(", ")),
            )),
            other => Ok(other),
        }
    }

    /// An integer parameter within `min..=max`, or `default` when omitted.
    pub(crate) fn count(
        &self,
        name: &str,
        min: i64,
        max: i64,
        default: i64,
    ) -> Result<i64, ErrorObject> {
        match self.int(name) {
            None => Ok(default),
            Some(value) if (min..=max).contains(&value) => Ok(value),
            Some(_) => Err(ErrorObject::invalid_params(
                name,
                &format!("must be between {min} and {max}"),
            )),
        }
    }
}

/// Accepts a JSON value of the declared type, or one whose text coerces to it.
fn lenient_json(value: Value, kind: Kind) -> Option<Value> {
    match value {
        Value::String(text) => kind.from_text(&text),
        Value::Number(_) | Value::Bool(_) if kind == Kind::Str => {
            Some(Value::String(value.to_string()))
        }
        other => typed_json(other, kind),
    }
}

/// Accepts a JSON value only if it already has the declared type.
pub(super) fn typed_json(value: Value, kind: Kind) -> Option<Value> {
    let fits = match kind {
        Kind::Str => value.is_string(),
        // An integer that does not fit i64 is refused rather than wrapped.
        Kind::Int => value.is_i64(),
        Kind::Num => value.is_number(),
        Kind::Bool => value.is_boolean(),
    };
    fits.then_some(value)
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    const SPECS: &[Declared] = &[
        declared("count", Kind::Int),
        declared("price", Kind::Num),
        declared("flag", Kind::Bool),
        declared("name", Kind::Str),
    ];

    fn raw(value: Value) -> Map<String, Value> {
        value.as_object().cloned().unwrap_or_default()
    }

    #[test]
    fn query_strings_are_coerced() {
        let params = Params::check(
            raw(json!({"count": "7", "price": "1.5", "flag": "true", "name": "x"})),
            SPECS,
            Origin::Query,
            Leniency::default(),
        )
        .unwrap();
        assert_eq!(params.int("count"), Some(7));
        assert_eq!(params.num("price"), Some(1.5));
        assert_eq!(params.bool("flag"), Some(true));
        assert_eq!(params.str("name"), Some("x"));
    }

    #[test]
    fn uncoercible_and_mistyped_values_are_refused() {
        for (value, origin) in [
            (json!({"count": "seven"}), Origin::Query),
            (json!({"flag": "yes"}), Origin::Query),
            (json!({"count": "7"}), Origin::Json),
            (json!({"count": 7.5}), Origin::Json),
            (json!({"name": 3}), Origin::Json),
        ] {
            let error = Params::check(raw(value), SPECS, origin, Leniency::default()).unwrap_err();
            assert_eq!(error.code, harness_protocol::jsonrpc::code::INVALID_PARAMS);
        }
    }

    #[test]
    fn unknown_parameter_is_named() {
        let error = Params::check(
            raw(json!({"access_token": "t"})),
            SPECS,
            Origin::Query,
            Leniency::default(),
        )
        .unwrap_err();
        assert_eq!(
            error.data,
            Some(json!({"reason": "unknown parameter", "param": "access_token"}))
        );
    }

    #[test]
    fn lenient_check_ignores_unknown_names_and_coerces_json_text() {
        let lenient = Leniency {
            ignore_unknown: true,
            coerce: true,
            ..Leniency::default()
        };
        let params = Params::check(
            raw(json!({"count": "7", "name": 5, "flag": "false", "other": 1})),
            SPECS,
            Origin::Json,
            lenient,
        )
        .unwrap();
        assert_eq!(params.int("count"), Some(7));
        assert_eq!(params.str("name"), Some("5"));
        assert_eq!(params.bool("flag"), Some(false));
        assert!(params.values.get("other").is_none());
        let error = Params::check(raw(json!({"count": "seven"})), SPECS, Origin::Json, lenient)
            .unwrap_err();
        assert_eq!(error.code, harness_protocol::jsonrpc::code::INVALID_PARAMS);
    }

    #[test]
    fn each_parsing_fault_crashes_on_its_class_and_only_with_it() {
        let faults = |unicode_digits, float_parse, unicode_trim| Leniency {
            faults: ParseFaults {
                unicode_digits,
                float_parse,
                unicode_trim,
            },
            ..Leniency::default()
        };
        let check = |value: Value, leniency: Leniency| {
            Params::check(
                raw(json!({ "count": value })),
                SPECS,
                Origin::Query,
                leniency,
            )
        };
        for (value, leniency) in [
            (json!("\u{0663}"), faults(true, false, false)),
            (json!("\u{ff15}0"), faults(true, false, false)),
            (json!("NaN"), faults(false, true, false)),
            (json!("1e309"), faults(false, true, false)),
            (json!("\u{3000}5"), faults(false, false, true)),
        ] {
            assert!(
                is_crash(&check(value.clone(), leniency).unwrap_err()),
                "{value}"
            );
            assert!(!is_crash(&check(value, Leniency::default()).unwrap_err()));
        }
        let params = check(json!("5.7"), faults(false, true, false)).unwrap();
        assert_eq!(params.int("count"), Some(5));
        let params = check(json!(" 5 "), faults(false, false, true)).unwrap();
        assert_eq!(params.int("count"), Some(5));
    }

    #[test]
    fn null_counts_as_omitted() {
        let params = Params::check(
            raw(json!({"count": null})),
            SPECS,
            Origin::Json,
            Leniency::default(),
        )
        .unwrap();
        assert_eq!(params.int("count"), None);
        assert_eq!(params.count("count", 1, 250, 100).unwrap(), 100);
    }
}
