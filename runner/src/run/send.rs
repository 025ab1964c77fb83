//! Sending one request of an execution and recording its exchange.
//!
//! Before a request leaves, the run's `Redactor` learns every credential it carries (secret
//! members of the parameters, the `Authorization` value); after, every token and signature
//! of the answer and the header actually sent. The exchange is kept within the execution's
//! budget of answer bytes ([`RecordBudget`](super::budget::RecordBudget)); the parsed answer moves to the caller. A
//! target that cannot be reached, or gives no answer within the timeout, is a harness
//! error (nothing was there to judge); one that closes or floods is a finding. Every
//! outcome is counted by the run's breaker (`breaker.rs`). A throttling answer to a paced
//! request the pacer had room for is judged: SPEC.md 8's rate is a floor too
//! ([`Execution::throttled_within_budget`]); any other is waited out and sent again.

use super::exec::{Execution, Stop};
use super::pace;
use crate::transport::{Authorization, Outgoing, RaceEntry, Wave};
use harness_model::check::{ParsedAnswer, Redactor};
use harness_model::target_file::CountedPer;
use harness_protocol::spec;
use harness_protocol::wire::Exchange;
use harness_protocol::wire::TransportError;
use harness_protocol::wire::TransportErrorKind;
use harness_protocol::wire::TransportKind;

/// What a race sent and got (`Execution::send_race`).
pub(crate) struct RaceSent {
    /// Each answer with its wave, in wave order and results first within a wave.
    pub(crate) answers: Vec<(Wave, ParsedAnswer)>,
    /// Microseconds from the first final byte of the first wave to its last.
    pub(crate) release_spread_us: f64,
    /// Microseconds from the first wave's first arrival at the server to its last, when the
    /// target is the embedded reference and said.
    pub(crate) arrival_spread_us: Option<f64>,
}

/// The credential of an `Authorization` value: what follows its scheme name.
fn credential_of(header_value: &str) -> Option<&str> {
    header_value
        .split_once(' ')
        .map(|(_, credential)| credential.trim())
}

/// Registers the secrets a request carries (signatures, client secrets, tokens, header
/// values) before anything can be written.
fn learn_request(redactor: &Redactor, outgoing: &Outgoing) {
    redactor.learn_members(&outgoing.params);
    if let Some(Authorization::Value(value)) = &outgoing.authorization
        && let Some(credential) = credential_of(value)
    {
        redactor.add(credential);
    }
}

/// Registers the tokens of an answer and the `Authorization` header actually sent (a signed
/// header is computed by the transport), and moves the parsed answer out of the exchange:
/// the recorded exchange keeps the text, so no response is copied on the hot path.
fn learn_answer(redactor: &Redactor, exchange: &mut Exchange) -> ParsedAnswer {
    let json = exchange
        .response
        .as_mut()
        .and_then(|received| received.json.take());
    if let Some(json) = &json {
        redactor.learn(json);
    }
    for (name, value) in &exchange.request.headers {
        if name == "Authorization"
            && let Some(credential) = credential_of(value)
        {
            redactor.add(credential);
        }
    }
    ParsedAnswer {
        status: exchange
            .response
            .as_ref()
            .and_then(|received| received.status),
        body: match (&json, &exchange.response) {
            (None, Some(received)) => received.body.clone(),
            _ => String::new(),
        },
        json,
        request_id: exchange.request.id,
        duplicate_members: exchange
            .response
            .as_mut()
            .map(|received| std::mem::take(&mut received.duplicate_members))
            .unwrap_or_default(),
        binary_frame: exchange
            .response
            .as_ref()
            .is_some_and(|received| received.binary_frame),
    }
}

/// The clauses a request left without an answer breaks over `transport`.
fn unanswered_clauses(transport: TransportKind) -> Vec<String> {
    let clause = if transport == TransportKind::Ws {
        "transport.ws"
    } else {
        "http.status.success"
    };
    vec![clause.to_owned(), "env.response.result".to_owned()]
}

/// Whether a transport failure is the harness's (the target could not be reached, the
/// request could not be built) rather than the target's.
fn is_harness_failure(failure: &TransportError) -> bool {
    matches!(
        failure.kind,
        TransportErrorKind::Connect | TransportErrorKind::Request
    )
}

impl Execution<'_> {
    /// Sends over the execution's transport (its [`crate::transport::ClientSession`]),
    /// recording the exchange.
    pub(crate) async fn send(&mut self, outgoing: &Outgoing) -> Result<ParsedAnswer, Stop> {
        self.channel_alive(self.transport)?;
        let id = self.next_id;
        self.next_id += 1;
        learn_request(&self.shared.redactor, outgoing);
        let exchange = self
            .session
            .call(self.transport, id, outgoing)
            .await
            .map_err(|error| self.unsent(&error))?;
        self.receive(exchange, &outgoing.method)
    }

    /// [`Execution::send`] of a request no pacing budget covers (a login), sent again while
    /// the target throttles it: SPEC.md 8 leaves the rate limits of other methods unstated,
    /// so a server may limit any of them, and a throttled login is the target's pace, not
    /// its answer ([`Execution::throttled`]).
    pub(crate) async fn send_unless_throttled(
        &mut self,
        outgoing: &Outgoing,
    ) -> Result<ParsedAnswer, Stop> {
        let mut attempt = 0;
        loop {
            let answer = self.send(outgoing).await?;
            match self.throttled(&outgoing.method, &answer, &mut attempt, &[] as &[String]) {
                Some(backoff) => tokio::time::sleep(backoff).await,
                None => return Ok(answer),
            }
        }
    }

    /// SPEC.md 8 states the rate a client keeps to ("`private/get_transaction_log`
    /// sustained rate | 1 request per second"), so a server may not refuse a client that
    /// keeps it: a throttling answer to the first attempt of a paced request whose budgets
    /// (counted as the target file's `[limits]` say, per account unless it says per token,
    /// 5% below the stated rate, with the declared burst) still held `spare` tokens beyond
    /// the jitter allowance after it, with no request sent unpaced on them since
    /// ([`pace::Pacer::kept_to_budget`]), fails the method's rate clause. Any other
    /// throttling answer (a retry, a request sent with no more room than the jitter on the
    /// way takes, one the rate-limit probe may have overtaken) is the target's pace:
    /// [`Execution::throttled`] waits it out and notes it. `room` is what taking the
    /// request's token on `budgets` left, `None` for a request not paced.
    pub(crate) fn throttled_within_budget(
        &mut self,
        method: &str,
        answer: &ParsedAnswer,
        attempt: u32,
        room: Option<(pace::Room, &[String])>,
    ) {
        let Some((room, budgets)) = room else {
            return;
        };
        if attempt > 0 || !self.shared.pacer.kept_to_budget(room, budgets) {
            return;
        }
        let limits = &self.shared.target.limits;
        let Some(code) = pace::throttled(answer, limits) else {
            return;
        };
        let Some(clause) = spec::method(method).and_then(|method| method.rate_clause) else {
            return;
        };
        let per = match limits.transaction_log_counted_per {
            CountedPer::Account => "account",
            CountedPer::Token => "token",
        };
        let message = format!(
            "{method} was throttled (code {code}) though it kept to the declared budget: the pacer, {:.3} a second (5% below the target's {}), burst {}, counted per {per}, still held {:.2} tokens after it",
            limits.transaction_log_per_second / pace::PACING_MARGIN,
            limits.transaction_log_per_second,
            limits.transaction_log_burst,
            room.spare
        );
        self.record(&[clause.to_owned()], message);
    }

    /// Sends `outgoings` at once on the execution's WebSocket, each with its own id, and
    /// returns their answers in request order (matched by id, whatever order they came).
    pub(crate) async fn send_in_flight(
        &mut self,
        outgoings: &[Outgoing],
    ) -> Result<Vec<ParsedAnswer>, Stop> {
        self.channel_alive(TransportKind::Ws)?;
        let mut requests = Vec::with_capacity(outgoings.len());
        for outgoing in outgoings {
            learn_request(&self.shared.redactor, outgoing);
            requests.push((self.next_id, outgoing));
            self.next_id += 1;
        }
        let exchanges = self
            .session
            .call_in_flight(&requests)
            .await
            .map_err(|error| self.unsent(&error))?;
        let mut answers = Vec::with_capacity(exchanges.len());
        for (exchange, outgoing) in exchanges.into_iter().zip(outgoings) {
            answers.push(self.receive(exchange, &outgoing.method)?);
        }
        Ok(answers)
    }

    /// Releases `copies` together, each over its transport and a connection of its own, all
    /// with one JSON-RPC id (copies of one request; a lead has an id of its own), the second
    /// wave once the lead's answer is in; returns each answer with its wave, in wave order
    /// and results first within a wave, and the release spread in microseconds. Every
    /// exchange is recorded in that order.
    pub(crate) async fn send_race(
        &mut self,
        copies: &[(TransportKind, Outgoing, Wave)],
    ) -> Result<RaceSent, Stop> {
        let id = self.next_id;
        let lead_id = id + 1;
        self.next_id += 2;
        for (_, outgoing, _) in copies {
            learn_request(&self.shared.redactor, outgoing);
        }
        let entries: Vec<RaceEntry<'_>> = copies
            .iter()
            .map(|(transport, outgoing, wave)| RaceEntry {
                transport: *transport,
                id: if *wave == Wave::Lead { lead_id } else { id },
                outgoing,
                wave: *wave,
            })
            .collect();
        let waves: Vec<Wave> = copies.iter().map(|(_, _, wave)| *wave).collect();
        let outcome = self.session.race(&entries).await;
        let spread = outcome.release_spread_us(&waves);
        // The first wave's connections, by which the reference server names its arrivals.
        let first_wave: Vec<std::net::SocketAddr> = outcome
            .local_addrs
            .iter()
            .zip(&waves)
            .filter(|(_, wave)| **wave != Wave::AfterLead)
            .filter_map(|(local, _)| *local)
            .collect();
        let mut exchanges: Vec<(Wave, Exchange)> =
            waves.into_iter().zip(outcome.exchanges).collect();
        // Results first, then errors, then what got no answer: a record that does not
        // depend on which copy won.
        exchanges.sort_by_key(|(wave, exchange)| {
            let json = exchange
                .response
                .as_ref()
                .and_then(|received| received.json.as_ref());
            let rank = match json {
                Some(json) if json.get("result").is_some() => 0,
                Some(_) => 1,
                None => 2,
            };
            (*wave, rank)
        });
        let execution_transport = self.transport;
        let mut answers = Vec::with_capacity(exchanges.len());
        for (wave, exchange) in exchanges {
            let method = copies
                .iter()
                .find(|(_, _, of)| *of == wave)
                .map(|(_, outgoing, _)| outgoing.method.clone())
                .unwrap_or_default();
            self.transport = exchange.transport;
            let answer = self.receive(exchange, &method);
            self.transport = execution_transport;
            answers.push((wave, answer?));
        }
        let arrival_spread_us = if self.shared.reference_arrivals {
            super::arrivals::arrival_spread_us(&self.shared.target.base_url, &first_wave).await
        } else {
            None
        };
        Ok(RaceSent {
            answers,
            release_spread_us: spread,
            arrival_spread_us,
        })
    }

    /// A request that could not be sent (a WebSocket that would not open): counted by the
    /// run's breaker, and the harness's error.
    fn unsent(&self, error: &TransportError) -> Stop {
        self.shared.breaker.observe(self.transport, Some(error));
        Stop::Error(error.message.clone())
    }

    /// A request over a channel the target stopped answering on is not sent: the harness's
    /// error at once, instead of another timeout waited out ([`super::Breaker::dead`]).
    fn channel_alive(&self, transport: TransportKind) -> Result<(), Stop> {
        match self.shared.breaker.dead(transport) {
            Some(reason) => Err(Stop::Error(format!(
                "not sent: the target stopped answering {reason}"
            ))),
            None => Ok(()),
        }
    }

    /// Records an exchange and reads its answer; a request left without one is an error of
    /// the harness when it could not be sent or no answer came within the timeout (nothing
    /// to judge), and a failure of the target when it closed, flooded or overflowed.
    fn receive(&mut self, mut exchange: Exchange, method: &str) -> Result<ParsedAnswer, Stop> {
        self.shared
            .breaker
            .observe(exchange.transport, exchange.failure.as_ref());
        let answer = learn_answer(&self.shared.redactor, &mut exchange);
        if let Some(token) =
            super::session_slots::opened_session(method, &answer, &self.shared.target.field_names)
        {
            self.opened_sessions.push(token);
        }
        let failure = exchange.failure.clone();
        let recorded = self.budget.record(exchange, &self.shared.recorded_bytes);
        self.exchanges.push(recorded);
        match failure {
            None => Ok(answer),
            Some(failure) if is_harness_failure(&failure) => Err(Stop::Error(failure.message)),
            Some(failure) if failure.kind == TransportErrorKind::Timeout => Err(Stop::Error(
                format!("no answer to {method}: {}", failure.message),
            )),
            Some(failure) => {
                self.record(
                    &unanswered_clauses(self.transport),
                    format!("no answer to {method}: {}", failure.message),
                );
                Err(Stop::Failed)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use harness_protocol::wire::Received;
    use harness_protocol::wire::SentRequest;

    fn exchange(body: &str) -> Exchange {
        Exchange {
            transport: TransportKind::HttpBody,
            request: SentRequest {
                headers: vec![("Authorization".to_owned(), "Basic c2VjcmV0".to_owned())],
                id: Some(7),
                ..SentRequest::default()
            },
            response: Some(Received::from_bytes(Some(200), body.as_bytes().to_vec())),
            failure: None,
            elapsed_ms: 0.0,
        }
    }

    fn assert_redacted(redactor: &Redactor, secrets: &[&str]) {
        let text = redactor.text(&secrets.join(" "));
        assert!(
            secrets.iter().all(|secret| !text.contains(secret)),
            "{text}"
        );
    }

    #[test]
    fn request_credentials_are_learned_before_sending() {
        let redactor = Redactor::new(Vec::new());
        let mut params = serde_json::Map::new();
        params.insert("client_secret".to_owned(), json!("s3cr3t-value"));
        let outgoing = Outgoing {
            method: "public/auth".to_owned(),
            params,
            raw: None,
            authorization: Some(Authorization::Value("Bearer tok-123456".to_owned())),
        };
        learn_request(&redactor, &outgoing);
        assert_redacted(&redactor, &["s3cr3t-value", "tok-123456"]);
    }

    #[test]
    fn answer_tokens_and_sent_header_are_learned_and_the_json_moves_out() {
        let redactor = Redactor::new(Vec::new());
        let mut sent =
            exchange(r#"{"jsonrpc":"2.0","id":7,"result":{"access_token":"acc-987654"}}"#);
        let answer = learn_answer(&redactor, &mut sent);
        assert_eq!(answer.status, Some(200));
        assert_eq!(answer.request_id, Some(7));
        assert!(answer.json.is_some() && answer.body.is_empty());
        assert!(
            sent.response
                .as_ref()
                .is_some_and(|received| received.json.is_none())
        );
        assert_redacted(&redactor, &["acc-987654", "c2VjcmV0"]);
    }

    #[test]
    fn a_text_answer_keeps_its_body() {
        let redactor = Redactor::new(Vec::new());
        let answer = learn_answer(&redactor, &mut exchange("<html>busy</html>"));
        assert!(answer.json.is_none());
        assert_eq!(answer.body, "<html>busy</html>");
    }

    #[test]
    fn only_unreachable_targets_and_unbuildable_requests_are_the_harness_s_failures() {
        let failure = |kind| TransportError::new(kind, "x");
        assert!(is_harness_failure(&failure(TransportErrorKind::Connect)));
        assert!(is_harness_failure(&failure(TransportErrorKind::Request)));
        for kind in [
            TransportErrorKind::Timeout,
            TransportErrorKind::Closed,
            TransportErrorKind::TooLarge,
        ] {
            assert!(!is_harness_failure(&failure(kind)));
        }
        assert_eq!(unanswered_clauses(TransportKind::Ws)[0], "transport.ws");
        assert_eq!(
            unanswered_clauses(TransportKind::HttpQuery)[0],
            "http.status.success"
        );
    }
}
