//! Redaction of secrets from everything the harness writes: reports, snapshots, logs and
//! reproduction commands.
//!
//! Two mechanisms work together. Known secret values (client secrets, API keys, and every
//! token or signature seen during a run) are replaced wherever they occur, and JSON members
//! whose names mark them as secret (`access_token`, `client_secret`, `signature`, ...) are
//! replaced whatever their value.

use std::collections::BTreeSet;
use std::sync::{Arc, RwLock};

use aho_corasick::{AhoCorasick, MatchKind};
use serde_json::Value;

/// The replacement text.
pub(crate) const REDACTED: &str = "[redacted]";

/// JSON member names whose values are always secret.
pub(crate) const SECRET_MEMBERS: &[&str] = &[
    "access_token",
    "refresh_token",
    "client_secret",
    "signature",
    "direct_access_key",
    "api_key",
    "password",
];

/// Values shorter than this are not registered: redacting "1" everywhere would ruin reports.
const MIN_SECRET_LEN: usize = 6;

/// The secrets known so far, and one automaton that finds any of them in a single pass
/// over a text, built when a text is redacted after the set changed.
#[derive(Debug, Default)]
struct Known {
    values: BTreeSet<String>,
    finder: Option<Arc<AhoCorasick>>,
}

/// A shared, growing set of secret values.
#[derive(Clone, Debug, Default)]
pub struct Redactor {
    /// A report redacts every string of every exchange against every secret the run
    /// learned (a token per login, a signature per signed request): one Aho-Corasick
    /// automaton over all of them scans a text once, where a search per secret made the
    /// reports of a suite run cost seconds.
    known: Arc<RwLock<Known>>,
}

impl Redactor {
    /// A redactor that knows these secrets.
    pub fn new(secrets: impl IntoIterator<Item = String>) -> Redactor {
        let redactor = Redactor::default();
        for secret in secrets {
            redactor.add(secret);
        }
        redactor
    }

    /// Registers a secret value seen during the run.
    pub fn add(&self, secret: impl Into<String>) {
        let secret = secret.into();
        if secret.len() < MIN_SECRET_LEN {
            return;
        }
        // Most secrets come again (a shared token on every request): known, no write lock.
        let known = self
            .known
            .read()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
            .values
            .contains(&secret);
        if !known {
            let mut known = self
                .known
                .write()
                .unwrap_or_else(|poisoned| poisoned.into_inner());
            if known.values.insert(secret) {
                known.finder = None;
            }
        }
    }

    /// The automaton over the secrets known now (built if the set changed since the last),
    /// or `None` when there is none.
    fn finder(&self) -> Option<Arc<AhoCorasick>> {
        if let Some(finder) = &self
            .known
            .read()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
            .finder
        {
            return Some(Arc::clone(finder));
        }
        let mut known = self
            .known
            .write()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        if known.values.is_empty() {
            return None;
        }
        if known.finder.is_none() {
            // Leftmost-longest: a secret that contains another is replaced whole.
            let finder = AhoCorasick::builder()
                .match_kind(MatchKind::LeftmostLongest)
                .build(&known.values)
                .ok()?;
            known.finder = Some(Arc::new(finder));
        }
        known.finder.clone()
    }

    /// Registers the secret members of a JSON value (tokens in a response).
    pub fn learn(&self, value: &Value) {
        match value {
            Value::Object(object) => {
                for (key, member) in object {
                    if let (true, Some(text)) =
                        (SECRET_MEMBERS.contains(&key.as_str()), member.as_str())
                    {
                        self.add(text);
                    } else {
                        self.learn(member);
                    }
                }
            }
            Value::Array(items) => items.iter().for_each(|item| self.learn(item)),
            _ => {}
        }
    }

    /// Registers the secret members of a parameter map (signatures, secrets, tokens).
    pub fn learn_members(&self, members: &serde_json::Map<String, Value>) {
        for (key, member) in members {
            if let (true, Some(text)) = (SECRET_MEMBERS.contains(&key.as_str()), member.as_str()) {
                self.add(text);
            }
        }
    }

    /// Replaces every known secret in a text. A secret of digits alone (a second factor's
    /// code) is replaced only where it stands as a number of its own, not inside a longer
    /// one: six digits occur in timestamps and durations, and a report whose numbers were
    /// cut in two would no longer be JSON.
    pub fn text(&self, text: &str) -> String {
        let Some(finder) = self.finder() else {
            return text.to_owned();
        };
        // Two secrets that overlap (one's end the other's start) leave the second's rest
        // after the first pass; another pass finds it. The replacement holds no secret a
        // run learns (none is this short), so the passes end.
        let mut out = text.to_owned();
        for _ in 0..4 {
            let mut next = String::with_capacity(out.len());
            let mut copied = 0;
            for found in finder.find_iter(&out) {
                if !stands_alone(&out, found.start(), found.end()) {
                    continue;
                }
                next.push_str(&out[copied..found.start()]);
                next.push_str(REDACTED);
                copied = found.end();
            }
            if copied == 0 {
                break;
            }
            next.push_str(&out[copied..]);
            out = next;
        }
        out
    }

    /// A copy of a JSON value with secret members and known secrets replaced.
    pub fn json(&self, value: &Value) -> Value {
        match value {
            Value::Object(object) => Value::Object(
                object
                    .iter()
                    .map(|(key, member)| {
                        let member = if SECRET_MEMBERS.contains(&key.as_str()) && !member.is_null()
                        {
                            Value::String(REDACTED.to_owned())
                        } else {
                            self.json(member)
                        };
                        (key.clone(), member)
                    })
                    .collect(),
            ),
            Value::Array(items) => Value::Array(items.iter().map(|item| self.json(item)).collect()),
            Value::String(text) => Value::String(self.text(text)),
            other => other.clone(),
        }
    }
}

/// Whether the match `start..end` of a secret in `text` is one to replace: any secret with a
/// letter or sign in it, and a secret of digits alone where no digit or decimal point
/// touches it.
fn stands_alone(text: &str, start: usize, end: usize) -> bool {
    let secret = &text.as_bytes()[start..end];
    if !secret.iter().all(u8::is_ascii_digit) {
        return true;
    }
    let part_of_number = |byte: &u8| byte.is_ascii_digit() || *byte == b'.';
    let before = start.checked_sub(1).and_then(|at| text.as_bytes().get(at));
    let after = text.as_bytes().get(end);
    !before.is_some_and(part_of_number) && !after.is_some_and(part_of_number)
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn known_secret_is_replaced_in_text() {
        let redactor = Redactor::new(["s3cr3t-value".to_owned()]);
        assert_eq!(
            redactor.text("curl -u id:s3cr3t-value"),
            "curl -u id:[redacted]"
        );
    }

    #[test]
    fn secret_members_are_replaced_and_learned() {
        let redactor = Redactor::default();
        let response = json!({"result": {"access_token": "tok-123456", "scope": "connection"}});
        redactor.learn(&response);
        assert_eq!(
            redactor.json(&response),
            json!({"result": {"access_token": "[redacted]", "scope": "connection"}})
        );
        assert_eq!(
            redactor.text("Authorization: Bearer tok-123456"),
            "Authorization: Bearer [redacted]"
        );
    }

    #[test]
    fn a_secret_holding_another_is_replaced_whole_and_overlapping_ones_both() {
        let redactor = Redactor::new(["abcdef".to_owned(), "xxabcdefyy".to_owned()]);
        assert_eq!(
            redactor.text("1 xxabcdefyy 2 abcdef"),
            "1 [redacted] 2 [redacted]"
        );
        let redactor = Redactor::new(["secret-one".to_owned(), "one-secret".to_owned()]);
        let text = redactor.text("secret-one-secret");
        assert!(
            !text.contains("secret-one") && !text.contains("one-secret"),
            "{text}"
        );
        redactor.add("learned-later");
        assert_eq!(redactor.text("learned-later"), "[redacted]");
    }

    #[test]
    fn short_values_are_not_registered() {
        let redactor = Redactor::new(["1".to_owned()]);
        assert_eq!(redactor.text("count=1"), "count=1");
    }

    #[test]
    fn a_code_of_digits_is_replaced_where_it_stands_alone_not_inside_a_number() {
        let redactor = Redactor::new(["000000".to_owned(), "123456".to_owned()]);
        let report =
            r#"{"elapsed_ms": 95.40000009999999, "timestamp": 1795812345678, "code": "123456"}"#;
        let redacted = redactor.text(report);
        assert_eq!(
            redacted,
            r#"{"elapsed_ms": 95.40000009999999, "timestamp": 1795812345678, "code": "[redacted]"}"#
        );
        assert!(serde_json::from_str::<Value>(&redacted).is_ok());
        assert_eq!(redactor.text("code=123456&x=1"), "code=[redacted]&x=1");
        assert_eq!(redactor.text("123456"), "[redacted]");
        // A secret with letters is replaced wherever it is.
        let redactor = Redactor::new(["tok123".to_owned()]);
        assert_eq!(redactor.text("9tok1239"), "9[redacted]9");
    }
}
