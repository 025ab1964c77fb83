//! Recording: the [`Recorder`] the reference server calls with every raw request and
//! answer, keeping a [`Record`] of each and following the tokens it sees issued.
//!
//! The recorder also refuses, live, the requests that break a single-request rule (see
//! [`super::check_request`]), with the error the reference server uses for that kind of
//! defect, so the client sees realistic behaviour; and, under a scenario that wants it,
//! every `refresh_token` grant, answered as the server answers an expired refresh token.

use std::sync::Mutex;

use serde_json::Value;
use tokio::sync::watch;

use super::record::{Answer, Call, Record};
use super::sessions::Sessions;
use super::{Knowledge, Tally};
use crate::serve::{Observer, RawAnswer, RawRequest};
use harness_model::check::Redactor;
use harness_protocol::jsonrpc::ErrorObject;

/// What the recorder holds, behind one lock.
#[derive(Debug, Default)]
struct Book {
    records: Vec<Record>,
    dropped: usize,
    events: u64,
    knowledge: Option<Knowledge>,
    sessions: Sessions,
}

/// Records every request and answer; refuses requests that break a single-request rule.
#[derive(Debug)]
pub struct Recorder {
    book: Mutex<Book>,
    max_records: usize,
    answered: watch::Sender<usize>,
    redactor: Redactor,
    /// Refuse every `refresh_token` grant ([`super::Scenario::refuses_refresh`]).
    refuse_refresh: bool,
}

impl Recorder {
    /// A recorder that keeps at most `max_records` requests.
    pub fn new(max_records: usize) -> Recorder {
        Recorder {
            book: Mutex::new(Book::default()),
            max_records,
            answered: watch::Sender::new(0),
            redactor: Redactor::default(),
            refuse_refresh: false,
        }
    }

    /// The same recorder, refusing every `refresh_token` grant as an expired refresh token
    /// when `refuse` is set.
    pub(crate) fn refusing_refresh(self, refuse: bool) -> Recorder {
        Recorder {
            refuse_refresh: refuse,
            ..self
        }
    }

    /// Tells the recorder the accounts and limits it judges against.
    pub(crate) fn set_knowledge(&self, knowledge: Knowledge, secrets: Vec<String>) {
        for secret in secrets {
            self.redactor.add(secret);
        }
        self.lock().knowledge = Some(knowledge);
    }

    /// Every record so far, in arrival order.
    pub fn records(&self) -> Vec<Record> {
        self.lock().records.clone()
    }

    /// Requests answered but not kept because the cap was reached.
    pub fn dropped(&self) -> usize {
        self.lock().dropped
    }

    /// Knows every secret and every token, signature and credential seen.
    pub fn redactor(&self) -> Redactor {
        self.redactor.clone()
    }

    /// Resolves once at least `count` requests have been answered.
    pub async fn wait_for_answers(&self, count: usize) {
        let mut receiver = self.answered.subscribe();
        // The sender lives as long as the recorder, so this only ends when it is reached.
        let _ = receiver.wait_for(|answered| *answered >= count).await;
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Book> {
        self.book
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    fn learn_secrets(&self, record: &Record, call: &Call) {
        self.redactor.learn(&Value::Object(call.params.clone()));
        if let Some(envelope) = &call.envelope {
            self.redactor.learn(envelope);
        }
        if let Some((_, credential)) = record
            .header("authorization")
            .and_then(|value| value.trim().split_once(' '))
        {
            self.redactor.add(credential.trim());
        }
    }
}

impl Observer for Recorder {
    fn request(&self, raw: &RawRequest) -> Option<ErrorObject> {
        let mut book = self.lock();
        book.events += 1;
        let record = Record::from_raw(raw, book.events);
        let call = record.call();
        self.learn_secrets(&record, &call);
        let refusal = book.knowledge.as_ref().and_then(|knowledge| {
            let mut tally = Tally::default();
            super::check_request(&record, &call, knowledge, &book.sessions, &mut tally);
            refusal(&tally)
        });
        let refusal = refusal.or_else(|| {
            (self.refuse_refresh
                && call.is(harness_protocol::spec::AUTH_METHOD)
                && call.text("grant_type").as_deref() == Some("refresh_token"))
            .then(|| ErrorObject::unauthorized("invalid or expired refresh token"))
        });
        if book.records.len() < self.max_records {
            book.records.push(record);
        } else {
            book.dropped += 1;
        }
        refusal
    }

    fn answer(&self, raw: &RawAnswer) {
        self.redactor.learn(&raw.body);
        let mut book = self.lock();
        book.events += 1;
        let event = book.events;
        // Answers come back close to the end of the list, so searching from the back is
        // short even for a long session.
        let position = book
            .records
            .iter()
            .rposition(|record| record.seq == raw.seq);
        if let Some(position) = position {
            book.records[position].answer = Some(Answer {
                at_ms: raw.at_ms,
                event,
                status: raw.status,
                body: raw.body.clone(),
                refused: raw.body.pointer("/error/data/judge") == Some(&Value::Bool(true)),
            });
            let record = book.records[position].clone();
            book.sessions.learn(&record, &record.call());
        }
        drop(book);
        self.answered.send_modify(|answered| *answered += 1);
    }
}

/// The error a refused request is answered with: the code the reference server uses for
/// that kind of defect, with the clause and the finding as the reason.
///
/// A request sent with another HTTP method than GET is not refused here: the reference
/// server answers it as it answers any such request (404, method not found).
fn refusal(tally: &Tally) -> Option<ErrorObject> {
    let (clause, message) = tally
        .failures()
        .find(|(clause, _)| *clause != "client.http.method")?;
    let reason = format!("{message} ({clause})");
    let mut error = match Defect::of(clause) {
        Defect::Credentials => ErrorObject::invalid_credentials(&reason),
        Defect::Envelope => ErrorObject::invalid_request(&reason),
        Defect::Param(param) => ErrorObject::invalid_params(param, &reason),
    };
    if let Some(Value::Object(data)) = error.data.as_mut() {
        data.insert("judge".to_owned(), Value::Bool(true));
    }
    Some(error)
}

/// The kind of defect a single-request clause names, which decides the error a live
/// refusal answers with.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Defect {
    /// A signature that does not hold: wrong credentials.
    Credentials,
    /// A malformed envelope: an invalid request.
    Envelope,
    /// A parameter missing, misplaced or out of bounds: invalid params, naming it.
    Param(&'static str),
}

/// Each clause a single-request check (`super::check_request`) can fail, by its whole id,
/// with its kind of defect; a clause not listed is refused as a bad `params`.
const DEFECTS: &[(&str, Defect)] = &[
    ("client.sig.fresh", Defect::Credentials),
    ("client.sig.framing", Defect::Credentials),
    ("client.sig.hex_lower", Defect::Credentials),
    ("client.signed.well_formed", Defect::Credentials),
    ("client.signed.fresh", Defect::Credentials),
    ("client.signed.request_data", Defect::Credentials),
    ("client.sig.nonce_unique", Defect::Credentials),
    ("client.signed.nonce_unique", Defect::Credentials),
    ("client.env.jsonrpc", Defect::Envelope),
    ("client.env.id", Defect::Envelope),
    ("client.env.method", Defect::Envelope),
    ("client.env.params", Defect::Param("params")),
    ("client.params.required", Defect::Param("params")),
    ("client.count.bounds", Defect::Param("count")),
    (
        "auth.client_signature.secret_not_sent",
        Defect::Param("client_secret"),
    ),
    ("client.token.http_header", Defect::Param("access_token")),
    ("client.token.ws_param", Defect::Param("access_token")),
    ("client.token.kind", Defect::Credentials),
    ("client.token.live", Defect::Credentials),
    ("client.token.scope", Defect::Credentials),
    ("client.token.bearer_case", Defect::Credentials),
    ("client.basic.well_formed", Defect::Credentials),
    ("client.private.credentials", Defect::Credentials),
    ("client.direct.key_header", Defect::Credentials),
    ("client.http.path", Defect::Envelope),
    ("client.direct.address", Defect::Envelope),
    ("client.logout.ws_only", Defect::Envelope),
];

impl Defect {
    fn of(clause: &str) -> Defect {
        DEFECTS
            .iter()
            .find(|(id, _)| *id == clause)
            .map_or(Defect::Param("params"), |(_, defect)| *defect)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use harness_protocol::wire::TransportKind;

    fn refused(clause: &str) -> ErrorObject {
        let mut tally = Tally::default();
        tally.fail(clause, TransportKind::HttpQuery, Some(1), "broken");
        refusal(&tally).unwrap()
    }

    fn raw_request(seq: u64, headers: &[(&str, &str)], body: &str) -> RawRequest {
        RawRequest {
            seq,
            wire: crate::serve::Wire::Http,
            connection: "127.0.0.1:1".to_owned(),
            at_ms: 0,
            method: "GET".to_owned(),
            uri: "/api/v2/public/auth".to_owned(),
            headers: headers
                .iter()
                .map(|(name, value)| ((*name).to_owned(), (*value).to_owned()))
                .collect(),
            body: body.to_owned().into(),
        }
    }

    fn raw_answer(seq: u64, body: Value) -> RawAnswer {
        RawAnswer {
            seq,
            at_ms: 0,
            status: Some(200),
            body,
        }
    }

    #[test]
    fn requests_past_the_cap_are_counted_not_kept() {
        let recorder = Recorder::new(1);
        for seq in 1..=3 {
            assert!(recorder.request(&raw_request(seq, &[], "")).is_none());
        }
        assert_eq!(recorder.records().len(), 1);
        assert_eq!(recorder.dropped(), 2);
    }

    #[test]
    fn an_answer_comes_after_its_request_and_says_whether_the_judge_refused_it() {
        let recorder = Recorder::new(10);
        recorder.request(&raw_request(1, &[], ""));
        recorder.request(&raw_request(2, &[], ""));
        recorder.answer(&raw_answer(1, serde_json::json!({"result": "ok"})));
        recorder.answer(&raw_answer(
            2,
            serde_json::json!({"error": {"code": 1, "data": {"judge": true}}}),
        ));
        let records = recorder.records();
        let events: Vec<(u64, u64, bool)> = records
            .iter()
            .map(|record| {
                let answer = record.answer.as_ref().expect("answered");
                (record.event, answer.event, answer.refused)
            })
            .collect();
        assert_eq!(events, [(1, 3, false), (2, 4, true)]);
    }

    #[test]
    fn the_credentials_a_request_carries_are_redacted() {
        let recorder = Recorder::new(10);
        let body = r#"{"jsonrpc":"2.0","id":1,"method":"public/auth","params":{"grant_type":"client_credentials","client_id":"c","client_secret":"sekrit-value-1"}}"#;
        recorder.request(&raw_request(
            1,
            &[("authorization", "Basic YmFzaWMtY3JlZGVudGlhbA")],
            body,
        ));
        let shown = recorder
            .redactor()
            .text("sekrit-value-1 and YmFzaWMtY3JlZGVudGlhbA");
        assert!(
            !shown.contains("sekrit-value-1") && !shown.contains("YmFzaWMtY3JlZGVudGlhbA"),
            "{shown}"
        );
    }

    #[test]
    fn each_kind_of_defect_is_refused_with_its_error() {
        let credentials = ErrorObject::invalid_credentials("x").code;
        let request = ErrorObject::invalid_request("x").code;
        let params = ErrorObject::invalid_params("p", "x").code;
        assert_eq!(refused("client.sig.framing").code, credentials);
        assert_eq!(refused("client.signed.fresh").code, credentials);
        assert_eq!(refused("client.env.id").code, request);
        let param = |clause: &str| {
            let error = refused(clause);
            assert_eq!(error.code, params, "{clause}");
            error.data.unwrap()["param"].clone()
        };
        assert_eq!(param("client.env.params"), "params");
        assert_eq!(param("client.count.bounds"), "count");
        assert_eq!(param("client.token.ws_param"), "access_token");
        assert_eq!(
            param("auth.client_signature.secret_not_sent"),
            "client_secret"
        );
        assert_eq!(param("client.params.required"), "params");
    }

    /// A clause added to a family of single-request checks gets its row, so its refusal is
    /// not the catch-all by accident.
    #[test]
    fn every_signature_envelope_and_token_clause_has_its_defect() {
        let corpus = harness_model::corpus::Corpus::embedded().unwrap();
        let families = [
            "client.sig.",
            "client.signed.",
            "client.env.",
            "client.token.",
        ];
        for id in corpus.catalog.ids() {
            if families.iter().any(|family| id.starts_with(family)) {
                assert!(DEFECTS.iter().any(|(listed, _)| *listed == id), "{id}");
            }
        }
    }

    #[test]
    fn a_request_sent_with_another_http_method_is_not_refused_here() {
        let mut tally = Tally::default();
        tally.fail(
            "client.http.method",
            TransportKind::HttpQuery,
            Some(1),
            "POST",
        );
        assert!(refusal(&tally).is_none());
    }
}
