//! Pacing of rate-limited methods and retries of throttled answers, so that a run never
//! breaks a target's rate limit and a throttling answer is never a verdict.
//!
//! SPEC.md section 8 gives `private/get_transaction_log` a sustained rate of 1 request per
//! second but not what the rate is counted against. The harness assumes the strictest
//! reading: one budget per account, shared by all its tokens, transports and concurrent
//! executions, filled at the target file's `[limits]` rate up to its burst (1 per second
//! and burst 1 by default). Every call to a paced method of the spec table waits for its
//! account's budget: single calls, walk pages and the fuzzer alike. Only the rate-limit
//! probe, which exists to exceed the limit, is not paced, but its requests are counted, so
//! the paced requests after it wait until the target's budget has filled again, and a
//! throttle of a paced request it may have overtaken is no verdict. Two roles the target
//! file gives one client id are one account, with one budget. The pacer
//! sends 5% below the stated rate, so that jitter on the way does not bring two requests
//! closer than the target allows.
//!
//! A target may still throttle (another client uses the account, or it limits methods the
//! spec does not): an answer whose error code is one of `[limits] throttle_codes` is waited
//! out and the request sent again, up to [`THROTTLE_RETRIES`] times, and the retry is a
//! note on the result.

use std::collections::{BTreeMap, HashMap};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use harness_model::case::{Auth, Bearer, BearerToken};
use harness_model::check::ParsedAnswer;
use harness_model::target_file::{Account, CountedPer, RateLimits, Target};
use harness_protocol::jsonrpc;
use harness_protocol::token_bucket::{Rate, TokenBucket};
use harness_protocol::wire::TransportKind;

/// Retries of a throttled request before its answer is judged as it is.
pub(crate) const THROTTLE_RETRIES: u32 = 4;

/// How much slower than the target's stated rate the harness sends: with burst 1, a
/// request delayed on its way more than the one after it would otherwise arrive early.
pub(crate) const PACING_MARGIN: f64 = 1.05;

/// The most requests an account can owe its budget after a probe.
const PROBE_DEBT_MAX: f64 = 2_000.0;

/// Copies beyond the declared burst that a round of a race held to the declared budget
/// releases: enough that a correct server must refuse some of them.
const BEYOND_BURST: usize = 2;

/// The copies per round and the most rounds of a race of the paced method held to the
/// target's declared budget (`within_declared_rate`), as the race runs them and the plan
/// counts them. Such a race only needs to run the target's bucket dry: a correct server
/// refuses some copies of the round that empties it, and a server that reads the bucket
/// and takes the token later lets that whole round through, beyond the budget. So a round
/// releases at most the burst and [`BEYOND_BURST`] more, and the rounds end with the first
/// one in which a copy got no result (`race.rs`): against a burst of 2 that is one round
/// of 4 copies, not the case's copies times its rounds, which would owe the account's
/// budget minutes on a target that counts per account.
pub(crate) fn budget_race_shape(copies: usize, rounds: u32, limits: &RateLimits) -> (usize, u32) {
    let burst = usize::try_from(limits.transaction_log_burst).unwrap_or(usize::MAX);
    let per_round = copies.min(burst.saturating_add(BEYOND_BURST)).max(2);
    let until_dry = u32::try_from(burst / per_round + 1).unwrap_or(u32::MAX);
    (per_round, rounds.min(until_dry).max(1))
}

/// The pacing budget of requests sent without an account's credentials.
pub(crate) const ANONYMOUS: &str = "anonymous";

/// The budget of account `role`: the role itself, or, where the target file gives another
/// role the same client id, the first of them in [`Auth::SPREAD_ROLES`]' order (`main`
/// first), else the first by name. Two roles with one key are one account to the target,
/// whose rate limit counts them together.
pub(crate) fn budget_of_role<'a>(
    role: &'a str,
    accounts: &'a BTreeMap<String, Account>,
) -> &'a str {
    let Some(own) = accounts.get(role) else {
        return role;
    };
    accounts
        .iter()
        .filter(|(_, account)| account.client_id == own.client_id)
        .map(|(name, _)| name.as_str())
        .min_by_key(|name| {
            let rank = Auth::SPREAD_ROLES.iter().position(|role| role == name);
            (rank.unwrap_or(Auth::SPREAD_ROLES.len()), *name)
        })
        .unwrap_or(role)
}

/// Whose budget a request with `auth` draws from: its account's (`main` unless the step
/// names one, [`budget_of_role`]), or, where the target counts per token, that account's
/// token in the execution of `case` over `transport`.
fn budget_name(
    auth: &Auth,
    case: &str,
    transport: TransportKind,
    per: CountedPer,
    accounts: &BTreeMap<String, Account>,
) -> String {
    let account = match auth {
        Auth::None => ANONYMOUS,
        Auth::ApiKey(_) => "direct_access",
        _ => budget_of_role(auth.account().unwrap_or("main"), accounts),
    };
    match per {
        CountedPer::Account => account.to_owned(),
        CountedPer::Token => format!("{case} [{transport}] {account}"),
    }
}

/// Every budget a request with `auth` draws from: its own ([`budget_name`]), and, for a
/// bearer token the step gives (one the case got from `exchange_token`, `fork_token` or a
/// capture) on a target that counts per account, the main account's too. SPEC.md 8 does
/// not say whose budget such a token's calls count against: the account it acts for, or
/// the account whose login it came from (a server may well count it against the key's
/// owner), so the harness charges both and exceeds neither.
pub(crate) fn budget_names(
    auth: &Auth,
    case: &str,
    transport: TransportKind,
    target: &Target,
) -> Vec<String> {
    let per = target.limits.transaction_log_counted_per;
    let own = budget_name(auth, case, transport, per, &target.accounts);
    let main = budget_of_role("main", &target.accounts);
    let given = matches!(
        auth,
        Auth::Bearer(Bearer {
            token: BearerToken::Given(_),
            ..
        })
    );
    if given && per == CountedPer::Account && own != main {
        vec![own, main.to_owned()]
    } else {
        vec![own]
    }
}

/// One pacing budget: its bucket, and how many requests were sent on it without waiting
/// (the rate-limit probe, a destructive race), which a target counts whatever the bucket
/// said.
struct Budget {
    bucket: TokenBucket,
    unpaced: u64,
}

/// What taking a paced request's token left: the fewest tokens its budgets still held, and
/// how many requests had been sent unpaced on them by then ([`Pacer::kept_to_budget`]).
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct Room {
    /// The fewest tokens any of the request's budgets held beyond the one taken.
    pub(crate) spare: f64,
    unpaced: u64,
}

/// Token buckets per account.
pub(crate) struct Pacer {
    rate: Rate,
    /// The origin of the buckets' milliseconds.
    started: Instant,
    budgets: Mutex<HashMap<String, Budget>>,
}

impl Pacer {
    pub(crate) fn new(limits: &RateLimits) -> Pacer {
        Pacer {
            rate: Rate::new(
                limits.transaction_log_per_second / PACING_MARGIN,
                limits.transaction_log_burst,
            ),
            started: Instant::now(),
            budgets: Mutex::new(HashMap::new()),
        }
    }

    /// Milliseconds from the pacer's start to `now`: the buckets' clock.
    fn ms(&self, now: Instant) -> f64 {
        now.saturating_duration_since(self.started).as_secs_f64() * 1_000.0
    }

    /// The budgets, locked (a panic elsewhere leaves them as they were).
    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, Budget>> {
        self.budgets
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// `account`'s budget in `budgets`, full when it is new.
    fn budget<'a>(
        &self,
        budgets: &'a mut HashMap<String, Budget>,
        account: &str,
        now_ms: f64,
    ) -> &'a mut Budget {
        budgets.entry(account.to_owned()).or_insert_with(|| Budget {
            bucket: self.rate.full(now_ms),
            unpaced: 0,
        })
    }

    /// Runs `change` on `account`'s budget, its bucket filled to `now`.
    fn with_budget<T>(
        &self,
        account: &str,
        now: Instant,
        change: impl FnOnce(&mut Budget, f64) -> T,
    ) -> T {
        let now_ms = self.ms(now);
        let mut budgets = self.lock();
        change(self.budget(&mut budgets, account, now_ms), now_ms)
    }

    /// How long `account` must wait before its next paced request, taking that request's
    /// token when the wait is zero ([`Pacer::take_all`] of one budget; the tests' view).
    #[cfg(test)]
    pub(crate) fn take(&self, account: &str, now: Instant) -> Duration {
        self.with_budget(account, now, |budget, now_ms| {
            if self.rate.take(&mut budget.bucket, now_ms, 0.0) {
                Duration::ZERO
            } else {
                Duration::from_secs_f64(self.rate.wait_ms(&budget.bucket) / 1_000.0)
            }
        })
    }

    /// Takes one token from each of `accounts` when every one of them has one, else takes
    /// nothing and says how long until they all might: for a request whose budget is one
    /// of several (a WebSocket connection that remembers some account's token), charged to
    /// all of them so that none is exceeded.
    pub(crate) fn take_all(&self, accounts: &[impl AsRef<str>], now: Instant) -> Duration {
        self.take_all_spare(accounts, now).err().unwrap_or_default()
    }

    /// [`Pacer::take_all`], saying on success what the take left ([`Room`]).
    fn take_all_spare(&self, accounts: &[impl AsRef<str>], now: Instant) -> Result<Room, Duration> {
        let now_ms = self.ms(now);
        let mut budgets = self.lock();
        let mut longest = Duration::ZERO;
        for account in accounts {
            let bucket = &mut self.budget(&mut budgets, account.as_ref(), now_ms).bucket;
            self.rate.refill(bucket, now_ms);
            if !self.rate.has_token_at(bucket, now_ms) {
                longest = longest.max(Duration::from_secs_f64(self.rate.wait_ms(bucket) / 1_000.0));
            }
        }
        if !longest.is_zero() {
            return Err(longest);
        }
        let mut room = Room {
            spare: f64::INFINITY,
            unpaced: 0,
        };
        for account in accounts {
            if let Some(budget) = budgets.get_mut(account.as_ref()) {
                self.rate.take(&mut budget.bucket, now_ms, 0.0);
                room.spare = room.spare.min(budget.bucket.tokens());
                room.unpaced += budget.unpaced;
            }
        }
        Ok(room)
    }

    /// Whether a paced request whose take left `room` on `accounts` kept to the target's
    /// declared budget, so that a throttling answer to it breaks the rate: its budgets held
    /// more than the jitter on the way takes ([`within_budget`]), and no request was sent
    /// on them unpaced since. An unpaced request (the probe, which exists to empty the
    /// target's bucket) may reach the target before a paced one that took its token
    /// earlier, and the target's bucket is then empty whatever the pacer counted.
    pub(crate) fn kept_to_budget(&self, room: Room, accounts: &[impl AsRef<str>]) -> bool {
        let budgets = self.lock();
        let unpaced: u64 = accounts
            .iter()
            .filter_map(|account| budgets.get(account.as_ref()))
            .map(|budget| budget.unpaced)
            .sum();
        within_budget(room.spare) && unpaced == room.unpaced
    }

    /// Counts a request `account` sent without waiting (the rate-limit probe), so that the
    /// paced requests after it wait until the target's budget has filled again. The debt
    /// is bounded by what the probe can send.
    pub(crate) fn spend(&self, account: &str, now: Instant) {
        self.with_budget(account, now, |budget, now_ms| {
            budget.unpaced += 1;
            if !self.rate.take(&mut budget.bucket, now_ms, 0.0) {
                // No whole token was there to take: the request sent anyway is owed.
                budget.bucket.owe(PROBE_DEBT_MAX);
            }
        });
    }

    /// Counts a request sent without waiting on every one of `accounts` ([`Pacer::spend`]).
    pub(crate) fn spend_all(&self, accounts: &[String], now: Instant) {
        for account in accounts {
            self.spend(account, now);
        }
    }

    /// Empties the buckets of `accounts` at `now`: the target has just throttled a request
    /// of theirs, so its bucket is empty whatever this one counted (a request that arrived
    /// late, after the one before it arrived early), and every request of those budgets
    /// waits a whole interval from now, not only the throttled one.
    pub(crate) fn throttled_all(&self, accounts: &[impl AsRef<str>], now: Instant) {
        for account in accounts {
            self.with_budget(account.as_ref(), now, |budget, now_ms| {
                self.rate.refill(&mut budget.bucket, now_ms);
                budget.bucket.empty();
            });
        }
    }

    /// Waits until every one of `accounts` may send one more paced request, and takes a
    /// token from each ([`Pacer::take_all`]).
    pub(crate) async fn wait_all(&self, accounts: &[impl AsRef<str>]) {
        self.wait_for_room(accounts).await;
    }

    /// [`Pacer::wait_all`], returning what the take left: what [`Pacer::kept_to_budget`]
    /// judges a throttled answer by.
    pub(crate) async fn wait_for_room(&self, accounts: &[impl AsRef<str>]) -> Room {
        loop {
            match self.take_all_spare(accounts, Instant::now()) {
                Ok(room) => return room,
                Err(delay) => tokio::time::sleep(delay).await,
            }
        }
    }

    /// The wait before retry `attempt` (1-based) of a throttled request: one refill
    /// interval, doubled each time.
    pub(crate) fn backoff(&self, attempt: u32) -> Duration {
        let interval = 1.0 / self.rate.per_second().max(0.01);
        Duration::from_secs_f64(interval * f64::from(1u32 << attempt.min(6).saturating_sub(1)))
    }
}

/// Tokens a paced request's budgets must still hold after it, beyond the 5% the pacer keeps
/// below the stated rate, for a throttled answer to it to break the rate: a quarter of a
/// second at 1 per second, so that a request before it held up on its way (it may arrive
/// later than sent) does not make a server that keeps the rate look like one that breaks it.
pub(crate) const SPARE_FOR_JITTER: f64 = 0.25;

/// Whether a paced request sent with `spare` tokens left in its budgets (see
/// [`Pacer::kept_to_budget`]) was within the target's declared budget by more than the
/// jitter on the way: SPEC.md 8 states the rate a client keeps to, so a throttling answer
/// to such a request is the server refusing a client that keeps it.
fn within_budget(spare: f64) -> bool {
    spare >= SPARE_FOR_JITTER
}

/// The throttling code of an answer, when the target's `[limits] throttle_codes` lists it.
pub(crate) fn throttled(answer: &ParsedAnswer, limits: &RateLimits) -> Option<i64> {
    listed_code(answer, &limits.throttle_codes)
}

/// The code of an answer refusing a request because the target's session slots are full,
/// when the target's `[limits] session_limit_codes` lists it.
pub(crate) fn session_limited(answer: &ParsedAnswer, limits: &RateLimits) -> Option<i64> {
    listed_code(answer, &limits.session_limit_codes)
}

/// The error code of an answer, when `codes` lists it.
fn listed_code(answer: &ParsedAnswer, codes: &[i64]) -> Option<i64> {
    let error = jsonrpc::error_of(answer.json.as_ref()?)?;
    codes.contains(&error.code).then_some(error.code)
}

/// Why a step refused for want of a session slot is skipped.
pub(crate) fn session_limit_skip(method: &str, code: i64) -> String {
    format!(
        "{method} was refused with code {code}, which the target file names as its session slots being full ([limits] session_limit_codes): SPEC.md 8 does not show the number of session slots, and the run's sessions may hold them all"
    )
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn a_token_the_step_gives_draws_on_the_main_account_too_where_counted_per_account() {
        let given = Auth::Bearer(Bearer {
            account: Some("sub".to_owned()),
            token: BearerToken::Given("{{subject_token}}".to_owned()),
            second_factor: None,
        });
        let login = Auth::Bearer(Bearer {
            account: Some("sub".to_owned()),
            ..Bearer::default()
        });
        let names = |auth: &Auth, per| {
            let mut target = target(&[]);
            target.limits.transaction_log_counted_per = per;
            budget_names(auth, "c", TransportKind::Ws, &target)
        };
        assert_eq!(names(&given, CountedPer::Account), ["sub", "main"]);
        assert_eq!(names(&login, CountedPer::Account), ["sub"]);
        assert_eq!(names(&given, CountedPer::Token), ["c [ws] sub"]);
    }

    /// A target whose accounts are `roles`, each with the client id given.
    fn target(roles: &[(&str, &str)]) -> Target {
        let mut text = String::from(
            "name = \"t\"\nbase_url = \"http://127.0.0.1:1/api/v2\"\nws_url = \"ws://127.0.0.1:1/ws/api/v2\"\n",
        );
        for (role, client_id) in roles {
            text.push_str(&format!(
                "[accounts.{role}]\nclient_id = \"{client_id}\"\nclient_secret = \"s\"\n"
            ));
        }
        Target::parse(std::path::Path::new("target.toml"), &text, &|_| None)
            .expect("test target parses")
    }

    #[test]
    fn roles_with_one_client_id_share_one_budget() {
        let target = target(&[
            ("main", "A"),
            ("two_factor", "B"),
            ("no_direct_access", "B"),
            ("sub", "C"),
            ("also_main", "A"),
        ]);
        let of = |role| budget_of_role(role, &target.accounts);
        assert_eq!(of("two_factor"), "two_factor");
        assert_eq!(of("no_direct_access"), "two_factor");
        assert_eq!(of("also_main"), "main");
        assert_eq!(of("sub"), "sub");
        assert_eq!(of("unknown"), "unknown");
        let login = |account: &str| {
            Auth::Bearer(Bearer {
                account: Some(account.to_owned()),
                ..Bearer::default()
            })
        };
        let names = |auth: &Auth| budget_names(auth, "c", TransportKind::Ws, &target);
        assert_eq!(names(&login("no_direct_access")), ["two_factor"]);
        assert_eq!(names(&login("also_main")), ["main"]);
    }

    #[test]
    fn a_race_held_to_the_declared_budget_releases_the_burst_and_a_few_until_dry() {
        let limits = |burst| RateLimits {
            transaction_log_burst: burst,
            ..RateLimits::default()
        };
        // A burst of 2: one round of 4 copies, not 64 times 20.
        assert_eq!(budget_race_shape(64, 20, &limits(2)), (4, 1));
        // A burst of 100: rounds of 64 until the bucket must be dry (the second).
        assert_eq!(budget_race_shape(64, 20, &limits(100)), (64, 2));
        // Never more rounds than the case asks for, never fewer copies than two.
        assert_eq!(budget_race_shape(8, 3, &limits(1_000)), (8, 3));
        assert_eq!(budget_race_shape(64, 20, &limits(0)), (2, 1));
    }

    fn pacer(per_second: f64, burst: u32) -> Pacer {
        Pacer::new(&RateLimits {
            transaction_log_per_second: per_second,
            transaction_log_burst: burst,
            ..RateLimits::default()
        })
    }

    #[test]
    fn one_account_shares_one_budget_and_others_have_their_own() {
        let pacer = pacer(1.0, 2);
        let start = Instant::now();
        assert_eq!(pacer.take("main", start), Duration::ZERO);
        assert_eq!(pacer.take("main", start), Duration::ZERO);
        let wait = pacer.take("main", start);
        assert!(wait > Duration::from_millis(900), "{wait:?}");
        assert_eq!(pacer.take("sub", start), Duration::ZERO);
        let later = start + Duration::from_millis(1_050);
        assert_eq!(pacer.take("main", later), Duration::ZERO);
    }

    #[test]
    fn taking_from_several_budgets_takes_from_all_or_none() {
        let pacer = pacer(1.0, 1);
        let start = Instant::now();
        assert_eq!(pacer.take("main", start), Duration::ZERO);
        let wait = pacer.take_all(&["main", "sub"], start);
        assert!(wait > Duration::from_millis(900), "{wait:?}");
        // "sub" kept its token: nothing was taken.
        assert_eq!(pacer.take("sub", start), Duration::ZERO);
        let later = start + Duration::from_millis(1_100);
        assert_eq!(pacer.take_all(&["main", "sub"], later), Duration::ZERO);
        assert!(pacer.take("main", later) > Duration::ZERO);
        assert!(pacer.take("sub", later) > Duration::ZERO);
    }

    #[test]
    fn requests_sent_unpaced_delay_the_paced_ones_after_them() {
        let pacer = pacer(1.0, 1);
        let start = Instant::now();
        for _ in 0..3 {
            pacer.spend("main", start);
        }
        let wait = pacer.take("main", start);
        assert!(wait > Duration::from_millis(2_900), "{wait:?}");
        assert_eq!(pacer.take("sub", start), Duration::ZERO);
    }

    #[test]
    fn a_throttle_empties_the_budget_so_the_next_request_waits_a_whole_interval() {
        let pacer = pacer(1.0, 3);
        let start = Instant::now();
        assert_eq!(pacer.take("main", start), Duration::ZERO);
        pacer.throttled_all(&["main"], start);
        let wait = pacer.take("main", start);
        assert!(
            wait >= Duration::from_millis(1_000),
            "two tokens were left, but the target refused: {wait:?}"
        );
        assert_eq!(pacer.take("sub", start), Duration::ZERO);
    }

    #[test]
    fn the_room_left_after_a_paced_request_is_the_fewest_tokens_of_its_budgets() {
        let pacer = pacer(1.0, 3);
        let now = Instant::now();
        let accounts = ["a".to_owned(), "b".to_owned()];
        pacer.spend("b", now);
        // "a" holds 3 and "b" 2: taking one from each leaves 2 and 1.
        let room = pacer
            .take_all_spare(&accounts, now)
            .expect("both have room");
        assert!((room.spare - 1.0).abs() < 1e-9, "{room:?}");
        assert!(pacer.kept_to_budget(room, &accounts));
        let room = pacer
            .take_all_spare(&accounts, now)
            .expect("both have room");
        assert!(room.spare.abs() < 1e-9, "{room:?}");
        // The moment the pacer had room is no room to spare for the jitter on the way.
        assert!(!pacer.kept_to_budget(room, &accounts));
        assert!(pacer.take_all_spare(&accounts, now).is_err());
    }

    #[test]
    fn a_request_sent_unpaced_after_a_paced_one_took_its_token_excuses_its_throttle() {
        let pacer = pacer(1.0, 5);
        let now = Instant::now();
        let own = ["two_factor".to_owned()];
        let room = pacer.take_all_spare(&own, now).expect("full");
        assert!(pacer.kept_to_budget(room, &own));
        // The probe on another budget changes nothing.
        pacer.spend("main", now);
        assert!(pacer.kept_to_budget(room, &own));
        // The probe on the same one may empty the target's bucket before the paced
        // request arrives: a throttle is then no verdict.
        pacer.spend("two_factor", now);
        assert!(!pacer.kept_to_budget(room, &own));
        // A request whose take came after the probe's sends is judged again.
        let later = now + Duration::from_secs(10);
        let room = pacer.take_all_spare(&own, later).expect("refilled");
        assert!(pacer.kept_to_budget(room, &own));
    }

    #[test]
    fn backoff_doubles_from_one_refill_interval() {
        let pacer = pacer(2.0, 1);
        assert_eq!(pacer.backoff(1), Duration::from_millis(525));
        assert_eq!(pacer.backoff(2), Duration::from_millis(1_050));
        assert_eq!(pacer.backoff(3), Duration::from_millis(2_100));
    }

    #[test]
    fn only_listed_codes_are_throttling() {
        let limits = RateLimits {
            throttle_codes: vec![10028, 10429],
            ..RateLimits::default()
        };
        let answer = |code: i64| ParsedAnswer {
            json: Some(json!({"jsonrpc": "2.0", "id": 1, "error": {"code": code, "message": "m"}})),
            status: Some(429),
            body: String::new(),
            request_id: Some(1),
            duplicate_members: Vec::new(),
            binary_frame: false,
        };
        assert_eq!(throttled(&answer(10429), &limits), Some(10429));
        assert_eq!(throttled(&answer(10028), &limits), Some(10028));
        assert_eq!(throttled(&answer(13009), &limits), None);
        let result = ParsedAnswer {
            json: Some(json!({"jsonrpc": "2.0", "id": 1, "result": []})),
            ..answer(0)
        };
        assert_eq!(throttled(&result, &limits), None);
    }

    #[test]
    fn only_listed_codes_mean_the_session_slots_are_full() {
        let answer = |code: i64| ParsedAnswer {
            json: Some(json!({"jsonrpc": "2.0", "id": 1, "error": {"code": code, "message": "m"}})),
            status: Some(409),
            body: String::new(),
            request_id: Some(1),
            duplicate_members: Vec::new(),
            binary_frame: false,
        };
        assert_eq!(
            session_limited(&answer(13040), &RateLimits::default()),
            None
        );
        let limits = RateLimits {
            session_limit_codes: vec![13040],
            ..RateLimits::default()
        };
        assert_eq!(session_limited(&answer(13040), &limits), Some(13040));
        assert_eq!(session_limited(&answer(13009), &limits), None);
        assert!(session_limit_skip("public/fork_token", 13040).contains("session slots"));
    }
}
