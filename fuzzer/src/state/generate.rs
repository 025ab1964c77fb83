//! Generating sequences from the run's seed: logins by each grant (with or without a
//! session), refreshes (once and again), forks, exchanges, logouts, disabling and enabling
//! the subaccount, private calls with old and new tokens and without one, and nonces
//! replayed, spread over HTTP (query and body) and two WebSocket connections.
//!
//! A step refers to a token by the step that issued it, more often a recent one, so that
//! old and new tokens interleave. What the target file lacks is never generated: forks
//! without `[param_names."public/fork_token"]`, exchanges and toggles without the `sub`
//! account and `fixtures.subaccount_id`, logouts, toggles and member deletion without
//! `allow_destructive`, WebSocket steps without `ws_url`. A sequence that disabled the
//! subaccount's login ends by enabling it again.

use rand::Rng;
use rand::rngs::StdRng;

use super::{Action, Grant, SeqStep, Sequence, Who};
use harness_model::target_file::Target;
use harness_protocol::spec;
use harness_protocol::wire::TransportKind;

/// The private method most steps call: unpaced, scope `trade:read`, no parameter required.
pub const PRIVATE_METHOD: &str = spec::MMP_STATUS_METHOD;

/// The paced private method (SPEC.md 8) a sequence calls, as the spec table names it: its
/// calls wait for the account's budget.
pub fn paced_method() -> Option<&'static str> {
    spec::paced_methods().map(|method| method.name).next()
}

/// Steps in one sequence at most.
pub const MAX_STEPS: usize = 14;

/// What the target file allows a sequence to do.
#[derive(Clone, Debug)]
pub struct Allowed {
    /// `ws_url` is set.
    pub ws: bool,
    /// The `sub` account and `fixtures.subaccount_id` are there.
    pub sub: bool,
    /// `[param_names."public/fork_token"]` names the parameters.
    pub fork: bool,
    /// `allow_destructive`: logout, toggles.
    pub destructive: bool,
    /// `fixtures.member_id` is there too (and destructive).
    pub delete_member: bool,
    /// Steps calling the paced method.
    pub paced: bool,
    /// The target counts its session slots (`[limits] session_limit_codes`): each sequence
    /// names sessions of its own (`{{unique}}`), which it logs out when it ends
    /// (`harness_runner`'s `session_slots`), since a login naming a session another
    /// sequence holds may end that one's tokens (SPEC.md 5.4 does not say). Elsewhere the
    /// names are the same in every sequence, so sequences make no new session at every login.
    pub own_sessions: bool,
}

impl Allowed {
    /// What `target` allows.
    pub fn from_target(target: &Target) -> Allowed {
        let destructive = target.allow_destructive;
        Allowed {
            ws: target.ws_url.is_some(),
            sub: target.accounts.contains_key("sub") && target.fixtures.subaccount_id.is_some(),
            fork: target
                .param_names
                .get(spec::FORK_TOKEN_METHOD)
                .is_some_and(|names| {
                    names.contains_key("refresh_token") && names.contains_key("session_name")
                }),
            destructive,
            delete_member: destructive && target.fixtures.member_id.is_some(),
            paced: true,
            own_sessions: !target.limits.session_limit_codes.is_empty(),
        }
    }
}

/// One sequence of 3 to [`MAX_STEPS`] steps.
pub fn sequence(rng: &mut StdRng, allowed: &Allowed) -> Sequence {
    let length = rng.random_range(3..=MAX_STEPS);
    let mut steps: Vec<SeqStep> = Vec::with_capacity(length + 1);
    let mut disabled = false;
    while steps.len() < length {
        let action = action(rng, allowed, &steps, disabled);
        if let Action::Toggle { enable, .. } = action {
            disabled = !enable;
        }
        let transport = transport(rng, allowed, &action);
        steps.push(SeqStep {
            transport,
            connection: rng.random_range(0..2),
            action,
        });
    }
    if disabled && let Some(token) = main_token(rng, &steps) {
        steps.push(SeqStep {
            transport: TransportKind::HttpBody,
            connection: 0,
            action: Action::Toggle {
                token,
                enable: true,
            },
        });
    }
    Sequence { steps }
}

fn action(rng: &mut StdRng, allowed: &Allowed, steps: &[SeqStep], disabled: bool) -> Action {
    // The first step, and every so often another, is a login.
    let issuing = issuing_steps(steps);
    if issuing.is_empty() || rng.random_ratio(1, 7) {
        return login(rng, allowed, steps.len());
    }
    let sub_tokens: Vec<usize> = issuing
        .iter()
        .copied()
        .filter(|index| owner(steps, *index) == Some(Who::Sub))
        .collect();
    // While the subaccount's login is disabled, its tokens are what is worth calling with.
    if disabled && !sub_tokens.is_empty() && rng.random_bool(0.5) {
        return Action::Private {
            token: Some(pick(rng, &sub_tokens)),
            method: PRIVATE_METHOD.to_owned(),
        };
    }
    let token = pick(rng, &issuing);
    for _ in 0..8 {
        let chosen = match rng.random_range(0..100) {
            0..=15 => Some(Action::Refresh { of: token }),
            16..=25 if allowed.fork => Some(Action::Fork {
                of: token,
                name: format!("fork{}", steps.len()),
            }),
            26..=31 if allowed.sub => main_token(rng, steps).map(|of| Action::Exchange { of }),
            32..=37 if allowed.destructive => Some(Action::Logout { token }),
            // A disable means something only once the subaccount holds a token.
            38..=44 if allowed.destructive && (disabled || !sub_tokens.is_empty()) => {
                main_token(rng, steps).map(|token| Action::Toggle {
                    token,
                    enable: disabled,
                })
            }
            45..=46 if allowed.delete_member => {
                main_token(rng, steps).map(|token| Action::DeleteMember { token })
            }
            47..=49 => signature_login(rng, steps).map(|of| Action::ReplayLogin { of }),
            50..=53 => Some(Action::Signed {
                replay_of: signed_step(rng, steps),
            }),
            54..=63 if allowed.ws => Some(Action::Private {
                token: None,
                method: PRIVATE_METHOD.to_owned(),
            }),
            64..=66 if allowed.paced => paced_method().map(|method| Action::Private {
                token: Some(token),
                method: method.to_owned(),
            }),
            67.. => Some(Action::Private {
                token: Some(token),
                method: PRIVATE_METHOD.to_owned(),
            }),
            _ => None,
        };
        if let Some(action) = chosen {
            return action;
        }
    }
    Action::Private {
        token: Some(token),
        method: PRIVATE_METHOD.to_owned(),
    }
}

fn login(rng: &mut StdRng, allowed: &Allowed, index: usize) -> Action {
    let who = if allowed.sub && rng.random_ratio(1, 3) {
        Who::Sub
    } else {
        Who::Main
    };
    let grant = if rng.random_bool(0.5) {
        Grant::ClientCredentials
    } else {
        Grant::ClientSignature
    };
    let session = rng.random_bool(0.5).then(|| {
        if allowed.own_sessions {
            format!("s{index}-{{{{unique}}}}")
        } else {
            format!("s{index}")
        }
    });
    Action::Login {
        who,
        grant,
        session,
    }
}

fn transport(rng: &mut StdRng, allowed: &Allowed, action: &Action) -> TransportKind {
    let http = if rng.random_bool(0.5) {
        TransportKind::HttpQuery
    } else {
        TransportKind::HttpBody
    };
    match action {
        // A signed header is HTTP only (5.6).
        Action::Signed { .. } => http,
        // Logout is WebSocket only (4.4); now and then it goes over HTTP to be refused.
        Action::Logout { .. } if allowed.ws && !rng.random_ratio(1, 6) => TransportKind::Ws,
        Action::Private { token: None, .. } => TransportKind::Ws,
        _ if allowed.ws && rng.random_bool(0.5) => TransportKind::Ws,
        _ => http,
    }
}

/// The steps that may have issued a token.
fn issuing_steps(steps: &[SeqStep]) -> Vec<usize> {
    steps
        .iter()
        .enumerate()
        .filter(|(_, step)| {
            matches!(
                step.action,
                Action::Login { .. }
                    | Action::Refresh { .. }
                    | Action::Fork { .. }
                    | Action::Exchange { .. }
            )
        })
        .map(|(index, _)| index)
        .collect()
}

/// One of `candidates`, the later ones more likely: half the time the latest.
fn pick(rng: &mut StdRng, candidates: &[usize]) -> usize {
    let last = candidates.len() - 1;
    if rng.random_bool(0.5) {
        candidates[last]
    } else {
        candidates[rng.random_range(0..=last)]
    }
}

/// A step that issued a token of the main account (a login or its descendants).
fn main_token(rng: &mut StdRng, steps: &[SeqStep]) -> Option<usize> {
    let mains: Vec<usize> = issuing_steps(steps)
        .into_iter()
        .filter(|index| owner(steps, *index) == Some(Who::Main))
        .collect();
    (!mains.is_empty()).then(|| pick(rng, &mains))
}

/// Whose token step `index` issues, following refreshes and forks to their login.
fn owner(steps: &[SeqStep], index: usize) -> Option<Who> {
    let mut index = index;
    for _ in 0..=steps.len() {
        match &steps.get(index)?.action {
            Action::Login { who, .. } => return Some(*who),
            Action::Exchange { .. } => return Some(Who::Sub),
            Action::Refresh { of } | Action::Fork { of, .. } => index = *of,
            _ => return None,
        }
    }
    None
}

fn signature_login(rng: &mut StdRng, steps: &[SeqStep]) -> Option<usize> {
    let logins: Vec<usize> = steps
        .iter()
        .enumerate()
        .filter(|(_, step)| {
            matches!(
                step.action,
                Action::Login {
                    grant: Grant::ClientSignature,
                    ..
                }
            )
        })
        .map(|(index, _)| index)
        .collect();
    (!logins.is_empty()).then(|| pick(rng, &logins))
}

fn signed_step(rng: &mut StdRng, steps: &[SeqStep]) -> Option<usize> {
    let signed: Vec<usize> = steps
        .iter()
        .enumerate()
        .filter(|(_, step)| matches!(step.action, Action::Signed { replay_of: None }))
        .map(|(index, _)| index)
        .collect();
    (!signed.is_empty() && rng.random_bool(0.6)).then(|| pick(rng, &signed))
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;

    fn everything() -> Allowed {
        Allowed {
            ws: true,
            sub: true,
            fork: true,
            destructive: true,
            delete_member: true,
            paced: true,
            own_sessions: false,
        }
    }

    #[test]
    fn every_reference_points_back_and_a_disable_is_undone() {
        let mut rng = StdRng::seed_from_u64(7);
        for _ in 0..500 {
            let sequence = sequence(&mut rng, &everything());
            let mut disabled = false;
            for (index, step) in sequence.steps.iter().enumerate() {
                if let Some(of) = step.action.depends_on() {
                    assert!(of < index, "{sequence:?}");
                }
                if let Action::Toggle { enable, token } = step.action {
                    disabled = !enable;
                    assert_eq!(owner(&sequence.steps, token), Some(Who::Main));
                }
                if matches!(step.action, Action::Signed { .. }) {
                    assert_ne!(step.transport, TransportKind::Ws);
                }
            }
            assert!(!disabled, "{sequence:?}");
        }
    }

    #[test]
    fn a_target_counting_session_slots_gets_session_names_of_each_sequence() {
        let names = |own_sessions: bool| {
            let allowed = Allowed {
                own_sessions,
                ..everything()
            };
            let mut rng = StdRng::seed_from_u64(5);
            (0..50)
                .flat_map(|_| sequence(&mut rng, &allowed).steps)
                .filter_map(|step| match step.action {
                    Action::Login { session, .. } => session,
                    _ => None,
                })
                .collect::<Vec<String>>()
        };
        let own = names(true);
        assert!(!own.is_empty());
        assert!(
            own.iter().all(|name| name.ends_with("-{{unique}}")),
            "{own:?}"
        );
        assert!(names(false).iter().all(|name| !name.contains("{{")));
    }

    #[test]
    fn what_the_target_lacks_is_never_generated() {
        let allowed = Allowed {
            ws: false,
            sub: false,
            fork: false,
            destructive: false,
            delete_member: false,
            paced: false,
            own_sessions: false,
        };
        let mut rng = StdRng::seed_from_u64(3);
        for _ in 0..300 {
            for step in sequence(&mut rng, &allowed).steps {
                assert_ne!(step.transport, TransportKind::Ws);
                let method = step.action.method().to_owned();
                assert!(
                    !harness_protocol::spec::is_state_changing(&method),
                    "{method}"
                );
                assert!(!matches!(
                    step.action,
                    Action::Fork { .. } | Action::Exchange { .. }
                ));
                assert!(!harness_protocol::spec::is_paced(&method), "{method}");
            }
        }
    }

    #[test]
    fn the_same_seed_gives_the_same_sequence() {
        let first = sequence(&mut StdRng::seed_from_u64(11), &everything());
        let second = sequence(&mut StdRng::seed_from_u64(11), &everything());
        assert_eq!(first, second);
    }
}
