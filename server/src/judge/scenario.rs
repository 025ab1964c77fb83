//! Scenarios: what the judge's server serves to provoke the bugs clients commonly have.
//! Each one sets [`Knobs`] of the reference server; the default sets none.

use crate::serve::Knobs;

/// A named way for the judge's server to behave.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Scenario {
    /// The reference server as it is.
    Default,
    /// Pages shorter than `count`, the walk still ending with a null continuation.
    ShortPages,
    /// Transaction-log types SPEC.md does not list, and members it does not describe.
    UnknownTypes,
    /// Transaction-log continuations that count down to 0 before the last page.
    SmallCursors,
    /// Two-factor confirmation on the `main` account: 13668 where SPEC.md 5.7 says.
    TwoFactor,
    /// Access tokens expire after a few seconds, forcing a refresh.
    TokenExpiry,
    /// Access tokens expire after a few seconds and every refresh is refused as an expired
    /// refresh token, forcing a new login (SPEC.md gives a refresh token no lifetime).
    Relogin,
}

/// Entries per page under [`Scenario::ShortPages`].
const SHORT_PAGE: usize = 5;

/// Token lifetime under [`Scenario::TokenExpiry`], in seconds: long enough for a login
/// and a few calls, short enough that any session of a minute meets it.
const SHORT_LIFETIME_S: u64 = 5;

impl Scenario {
    /// Every scenario, in the order `--scenario list` prints them.
    pub const ALL: [Scenario; 7] = [
        Scenario::Default,
        Scenario::ShortPages,
        Scenario::UnknownTypes,
        Scenario::SmallCursors,
        Scenario::TwoFactor,
        Scenario::TokenExpiry,
        Scenario::Relogin,
    ];

    /// The name `--scenario` takes.
    pub fn name(self) -> &'static str {
        match self {
            Scenario::Default => "default",
            Scenario::ShortPages => "short-pages",
            Scenario::UnknownTypes => "unknown-types",
            Scenario::SmallCursors => "small-cursors",
            Scenario::TwoFactor => "two-factor",
            Scenario::TokenExpiry => "token-expiry",
            Scenario::Relogin => "relogin",
        }
    }

    /// One line saying what the server does differently.
    pub fn description(self) -> &'static str {
        match self {
            Scenario::Default => "the reference server as it is",
            Scenario::ShortPages => {
                "pages of at most 5 entries whatever count asks, ending with continuation null: catches clients that stop at the first short page"
            }
            Scenario::UnknownTypes => {
                "three transaction-log entries in seven have a type SPEC.md does not list, and every entry has members it does not describe"
            }
            Scenario::SmallCursors => {
                "transaction-log continuations count the pages left down to 0, which leads to the last page: catches clients that take a falsy continuation for the end"
            }
            Scenario::TwoFactor => {
                "the main account has two-factor confirmation on: private/toggle_subaccount_login answers with the second-factor error of section 7"
            }
            Scenario::TokenExpiry => {
                "access tokens expire after 5 seconds (expires_in says so), forcing a refresh"
            }
            Scenario::Relogin => {
                "access tokens expire after 5 seconds and every refresh_token grant is refused as an expired refresh token, forcing a new login: catches a client_signature login re-sent with its first timestamp once the session is a minute old"
            }
        }
    }

    /// The scenario with this name.
    pub fn from_name(name: &str) -> Option<Scenario> {
        Scenario::ALL
            .into_iter()
            .find(|scenario| scenario.name() == name)
    }

    /// The server knobs that make the scenario.
    pub(crate) fn knobs(self) -> Knobs {
        let default = Knobs::default();
        match self {
            Scenario::Default => default,
            Scenario::ShortPages => Knobs {
                page_limit: Some(SHORT_PAGE),
                ..default
            },
            Scenario::UnknownTypes => Knobs {
                unknown_log_types: true,
                ..default
            },
            Scenario::SmallCursors => Knobs {
                small_cursors: true,
                ..default
            },
            Scenario::TwoFactor => Knobs {
                two_factor_main: true,
                ..default
            },
            Scenario::TokenExpiry | Scenario::Relogin => Knobs {
                token_lifetime_s: Some(SHORT_LIFETIME_S),
                ..default
            },
        }
    }

    /// Whether the judge refuses every `refresh_token` grant (answered as the server
    /// answers an expired refresh token), so that a client must log in again.
    pub(crate) fn refuses_refresh(self) -> bool {
        self == Scenario::Relogin
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_scenario_is_found_by_its_name_and_no_other() {
        for scenario in Scenario::ALL {
            assert_eq!(Scenario::from_name(scenario.name()), Some(scenario));
        }
        assert_eq!(Scenario::from_name("no-such-scenario"), None);
    }

    #[test]
    fn every_scenario_says_what_it_serves_in_its_own_words() {
        let descriptions: Vec<&str> = Scenario::ALL.iter().map(|s| s.description()).collect();
        let mut distinct = descriptions.clone();
        distinct.sort_unstable();
        distinct.dedup();
        assert_eq!(distinct.len(), Scenario::ALL.len(), "{descriptions:?}");
        assert!(
            descriptions.iter().all(|text| text.len() > 20),
            "{descriptions:?}"
        );
    }

    #[test]
    fn names_round_trip_and_only_default_changes_nothing() {
        for scenario in Scenario::ALL {
            assert_eq!(Scenario::from_name(scenario.name()), Some(scenario));
            assert_eq!(
                scenario.knobs() == Knobs::default(),
                scenario == Scenario::Default
            );
        }
        assert_eq!(Scenario::from_name("short_pages"), None);
    }
}
