//! How a raw request is classified: the transport it came over.

use axum::body::Bytes;

use super::*;

fn raw(wire: Wire, uri: &str, body: &str) -> RawRequest {
    RawRequest {
        seq: 1,
        wire,
        connection: "127.0.0.1:1".to_owned(),
        at_ms: 0,
        method: "GET".to_owned(),
        uri: uri.to_owned(),
        headers: Vec::new(),
        body: Bytes::from(body.to_owned()),
    }
}

#[test]
fn a_request_is_classified_by_its_wire_path_and_body() {
    let transport = |wire, uri, body| Record::from_raw(&raw(wire, uri, body), 1).transport;
    assert_eq!(
        transport(Wire::Http, "/direct/api/v2/private/lock_portfolio", ""),
        TransportKind::Rest
    );
    assert_eq!(
        transport(Wire::Http, "/direct/api/v2/private/lock_portfolio", "{}"),
        TransportKind::Rest
    );
    assert_eq!(
        transport(Wire::Http, "/api/v2/public/get_currencies", "{}"),
        TransportKind::HttpBody
    );
    assert_eq!(
        transport(Wire::Http, "/api/v2/public/get_currencies?x=/direct/", ""),
        TransportKind::HttpQuery
    );
    assert_eq!(transport(Wire::Ws, "/direct/ws", "{}"), TransportKind::Ws);
}

#[test]
fn a_body_that_is_not_json_keeps_the_method_of_its_path_and_says_why() {
    let record = Record::from_raw(
        &raw(Wire::Http, "/api/v2/public/get_currencies", "{not json"),
        1,
    );
    let call = record.call();
    assert_eq!(call.method.as_deref(), Some("public/get_currencies"));
    assert!(call.unparsable.is_some(), "{call:?}");
    assert!(
        call.envelope.is_none() && call.params.is_empty(),
        "{call:?}"
    );
}

#[test]
fn a_parameter_reads_as_text_whether_it_travelled_as_a_string_or_a_number() {
    let body = r#"{"jsonrpc":"2.0","id":1,"method":"private/toggle_subaccount_login","params":{"sid":7,"state":"enable","x":true}}"#;
    let call = Record::from_raw(&raw(Wire::Ws, "/ws/api/v2", body), 1).call();
    assert_eq!(call.text("sid").as_deref(), Some("7"));
    assert_eq!(call.text("state").as_deref(), Some("enable"));
    assert_eq!(call.text("x"), None);
}
