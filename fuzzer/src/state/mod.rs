//! Stateful fuzzing: sequences of logins, refreshes, forks, exchanges, logouts, subaccount
//! toggles and private calls, across HTTP and two WebSocket connections, each answer judged
//! against a model of SPEC.md's token state machine.
//!
//! A [`Sequence`] is generated from the run's seed ([`generate::sequence`]), sent step by
//! step (`execute.rs`), and after each step the answer is checked against what the
//! [`Model`](model::Model) predicts: a result, an error, or either where SPEC.md leaves
//! the outcome open (`assess.rs`). Steps refer to tokens by the index of the step that issued
//! them, so removing a step while shrinking (`input.rs`, the sequence as an input of the
//! one pipeline of findings) removes the steps that used its token. A failing sequence is
//! written as a case file of `call` steps with captures ([`case_file::case_file`]) that
//! `harness run --cases DIR` replays; `run.rs` schedules the sequences of a run and hands
//! their failures to the pipeline.

pub mod assess;
pub mod case_file;
mod execute;
pub mod generate;
mod input;
pub mod model;
mod run;
pub mod slots;

pub(crate) use run::run;

use std::time::Duration;

use serde::{Deserialize, Serialize};

use harness_protocol::spec;
use harness_protocol::wire::TransportKind;

/// What the stateful part of a run did and found.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct StatefulReport {
    /// Sequences generated for this shard.
    pub sequences: usize,
    /// Requests the sequences sent.
    pub sent: usize,
    /// Steps the model predicted a result for.
    pub expected_result: usize,
    /// Steps it predicted an error for.
    pub expected_error: usize,
    /// Steps where SPEC.md leaves the outcome open.
    pub expected_any: usize,
    /// Steps skipped: the token they needed never came.
    pub skipped: usize,
    /// Answers with a throttle code, not judged.
    pub throttled: usize,
    /// Steps that got no answer (timed out, refused): not judged, never a finding.
    #[serde(default)]
    pub unanswered: usize,
    /// State-changing sequences not run: one before them got no answer, so the target
    /// was not answering, and each would only have waited out its timeout in turn.
    #[serde(default)]
    pub not_run: usize,
    /// Steps calling the paced method that were sent when its budget had room.
    #[serde(default)]
    pub paced_sent: usize,
    /// Steps calling the paced method skipped: its budget had no room in time.
    #[serde(default)]
    pub paced_skipped: usize,
    /// Requests sent by the shrinker.
    pub shrink_requests: usize,
    /// The sequences' findings as a report of before the one findings list held them,
    /// apart: read, never written; [`FuzzReport`](crate::FuzzReport)'s are moved into its
    /// `findings` where a report is read (`merge::load_run`, `FuzzCollector`).
    #[serde(default, rename = "findings", skip_serializing)]
    pub(crate) older_findings: Vec<crate::FuzzFinding>,
    /// Wall time of the sequences (shrinking excluded).
    #[serde(skip)]
    pub elapsed: Duration,
}

/// A sequence of steps sharing one model of token state.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Sequence {
    /// The steps, in order.
    pub steps: Vec<SeqStep>,
}

/// One step: an action over a transport (on WebSocket, over one of two connections).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct SeqStep {
    /// The transport.
    pub transport: TransportKind,
    /// Which WebSocket connection of the sequence (0 or 1); ignored over HTTP.
    pub connection: u8,
    /// What the step does.
    pub action: Action,
}

/// Which account a login is for.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Who {
    /// The target file's `main` account.
    Main,
    /// The target file's `sub` account (the subaccount `fixtures.subaccount_id`).
    Sub,
}

impl Who {
    /// The account role in the target file.
    pub fn role(self) -> &'static str {
        match self {
            Who::Main => "main",
            Who::Sub => "sub",
        }
    }
}

/// The grant of a login (SPEC.md 5.3).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Grant {
    /// `client_credentials`.
    ClientCredentials,
    /// `client_signature`.
    ClientSignature,
}

/// What a step does. `of` and `token` are indices of earlier steps that issued a token.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "do")]
pub enum Action {
    /// `public/auth` by a key grant; with `session`, scope `session:<name>` (else none,
    /// a connection-scoped token), always with `trade:read account:read`.
    Login {
        /// The account.
        who: Who,
        /// The grant.
        grant: Grant,
        /// The session name, if any.
        session: Option<String>,
    },
    /// The `client_signature` login of step `of` sent again with the same timestamp, nonce
    /// and signature (5.5: the nonce is single use).
    ReplayLogin {
        /// The step whose parameters are replayed.
        of: usize,
    },
    /// `public/auth` with `grant_type = refresh_token` and the refresh token of step `of`.
    Refresh {
        /// The issuing step.
        of: usize,
    },
    /// `public/fork_token` with the refresh token of step `of` and a new session name.
    Fork {
        /// The issuing step.
        of: usize,
        /// The new session's name.
        name: String,
    },
    /// `public/exchange_token` with the refresh token of step `of` for the subaccount.
    Exchange {
        /// The issuing step.
        of: usize,
    },
    /// `private/logout` with the access token of step `token` (WebSocket only).
    Logout {
        /// The issuing step.
        token: usize,
    },
    /// `private/toggle_subaccount_login` of the subaccount with the access token of step
    /// `token` (a login of the main account).
    Toggle {
        /// The issuing step.
        token: usize,
        /// `true`: `enable`; `false`: `disable`.
        enable: bool,
    },
    /// `private/delete_member` of the fixture member with the access token of step `token`,
    /// whose scope does not ask for `mainaccount`.
    DeleteMember {
        /// The issuing step.
        token: usize,
    },
    /// A private call with the access token of step `token`, or with none (a WebSocket
    /// connection may remember a session token, 5.2).
    Private {
        /// The issuing step, or `None` for no token.
        token: Option<usize>,
        /// The method (`private/get_mmp_status` or the paced `private/get_transaction_log`).
        method: String,
    },
    /// A private call with the signed header of 5.6; with `replay_of`, the header of that
    /// earlier signed step again (same timestamp and nonce).
    Signed {
        /// The earlier signed step whose header is replayed.
        replay_of: Option<usize>,
    },
}

impl Action {
    /// The earlier steps this action depends on.
    pub fn depends_on(&self) -> Option<usize> {
        match self {
            Action::ReplayLogin { of }
            | Action::Refresh { of }
            | Action::Fork { of, .. }
            | Action::Exchange { of } => Some(*of),
            Action::Logout { token }
            | Action::Toggle { token, .. }
            | Action::DeleteMember { token } => Some(*token),
            Action::Private { token, .. } => *token,
            Action::Signed { replay_of } => *replay_of,
            Action::Login { .. } => None,
        }
    }

    /// The same action with its dependency renumbered by `map` (`None`: drop the action).
    pub fn renumbered(&self, map: impl Fn(usize) -> Option<usize>) -> Option<Action> {
        let mut action = self.clone();
        match &mut action {
            Action::ReplayLogin { of }
            | Action::Refresh { of }
            | Action::Fork { of, .. }
            | Action::Exchange { of } => *of = map(*of)?,
            Action::Logout { token }
            | Action::Toggle { token, .. }
            | Action::DeleteMember { token } => *token = map(*token)?,
            Action::Private {
                token: Some(token), ..
            } => *token = map(*token)?,
            Action::Signed {
                replay_of: Some(of),
            } => *of = map(*of)?,
            _ => {}
        }
        Some(action)
    }

    /// The JSON-RPC method the action calls.
    pub fn method(&self) -> &str {
        match self {
            Action::Login { .. } | Action::ReplayLogin { .. } | Action::Refresh { .. } => {
                spec::AUTH_METHOD
            }
            Action::Fork { .. } => spec::FORK_TOKEN_METHOD,
            Action::Exchange { .. } => spec::EXCHANGE_TOKEN_METHOD,
            Action::Logout { .. } => spec::LOGOUT_METHOD,
            Action::Toggle { .. } => spec::TOGGLE_LOGIN_METHOD,
            Action::DeleteMember { .. } => spec::DELETE_MEMBER_METHOD,
            Action::Private { method, .. } => method,
            Action::Signed { .. } => spec::MMP_STATUS_METHOD,
        }
    }
}

impl Sequence {
    /// The sequence without step `index` and the steps that depend on it, directly or not.
    pub fn without(&self, index: usize) -> Sequence {
        let mut removed = vec![false; self.steps.len()];
        let mut kept = Vec::new();
        // New index of each kept old index.
        let mut new_index = vec![None; self.steps.len()];
        for (old, step) in self.steps.iter().enumerate() {
            let gone = old == index
                || step
                    .action
                    .depends_on()
                    .is_some_and(|of| removed.get(of).copied().unwrap_or(true));
            if gone {
                removed[old] = true;
                continue;
            }
            let Some(action) = step
                .action
                .renumbered(|of| new_index.get(of).copied().flatten())
            else {
                removed[old] = true;
                continue;
            };
            new_index[old] = Some(kept.len());
            kept.push(SeqStep {
                action,
                ..step.clone()
            });
        }
        Sequence { steps: kept }
    }

    /// The WebSocket connection each step goes over (`None` over HTTP), named by its slot
    /// and generation: a logout moves its slot to a new connection, since SPEC.md 4.4 does
    /// not say whether the server keeps the connection open after it.
    pub fn connection_names(&self) -> Vec<Option<String>> {
        let mut generation = [0_u32; 2];
        self.steps
            .iter()
            .map(|step| {
                if step.transport != TransportKind::Ws {
                    return None;
                }
                let slot = usize::from(step.connection.min(1));
                let name = format!("ws{slot}-{}", generation[slot]);
                if matches!(step.action, Action::Logout { .. }) {
                    generation[slot] += 1;
                }
                Some(name)
            })
            .collect()
    }

    /// The first `length` steps.
    pub fn prefix(&self, length: usize) -> Sequence {
        Sequence {
            steps: self.steps.iter().take(length).cloned().collect(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn step(action: Action) -> SeqStep {
        SeqStep {
            transport: TransportKind::HttpBody,
            connection: 0,
            action,
        }
    }

    fn login() -> Action {
        Action::Login {
            who: Who::Main,
            grant: Grant::ClientCredentials,
            session: None,
        }
    }

    #[test]
    fn removing_a_step_removes_its_dependents_and_renumbers_the_rest() {
        let sequence = Sequence {
            steps: vec![
                step(login()),
                step(login()),
                step(Action::Refresh { of: 0 }),
                step(Action::Refresh { of: 2 }),
                step(Action::Private {
                    token: Some(1),
                    method: "private/get_mmp_status".to_owned(),
                }),
            ],
        };
        let shorter = sequence.without(0);
        assert_eq!(
            shorter.steps,
            vec![
                step(login()),
                step(Action::Private {
                    token: Some(0),
                    method: "private/get_mmp_status".to_owned(),
                }),
            ]
        );
        let shorter = sequence.without(1);
        assert_eq!(shorter.steps.len(), 3);
        assert_eq!(shorter.steps[2].action, Action::Refresh { of: 1 });
    }

    #[test]
    fn a_dangling_reference_is_dropped_not_panicked_on() {
        let sequence = Sequence {
            steps: vec![step(Action::Refresh { of: 7 })],
        };
        assert!(sequence.without(3).steps.is_empty());
    }
}
