//! Redaction of secrets from everything the harness writes: reports, snapshots, logs and
//! reproduction commands.
//!
//! Two mechanisms work together. Known secret values (client secrets, API keys, and every
//! token or signature seen during a run) are replaced wherever they occur, and JSON members
//! whose names mark them as secret (`access_token`, `client_secret`, `signature`, ...) are
//! replaced whatever their value.

use std::cmp::Reverse;
use std::collections::BTreeSet;
use std::sync::{Arc, RwLock};

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

/// A known secret, keyed longest first.
type Known = (Reverse<usize>, String);

/// A shared, growing set of secret values.
#[derive(Clone, Debug, Default)]
pub struct Redactor {
    /// Longest first, so a secret that contains another is replaced whole; ordered as
    /// they come, so a run that learns thousands (a fuzz run's signatures) pays a search
    /// per secret.
    values: Arc<RwLock<BTreeSet<Known>>>,
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
        let key = (Reverse(secret.len()), secret);
        let known = self
            .values
            .read()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
            .contains(&key);
        if !known {
            self.values
                .write()
                .unwrap_or_else(|poisoned| poisoned.into_inner())
                .insert(key);
        }
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

    /// Replaces every known secret in a text.
    pub fn text(&self, text: &str) -> String {
        let values = self
            .values
            .read()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        let mut out = text.to_owned();
        for (_, secret) in values.iter() {
            if out.contains(secret.as_str()) {
                out = out.replace(secret.as_str(), REDACTED);
            }
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
    fn short_values_are_not_registered() {
        let redactor = Redactor::new(["1".to_owned()]);
        assert_eq!(redactor.text("count=1"), "count=1");
    }
}
