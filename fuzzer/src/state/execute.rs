//! Sending a sequence step by step, judging each answer against the model before the next
//! step goes out. The sequence is sent as the steps of its case ([`sequence_steps`], the
//! case a failure is written as) through the runner's executor: logins are auth modes,
//! tokens pass from step to step as captures, a replay reuses its nonce, and each
//! WebSocket connection of the sequence is a named connection of the execution, opened on
//! first use and closed after a logout on it (its slot moves to a new one), or at the end.
//! A step whose token never came (its issuing step was refused where SPEC.md left that
//! open) is skipped.
//! The paced method takes its account's budget through the executor's pacer, waiting at
//! most the run's `paced_wait`; a paced step the budget has no room for is skipped, so a
//! sequence never holds its worker behind the budget.

use serde_json::Value;

use super::assess::{self, Seen};
use super::case_file::{enable_step, sequence_steps};
use super::model::{Model, Observed, Prediction};
use super::{Action, SeqStep, Sequence};
use crate::send::Sender;
use harness_model::check::{Finding, Outcome, Redactor};
use harness_protocol::wire::Exchange;
use harness_protocol::wire::NoAnswer;
use harness_protocol::wire::TransportKind;
use harness_runner::run::step_call::Execution;

/// What came of running a sequence.
#[derive(Clone, Debug, Default)]
pub(crate) struct SequenceRun {
    /// Requests sent.
    pub(crate) sent: usize,
    /// Steps predicted to give a result, an error, or either.
    pub(crate) predicted: [usize; 3],
    /// Steps skipped: the token they need never came, or the paced budget had no room.
    pub(crate) skipped: Vec<usize>,
    /// Answers throttled, not judged.
    pub(crate) throttled: usize,
    /// Steps that got no answer (timed out, refused): not judged.
    pub(crate) unanswered: usize,
    /// Steps calling the paced method that were sent, and those skipped for want of room
    /// in its budget.
    pub(crate) paced: [usize; 2],
    /// The first step that broke the model, with the failure on it.
    pub(crate) failure: Option<(usize, Finding)>,
    /// What the model predicted of each step sent (`None`: skipped or not reached).
    pub(crate) outcomes: Vec<Option<Outcome>>,
}

/// A token set as a step received it.
#[derive(Clone, Debug, Default)]
struct Held {
    access: String,
    refresh: String,
}

/// Sends `sequence`, its JSON-RPC ids from `first_id` on, as the steps of its case
/// ([`sequence_steps`]) through the runner's executor, and stops at the first step that
/// breaks the model.
pub(crate) async fn execute(
    sender: &Sender,
    redactor: &Redactor,
    sequence: &Sequence,
    first_id: u64,
) -> SequenceRun {
    let names = sequence.connection_names();
    let mut run = SequenceRun {
        outcomes: vec![None; sequence.steps.len()],
        ..SequenceRun::default()
    };
    let mut model = Model::new(sender.session_slots);
    let mut held: Vec<Option<Held>> = vec![None; sequence.steps.len()];
    let case = sequence_steps(sequence);
    let mut execution = Execution::unjudged(
        sender.shared(),
        &case,
        TransportKind::HttpBody,
        sender.fresh_session(),
        false,
    );
    execution.first_id(first_id);
    for (index, (step, case_step)) in sequence.steps.iter().zip(&case.steps).enumerate() {
        let connection = names[index].as_deref();
        model.sessions_opened(sender.sessions.now());
        let prediction = model.predict(step, connection);
        // A step whose token never came (its issuing step was refused) is skipped.
        let token = step
            .action
            .depends_on()
            .map(|of| held.get(of).cloned().flatten());
        if let Some(None) = token {
            run.skipped.push(index);
            continue;
        }
        if !run
            .take_paced_budget(sender, step, index, token.flatten())
            .await
        {
            continue;
        }
        run.count_prediction(index, prediction.outcome);
        let called = execution.call_unjudged(case_step).await;
        run.sent += 1;
        let Some(exchange) = run.answered(called.ok().map(|called| called.exchange)) else {
            break;
        };
        let seen = seen(sender, &exchange, redactor);
        let judged = StepJudged::of(step, &prediction, &seen, &model, &held);
        if let Some(token_set) = judged.issued {
            held[index] = Some(token_set);
        }
        if matches!(seen, Seen::Throttled) {
            run.throttled += 1;
        }
        if let Some(mut finding) = judged.broken {
            finding.message = redactor.text(&finding.message);
            run.failure = Some((index, finding));
            break;
        }
        model.apply(index, step, connection, &judged.observed);
        if let Some(owner) = model.opens_session(index, step) {
            model.opened_session(index, sender.sessions.open(owner));
        }
        if matches!(step.action, Action::Logout { .. })
            && let Some(name) = &case_step.connection
        {
            execution.close_connection(name).await;
        }
    }
    enable_again(sequence, &model, &mut execution, &mut run).await;
    execution.close().await;
    run
}

impl SequenceRun {
    /// For a step of the paced method, takes its account's budget, waiting at most the
    /// run's `paced_wait`: `false` (the step skipped, counted) when it has no room.
    /// `true` for any other step.
    async fn take_paced_budget(
        &mut self,
        sender: &Sender,
        step: &SeqStep,
        index: usize,
        token: Option<Held>,
    ) -> bool {
        if !harness_protocol::spec::is_paced(step.action.method()) {
            return true;
        }
        let paced = sender
            .pace_within(
                token.as_ref().map(|held| held.access.as_str()),
                sender.paced_wait,
            )
            .await;
        // No room in the budget: the call is skipped, not waited for, and the model
        // learns nothing from it (a read of the log changes no token).
        if !paced {
            self.skipped.push(index);
            self.paced[1] += 1;
            return false;
        }
        self.paced[0] += 1;
        true
    }

    /// Counts step `index`'s predicted outcome.
    fn count_prediction(&mut self, index: usize, outcome: Outcome) {
        self.outcomes[index] = Some(outcome);
        self.predicted[match outcome {
            Outcome::Result => 0,
            Outcome::Error => 1,
            Outcome::Any => 2,
        }] += 1;
    }

    /// The exchange of a step that got an answer; `None` (counted as unanswered) when it
    /// was not sent (`sent` is `None`) or got none.
    fn answered(&mut self, sent: Option<Exchange>) -> Option<Exchange> {
        // Not sent (a WebSocket that would not open), or no answer (timed out, refused):
        // nothing to judge, so the sequence ends without a finding, counted; the run's
        // breaker decides whether the target stopped answering.
        let Some(exchange) = sent else {
            self.unanswered += 1;
            return None;
        };
        if exchange
            .failure
            .as_ref()
            .is_some_and(|failure| failure.kind.no_answer() == Some(NoAnswer::Silence))
        {
            self.unanswered += 1;
            return None;
        }
        Some(exchange)
    }
}

/// One step's answer judged: what it broke, what the model learns from it, and the token
/// set it issued.
struct StepJudged {
    broken: Option<Finding>,
    observed: Observed,
    issued: Option<Held>,
}

impl StepJudged {
    /// Judges what was `seen` of `step` against its `prediction` and, for a result, its
    /// token set against the model and the tokens `held`.
    fn of(
        step: &SeqStep,
        prediction: &Prediction,
        seen: &Seen,
        model: &Model,
        held: &[Option<Held>],
    ) -> StepJudged {
        let mut broken = match seen {
            Seen::Nothing(what) => Some(crate::prediction::broken(
                transport_clause(step.transport),
                what.clone(),
            )),
            seen => assess::outcome(prediction, seen),
        };
        let mut observed = Observed::default();
        let mut issued = None;
        if let Seen::Result(result) = seen {
            observed.result = true;
            let access = result.get("access_token").and_then(Value::as_str);
            observed.issued_token = access.is_some();
            observed.granted = result
                .get("scope")
                .and_then(Value::as_str)
                .map(str::to_owned);
            if broken.is_none() {
                broken = token_set_broken(step, model, held, result);
            }
            issued = access.map(|access| Held {
                access: access.to_owned(),
                refresh: result
                    .get("refresh_token")
                    .and_then(Value::as_str)
                    .unwrap_or_default()
                    .to_owned(),
            });
        }
        StepJudged {
            broken,
            observed,
            issued,
        }
    }
}

/// Enables the subaccount's login again after a sequence that disabled it and stopped
/// (at a failure, or cut by the shrinker), so the next sequence starts from an enabled
/// login as the model assumes: a fresh login and a toggle, not judged.
async fn enable_again(
    sequence: &Sequence,
    model: &Model,
    execution: &mut Execution<'_>,
    run: &mut SequenceRun,
) {
    if sequence
        .steps
        .iter()
        .any(|step| matches!(step.action, Action::Toggle { enable: false, .. }))
        && model.sub_disabled() != Some(false)
    {
        let sent_before = execution.next_id();
        let _ = execution.call_unjudged(&enable_step()).await;
        run.sent += usize::try_from(execution.next_id() - sent_before).unwrap_or(0);
    }
}

/// What came of a step's answer, as far as judging goes.
fn seen(sender: &Sender, exchange: &Exchange, redactor: &Redactor) -> Seen {
    if let Some(failure) = &exchange.failure {
        return Seen::Nothing(format!("no answer: {}", redactor.text(&failure.message)));
    }
    let answer = exchange.json();
    // A session refused for full slots (a code the target file names) is the target's
    // capacity, which SPEC.md 8 does not show: not judged, like a throttled answer.
    let limits = &sender.target.limits;
    let not_judged: Vec<i64> = limits
        .throttle_codes
        .iter()
        .chain(&limits.session_limit_codes)
        .copied()
        .collect();
    Seen::of(answer, &not_judged)
}

/// The transport clause a step without an answer breaks.
fn transport_clause(transport: TransportKind) -> &'static str {
    match transport {
        TransportKind::HttpQuery => "transport.http.query",
        TransportKind::HttpBody => "transport.http.body",
        TransportKind::Ws | TransportKind::Rest => "transport.ws",
    }
}

/// The token set of a refresh against SPEC.md 5.3 ([`assess::refreshed`]; a fork's
/// response shape is not shown, 4.3), and the default page of the paced call.
fn token_set_broken(
    step: &SeqStep,
    model: &Model,
    held: &[Option<Held>],
    result: &Value,
) -> Option<Finding> {
    match &step.action {
        Action::Private { method, .. } if harness_protocol::spec::is_paced(method) => {
            assess::default_page(method, result)
        }
        Action::Refresh { of } => {
            let old = held.get(*of).cloned().flatten()?;
            let kind = &model.token(*of)?.kind;
            assess::refreshed(&old.access, &old.refresh, kind, result)
        }
        _ => None,
    }
}
