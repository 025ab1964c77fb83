//! The run's paced calls, counted before it starts: how many each execution needs, on whose
//! budget, and about how long they take at the target's limits; with a budget in seconds,
//! which executions do not fit and are skipped with the reason.
//!
//! A call step of a paced method is one call; requests the run answers once
//! ([`super::paced_cache`]: same transport, authentication, method and parameters) are
//! counted once; a race is its copies times its rounds (a race held to the declared budget
//! only until the bucket runs dry, [`pace::budget_race_shape`]); a rate probe spends the burst and
//! one more; a bounded walk (a `window`) is its probe page, the pages of about `entries`
//! entries at each of its counts; a walk over the whole history has pages no one knows
//! before the run, counted as one each and named in the plan. Budgets fill in parallel, so
//! the run's paced time is its slowest budget's: `(calls - burst) / rate`, at the pacer's
//! margin ([`super::pace`]).

use std::collections::{BTreeMap, HashMap, HashSet};
use std::fmt;
use std::time::Duration;

use serde_json::{Map, Value};

use super::RunConfig;
use super::pace;
use super::schedule::is_paced;
use harness_model::case::{Auth, Case, Step, StepKind, Walk};
use harness_model::target_file::{RateLimits, Target};
use harness_protocol::spec;
use harness_protocol::wire::TransportKind;

/// How many paced calls a run needs, and which executions a budget leaves out.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct PacedPlan {
    /// Paced calls by budget (an account, or a token where the target counts per token).
    pub by_budget: BTreeMap<String, usize>,
    /// Walks over the whole history, counted as one page each.
    pub open_walks: usize,
    /// The paced calls' time at the target's limits, the slowest budget's.
    pub duration: Duration,
    /// Executions left out by the budget (case id, transport) with the reason.
    pub skipped: HashMap<(String, TransportKind), String>,
    /// The account each execution of a case with `account = "any"` goes as: the one whose
    /// budget had the fewest calls when it was planned.
    pub accounts: HashMap<(String, TransportKind), String>,
    /// The account whose budget each paced execution mostly draws on: its lane
    /// ([`super::PACED_LANE`] executions of each account at once).
    pub lanes: HashMap<(String, TransportKind), String>,
    /// Each execution with paced calls, in the run's order: what it draws on each budget
    /// (`harness run --plan` lists them).
    pub executions: Vec<PlannedExecution>,
    /// The target's sustained rate and burst of the paced method.
    rate: f64,
    burst: u32,
}

/// The paced calls one execution of the plan makes, by budget.
#[derive(Clone, Debug, PartialEq)]
pub struct PlannedExecution {
    /// The case.
    pub case: String,
    /// The transport.
    pub transport: TransportKind,
    /// Its calls on each budget (a request the run answers once counts on its first).
    pub calls: BTreeMap<String, usize>,
}

impl PacedPlan {
    /// Every paced call of the run.
    pub fn calls(&self) -> usize {
        self.by_budget.values().sum()
    }
}

impl fmt::Display for PacedPlan {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // Per-token budgets are many: the busiest few tell the time.
        let mut busiest: Vec<(&String, &usize)> = self.by_budget.iter().collect();
        busiest.sort_by(|a, b| b.1.cmp(a.1).then_with(|| a.0.cmp(b.0)));
        let mut budgets: Vec<String> = busiest
            .iter()
            .take(SHOWN_BUDGETS)
            .map(|(budget, calls)| format!("{budget} {calls}"))
            .collect();
        if busiest.len() > SHOWN_BUDGETS {
            budgets.push(format!("{} other budgets", busiest.len() - SHOWN_BUDGETS));
        }
        write!(
            f,
            "plan: {} paced calls ({}), about {:.0} s at {} per second with burst {}",
            self.calls(),
            if budgets.is_empty() {
                "none".to_owned()
            } else {
                budgets.join(", ")
            },
            self.duration.as_secs_f64(),
            self.rate,
            self.burst
        )?;
        if self.open_walks > 0 {
            write!(
                f,
                "; {} walks read the whole history and take a call per page, counted as one",
                self.open_walks
            )?;
        }
        if !self.skipped.is_empty() {
            write!(
                f,
                "; {} executions do not fit the paced budget and are skipped",
                self.skipped.len()
            )?;
        }
        Ok(())
    }
}

/// Budgets the plan names, the busiest first.
const SHOWN_BUDGETS: usize = 4;

/// One paced call of an execution: the budgets it draws on (its account's, and the main
/// account's too for a token the step gives, [`pace::budget_names`]), and its sharing key
/// when the run answers it once.
struct Call {
    budgets: Vec<String>,
    shared: Option<String>,
}

/// Seconds `calls` take on one budget at `limits` (the first `burst` go at once).
fn seconds(calls: usize, limits: &RateLimits) -> f64 {
    let rate = limits.transaction_log_per_second.max(f64::MIN_POSITIVE) / pace::PACING_MARGIN;
    calls.saturating_sub(limits.transaction_log_burst as usize) as f64 / rate
}

/// The paced calls of the run `config` describes, in the order the run schedules them,
/// and, with `config.paced_budget`, the executions that do not fit.
pub fn paced_plan(config: &RunConfig) -> PacedPlan {
    let limits = &config.target.limits;
    let mut executions = super::plan(config);
    // The order of the run: paced executions first (the lane), serial ones last.
    executions.sort_by_key(|(case, _)| (case.serial, !is_paced(case)));
    let mut plan = PacedPlan {
        rate: limits.transaction_log_per_second,
        burst: limits.transaction_log_burst,
        ..PacedPlan::default()
    };
    let assigned = spread(config, &executions);
    let mut counted: HashSet<String> = HashSet::new();
    for (case, transport) in executions {
        let spread = assigned
            .get(&(case.id.clone(), transport))
            .map(|role| (role.clone(), case.on_account(role)));
        let case = match &spread {
            Some((_, spread)) => spread,
            None => &*case,
        };
        let (calls, open) = execution_calls(case, transport, config.full_walks, &config.target);
        if let Some(account) = lane_of(case) {
            plan.lanes.insert((case.id.clone(), transport), account);
        }
        let mut added: BTreeMap<String, usize> = BTreeMap::new();
        let mut keys = Vec::new();
        for call in calls {
            if let Some(key) = &call.shared {
                if counted.contains(key) || keys.contains(key) {
                    continue;
                }
                keys.push(key.clone());
            }
            for budget in call.budgets {
                *added.entry(budget).or_default() += 1;
            }
        }
        let over = config.paced_budget.and_then(|budget| {
            added.iter().find_map(|(name, calls)| {
                let total = plan.by_budget.get(name).copied().unwrap_or(0) + calls;
                let needed = seconds(total, limits);
                (needed > budget.as_secs_f64()).then(|| {
                    format!(
                        "the paced budget (--paced-budget-s {}) is spent: this execution's {calls} paced calls on {name}'s budget would end about {needed:.0} s into the run at the target's limits",
                        budget.as_secs_f64()
                    )
                })
            })
        });
        if let Some(reason) = over {
            plan.skipped.insert((case.id.clone(), transport), reason);
            continue;
        }
        if let Some((role, _)) = &spread {
            plan.accounts
                .insert((case.id.clone(), transport), role.clone());
        }
        plan.open_walks += open;
        counted.extend(keys);
        for (name, calls) in &added {
            *plan.by_budget.entry(name.clone()).or_default() += calls;
        }
        if !added.is_empty() {
            plan.executions.push(PlannedExecution {
                case: case.id.clone(),
                transport,
                calls: added,
            });
        }
    }
    let slowest = plan
        .by_budget
        .values()
        .map(|calls| seconds(*calls, limits))
        .fold(0.0, f64::max);
    plan.duration = Duration::from_secs_f64(slowest);
    plan
}

/// The account of each execution that leaves it to the run (`account = "any"`): the loads
/// of the other executions first, then these, those with the fewest roles to go on first
/// and the costliest first among them, each on the account (of those the target file
/// gives) whose budget has the fewest calls so far.
fn spread(
    config: &RunConfig,
    executions: &[(std::sync::Arc<Case>, TransportKind)],
) -> HashMap<(String, TransportKind), String> {
    let mut load: HashMap<String, usize> = HashMap::new();
    let mut counted: HashSet<String> = HashSet::new();
    let mut open = Vec::new();
    for (case, transport) in executions {
        if case.spreads() {
            let calls = execution_calls(case, *transport, config.full_walks, &config.target).0;
            open.push((calls.len(), case, *transport));
            continue;
        }
        for call in execution_calls(case, *transport, config.full_walks, &config.target).0 {
            // A request the run answers once loads its budget once.
            if call.shared.is_some_and(|key| !counted.insert(key)) {
                continue;
            }
            for budget in call.budgets {
                *load.entry(budget).or_default() += 1;
            }
        }
    }
    // The most constrained first (a case that reads a history has fewer roles to go on),
    // then the costliest: a case that could go anywhere fills what is left.
    open.sort_by_key(|(calls, case, _)| (case.spread_roles().len(), std::cmp::Reverse(*calls)));
    let mut assigned = HashMap::new();
    for (calls, case, transport) in open {
        let role = case
            .spread_roles()
            .iter()
            .copied()
            .filter(|role| config.target.accounts.contains_key(*role))
            .min_by_key(|role| {
                let budget = pace::budget_of_role(role, &config.target.accounts);
                load.get(budget).copied().unwrap_or(0)
            })
            .unwrap_or(Auth::SPREAD_ROLES[0]);
        *load
            .entry(pace::budget_of_role(role, &config.target.accounts).to_owned())
            .or_default() += calls;
        assigned.insert((case.id.clone(), transport), role.to_owned());
    }
    assigned
}

/// The account of an execution's first paced step: the lane it waits in.
fn lane_of(case: &Case) -> Option<String> {
    case.steps
        .iter()
        .find(|step| {
            let method = match &step.kind {
                StepKind::Walk(walk) => Some(walk.call.as_str()),
                StepKind::Probe(probe) => Some(probe.call.as_str()),
                _ => step.call_method(),
            };
            method.is_some_and(spec::is_paced)
        })
        .map(|step| {
            step.auth
                .account()
                .unwrap_or(Auth::SPREAD_ROLES[0])
                .to_owned()
        })
}

/// The paced calls of one execution, and how many of its walks read the whole history.
fn execution_calls(
    case: &Case,
    transport: TransportKind,
    full_walks: bool,
    target: &Target,
) -> (Vec<Call>, usize) {
    let limits = &target.limits;
    let mut calls = Vec::new();
    let mut open = 0;
    // A case on the options that expired out of the money runs its steps once per option
    // of the target's pool (`passes.rs`).
    let passes = super::passes::pass_count(target, case);
    for step in (0..passes).flat_map(|_| &case.steps) {
        let transport = step.transport_in(transport);
        let budgets = pace::budget_names(&step.auth, &case.id, transport, target);
        let call = |shared: Option<String>| Call {
            budgets: budgets.clone(),
            shared,
        };
        let method = match &step.kind {
            StepKind::Walk(walk) => {
                if !spec::is_paced(&walk.call) {
                    continue;
                }
                let (pages, probe, whole) = walk_pages(walk, full_walks);
                open += usize::from(whole);
                if probe {
                    let count = walk.compare_count.unwrap_or(walk.count).max(walk.count);
                    let mut params = walk.params.clone();
                    params.insert("count".to_owned(), Value::from(count));
                    calls.push(call(Some(share_key(
                        transport, &step.auth, &walk.call, &params,
                    ))));
                }
                calls.extend((0..pages).map(|_| call(None)));
                continue;
            }
            StepKind::Probe(probe) => {
                if spec::is_paced(&probe.call) {
                    let spent = limits.transaction_log_burst.saturating_add(1) as usize;
                    calls.extend((0..spent).map(|_| call(None)));
                }
                continue;
            }
            StepKind::Race { method, race } => {
                if spec::is_paced(method) {
                    let (per_round, rounds) = if race.within_declared_rate {
                        pace::budget_race_shape(race.copies, race.rounds, limits)
                    } else {
                        (race.copies, race.rounds)
                    };
                    let copies = per_round * rounds as usize;
                    calls.extend((0..copies).map(|_| call(None)));
                }
                continue;
            }
            _ => step.call_method(),
        };
        let Some(method) = method.filter(|method| spec::is_paced(method)) else {
            continue;
        };
        let copies = match step.kind {
            StepKind::InFlight { copies, .. } => copies.max(1),
            _ => 1,
        };
        let shareable = copies == 1 && plain(step);
        for _ in 0..copies {
            calls.push(call(
                shareable.then(|| share_key(transport, &step.auth, method, &step.params)),
            ));
        }
    }
    (calls, open)
}

/// A step whose request the run may answer once ([`super::paced_cache`]).
fn plain(step: &Step) -> bool {
    step.raw().is_none() && step.connection.is_none() && step.auth.given_token().is_none()
}

/// The pages a walk reads besides its probe: (pages, whether it probes first, whether it
/// reads the whole history).
fn walk_pages(walk: &Walk, full_walks: bool) -> (usize, bool, bool) {
    let counts = std::iter::once(walk.count).chain(walk.compare_count);
    match &walk.window {
        Some(window) if !full_walks => {
            let probe = window.around.is_none();
            let entries = if probe { window.entries.max(1) } else { 1 };
            let pages = counts
                .map(|count| (entries as usize).div_ceil(count.max(1) as usize).max(1))
                .sum();
            (pages, probe, false)
        }
        _ => (counts.count(), false, true),
    }
}

/// The sharing key of a request as the case writes it: the run answers it once.
fn share_key(
    transport: TransportKind,
    auth: &Auth,
    method: &str,
    params: &Map<String, Value>,
) -> String {
    let canonical: BTreeMap<&String, &Value> = params.iter().collect();
    format!(
        "{transport} {auth:?} {method} {}",
        serde_json::to_string(&canonical).unwrap_or_default()
    )
}

#[cfg(test)]
mod tests;
