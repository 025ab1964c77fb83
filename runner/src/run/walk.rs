//! Pagination walks and rate-limit probes.
//!
//! A walk follows the cursor from the first page to the end and checks that it ends (no
//! cursor seen twice; within `max_pages` where a window bounds it, a skip otherwise), that no page is larger than `count`, that no
//! entry appears twice, that entries lie inside the requested window, that a cursor never
//! leads to an empty page where SPEC.md states the last page's marker (4.8: `null`; where
//! it does not, 4.7, an empty page is a legitimate end), and, with `compare_count`, that a
//! walk with another page size returns exactly the same entries in the same order. With
//! `each`, every entry of every page is held to the walk's entry matchers: a filter the
//! walk sends (an instrument, a subaccount) holds on the pages after the first too.
//!
//! A walk with a `window` is bounded unless the run walks in full (`--full-walks`): one
//! page of the walk's parameters is read first (the density probe, shared with any other
//! execution sending the same request), the walk and its comparison read only a window
//! whose ends are timestamps of entries on it ([`super::window`]), and every probed entry
//! inside the window, both ends included, must come back. Its cost is a few pages whatever
//! the target's history holds; the last page's marker is checked at the window's end.
//!
//! Each kind of check ([`WalkCheck`]) cites the step's clause that SPEC.md's table names for
//! it on the walked method (`count`'s clause, `start_timestamp`'s, the paging's, the
//! method's result clause), or all the step's clauses when the step cites none of them.
//!
//! The pagination rules themselves (the page size, the window, no entry twice, the last
//! page's marker, a looping continuation) are [`harness_model::check::pages`]'s: a walk
//! here sends the pages, feeds each to a [`pages::Walk`] and words what it reports.

use std::collections::HashSet;
use std::ops::ControlFlow;
use std::time::Instant;

use serde_json::{Map, Value};

use super::exec::{Execution, Stop, TokenUse};
use super::template::{self, TemplateError};
use super::window;
use crate::transport::{Outgoing, place_bearer};
use harness_model::case::{Auth, Probe, Step, Walk, WalkWindow};
use harness_model::check::pages::{self, EndMarker, Next, PageLimit, TimeWindow, Violation};
use harness_model::check::{Matcher, ParsedAnswer, short};
use harness_protocol::jsonrpc::{self, validate_answer};
use harness_protocol::spec;

/// What a walk checks, each backed by a clause of the walked method in `spec::METHODS`.
#[derive(Clone, Copy, Debug)]
enum WalkCheck {
    /// No page larger than `count`: the `count` parameter's clause.
    Count,
    /// Entries inside the requested window: the `start_timestamp` parameter's clause.
    Window,
    /// The cursor leads through every entry once and ends: the paging's clause.
    Continuation,
    /// Each page matches the result schema: the method's clause.
    Result,
}

impl WalkCheck {
    /// The clause SPEC.md's table gives this check on `method`, if it gives one.
    fn clause(self, method: &str) -> Option<&'static str> {
        let method = spec::method(method)?;
        match self {
            WalkCheck::Count => method.param("count").map(|param| param.clause),
            WalkCheck::Window => method.param("start_timestamp").map(|param| param.clause),
            WalkCheck::Continuation => method.paging.map(|paging| paging.clause),
            WalkCheck::Result => Some(method.clause),
        }
    }
}

/// A finished walk: the entry keys in order, and the entries of the option `expiry_of`
/// names.
struct Pages {
    keys: Vec<String>,
    option_entries: Vec<Value>,
}

/// A walk under way: the pagination rules' state of the walk, the window its entries must
/// lie in, the option whose entries are kept, the page size, and what it read so far.
struct WalkProgress {
    rules: pages::Walk,
    window: TimeWindow,
    option: Option<String>,
    count: u32,
    pages: Pages,
}

/// Which page of which walk a check concerns, for its clauses and its message.
struct PageOf<'a> {
    step: &'a Step,
    walk: &'a Walk,
    number: u32,
}

impl Execution<'_> {
    /// The step's clauses a finding of `check` on a walk of `method` cites.
    fn clauses_for(&self, step: &Step, method: &str, check: WalkCheck) -> Vec<String> {
        let all = self.case.step_clauses(step);
        let backing = check.clause(method);
        let matching: Vec<String> = all
            .iter()
            .filter(|clause| backing == Some(clause.as_str()))
            .cloned()
            .collect();
        if matching.is_empty() {
            all.to_vec()
        } else {
            matching
        }
    }

    /// A request of a walk or probe to `method`: a bearer step's token placed as the
    /// transport carries it, other steps unauthenticated.
    pub(super) async fn paged_request(
        &mut self,
        step: &Step,
        method: &str,
        mut params: Map<String, Value>,
    ) -> Result<Outgoing, Stop> {
        let authorization = if let Auth::Bearer(bearer) = &step.auth {
            let token = self.bearer_token(bearer, TokenUse::Here).await?;
            place_bearer(self.transport, &token, &mut params)
        } else {
            None
        };
        Ok(Outgoing {
            method: method.to_owned(),
            params,
            raw: None,
            authorization,
        })
    }

    pub(crate) async fn walk(&mut self, step: &Step, walk: &Walk) -> Result<(), Stop> {
        // Resolved once: both walks read the same window (`{{now_ms}}` would move between
        // them, and entries made meanwhile would differ).
        let mut base_params = template::resolve_map(&walk.params, self).map_err(Stop::from)?;
        let known = match &walk.window {
            Some(bounds) if !self.shared.full_walks => {
                self.bound(step, walk, bounds, &mut base_params).await?
            }
            _ => Vec::new(),
        };
        let each = self.each_matchers(walk, step)?;
        let first = self
            .walk_once(step, walk, &base_params, &each, walk.count)
            .await?;
        self.check_known(step, walk, &base_params, &known, &first.keys);
        if first.keys.is_empty() && !each.is_empty() {
            // A rule of every entry of every page held nothing: no page had an entry.
            self.notes.push(format!(
                "the walk's entry rules ({}) not checked: its pages hold no entries",
                each.iter()
                    .map(|matcher| matcher.path.as_str())
                    .collect::<Vec<_>>()
                    .join(", ")
            ));
            self.unchecked.extend(
                each.iter()
                    .flat_map(|matcher| matcher.clauses.iter().flatten().cloned()),
            );
        }
        if let Some(option) = &walk.expiry_of {
            let option = self.resolved(option)?;
            self.check_expiry(step, &option, &first.option_entries);
        }
        if let Some(compare_count) = walk.compare_count {
            let second = self
                .walk_once(step, walk, &base_params, &each, compare_count)
                .await?;
            if first.keys != second.keys {
                let first_set: HashSet<&String> = first.keys.iter().collect();
                let second_set: HashSet<&String> = second.keys.iter().collect();
                let missing = second_set.difference(&first_set).count();
                let extra = first_set.difference(&second_set).count();
                let clauses = self.clauses_for(step, &walk.call, WalkCheck::Continuation);
                self.record(
                    &clauses,
                    format!(
                        "a walk with count {} returned {} entries and one with count {compare_count} returned {}: {missing} missing, {extra} extra, order {}",
                        walk.count,
                        first.keys.len(),
                        second.keys.len(),
                        if missing == 0 && extra == 0 { "differs" } else { "not compared" }
                    ),
                );
            }
        }
        if self
            .findings
            .iter()
            .any(|finding| finding.verdict == harness_model::check::Verdict::Fail)
        {
            Err(Stop::Failed)
        } else {
            Ok(())
        }
    }

    /// Walks once with page size `count`, from the first page to the last, each page
    /// judged by [`Execution::judge_page`].
    async fn walk_once(
        &mut self,
        step: &Step,
        walk: &Walk,
        base_params: &Map<String, Value>,
        each: &[Matcher],
        count: u32,
    ) -> Result<Pages, Stop> {
        let mut progress = WalkProgress {
            rules: pages::Walk::new(EndMarker::of(&walk.call), walk.key.as_deref()),
            window: TimeWindow {
                start: base_params.get("start_timestamp").and_then(Value::as_i64),
                end: base_params.get("end_timestamp").and_then(Value::as_i64),
            },
            option: match &walk.expiry_of {
                Some(option) => Some(self.resolved(option)?),
                None => None,
            },
            count,
            pages: Pages {
                keys: Vec::new(),
                option_entries: Vec::new(),
            },
        };
        for page_number in 1..=walk.max_pages {
            let mut params = base_params.clone();
            params.insert("count".to_owned(), Value::from(count));
            if let Some(cursor) = progress.rules.following() {
                params.insert(walk.cursor.clone(), cursor.clone());
            }
            let answer = self.send_paced(step, &walk.call, Some(&params)).await?;
            let page = PageOf {
                step,
                walk,
                number: page_number,
            };
            if self
                .judge_page(&page, each, answer, &mut progress)?
                .is_break()
            {
                return Ok(progress.pages);
            }
        }
        Err(self.unended_walk(step, walk, count))
    }

    /// Judges one page of a walk: its answer ([`Execution::page_response`]), its size, the
    /// walk's `each` matchers, then the pagination rules of [`pages::Walk`] on its entries
    /// and its continuation. `Break` when the walk ended, `Continue` when it goes on.
    fn judge_page(
        &mut self,
        page: &PageOf<'_>,
        each: &[Matcher],
        answer: ParsedAnswer,
        progress: &mut WalkProgress,
    ) -> Result<ControlFlow<()>, Stop> {
        let (step, walk, page_number, count) = (page.step, page.walk, page.number, progress.count);
        let Some(response) = self.page_response(page, answer, progress)? else {
            return Ok(ControlFlow::Break(()));
        };
        let result = &response["result"];
        let items = result[&walk.items]
            .as_array()
            .map_or(&[][..], Vec::as_slice);
        if let Some(over) = PageLimit::Count(i64::from(count)).check(items.len()) {
            self.record_violation(page, &over);
        }
        for matcher in each {
            let clauses = matcher
                .clauses
                .clone()
                .unwrap_or_else(|| self.case.step_clauses(step).to_vec());
            for mismatch in matcher.check(&response) {
                self.record(
                    &clauses,
                    format!("page {page_number} (count {count}): {mismatch}"),
                );
            }
        }
        let timestamp = walk
            .timestamp
            .as_deref()
            .map(|member| (progress.window, member));
        let report = progress.rules.page(items, timestamp);
        if report.ended {
            return Ok(ControlFlow::Break(()));
        }
        for violation in &report.violations {
            self.record_violation(page, violation);
        }
        for item in items {
            if progress.option.is_some()
                && item.get("instrument_name").and_then(Value::as_str) == progress.option.as_deref()
            {
                progress.pages.option_entries.push(item.clone());
            }
            progress.pages.keys.push(progress.rules.identity(item));
        }
        if self.failing() {
            return Err(Stop::Failed);
        }
        match progress.rules.next_page(result.get(&walk.cursor)) {
            Next::End => Ok(ControlFlow::Break(())),
            Next::Page(_) => Ok(ControlFlow::Continue(())),
            Next::Again(next) => {
                let clauses = self.clauses_for(step, &walk.call, WalkCheck::Continuation);
                self.record(
                    &clauses,
                    format!(
                        "the walk loops: continuation {} was handed out twice",
                        short(&next)
                    ),
                );
                Err(Stop::Failed)
            }
        }
    }

    /// A page's answer as JSON with a result holding the walk's array of entries, its
    /// envelope checked and its result held to the method's schema; `None` when it is a
    /// refusal that ends the walk (after a continuation, SPEC.md not stating the last
    /// page's marker: 4.7). Anything else stops the walk failed.
    fn page_response(
        &mut self,
        page: &PageOf<'_>,
        answer: ParsedAnswer,
        progress: &WalkProgress,
    ) -> Result<Option<Value>, Stop> {
        let (step, walk, page_number, count) = (page.step, page.walk, page.number, progress.count);
        let Some(response) = answer.json else {
            self.record(
                &["env.response.jsonrpc".to_owned()],
                format!("page {page_number} is not JSON"),
            );
            return Err(Stop::Failed);
        };
        for violation in validate_answer(&response, &answer.duplicate_members, answer.request_id) {
            self.record(&[violation.clause().to_owned()], violation.to_string());
        }
        let all = self.case.step_clauses(step).to_vec();
        if progress.rules.refusal_ends_walk() && response.get("result").is_none() {
            self.notes.push(format!(
                "page {page_number} of {} was refused after continuation {}: taken as the end marker, which SPEC.md does not show",
                walk.call,
                short(progress.rules.following().unwrap_or(&Value::Null))
            ));
            return Ok(None);
        }
        let Some(result) = response.get("result") else {
            let error = jsonrpc::error_of(&response).map_or_else(
                || short(&response),
                |error| format!("{} {}", error.code, error.message),
            );
            self.record(
                &all,
                format!(
                    "page {page_number} of {} (count {count}) was refused: {error}",
                    walk.call
                ),
            );
            return Err(Stop::Failed);
        };
        if let Some(schema) = self.shared.schemas.for_method(&walk.call)
            && let Some(violations) = self.shared.schemas.validate(&schema, result)
            && let Some(violation) = violations.first()
        {
            let clauses = self.clauses_for(step, &walk.call, WalkCheck::Result);
            self.record(
                &clauses,
                format!("page {page_number} does not match {schema}: {violation}"),
            );
        }
        if result.get(&walk.items).and_then(Value::as_array).is_none() {
            self.record(
                &all,
                format!("page {page_number} has no array \"{}\"", walk.items),
            );
            return Err(Stop::Failed);
        }
        Ok(Some(response))
    }

    /// Records a broken pagination rule of page `page`, worded as the runner's walks
    /// always have, on the step's clause of the rule's check.
    fn record_violation(&mut self, page: &PageOf<'_>, violation: &Violation) {
        let (step, walk, page_number) = (page.step, page.walk, page.number);
        let (check, message) = match violation {
            Violation::Repeated(repeat) => (
                WalkCheck::Continuation,
                format!(
                    "entry {} appears twice in the walk (page {page_number})",
                    repeat.identity
                ),
            ),
            Violation::OutsideWindow {
                identity,
                timestamp,
                window,
            } => (
                WalkCheck::Window,
                format!(
                    "entry {identity} has {} {timestamp}, outside the window {:?}..{:?}",
                    walk.timestamp.as_deref().unwrap_or_default(),
                    window.start,
                    window.end
                ),
            ),
            Violation::EmptyAfterContinuation { continuation } => (
                WalkCheck::Continuation,
                format!(
                    "continuation {} led to an empty page: the last page must mark the end",
                    short(continuation)
                ),
            ),
            Violation::OverCount { entries, limit } => (
                WalkCheck::Count,
                format!(
                    "page {page_number} has {entries} entries, more than count {}",
                    limit.entries()
                ),
            ),
        };
        let clauses = self.clauses_for(step, &walk.call, check);
        self.record(&clauses, message);
    }

    /// The walk read `max_pages` pages without reaching the last: a skip where nothing
    /// says it should have (see below), else a failure.
    fn unended_walk(&mut self, step: &Step, walk: &Walk, count: u32) -> Stop {
        // A whole history read page by page may simply be longer than the harness reads
        // (`--full-walks` on a large account, or a walk with no window, such as the trigger
        // order history's: SPEC.md bounds neither history): every page held new entries and
        // no cursor came back, so nothing shows the server wrong. Only a bounded walk, whose
        // window the probe sized, knows the walk should have ended.
        if self.shared.full_walks || walk.window.is_none() {
            let hint = if walk.window.is_none() {
                "the walk has no window to bound it"
            } else {
                "run without --full-walks to check it on a window"
            };
            return Stop::Skip(format!(
                "the whole history is longer than the {} pages a walk reads (count {count}): the last page was not reached; {hint}",
                walk.max_pages
            ));
        }
        let clauses = self.clauses_for(step, &walk.call, WalkCheck::Continuation);
        self.record(
            &clauses,
            format!(
                "the walk did not end within {} pages (count {count})",
                walk.max_pages
            ),
        );
        Stop::Failed
    }

    /// SPEC.md 4.8: "an option expiring out of the money yields one entry of type `expiry`
    /// and nothing else for that expiration". Among the walked entries of `option` (which
    /// the target file says expired out of the money): exactly one of type `expiry`, and
    /// none of type `delivery` or `settlement` nor any other entry stamped with the expiry
    /// entry's timestamp.
    fn check_expiry(&mut self, step: &Step, option: &str, entries: &[Value]) {
        let kind = |entry: &Value| {
            entry
                .get("type")
                .and_then(Value::as_str)
                .unwrap_or("")
                .to_owned()
        };
        let expiries: Vec<&Value> = entries
            .iter()
            .filter(|entry| kind(entry) == "expiry")
            .collect();
        let clauses = self.case.step_clauses(step).to_vec();
        let message = match expiries.as_slice() {
            [] => Some(format!(
                "{option}, which expired out of the money, has no entry of type expiry among its {} entries",
                entries.len()
            )),
            [expiry] => {
                let at = expiry.get("timestamp").cloned().unwrap_or(Value::Null);
                entries
                    .iter()
                    .filter(|entry| !std::ptr::eq(*entry, *expiry))
                    .find(|entry| {
                        matches!(kind(entry).as_str(), "delivery" | "settlement")
                            || (!at.is_null() && entry.get("timestamp") == Some(&at))
                    })
                    .map(|other| format!("{option} expired out of the money and has, besides its expiry entry, a {} entry {}", kind(other), short(other)))
            }
            more => Some(format!(
                "{option} has {} entries of type expiry, not one",
                more.len()
            )),
        };
        if let Some(message) = message {
            self.record(&clauses, message);
        }
    }

    /// Sends requests without pacing until one is refused, up to the target's declared
    /// burst plus a margin. A refusal is noted; no refusal is an `info` finding.
    pub(crate) async fn probe(&mut self, step: &Step, probe: &Probe) -> Result<(), Stop> {
        let params = template::resolve_map(&probe.params, self).map_err(Stop::from)?;
        let budget = self
            .shared
            .target
            .limits
            .transaction_log_burst
            .saturating_add(probe.margin)
            .min(2_000);
        let accounts = self.pace_keys(&step.auth);
        for sent in 1..=budget {
            // Unpaced, yet counted: the paced requests after the probe wait for the budget.
            self.shared.pacer.spend_all(&accounts, Instant::now());
            let outgoing = self
                .paged_request(step, &probe.call, params.clone())
                .await?;
            let answer = self.send(&outgoing).await?;
            let refused = answer.json.as_ref().and_then(jsonrpc::error_of);
            // Keep the report readable: only the first two and the deciding exchange stay.
            if sent > 2 && refused.is_none() {
                self.exchanges.pop();
            }
            if let Some(error) = refused {
                self.notes.push(format!(
                    "refused request {sent} of a burst with {} {}",
                    error.code, error.message
                ));
                return Ok(());
            }
        }
        let clauses = self.case.step_clauses(step).to_vec();
        self.record(
            &clauses,
            format!(
                "{budget} requests to {} in a burst were all answered; no rate limit seen",
                probe.call
            ),
        );
        Ok(())
    }
}

impl Execution<'_> {
    /// The walk's `each` matchers resolved, each path turned from the entry's to the
    /// answer's (`result.<items>[*].<path>`), so one check holds every entry of a page.
    /// A matcher naming a field or fixture the target file does not give is left out with
    /// a note (`left_out`), as a step's are.
    fn each_matchers(&mut self, walk: &Walk, step: &Step) -> Result<Vec<Matcher>, Stop> {
        let case = self.case;
        let step_clauses = case.step_clauses(step);
        let mut matchers = Vec::with_capacity(walk.each.len());
        for matcher in &walk.each {
            if self.left_out(matcher, step_clauses) {
                continue;
            }
            let mut resolved = self.resolve_matcher(matcher)?;
            resolved.path = format!("result.{}[*].{}", walk.items, resolved.path);
            matchers.push(resolved);
        }
        Ok(matchers)
    }
}

/// The key that identifies an entry of a walk: its `key` member, or the whole entry.
fn entry_key(walk: &Walk, item: &Value) -> String {
    pages::entry_identity(item, walk.key.as_deref())
}

impl Execution<'_> {
    /// Narrows `params` to the window of a bounded walk and returns the probed entries the
    /// walk must return. Centred on `around` when the window gives it (skipped with the
    /// reason when that resolves to nothing); otherwise one page of `params` (the larger of
    /// the walk's counts) is read and the window's ends are put on its entries' timestamps.
    async fn bound(
        &mut self,
        step: &Step,
        walk: &Walk,
        bounds: &WalkWindow,
        params: &mut Map<String, Value>,
    ) -> Result<Vec<(String, i64)>, Stop> {
        if let Some(around) = &bounds.around {
            return self.bound_around(around, bounds, params);
        }
        let Some(member) = &walk.timestamp else {
            return Ok(Vec::new());
        };
        let count = walk.compare_count.unwrap_or(walk.count).max(walk.count);
        let mut probe = params.clone();
        probe.insert("count".to_owned(), Value::from(count));
        let mut raw = walk.params.clone();
        raw.insert("count".to_owned(), Value::from(count));
        let answer = self
            .paced_call(step, &walk.call, Some(&probe), &raw)
            .await?;
        let items = answer
            .json
            .as_ref()
            .and_then(|json| json.get("result"))
            .and_then(|result| result.get(&walk.items))
            .and_then(Value::as_array);
        let Some(items) = items else {
            let clauses = self.case.step_clauses(step).to_vec();
            self.record(
                &clauses,
                format!(
                    "the first page of {} (count {count}), read to bound the walk, has no array \"{}\": {}",
                    walk.call,
                    walk.items,
                    answer.json.as_ref().map_or_else(|| answer.body.clone(), short)
                ),
            );
            return Err(Stop::Failed);
        };
        let probed: Vec<(String, i64)> = items
            .iter()
            .filter_map(|item| {
                let stamp = item.get(member).and_then(Value::as_i64)?;
                Some((entry_key(walk, item), stamp))
            })
            .collect();
        let Some(chosen) = window::choose(&probed, bounds.entries as usize) else {
            self.notes.push(format!(
                "bounded walk: the first page (count {count}) holds no entry, so the walk reads the whole range"
            ));
            return Ok(Vec::new());
        };
        params.insert(bounds.start.clone(), Value::from(chosen.start));
        params.insert(bounds.end.clone(), Value::from(chosen.end));
        self.notes.push(format!(
            "bounded walk: the window {}..{} holds {} of the {} entries of the first page (count {count}); its ends are timestamps of those entries",
            chosen.start,
            chosen.end,
            chosen.known.len(),
            probed.len()
        ));
        Ok(chosen.known)
    }

    /// Narrows `params` to the window of a bounded walk centred on `around` (a day either
    /// side), skipped with the reason when it resolves to nothing; such a window knows no
    /// entries in advance.
    fn bound_around(
        &mut self,
        around: &str,
        bounds: &WalkWindow,
        params: &mut Map<String, Value>,
    ) -> Result<Vec<(String, i64)>, Stop> {
        // A name without a value is a fixture the target file does not give: the walk
        // is skipped; a malformed template is the case file's defect.
        let at = match template::resolve_string(around, self) {
            Ok(text) => text.trim().parse::<i64>().ok(),
            Err(TemplateError::NoValue { .. }) => None,
            Err(error) => return Err(Stop::from(error)),
        }
        .ok_or_else(|| {
                Stop::Skip(format!(
                    "the walk reads a window around {around}, which the target file does not give (`harness run --full-walks` walks the whole history)"
                ))
            })?;
        let (start, end) = (
            at.saturating_sub(WalkWindow::AROUND_HALF_MS),
            at.saturating_add(WalkWindow::AROUND_HALF_MS),
        );
        params.insert(bounds.start.clone(), Value::from(start));
        params.insert(bounds.end.clone(), Value::from(end));
        self.notes.push(format!(
            "bounded walk: the window {start}..{end}, a day either side of {at}"
        ));
        Ok(Vec::new())
    }

    /// SPEC.md 4.8: `start_timestamp` is the "earliest timestamp" and `end_timestamp` the
    /// "latest timestamp", so an entry stamped with either end belongs to the window: every
    /// entry the probe saw inside it must be among the walk's `keys`.
    fn check_known(
        &mut self,
        step: &Step,
        walk: &Walk,
        params: &Map<String, Value>,
        known: &[(String, i64)],
        keys: &[String],
    ) {
        let Some(bounds) = &walk.window else {
            return;
        };
        let returned: HashSet<&String> = keys.iter().collect();
        let Some((key, stamp)) = known.iter().find(|(key, _)| !returned.contains(key)) else {
            return;
        };
        let end = params.get(&bounds.end).and_then(Value::as_i64);
        let start = params.get(&bounds.start).and_then(Value::as_i64);
        let show = |stamp: Option<i64>| stamp.map_or_else(|| "?".to_owned(), |at| at.to_string());
        let at_end = match (Some(*stamp) == start, Some(*stamp) == end) {
            (_, true) => format!(", stamped with {} itself", bounds.end),
            (true, false) => format!(", stamped with {} itself", bounds.start),
            _ => String::new(),
        };
        let missing = known
            .iter()
            .filter(|(key, _)| !returned.contains(key))
            .count();
        let clauses = self.clauses_for(step, &walk.call, WalkCheck::Window);
        self.record(
            &clauses,
            format!(
                "entry {key} ({stamp}{at_end}) is inside the window {}..{}, both ends included, yet the walk of the window did not return it ({missing} of the {} probed entries inside it missing)",
                show(start),
                show(end),
                known.len()
            ),
        );
    }
}
