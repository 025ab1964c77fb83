//! Envelope members named twice: RFC 8259 4 says an object's names "SHOULD be unique" and
//! leaves to each reader what it makes of a repeated one (serde_json keeps the last, others
//! the first); JSON-RPC's `jsonrpc`, `id`, `result` and `error` are each one value, so an
//! envelope that repeats one says two things at once, and which one a client reads is the
//! client's library's choice. The parsed [`serde_json::Value`] cannot show it: this reads
//! the envelope's names from the text.

use std::fmt;

use serde::Deserializer as _;
use serde::de::{IgnoredAny, MapAccess, Visitor};

/// The members of a response envelope that must each be one value.
const ENVELOPE_MEMBERS: [&str; 4] = ["jsonrpc", "id", "result", "error"];

/// The envelope members a response text names more than once at its top level, in the
/// order of their second appearance; empty for anything else (not an object, not JSON).
///
/// A text where no envelope member's quoted name appears twice anywhere, and no name can
/// hide behind a `\u` escape, is answered without parsing, so the common answer costs a
/// scan for quotes.
pub fn duplicate_envelope_members(text: &[u8]) -> Vec<String> {
    let escaped = text.windows(2).any(|pair| pair == b"\\u");
    if !escaped
        && !ENVELOPE_MEMBERS
            .iter()
            .any(|name| quoted_appearances(text, name) >= 2)
    {
        return Vec::new();
    }
    let mut reader = serde_json::Deserializer::from_slice(text);
    reader.deserialize_map(RepeatedNames).unwrap_or_default()
}

/// How often `"name"` appears in `text`, up to 2.
fn quoted_appearances(text: &[u8], name: &str) -> usize {
    let needle = name.as_bytes();
    let mut found = 0;
    let mut at = 0;
    while let Some(offset) = text[at..].iter().position(|byte| *byte == b'"') {
        let start = at + offset + 1;
        let end = start + needle.len();
        if text.get(start..end) == Some(needle) && text.get(end) == Some(&b'"') {
            found += 1;
            if found == 2 {
                return found;
            }
        }
        at = start;
    }
    found
}

/// Reads an object's names, skipping its values, and keeps the envelope members repeated.
struct RepeatedNames;

impl<'de> Visitor<'de> for RepeatedNames {
    type Value = Vec<String>;

    fn expecting(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        formatter.write_str("a response envelope")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Vec<String>, A::Error> {
        let mut seen = [false; ENVELOPE_MEMBERS.len()];
        let mut repeated = Vec::new();
        while let Some(name) = map.next_key::<std::borrow::Cow<'de, str>>()? {
            map.next_value::<IgnoredAny>()?;
            if let Some(index) = ENVELOPE_MEMBERS.iter().position(|member| *member == name) {
                if seen[index] && !repeated.iter().any(|known| known == &name) {
                    repeated.push(name.into_owned());
                }
                seen[index] = true;
            }
        }
        Ok(repeated)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_repeated_envelope_member_is_found_and_a_repeated_inner_name_is_not() {
        let twice = br#"{"jsonrpc":"2.0","id":1,"result":{"id":5},"id":2,"result":[]}"#;
        assert_eq!(duplicate_envelope_members(twice), ["id", "result"]);
        let inner = br#"{"jsonrpc":"2.0","id":1,"result":{"logs":[{"id":1},{"id":2}]}}"#;
        assert_eq!(duplicate_envelope_members(inner), Vec::<String>::new());
        let escaped = br#"{"jsonrpc":"2.0","i\u0064":1,"id":2,"result":0}"#;
        assert_eq!(duplicate_envelope_members(escaped), ["id"]);
        assert_eq!(
            duplicate_envelope_members(b"[\"id\",\"id\"]"),
            Vec::<String>::new()
        );
        assert_eq!(
            duplicate_envelope_members(b"{\"id\":1,\"id\""),
            Vec::<String>::new()
        );
    }

    #[test]
    fn fifty_thousand_repeats_are_read_in_one_pass() {
        let mut text = String::from(r#"{"jsonrpc":"2.0""#);
        for _ in 0..50_000 {
            text.push_str(r#","id":1,"result":true"#);
        }
        text.push('}');
        assert_eq!(
            duplicate_envelope_members(text.as_bytes()),
            ["id", "result"]
        );
    }
}
