//! The run-wide "consecutive no-answer" breaker: a target that stops answering ends the
//! run in seconds, with the truth, instead of every request waiting out its timeout.
//!
//! Every request of a run (the runner's executions, the fuzzer's workers and sequences)
//! reports whether an answer came, over which channel: HTTP (query string and body alike,
//! one server), WebSocket, or the Direct Access interface (counted as HTTP when its URL names
//! the same server). An answer resets its channel's
//! count; a request left without one (timed out, connection refused, connection reset or
//! closed) adds to it. After [`Breaker::limit`] in a row a channel is dead: the requests
//! still to go over it fail at once ([`Breaker::dead`], naming the symptom and the last
//! failure's own words, a TLS handshake's reason say) instead of each waiting its timeout, so a target whose WebSocket side died ends its WebSocket cases in seconds while
//! HTTP goes on. Once every channel the run used is dead, the breaker fires the run's
//! [`Interrupt`] with [`Interruption::StoppedAnswering`], which names the symptom ("target
//! stopped answering: 12 requests in a row timed out after 5 s"): the run then stops as for
//! Ctrl-C, marks what is left "not run" and writes its reports, and the command exits 3
//! (the harness could not do its job), not 4.

use std::collections::BTreeMap;
use std::sync::Mutex;
use std::sync::PoisonError;
use std::time::Duration;

use super::{Interrupt, Interruption};
use harness_protocol::wire::TransportError;
use harness_protocol::wire::TransportErrorKind;
use harness_protocol::wire::TransportKind;

/// Requests in a row without an answer that kill a channel by default: more than one wave
/// of a small concurrency, so one unlucky moment does not end a run, and few enough that a
/// silent target ends the run within about two request timeouts at the default
/// concurrency.
pub const DEFAULT_LIMIT: usize = 12;

/// What a request travels over, as far as a target's silence goes: the servers behind it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Channel {
    /// `{base_url}`: query-string and JSON-body requests alike.
    Http,
    /// `{ws_url}`.
    Ws,
    /// `{direct_access_url}`.
    Rest,
}

impl Channel {
    fn of(transport: TransportKind) -> Channel {
        match transport {
            TransportKind::HttpQuery | TransportKind::HttpBody => Channel::Http,
            TransportKind::Ws => Channel::Ws,
            TransportKind::Rest => Channel::Rest,
        }
    }

    fn name(self) -> &'static str {
        match self {
            Channel::Http => "HTTP",
            Channel::Ws => "WebSocket",
            Channel::Rest => "the Direct Access interface",
        }
    }
}

/// Counts requests in a row without an answer per channel, kills a channel at the limit,
/// and stops the run once every channel it used is dead.
#[derive(Debug)]
pub struct Breaker {
    limit: usize,
    request_timeout: Duration,
    interrupt: Interrupt,
    /// `{direct_access_url}` is served by the server behind `{base_url}` (the same scheme,
    /// host and port): its requests count with HTTP's ([`Breaker::for_urls`]).
    rest_with_http: bool,
    channels: Mutex<BTreeMap<Channel, Streak>>,
}

/// A channel's requests without an answer since its last answer, how they ended, and
/// whether it is dead.
#[derive(Debug, Default)]
struct Streak {
    count: usize,
    kinds: Vec<TransportErrorKind>,
    /// What the last of them said ("TLS with host failed: …"): the cause a dead channel
    /// names beside the symptom.
    last: String,
    /// Why the channel is dead, once it is.
    dead: Option<String>,
    /// Whether any request over it was ever answered.
    answered: bool,
}

impl Streak {
    /// Dead, or never answered at all: a channel whose few requests all went unanswered
    /// does not keep a run alive whose other channels died (a fuzz run sends a handful
    /// over WebSocket, fewer than the limit, while HTTP dies).
    fn silent(&self) -> bool {
        self.dead.is_some() || (!self.answered && self.count > 0)
    }
}

impl Breaker {
    /// A breaker that kills a channel after `limit` requests in a row over it got no
    /// answer (0: never); `request_timeout` is named in the reason.
    pub fn new(limit: usize, request_timeout: Duration, interrupt: Interrupt) -> Breaker {
        Breaker {
            limit,
            request_timeout,
            interrupt,
            rest_with_http: false,
            channels: Mutex::new(BTreeMap::new()),
        }
    }

    /// The breaker counting the Direct Access interface's requests with HTTP's when both
    /// URLs name the same server (scheme, host and port): its silence is HTTP's, and a
    /// few Direct Access requests that never reach the limit would otherwise keep a run
    /// going against a target that stopped answering.
    pub fn for_urls(mut self, base_url: &str, direct_access_url: Option<&str>) -> Breaker {
        let origin = |url: &str| {
            let url = reqwest::Url::parse(url).ok()?;
            Some((
                url.scheme().to_owned(),
                url.host_str()?.to_ascii_lowercase(),
                url.port_or_known_default()?,
            ))
        };
        self.rest_with_http = direct_access_url
            .and_then(origin)
            .is_some_and(|rest| origin(base_url) == Some(rest));
        self
    }

    /// The channel whose streak a request over `transport` counts in.
    fn channel(&self, transport: TransportKind) -> Channel {
        match Channel::of(transport) {
            Channel::Rest if self.rest_with_http => Channel::Http,
            channel => channel,
        }
    }

    /// The number of requests in a row without an answer that kills a channel (0: never).
    pub fn limit(&self) -> usize {
        self.limit
    }

    /// Why requests over `transport` are not sent any more, when its channel is dead.
    pub fn dead(&self, transport: TransportKind) -> Option<String> {
        let channels = self.channels.lock().unwrap_or_else(PoisonError::into_inner);
        channels.get(&self.channel(transport))?.dead.clone()
    }

    /// Counts what came of one request over `transport`: `None` when an answer came,
    /// else why none did. A failure that is not the target's silence (an answer too large,
    /// a request that could not be built) neither counts nor resets.
    pub fn observe(&self, transport: TransportKind, failure: Option<&TransportError>) {
        let mut channels = self.channels.lock().unwrap_or_else(PoisonError::into_inner);
        let streak = channels.entry(self.channel(transport)).or_default();
        match failure {
            None => {
                streak.answered = true;
                streak.count = 0;
                streak.kinds.clear();
                streak.last.clear();
            }
            Some(failure) => {
                if failure.kind.no_answer().is_some() {
                    self.unanswered(&mut channels, self.channel(transport), failure);
                }
            }
        }
    }

    /// A request got no answer: counts it, kills its channel at the limit, and fires the
    /// interrupt once every channel used is dead.
    fn unanswered(
        &self,
        channels: &mut BTreeMap<Channel, Streak>,
        channel: Channel,
        failure: &TransportError,
    ) {
        if self.limit == 0 {
            return;
        }
        let streak = channels.entry(channel).or_default();
        streak.count += 1;
        if !streak.kinds.contains(&failure.kind) {
            streak.kinds.push(failure.kind);
        }
        streak.last.clone_from(&failure.message);
        if streak.count >= self.limit && streak.dead.is_none() {
            let reason = self.reason(streak);
            streak.dead = Some(format!(
                "over {}: {reason} (the last: {})",
                channel.name(),
                streak.last
            ));
        }
        let fired = channels
            .values()
            .find(|streak| streak.dead.is_some())
            .filter(|_| channels.values().all(Streak::silent))
            .map(|dead| self.reason(dead));
        if let Some(reason) = fired {
            self.interrupt.fire(reason);
        }
    }

    /// The interruption a dead streak stands for.
    fn reason(&self, streak: &Streak) -> Interruption {
        Interruption::StoppedAnswering {
            requests: streak.count.max(self.limit),
            symptom: self.symptom(&streak.kinds),
        }
    }

    /// What happened to the requests of a streak, in words.
    fn symptom(&self, kinds: &[TransportErrorKind]) -> String {
        let one = |kind: TransportErrorKind| match kind {
            TransportErrorKind::Timeout => format!(
                "timed out after {}",
                seconds(self.request_timeout.as_secs_f64())
            ),
            TransportErrorKind::Connect => {
                "could not connect (refused, unreachable, or a failed TLS handshake)".to_owned()
            }
            _ => "were closed or reset without an answer".to_owned(),
        };
        match kinds {
            [kind] => one(*kind),
            kinds => {
                let all: Vec<String> = kinds.iter().map(|kind| one(*kind)).collect();
                format!("got no answer ({})", all.join("; "))
            }
        }
    }
}

/// `5 s`, `0.4 s`.
fn seconds(value: f64) -> String {
    if value.fract() == 0.0 {
        format!("{value:.0} s")
    } else {
        format!("{value} s")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn breaker(limit: usize) -> (Breaker, Interrupt) {
        let interrupt = Interrupt::new();
        (
            Breaker::new(limit, Duration::from_secs(5), interrupt.clone()),
            interrupt,
        )
    }

    fn failure(kind: TransportErrorKind) -> TransportError {
        TransportError::new(kind, "x")
    }

    #[test]
    fn direct_access_on_the_base_url_server_counts_with_http() {
        let interrupt = Interrupt::new();
        let breaker = Breaker::new(2, Duration::from_secs(5), interrupt.clone()).for_urls(
            "http://127.0.0.1:8080/api/v2",
            Some("http://127.0.0.1:8080/direct"),
        );
        let timeout = failure(TransportErrorKind::Timeout);
        breaker.observe(TransportKind::Rest, None);
        breaker.observe(TransportKind::HttpQuery, Some(&timeout));
        breaker.observe(TransportKind::HttpBody, Some(&timeout));
        assert!(breaker.dead(TransportKind::Rest).is_some());
        assert!(interrupt.reason().is_some());

        let elsewhere = Breaker::new(2, Duration::from_secs(5), Interrupt::new()).for_urls(
            "http://127.0.0.1:8080/api/v2",
            Some("http://127.0.0.1:8081/"),
        );
        elsewhere.observe(TransportKind::HttpQuery, Some(&timeout));
        elsewhere.observe(TransportKind::HttpQuery, Some(&timeout));
        assert!(elsewhere.dead(TransportKind::Rest).is_none());
    }

    #[test]
    fn the_limit_in_a_row_fires_with_the_symptom() {
        let (breaker, interrupt) = breaker(3);
        let timeout = failure(TransportErrorKind::Timeout);
        breaker.observe(TransportKind::HttpQuery, Some(&timeout));
        breaker.observe(TransportKind::HttpQuery, Some(&timeout));
        assert_eq!(interrupt.reason(), None);
        breaker.observe(TransportKind::HttpQuery, Some(&timeout));
        let reason = interrupt.reason().unwrap();
        assert_eq!(
            reason.to_string(),
            "target stopped answering: 3 requests in a row timed out after 5 s"
        );
        assert!(reason.is_stopped_answering());
        assert!(super::super::interrupt::stopped_answering(
            &reason.to_string()
        ));
    }

    #[test]
    fn an_answer_starts_the_count_again() {
        let (breaker, interrupt) = breaker(2);
        breaker.observe(
            TransportKind::HttpQuery,
            Some(&failure(TransportErrorKind::Closed)),
        );
        breaker.observe(TransportKind::HttpQuery, None);
        breaker.observe(
            TransportKind::HttpQuery,
            Some(&failure(TransportErrorKind::Connect)),
        );
        assert_eq!(interrupt.reason(), None);
        breaker.observe(
            TransportKind::HttpQuery,
            Some(&failure(TransportErrorKind::TooLarge)),
        );
        assert_eq!(interrupt.reason(), None);
        breaker.observe(
            TransportKind::HttpQuery,
            Some(&failure(TransportErrorKind::Timeout)),
        );
        let reason = interrupt.reason().unwrap().to_string();
        assert!(reason.contains("could not connect"), "{reason}");
        assert!(reason.contains("timed out after 5 s"), "{reason}");
    }

    #[test]
    fn a_dead_channel_fails_at_once_while_the_others_go_on_and_all_dead_fires() {
        let (breaker, interrupt) = breaker(2);
        let timeout = failure(TransportErrorKind::Timeout);
        breaker.observe(TransportKind::HttpBody, None);
        breaker.observe(TransportKind::Ws, Some(&timeout));
        breaker.observe(TransportKind::HttpQuery, None);
        breaker.observe(TransportKind::Ws, Some(&timeout));
        let dead = breaker
            .dead(TransportKind::Ws)
            .expect("the WebSocket channel is dead");
        assert_eq!(
            dead,
            "over WebSocket: target stopped answering: 2 requests in a row timed out after 5 s \
             (the last: x)"
        );
        assert_eq!(breaker.dead(TransportKind::HttpQuery), None);
        assert_eq!(interrupt.reason(), None, "HTTP still answers");
        breaker.observe(TransportKind::HttpQuery, Some(&timeout));
        breaker.observe(TransportKind::HttpBody, Some(&timeout));
        assert!(breaker.dead(TransportKind::HttpBody).is_some());
        assert!(interrupt.reason().unwrap().is_stopped_answering());
    }

    #[test]
    fn a_channel_never_answered_does_not_keep_the_run_alive_once_the_others_died() {
        let (silent, interrupt) = breaker(3);
        silent.observe(TransportKind::HttpQuery, None);
        silent.observe(
            TransportKind::Ws,
            Some(&failure(TransportErrorKind::Timeout)),
        );
        for _ in 0..3 {
            silent.observe(
                TransportKind::HttpQuery,
                Some(&failure(TransportErrorKind::Timeout)),
            );
        }
        assert!(interrupt.reason().is_some());
        // A channel that once answered keeps the run going until it dies too.
        let (answering, interrupt) = breaker(3);
        answering.observe(TransportKind::Ws, None);
        for _ in 0..3 {
            answering.observe(
                TransportKind::HttpQuery,
                Some(&failure(TransportErrorKind::Timeout)),
            );
        }
        assert!(interrupt.reason().is_none());
    }

    #[test]
    fn a_limit_of_zero_never_fires() {
        let (breaker, interrupt) = breaker(0);
        for _ in 0..100 {
            breaker.observe(
                TransportKind::HttpQuery,
                Some(&failure(TransportErrorKind::Timeout)),
            );
        }
        assert_eq!(interrupt.reason(), None);
    }
}
