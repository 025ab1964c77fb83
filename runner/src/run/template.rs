//! Template resolution in case-file values: `{{name}}`, `{{name + 1}}`, `{{name - 61000}}`,
//! and `{{min(a, b)}}` / `{{max(a, b)}}` of two integer names (a window between two captured
//! timestamps whatever order the server pages in).
//!
//! A string that is exactly one template becomes the referenced value with its JSON type
//! (so `"{{fixtures.subaccount_id}}"` is an integer); templates inside longer strings are
//! interpolated as text. Names: captures of earlier steps, `fixtures.<name>`,
//! `account.<role>.client_id`, `limits.<name>`, `now_ms`, `nonce` (fresh each time) and
//! `request_id` (the JSON-RPC id the step's request goes with, for a `raw` body). A quoted
//! text is itself: `{{"{{"}}` writes two braces, so a value can carry `{{` as it is
//! ([`harness_model::case::literal`] quotes a value that way).
//!
//! A template that cannot be resolved is a [`TemplateError`]: a name without a value is
//! told apart from a malformed template, since a caller may skip on the first (a value
//! the target file does not give) and must stop on the second (a broken case file).

use serde_json::{Map, Value};

/// Why a template could not be resolved.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub(crate) enum TemplateError {
    /// A name with no value: no capture, fixture or limit of that name.
    #[error("template {{{{{name}}}}} has no value")]
    NoValue {
        /// The name.
        name: String,
    },
    /// An arithmetic template whose name is not an integer.
    #[error("template {{{{{name}}}}} is {value}, not an integer")]
    NotInteger {
        /// The name.
        name: String,
        /// Its value.
        value: Value,
    },
    /// `{{` without its `}}`.
    #[error("unclosed template in \"{text}\"")]
    Unclosed {
        /// The text holding it.
        text: String,
    },
    /// `min(` or `max(` with other than two arguments.
    #[error("\"{expression}\" needs two arguments")]
    NotTwoArguments {
        /// The expression.
        expression: String,
    },
    /// `name + x` where `x` is not an integer.
    #[error("\"{expression}\" is not name + integer")]
    NotAnOffset {
        /// The expression.
        expression: String,
    },
}

/// Looks a template name up; `None` when it has no value.
pub(crate) trait Bindings {
    fn value_of(&self, name: &str) -> Option<Value>;
}

/// Resolves every template in a JSON value.
pub(crate) fn resolve(value: &Value, bindings: &dyn Bindings) -> Result<Value, TemplateError> {
    Ok(match value {
        Value::String(text) => resolve_text(text, bindings)?,
        Value::Array(items) => Value::Array(
            items
                .iter()
                .map(|item| resolve(item, bindings))
                .collect::<Result<_, _>>()?,
        ),
        Value::Object(object) => Value::Object(resolve_map(object, bindings)?),
        other => other.clone(),
    })
}

/// Resolves every template in a parameter map.
pub(crate) fn resolve_map(
    object: &Map<String, Value>,
    bindings: &dyn Bindings,
) -> Result<Map<String, Value>, TemplateError> {
    object
        .iter()
        .map(|(key, value)| Ok((key.clone(), resolve(value, bindings)?)))
        .collect()
}

/// Resolves a string to a text (templates interpolated).
pub(crate) fn resolve_string(text: &str, bindings: &dyn Bindings) -> Result<String, TemplateError> {
    match resolve_text(text, bindings)? {
        Value::String(text) => Ok(text),
        other => Ok(other.to_string()),
    }
}

fn resolve_text(text: &str, bindings: &dyn Bindings) -> Result<Value, TemplateError> {
    let trimmed = text.trim();
    if let Some(inner) = trimmed
        .strip_prefix("{{")
        .and_then(|rest| rest.strip_suffix("}}"))
        && !inner.contains("{{")
    {
        return evaluate(inner.trim(), bindings);
    }
    if !text.contains("{{") {
        return Ok(Value::String(text.to_owned()));
    }
    let mut out = String::new();
    let mut rest = text;
    while let Some(start) = rest.find("{{") {
        out.push_str(&rest[..start]);
        let Some(end) = rest[start..].find("}}") else {
            return Err(TemplateError::Unclosed {
                text: text.to_owned(),
            });
        };
        let value = evaluate(rest[start + 2..start + end].trim(), bindings)?;
        match value {
            Value::String(inner) => out.push_str(&inner),
            other => out.push_str(&other.to_string()),
        }
        rest = &rest[start + end + 2..];
    }
    out.push_str(rest);
    Ok(Value::String(out))
}

fn evaluate(expression: &str, bindings: &dyn Bindings) -> Result<Value, TemplateError> {
    if let Some(text) = expression
        .strip_prefix('"')
        .and_then(|rest| rest.strip_suffix('"'))
    {
        return Ok(Value::from(text));
    }
    for (function, pick) in [
        ("min(", i64::min as fn(i64, i64) -> i64),
        ("max(", i64::max),
    ] {
        if let Some(arguments) = expression
            .strip_prefix(function)
            .and_then(|rest| rest.strip_suffix(')'))
        {
            let (first, second) =
                arguments
                    .split_once(',')
                    .ok_or_else(|| TemplateError::NotTwoArguments {
                        expression: expression.to_owned(),
                    })?;
            let integer = |name: &str| {
                let value = evaluate(name.trim(), bindings)?;
                value.as_i64().ok_or_else(|| TemplateError::NotInteger {
                    name: name.trim().to_owned(),
                    value: value.clone(),
                })
            };
            return Ok(Value::from(pick(integer(first)?, integer(second)?)));
        }
    }
    let (name, offset) = match expression.split_once(['+', '-']) {
        Some((name, amount)) => {
            let amount: i64 = amount
                .trim()
                .parse()
                .map_err(|_| TemplateError::NotAnOffset {
                    expression: expression.to_owned(),
                })?;
            let negative = expression[name.len()..].starts_with('-');
            (name.trim(), Some(if negative { -amount } else { amount }))
        }
        None => (expression, None),
    };
    let value = bindings
        .value_of(name)
        .ok_or_else(|| TemplateError::NoValue {
            name: name.to_owned(),
        })?;
    match offset {
        None => Ok(value),
        Some(offset) => {
            let base = value.as_i64().ok_or_else(|| TemplateError::NotInteger {
                name: name.to_owned(),
                value: value.clone(),
            })?;
            Ok(Value::from(base.saturating_add(offset)))
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    struct Fixed;
    impl Bindings for Fixed {
        fn value_of(&self, name: &str) -> Option<Value> {
            match name {
                "fixtures.subaccount_id" => Some(json!(7)),
                "now_ms" => Some(json!(1000)),
                "token" => Some(json!("abc")),
                _ => None,
            }
        }
    }

    /// Resolves a template string against [`Fixed`].
    fn resolved(template: &str) -> Result<Value, TemplateError> {
        resolve(&json!(template), &Fixed)
    }

    #[test]
    fn whole_templates_keep_their_type_and_compute() {
        let cases = [
            ("{{fixtures.subaccount_id}}", json!(7)),
            ("{{now_ms - 61000}}", json!(-60000)),
            ("{{ now_ms + 1 }}", json!(1001)),
            ("{{min(now_ms, fixtures.subaccount_id)}}", json!(7)),
            ("{{ max(fixtures.subaccount_id, now_ms + 5) }}", json!(1005)),
        ];
        for (template, value) in cases {
            assert_eq!(resolved(template), Ok(value), "{template}");
        }
    }

    #[test]
    fn min_and_max_take_two_integers() {
        assert_eq!(
            resolved("{{max(token, now_ms)}}"),
            Err(TemplateError::NotInteger {
                name: "token".to_owned(),
                value: json!("abc")
            })
        );
        assert_eq!(
            resolved("{{min(now_ms)}}"),
            Err(TemplateError::NotTwoArguments {
                expression: "min(now_ms)".to_owned()
            })
        );
    }

    #[test]
    fn a_quoted_text_is_itself_so_braces_can_be_sent_as_they_are() {
        assert_eq!(resolved(r#"{{"{{"}}"#), Ok(json!("{{")));
        assert_eq!(
            resolved(r#"a {{"{{"}}fixtures.subaccount_id}} b"#),
            Ok(json!("a {{fixtures.subaccount_id}} b"))
        );
    }

    #[test]
    fn interpolation_and_missing() {
        assert_eq!(resolved("Bearer {{token}}!").unwrap(), json!("Bearer abc!"));
        let missing = resolved("{{nope}}").unwrap_err();
        assert_eq!(
            missing,
            TemplateError::NoValue {
                name: "nope".to_owned()
            }
        );
        assert_eq!(missing.to_string(), "template {{nope}} has no value");
        assert_eq!(
            resolved("a {{token").unwrap_err().to_string(),
            "unclosed template in \"a {{token\""
        );
    }
}
