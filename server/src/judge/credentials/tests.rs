//! How credentials are written: Basic exactly, `Bearer` spelt as SPEC.md writes it, a
//! requested scope space-separated from listed values.

use std::collections::BTreeMap;

use base64::Engine as _;
use harness_protocol::wire::TransportKind;

use super::*;
use crate::judge::tally::assert_only_finding;
use harness_model::check::Verdict;

fn knowledge() -> Knowledge {
    Knowledge {
        secrets: BTreeMap::from([("c".to_owned(), "s3cret".to_owned())]),
        all_accounts: true,
        ..Knowledge::default()
    }
}

fn judged(uri: &str, authorization: Option<String>) -> Vec<String> {
    let record = Record {
        uri: uri.to_owned(),
        headers: authorization
            .map(|value| vec![("authorization".to_owned(), value)])
            .unwrap_or_default(),
        ..Record::sample(1, TransportKind::HttpQuery)
    };
    let mut tally = Tally::default();
    check_credentials(&record, &record.call(), &knowledge(), &mut tally);
    tally.describe()
}

fn basic(credential: &str) -> Option<String> {
    Some(format!(
        "Basic {}",
        base64::engine::general_purpose::STANDARD.encode(credential)
    ))
}

const PRIVATE: &str = "/api/v2/private/get_mmp_status";

#[test]
fn a_basic_credential_with_a_trailing_newline_or_a_wrong_secret_fails() {
    assert_eq!(judged(PRIVATE, basic("c:s3cret")), Vec::<String>::new());
    assert_only_finding(
        &judged(PRIVATE, basic("c:s3cret\n")),
        Some(Verdict::Fail),
        &[
            "client.basic.well_formed",
            "whitespace",
            "7 bytes instead of 6",
        ],
    );
    assert_only_finding(
        &judged(PRIVATE, basic("c:other")),
        Some(Verdict::Fail),
        &["wrong secret for c"],
    );
    assert_only_finding(
        &judged(PRIVATE, basic("s3cret:c")),
        Some(Verdict::Fail),
        &["the two swapped"],
    );
    assert_only_finding(
        &judged(PRIVATE, basic("nobody:s3cret")),
        Some(Verdict::Fail),
        &["client id `nobody`, which no account has"],
    );
    assert_only_finding(
        &judged(PRIVATE, Some("Basic not-base64!".to_owned())),
        Some(Verdict::Fail),
        &["not base64"],
    );
}

#[test]
fn a_bearer_scheme_in_another_case_warns() {
    assert_eq!(
        judged(PRIVATE, Some("Bearer t".to_owned())),
        Vec::<String>::new()
    );
    assert_only_finding(
        &judged(PRIVATE, Some("bearer t".to_owned())),
        Some(Verdict::Warn),
        &["client.token.bearer_case", "`bearer`"],
    );
}

#[test]
fn a_scope_joined_by_commas_or_of_unlisted_words_fails() {
    let auth =
        "/api/v2/public/auth?grant_type=client_credentials&client_id=c&client_secret=s3cret&scope=";
    assert_eq!(
        judged(
            &format!("{auth}session%3Abot+account%3Aread+expires%3A60"),
            None
        ),
        Vec::<String>::new()
    );
    assert_only_finding(
        &judged(&format!("{auth}session%3Abot%2Caccount%3Aread"), None),
        Some(Verdict::Fail),
        &["client.scope.grammar", "joins values with commas"],
    );
    assert_only_finding(
        &judged(&format!("{auth}trade%3Aread%2Cwallet%3Aread"), None),
        Some(Verdict::Fail),
        &["commas"],
    );
    assert_only_finding(
        &judged(&format!("{auth}account%3Awrite"), None),
        Some(Verdict::Fail),
        &["account:write", "not a value SPEC.md 5.4 lists"],
    );
    assert_only_finding(
        &judged(&format!("{auth}account%3Aread%09trade%3Aread"), None),
        Some(Verdict::Fail),
        &["client.scope.grammar", "'\\t'"],
    );
    // A session name may hold a comma when what follows is no scope value.
    assert_eq!(
        judged(&format!("{auth}session%3Aa%2Cb"), None),
        Vec::<String>::new()
    );
}

#[test]
fn a_client_id_with_whitespace_is_named_and_an_unknown_one_only_noted_where_accounts_may_be_missing()
 {
    assert_only_finding(
        &judged(PRIVATE, basic(" c:s3cret")),
        Some(Verdict::Fail),
        &["the Basic credential's client id carries whitespace (` c`)"],
    );
    // In front of a server whose target file may not describe every account (the proxy),
    // a client id the judge does not know is noted, not failed.
    let record = Record {
        uri: PRIVATE.to_owned(),
        headers: vec![("authorization".to_owned(), basic("nobody:s3cret").unwrap())],
        ..Record::sample(1, TransportKind::HttpQuery)
    };
    let mut tally = Tally::default();
    let partial = Knowledge {
        all_accounts: false,
        ..knowledge()
    };
    check_credentials(&record, &record.call(), &partial, &mut tally);
    assert_eq!(tally.describe(), Vec::<String>::new());
    assert!(
        tally
            .describe_notes()
            .iter()
            .any(|note| note.contains("a client id the judge does not know (nobody)")),
        "{:?}",
        tally.describe_notes()
    );
}
