//! Raw bodies of the raw classes: a body of `\u` escapes every parser reads alike, and
//! bodies with a lone surrogate, a number literal parsers disagree on, a duplicate key,
//! deep nesting or a byte order mark.

use rand::Rng;
use rand::rngs::StdRng;
use rand::seq::IndexedRandom;
use serde_json::{Map, Value, json};

use super::{Class, with_class_chars};

/// The JSON text of `value` with every character of its strings past `/` and outside
/// ASCII letters and digits written as a `\u` escape (`\ud83d\ude00` past the BMP).
fn escaped(value: &Value) -> String {
    match value {
        Value::String(text) => {
            let mut out = String::from("\"");
            for c in text.chars() {
                if c.is_ascii_alphanumeric() {
                    out.push(c);
                } else {
                    let mut units = [0u16; 2];
                    for unit in c.encode_utf16(&mut units) {
                        out.push_str(&format!("\\u{unit:04x}"));
                    }
                }
            }
            out.push('"');
            out
        }
        Value::Object(members) => {
            let inner: Vec<String> = members
                .iter()
                .map(|(name, value)| format!("{}:{}", escaped(&json!(name)), escaped(value)))
                .collect();
            format!("{{{}}}", inner.join(","))
        }
        Value::Array(items) => {
            let inner: Vec<String> = items.iter().map(escaped).collect();
            format!("[{}]", inner.join(","))
        }
        other => other.to_string(),
    }
}

/// A raw body of `class` for `method` with `params`. Only a body every JSON parser reads
/// alike (the escaped one) carries the request's id (`%ID%`), so its answer must echo it;
/// the others carry a fixed id, since a server that cannot read the body cannot echo it.
pub(crate) fn raw_body(
    rng: &mut StdRng,
    class: Class,
    method: &str,
    params: &Map<String, Value>,
) -> String {
    // A parameter to put a value into: one the request has, else a name of its own.
    let name = params
        .keys()
        .collect::<Vec<_>>()
        .choose(rng)
        .map_or_else(|| "fuzz".to_owned(), |name| (*name).clone());
    let body = Body {
        method,
        params,
        params_text: Value::Object(params.clone()).to_string(),
        name,
    };
    match class {
        Class::JsonEscape => format!(
            r#"{{"jsonrpc":"2.0","id":%ID%,"method":{},"params":{}}}"#,
            escaped(&json!(method)),
            escaped(&Value::Object(params.clone()))
        ),
        Class::LoneSurrogate => body.fixed(&body.with_member(&lone_surrogate(rng))),
        Class::NumberLiteral => body.fixed(&body.with_member(number_literal(rng))),
        Class::DuplicateKeys => body.duplicate_keys(rng),
        Class::DeepNesting => body.fixed(&body.with_member(&deep_nesting(rng))),
        _ => format!("\u{feff}{}", body.fixed(&body.params_text)),
    }
}

/// What a raw body is made of: the method, its parameters (and as JSON text), and the
/// parameter a drawn value goes into.
struct Body<'a> {
    method: &'a str,
    params: &'a Map<String, Value>,
    params_text: String,
    name: String,
}

impl Body<'_> {
    /// An envelope with a fixed id around `params` (text).
    fn fixed(&self, params: &str) -> String {
        format!(
            r#"{{"jsonrpc":"2.0","id":7,"method":{},"params":{params}}}"#,
            json!(self.method)
        )
    }

    /// The parameters with `member` (JSON text) as the value of the chosen parameter, last.
    fn with_member(&self, member: &str) -> String {
        let mut inner = self.params.clone();
        inner.remove(&self.name);
        let rest = Value::Object(inner).to_string();
        let rest = rest.trim_start_matches('{').trim_end_matches('}');
        if rest.is_empty() {
            format!("{{{}:{member}}}", json!(self.name))
        } else {
            format!("{{{rest},{}:{member}}}", json!(self.name))
        }
    }

    /// A body with a key twice: a parameter, `params`, or `jsonrpc`.
    fn duplicate_keys(&self, rng: &mut StdRng) -> String {
        let (method, params_text) = (self.method, &self.params_text);
        match rng.random_range(0..3) {
            0 => self.fixed(
                &format!(
                    "{},{}:{}}}",
                    params_text.trim_end_matches('}'),
                    json!(self.name),
                    json!(with_class_chars(rng, Class::UnicodeCf, "x"))
                )
                .replace("{,", "{"),
            ),
            1 => format!(
                r#"{{"jsonrpc":"2.0","id":7,"method":{},"params":{{}},"params":{params_text}}}"#,
                json!(method)
            ),
            _ => format!(
                r#"{{"jsonrpc":"2.0","jsonrpc":"1.0","id":7,"method":{},"params":{params_text}}}"#,
                json!(method)
            ),
        }
    }
}

/// A JSON string holding a lone surrogate escape (high or low), after text or alone, or
/// a low surrogate before a high one.
fn lone_surrogate(rng: &mut StdRng) -> String {
    let unit = if rng.random_bool(0.5) {
        rng.random_range(0xD800..=0xDBFFu32)
    } else {
        rng.random_range(0xDC00..=0xDFFFu32)
    };
    match rng.random_range(0..3) {
        0 => format!("\"\\u{unit:04x}\""),
        1 => format!("\"BTC\\u{unit:04x}\""),
        _ => "\"\\udc00\\ud800\"".to_owned(),
    }
}

/// A number literal parsers disagree on (or refuse).
fn number_literal(rng: &mut StdRng) -> &'static str {
    [
        "1E2",
        "-0",
        "5.0",
        "1e400",
        "-1e400",
        "+5",
        "05",
        ".5",
        "5.",
        "0x10",
        "NaN",
        "Infinity",
        "9007199254740993",
        "18446744073709551616",
        "-9223372036854775809",
        "1.0e+2",
        "0.0000001e7",
    ][rng.random_range(0..17)]
}

/// A `1` nested 16 to 200 arrays or objects deep.
fn deep_nesting(rng: &mut StdRng) -> String {
    let depth = rng.random_range(16..=200);
    let (open, close) = if rng.random_bool(0.5) {
        ("[", "]")
    } else {
        ("{\"a\":", "}")
    };
    format!("{}1{}", open.repeat(depth), close.repeat(depth))
}
