//! The scope grammar of SPEC.md section 5.4: a space-separated list of `connection`,
//! `session:<name>`, `<area>:read|read_write|none`, `expires:<n>`, `ip:<address>` and
//! `mainaccount`. Parsing never fails: unknown words are kept, so a server can decide.

use std::collections::BTreeMap;
use std::fmt;

use crate::spec::MAINACCOUNT;

/// Access level of one area (`trade`, `wallet`, `account`, `block_rfq`, ...).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Access {
    /// `<area>:none`.
    None,
    /// `<area>:read`.
    Read,
    /// `<area>:read_write`, which includes read.
    ReadWrite,
}

impl Access {
    fn as_str(self) -> &'static str {
        match self {
            Access::None => "none",
            Access::Read => "read",
            Access::ReadWrite => "read_write",
        }
    }
}

/// A parsed scope.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Scope {
    /// Access per area.
    pub access: BTreeMap<String, Access>,
    /// `connection` was granted.
    pub connection: bool,
    /// `session:<name>`.
    pub session: Option<String>,
    /// `mainaccount`.
    pub mainaccount: bool,
    /// `expires:<seconds>`.
    pub expires: Option<u64>,
    /// `ip:<address>`.
    pub ip: Option<String>,
    /// Words the grammar does not know, kept in order.
    pub(crate) unknown: Vec<String>,
}

/// The access families section 5.4 lists, with `block_rfq`, which methods state as a need.
const LISTED_AREAS: &[&str] = &["trade", "wallet", "account", "block_rfq"];

impl Scope {
    /// Parses a scope string; never fails.
    pub fn parse(text: &str) -> Scope {
        let mut scope = Scope::default();
        for word in text.split_ascii_whitespace() {
            scope.add_word(word);
        }
        scope
    }

    fn add_word(&mut self, word: &str) {
        match word {
            "connection" => self.connection = true,
            MAINACCOUNT => self.mainaccount = true,
            _ => {
                let Some((head, tail)) = word.split_once(':') else {
                    self.unknown.push(word.to_owned());
                    return;
                };
                match (head, tail) {
                    ("session", name) if !name.is_empty() => self.session = Some(name.to_owned()),
                    ("expires", seconds) if seconds.parse::<u64>().is_ok() => {
                        self.expires = seconds.parse().ok();
                    }
                    ("ip", address) if !address.is_empty() => self.ip = Some(address.to_owned()),
                    (area, level) if !area.is_empty() => {
                        let access = match level {
                            "none" => Access::None,
                            "read" => Access::Read,
                            "read_write" => Access::ReadWrite,
                            _ => {
                                self.unknown.push(word.to_owned());
                                return;
                            }
                        };
                        self.access.insert(area.to_owned(), access);
                    }
                    _ => self.unknown.push(word.to_owned()),
                }
            }
        }
    }

    /// Whether this scope grants a single requirement such as `account:read`,
    /// `trade:read_write` or `mainaccount`, or `session` (a session-scoped token).
    pub fn grants(&self, requirement: &str) -> bool {
        if requirement == MAINACCOUNT {
            return self.mainaccount;
        }
        // `session`: the token is of a session (a `session:<name>` word).
        if requirement == "session" {
            return self.session.is_some();
        }
        let Some((area, level)) = requirement.split_once(':') else {
            return false;
        };
        let needed = match level {
            "read" => Access::Read,
            "read_write" => Access::ReadWrite,
            _ => return false,
        };
        self.access
            .get(area)
            .is_some_and(|granted| *granted >= needed)
    }

    /// Whether every word is one section 5.4 lists: `connection`, `session:<name>`,
    /// `mainaccount`, `expires:<number>`, `ip:<address>`, and a level of `trade`,
    /// `wallet`, `account` or (as a method's need) `block_rfq`.
    pub fn listed(&self) -> bool {
        self.unknown.is_empty()
            && self
                .access
                .keys()
                .all(|area| LISTED_AREAS.contains(&area.as_str()))
    }

    /// Whether every grant of `self` is also granted by `ceiling`: the rule of
    /// `public/exchange_token` that a scope must not exceed the caller's permissions.
    pub fn within(&self, ceiling: &Scope) -> bool {
        let access_within = self.access.iter().all(|(area, access)| {
            *access == Access::None
                || ceiling
                    .access
                    .get(area)
                    .is_some_and(|granted| granted >= access)
        });
        access_within && (!self.mainaccount || ceiling.mainaccount)
    }
}

impl fmt::Display for Scope {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut words: Vec<String> = Vec::new();
        if self.connection {
            words.push("connection".to_owned());
        }
        if let Some(name) = &self.session {
            words.push(format!("session:{name}"));
        }
        for (area, access) in &self.access {
            words.push(format!("{area}:{}", access.as_str()));
        }
        if self.mainaccount {
            words.push(MAINACCOUNT.to_owned());
        }
        if let Some(seconds) = self.expires {
            words.push(format!("expires:{seconds}"));
        }
        if let Some(address) = &self.ip {
            words.push(format!("ip:{address}"));
        }
        words.extend(self.unknown.iter().cloned());
        f.write_str(&words.join(" "))
    }
}

/// The rule of [`scope_parse_stable`] that does not hold.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum ScopePropertyError {
    /// A scope, displayed and parsed again, is another scope.
    #[error("{text:?} parsed as {scope:?}, shown as {shown:?}, parsed again as {again:?}")]
    Unstable {
        /// The text parsed.
        text: String,
        /// What it parsed as.
        scope: Box<Scope>,
        /// That scope displayed.
        shown: String,
        /// What the display parsed as.
        again: Box<Scope>,
    },
    /// A scope is not within itself.
    #[error("{shown:?} is not within itself")]
    NotWithinItself {
        /// The scope displayed.
        shown: String,
    },
    /// `read_write` on an area does not grant `read` on it.
    #[error("{shown:?} grants {area}:read_write but not {area}:read")]
    ReadWriteWithoutRead {
        /// The scope displayed.
        shown: String,
        /// The area.
        area: String,
    },
}

/// Fuzz and proptest property `scope_parse_stable`: parsing never panics; displaying a
/// parsed scope and parsing it again gives the same scope; every scope is within itself; and
/// `read_write` on an area grants `read` on it.
pub fn scope_parse_stable(text: &str) -> Result<(), ScopePropertyError> {
    let scope = Scope::parse(text);
    let shown = scope.to_string();
    let again = Scope::parse(&shown);
    if again != scope {
        return Err(ScopePropertyError::Unstable {
            text: text.to_owned(),
            scope: Box::new(scope),
            shown,
            again: Box::new(again),
        });
    }
    if !scope.within(&scope) {
        return Err(ScopePropertyError::NotWithinItself { shown });
    }
    for (area, access) in &scope.access {
        if *access == Access::ReadWrite && !scope.grants(&format!("{area}:read")) {
            return Err(ScopePropertyError::ReadWriteWithoutRead {
                shown,
                area: area.clone(),
            });
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;

    #[test]
    fn read_write_grants_read() {
        let scope = Scope::parse("connection account:read_write trade:read mainaccount");
        assert!(scope.grants("account:read"));
        assert!(scope.grants("account:read_write"));
        assert!(scope.grants("trade:read"));
        assert!(!scope.grants("trade:read_write"));
        assert!(!scope.grants("wallet:read"));
        assert!(scope.grants("mainaccount"));
    }

    #[test]
    fn none_grants_nothing() {
        assert!(!Scope::parse("account:none").grants("account:read"));
    }

    #[test]
    fn session_and_expires_are_parsed() {
        let scope = Scope::parse("session:bot expires:600 ip:127.0.0.1 bogus");
        assert_eq!(scope.session.as_deref(), Some("bot"));
        assert_eq!(scope.expires, Some(600));
        assert_eq!(scope.ip.as_deref(), Some("127.0.0.1"));
        assert_eq!(scope.unknown, vec!["bogus".to_owned()]);
    }

    #[test]
    fn wider_scope_is_not_within() {
        let caller = Scope::parse("account:read trade:read");
        assert!(Scope::parse("account:read").within(&caller));
        assert!(!Scope::parse("account:read_write").within(&caller));
        assert!(!Scope::parse("mainaccount").within(&caller));
    }

    proptest! {
        #[test]
        fn scope_property_holds(text in "(connection|mainaccount|session:[a-z]{0,3}|expires:[+0-9a]{0,3}|ip:[0-9.]{0,4}|[a-z_]{0,6}:(read|read_write|none|x)?|:| |\t|\u{a0}){0,8}") {
            prop_assert_eq!(scope_parse_stable(&text), Ok(()));
        }

        #[test]
        fn display_then_parse_is_stable(text in "[a-z_:0-9 .]{0,60}") {
            let once = Scope::parse(&text);
            let twice = Scope::parse(&once.to_string());
            prop_assert_eq!(once.to_string(), twice.to_string());
        }
    }
}
