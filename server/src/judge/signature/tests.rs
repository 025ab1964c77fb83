//! Unit tests of the judge's signature checks: correct, wrong and replayed client signatures.

use std::collections::BTreeMap;

use super::*;
use crate::judge::nonces::NonceBook;
use harness_model::target_file::RateLimits;
use harness_protocol::wire::TransportKind;

const NOW: u64 = 1_750_000_000_000;
const SECRET: &str = "s3cret-value";

fn knowledge() -> Knowledge {
    Knowledge {
        secrets: BTreeMap::from([("c".to_owned(), SECRET.to_owned())]),
        signature_scheme: None,
        limits: RateLimits::default(),
        ..Knowledge::default()
    }
}

fn auth(seq: u64, timestamp: u64, nonce: &str, signature: &str) -> Record {
    let body = format!(
        r#"{{"jsonrpc":"2.0","id":{seq},"method":"public/auth","params":{{"grant_type":"client_signature","client_id":"c","timestamp":{timestamp},"nonce":"{nonce}","signature":"{signature}"}}}}"#
    );
    Record {
        at_ms: NOW,
        body: body.into_bytes(),
        ..Record::sample(seq, TransportKind::Ws)
    }
}

fn judged(record: &Record) -> Vec<String> {
    let mut tally = Tally::default();
    check_client_signature(record, &record.call(), &knowledge(), &mut tally);
    tally.describe()
}

#[test]
fn a_correct_signature_passes() {
    let signature = sign::client_signature(SECRET, NOW, "n1", "").unwrap();
    assert_eq!(
        judged(&auth(1, NOW, "n1", &signature)),
        Vec::<String>::new()
    );
}

#[test]
fn a_missing_trailing_lf_is_named() {
    let signature = sign::hmac_hex(SECRET.as_bytes(), format!("{NOW}\nn1").as_bytes());
    let findings = judged(&auth(1, NOW, "n1", &signature));
    assert_eq!(findings.len(), 1, "{findings:?}");
    assert!(findings[0].contains("client.sig.framing"));
    assert!(
        findings[0].contains("lacks the trailing lf"),
        "{findings:?}"
    );
}

#[test]
fn upper_case_hex_is_named() {
    let signature = sign::client_signature(SECRET, NOW, "n1", "")
        .unwrap()
        .to_ascii_uppercase();
    let findings = judged(&auth(1, NOW, "n1", &signature));
    assert!(findings[0].contains("client.sig.hex_lower") && findings[0].contains("upper-case"));
}

#[test]
fn the_secret_as_hex_key_is_named() {
    let key = hex::encode(SECRET);
    let signature = sign::hmac_hex(key.as_bytes(), format!("{NOW}\nn1\n").as_bytes());
    let findings = judged(&auth(1, NOW, "n1", &signature));
    assert!(
        findings[0].contains("hex encoding used as the key"),
        "{findings:?}"
    );
}

#[test]
fn a_wrong_secret_is_reported_without_a_framing() {
    let signature = sign::client_signature("another-secret", NOW, "n1", "").unwrap();
    let findings = judged(&auth(1, NOW, "n1", &signature));
    assert!(findings[0].contains("a wrong secret?"), "{findings:?}");
}

#[test]
fn stale_future_and_seconds_timestamps_are_told_apart() {
    assert!(
        freshness(NOW - 61_000, NOW)
            .unwrap_err()
            .to_string()
            .contains("61 s old")
    );
    assert!(
        freshness(NOW + 120_000, NOW)
            .unwrap_err()
            .to_string()
            .contains("in the future")
    );
    assert!(
        freshness(NOW / 1000, NOW)
            .unwrap_err()
            .to_string()
            .contains("in seconds")
    );
    assert!(freshness(NOW - 59_000, NOW).is_ok());
    // Seconds are told within the window too, and only within it.
    assert!(
        freshness(NOW / 1000 - 30, NOW)
            .unwrap_err()
            .to_string()
            .contains("in seconds")
    );
    assert!(
        !freshness(NOW / 1000 - 10_000_000, NOW)
            .unwrap_err()
            .to_string()
            .contains("in seconds")
    );
}

#[test]
fn a_reused_nonce_fails_and_a_timestamp_nonce_warns() {
    let mut book = NonceBook::default();
    let mut tally = Tally::default();
    for (seq, nonce) in [(1, "n1"), (2, "n1")] {
        let record = auth(seq, NOW, nonce, "ab");
        book.check(&record, &record.call(), &knowledge(), &mut tally);
    }
    let timestamp_nonce = NOW.to_string();
    let record = auth(3, NOW, &timestamp_nonce, "ab");
    book.check(&record, &record.call(), &knowledge(), &mut tally);
    let findings = tally.describe();
    assert_eq!(findings.len(), 2, "{findings:?}");
    assert!(findings[0].starts_with("fail") && findings[0].contains("already used by request #1"));
    assert!(findings[1].starts_with("warn") && findings[1].contains("millisecond timestamp"));
}

#[test]
fn without_a_nonce_either_framing_passes_and_with_one_leaving_it_out_fails() {
    let body = |signature: &str| {
        format!(
            r#"{{"jsonrpc":"2.0","id":1,"method":"public/auth","params":{{"grant_type":"client_signature","client_id":"c","timestamp":{NOW},"signature":"{signature}"}}}}"#
        )
    };
    let unsent = sign::hmac_hex(SECRET.as_bytes(), format!("{NOW}\n").as_bytes());
    let empty = sign::client_signature(SECRET, NOW, "", "").unwrap();
    for signature in [unsent.as_str(), empty.as_str()] {
        let mut record = auth(1, NOW, "n1", "x");
        record.body = body(signature).into_bytes();
        assert_eq!(judged(&record), Vec::<String>::new(), "{signature}");
    }
    let left_out = sign::hmac_hex(SECRET.as_bytes(), format!("{NOW}\n").as_bytes());
    let findings = judged(&auth(1, NOW, "n1", &left_out));
    assert!(findings[0].contains("client.sig.framing"), "{findings:?}");
}

#[test]
fn only_a_client_signature_login_presents_a_signature() {
    // Each request carries a signature's parameters: only the method and grant type tell.
    let mut login = auth(1, NOW, "n1", "ab");
    login.body = br#"{"jsonrpc":"2.0","id":1,"method":"public/auth","params":{"grant_type":"client_credentials","client_id":"c","client_secret":"x","timestamp":1,"signature":"ab"}}"#.to_vec();
    assert!(presented(&login.call()).is_none());
    login.body = br#"{"jsonrpc":"2.0","id":1,"method":"public/get_time","params":{"grant_type":"client_signature","client_id":"c","timestamp":1,"signature":"ab"}}"#.to_vec();
    assert!(presented(&login.call()).is_none());
    assert!(presented(&auth(2, NOW, "n2", "ab").call()).is_some());
}
