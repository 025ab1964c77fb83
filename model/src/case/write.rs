//! Writing a [`Case`] as the case-file text the loader reads: the same keys and renames
//! (`step`, `match`, ...), defaults left out so a written file stays short. The fuzzers
//! write their findings this way, so a case file has one format and one writer.

use serde_json::Value;

use super::Case;
use harness_protocol::wire::TransportKind;

impl Case {
    /// The case as case-file TOML, after `comment` (each line written as a `#` comment).
    /// Fails only when a parameter holds what TOML cannot (see [`storable`]).
    pub fn to_toml(&self, comment: &str) -> Result<String, toml::ser::Error> {
        let body = toml::to_string(self)?;
        let mut out = String::new();
        for line in comment.lines() {
            out.push_str(format!("# {line}").trim_end());
            out.push('\n');
        }
        out.push_str(&body);
        Ok(out)
    }
}

/// `value` as a case file can hold it: TOML has no null and no integer beyond `i64`, so
/// those are written as strings, which is what a query string carries anyway.
pub fn storable(value: &Value) -> Value {
    map_leaves(value, &|leaf| match leaf {
        Value::Null => Value::from("null"),
        Value::Number(number) if !number.is_i64() && !number.is_f64() => {
            Value::from(number.to_string())
        }
        other => other.clone(),
    })
}

/// `value` with every `{{` of its texts quoted as `{{"{{"}}`, so the runner's templates send
/// it as it is (a generated value may hold braces a server must take literally).
pub fn literal(value: &Value) -> Value {
    map_leaves(value, &|leaf| match leaf {
        Value::String(text) => Value::from(literal_text(text)),
        other => other.clone(),
    })
}

/// `value` with `leaf` applied to every value that is neither an array nor an object.
fn map_leaves(value: &Value, leaf: &dyn Fn(&Value) -> Value) -> Value {
    match value {
        Value::Array(items) => {
            Value::Array(items.iter().map(|item| map_leaves(item, leaf)).collect())
        }
        Value::Object(members) => Value::Object(
            members
                .iter()
                .map(|(name, member)| (name.clone(), map_leaves(member, leaf)))
                .collect(),
        ),
        other => leaf(other),
    }
}

/// `text` with every `{{` quoted (see [`literal`]).
pub fn literal_text(text: &str) -> String {
    if text.contains("{{") {
        text.replace("{{", r#"{{"{{"}}"#)
    } else {
        text.to_owned()
    }
}

pub(crate) fn is_false(flag: &bool) -> bool {
    !*flag
}

pub(crate) fn is_zero(number: &i64) -> bool {
    *number == 0
}

pub(crate) fn is_default<T: Default + PartialEq>(value: &T) -> bool {
    *value == T::default()
}

pub(crate) fn is_default_transports(transports: &[TransportKind]) -> bool {
    transports == TransportKind::DEFAULT
}

pub(crate) fn is_default_cursor(cursor: &str) -> bool {
    cursor == "continuation"
}

pub(crate) fn is_default_max_pages(max_pages: &u32) -> bool {
    *max_pages == 200
}

pub(crate) fn is_default_margin(margin: &u32) -> bool {
    *margin == 5
}

pub(crate) fn is_zero_usize(number: &usize) -> bool {
    *number == 0
}

pub(crate) fn is_default_rounds(rounds: &u32) -> bool {
    *rounds == super::Race::DEFAULT_ROUNDS
}

#[cfg(test)]
mod tests {
    use crate::case::parse_case;
    use crate::corpus::Corpus;

    /// Every case of the embedded corpus survives load, write, load unchanged: each step's
    /// kind and each auth mode come back as the same enum variants, and writing the case
    /// again gives the same text.
    #[test]
    fn every_embedded_case_round_trips() {
        let corpus = Corpus::embedded().expect("the embedded corpus loads");
        assert!(corpus.cases.len() > 100, "{} cases", corpus.cases.len());
        for case in &corpus.cases {
            let text = case
                .to_toml("written again")
                .unwrap_or_else(|error| panic!("{}: {error}", case.path.display()));
            let again = parse_case(&case.path, &text, &corpus.catalog, &corpus.schemas)
                .unwrap_or_else(|error| panic!("{error}\n{text}"));
            assert_eq!(
                again.to_toml("written again").ok().as_deref(),
                Some(text.as_str()),
                "{}",
                case.path.display()
            );
            let mut expected = case.clone();
            let mut got = again;
            for step in expected.steps.iter_mut().chain(got.steps.iter_mut()) {
                step.line = 0;
            }
            assert_eq!(got, expected, "{}\n{text}", case.path.display());
        }
    }
}
