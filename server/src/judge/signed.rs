//! The signed `Authorization` header of SPEC.md 5.6: `<scheme> id=..,ts=..,nonce=..,sig=..`
//! over `timestamp LF nonce LF METHOD LF URI-with-query LF body LF`.
//!
//! The judge verifies against the request exactly as it arrived: the URI with its query as
//! received and the raw body bytes. When the signature does not verify, the framings
//! clients are known to get wrong are tried in turn and the matching one is named.

use super::record::Record;
use super::signature::{Diagnosis, Mistake, diagnose, freshness, key_mistakes};
use super::{Knowledge, Tally};
use harness_protocol::auth::sign::SignedHeader;
use harness_protocol::wire::TransportKind;

/// The signed header of an `Authorization` value: parsed under `scheme` when the judge
/// holds clients to one, else under whatever name the value starts with (any but `Bearer`
/// and `Basic`). `None` when the value is not a well-formed signed header.
pub(crate) fn parse_signed(value: &str, scheme: Option<&str>) -> Option<SignedHeader> {
    let value = value.trim();
    let name = value.split(' ').next().unwrap_or_default();
    if name.eq_ignore_ascii_case("bearer") || name.eq_ignore_ascii_case("basic") {
        return None;
    }
    SignedHeader::parse(value, scheme.unwrap_or(name)).ok()
}

/// Checks the signed header of an HTTP request, if it has one.
pub(crate) fn check_signed_header(record: &Record, knowledge: &Knowledge, tally: &mut Tally) {
    if !matches!(
        record.transport,
        TransportKind::HttpQuery | TransportKind::HttpBody
    ) {
        return;
    }
    let Some(header) = well_formed(record, knowledge, tally) else {
        return;
    };
    let (transport, seq) = (record.transport, Some(record.seq));
    let known = knowledge.secrets.get(&header.client_id);
    let clause = "client.signed.well_formed";
    if known.is_none() && knowledge.all_accounts {
        // The judge serves every account there is, so an id naming none of them is no
        // `id=<client_id>`; behind the proxy the server may have accounts the target file
        // does not describe, and the signature only goes unchecked (below).
        tally.fail(
            clause,
            transport,
            seq,
            format!(
                "id=\"{}\" names no client id of the server's accounts; the header carries id=<client_id>",
                header.client_id
            ),
        );
    } else {
        tally.pass(clause, transport);
    }
    match freshness(header.timestamp, record.at_ms) {
        Ok(()) => tally.pass("client.signed.fresh", transport),
        Err(error) => tally.fail("client.signed.fresh", transport, seq, error.to_string()),
    }
    match known {
        Some(secret) => check_request_data(record, &header, secret, tally),
        None if !knowledge.all_accounts => tally.note(
            "client.signed.request_data",
            transport,
            format!(
                "client id \"{}\" is unknown; its signature cannot be checked",
                header.client_id
            ),
        ),
        None => {}
    }
}

/// The request's signed header, when its `Authorization` value is one: a scheme other
/// than the one the judge holds clients to, or a header that does not parse, fails
/// `client.signed.well_formed`; a bearer or basic value, or another scheme altogether
/// (no `sig=`), is no signed header and `None`.
fn well_formed(record: &Record, knowledge: &Knowledge, tally: &mut Tally) -> Option<SignedHeader> {
    let (transport, seq) = (record.transport, Some(record.seq));
    let value = record.header("authorization")?.trim();
    let scheme = value.split(' ').next().unwrap_or_default();
    if scheme.eq_ignore_ascii_case("bearer") || scheme.eq_ignore_ascii_case("basic") {
        return None;
    }
    let clause = "client.signed.well_formed";
    if let Some(expected) = knowledge.signature_scheme.as_deref()
        && !scheme.eq_ignore_ascii_case(expected)
    {
        if value.contains("sig=") {
            tally.fail(
                clause,
                transport,
                seq,
                format!(
                    "the signed header uses scheme \"{scheme}\"; the judge was told the target's is \"{expected}\" (--signature-scheme)"
                ),
            );
        }
        return None;
    }
    let header = match SignedHeader::parse(value, scheme) {
        Ok(header) => header,
        // Some other scheme altogether: not a signed header, nothing here to judge.
        Err(_) if !value.contains("sig=") => return None,
        Err(error) => {
            tally.fail(clause, transport, seq, error.to_string());
            return None;
        }
    };
    if knowledge.signature_scheme.is_none() {
        tally.note(
            clause,
            transport,
            format!(
                "scheme name \"{scheme}\" seen; SPEC.md 5.6 leaves the name to the deployment, so any is accepted (--signature-scheme holds clients to one)"
            ),
        );
    }
    Some(header)
}

/// Verifies the signature over the request data as the request arrived, naming the
/// framing mistake that explains it when it does not verify.
fn check_request_data(record: &Record, header: &SignedHeader, secret: &str, tally: &mut Tally) {
    let (transport, seq) = (record.transport, Some(record.seq));
    let (right, mut mistakes) = request_data_framings(record, header, secret);
    mistakes.extend(key_mistakes(secret, &right));
    let clause = "client.signed.request_data";
    match diagnose(secret, &right, &header.signature, &mistakes) {
        Diagnosis::Valid => tally.pass(clause, transport),
        Diagnosis::Uppercase => tally.fail(clause, transport, seq, "the signature is upper-case hex; it must be lowercase"),
        Diagnosis::Base64 => tally.fail(clause, transport, seq, "the signature is base64; it must be lowercase hex"),
        Diagnosis::Mistake(_, what) => tally.fail(clause, transport, seq, format!("signature does not verify: {what}")),
        Diagnosis::Unknown => tally.fail(
            clause,
            transport,
            seq,
            format!("signature does not verify with the secret of {} under any known framing (a wrong secret?)", header.client_id),
        ),
    }
}

/// The request data SPEC.md 5.6 signs for this request, and the framings clients are
/// known to get wrong instead.
fn request_data_framings(
    record: &Record,
    header: &SignedHeader,
    secret: &str,
) -> (Vec<u8>, Vec<Mistake>) {
    let (ts, nonce) = (header.timestamp, header.nonce.as_str());
    let method = record.http_method.to_ascii_uppercase();
    let uri = record.uri.as_str();
    let path = record.path();
    let body = record.body.as_slice();
    let framed = |method: &str, uri: &str, body: &[u8], tail: &str| {
        let mut text = format!("{ts}\n{nonce}\n{method}\n{uri}\n").into_bytes();
        text.extend_from_slice(body);
        text.extend_from_slice(tail.as_bytes());
        text
    };
    let right = framed(&method, uri, body, "\n");
    let host = record.header("host").unwrap_or("localhost");
    let mistakes = vec![
        Mistake::framing(
            secret,
            "the request data lacks the trailing lf after the body",
            framed(&method, uri, body, ""),
        ),
        Mistake::framing(
            secret,
            "the uri is signed without its query string",
            framed(&method, path, body, "\n"),
        ),
        Mistake::framing(
            secret,
            "the full url is signed instead of the request uri",
            framed(&method, &format!("http://{host}{uri}"), body, "\n"),
        ),
        Mistake::framing(
            secret,
            "the http method is signed in lower case",
            framed(&method.to_ascii_lowercase(), uri, body, "\n"),
        ),
        Mistake::framing(
            secret,
            "the body is left out of the request data",
            framed(&method, uri, b"", "\n"),
        ),
        Mistake::framing(secret, "the fields are separated by crlf, not lf", {
            let mut text = format!("{ts}\r\n{nonce}\r\n{method}\r\n{uri}\r\n").into_bytes();
            text.extend_from_slice(body);
            text.extend_from_slice(b"\r\n");
            text
        }),
        Mistake::framing(
            secret,
            "the client_signature framing (timestamp lf nonce lf data) is used",
            format!("{ts}\n{nonce}\n"),
        ),
        Mistake::framing(secret, "the timestamp is signed in seconds", {
            let mut text = format!("{}\n{nonce}\n{method}\n{uri}\n", ts / 1000).into_bytes();
            text.extend_from_slice(body);
            text.push(b'\n');
            text
        }),
    ];
    (right, mistakes)
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use super::*;
    use crate::judge::tally::assert_only_finding;
    use harness_model::target_file::RateLimits;
    use harness_protocol::auth::sign;

    const NOW: u64 = 1_750_000_000_000;

    fn knowledge(scheme: Option<&str>) -> Knowledge {
        Knowledge {
            secrets: BTreeMap::from([("c".to_owned(), "s3cret-value".to_owned())]),
            signature_scheme: scheme.map(str::to_owned),
            limits: RateLimits::default(),
            ..Knowledge::default()
        }
    }

    fn signed(uri: &str, header: String) -> Vec<String> {
        judged(uri, header, Some("deri-hmac-sha256")).describe()
    }

    fn judged(uri: &str, header: String, scheme: Option<&str>) -> Tally {
        let record = Record {
            at_ms: NOW,
            uri: uri.to_owned(),
            headers: vec![("authorization".to_owned(), header)],
            ..Record::sample(1, TransportKind::HttpQuery)
        };
        let mut tally = Tally::default();
        check_signed_header(&record, &knowledge(scheme), &mut tally);
        tally
    }

    /// The signature with the secret of `knowledge` and nonce `n1` of a `GET` of `uri`.
    fn signature(timestamp: u64, uri: &str) -> String {
        sign::http_signature(
            "s3cret-value",
            &sign::HttpSignedFields::get(timestamp, "n1", uri),
        )
        .unwrap()
    }

    fn header(sig: &str) -> String {
        format!("deri-hmac-sha256 id=c,ts={NOW},sig={sig},nonce=n1")
    }

    #[test]
    fn a_correct_signature_in_any_pair_order_passes() {
        let uri = "/api/v2/private/get_mmp_status?index_name=btc_usd";
        let sig = signature(NOW, uri);
        assert_eq!(signed(uri, header(&sig)), Vec::<String>::new());
    }

    #[test]
    fn any_scheme_name_is_verified_and_noted_unless_one_was_given() {
        let uri = "/api/v2/private/get_mmp_status";
        let sig = signature(NOW, uri);
        let header = format!("svc-hmac-sha256 id=c,ts={NOW},nonce=n1,sig={sig}");
        let tally = judged(uri, header.clone(), None);
        assert_eq!(tally.describe(), Vec::<String>::new());
        assert!(
            tally.describe_notes()[0].contains("scheme name \"svc-hmac-sha256\" seen"),
            "{:?}",
            tally.describe_notes()
        );
        assert_eq!(
            tally
                .get("client.signed.request_data", TransportKind::HttpQuery)
                .and_then(|cell| cell.verdict()),
            Some(harness_model::check::Verdict::Pass)
        );
        assert_only_finding(
            &signed(uri, header),
            None,
            &["client.signed.well_formed", "\"deri-hmac-sha256\""],
        );
    }

    #[test]
    fn a_signature_over_the_path_alone_is_diagnosed() {
        let uri = "/api/v2/private/get_mmp_status?index_name=btc_usd";
        let sig = signature(NOW, "/api/v2/private/get_mmp_status");
        assert_only_finding(
            &signed(uri, header(&sig)),
            None,
            &["without its query string"],
        );
    }

    #[test]
    fn an_id_naming_no_account_fails_where_every_account_is_known_and_is_noted_elsewhere() {
        let uri = "/api/v2/private/get_mmp_status";
        let header = format!(
            "deri-hmac-sha256 id=nobody,ts={NOW},nonce=n1,sig={}",
            signature(NOW, uri)
        );
        let record = Record {
            at_ms: NOW,
            uri: uri.to_owned(),
            headers: vec![("authorization".to_owned(), header)],
            ..Record::sample(1, TransportKind::HttpQuery)
        };
        let mut judge = knowledge(Some("deri-hmac-sha256"));
        judge.all_accounts = true;
        let mut tally = Tally::default();
        check_signed_header(&record, &judge, &mut tally);
        assert_only_finding(
            &tally.describe(),
            Some(harness_model::check::Verdict::Fail),
            &[
                "client.signed.well_formed",
                "id=\"nobody\" names no client id",
            ],
        );
        // The failure says it all: no note that the signature went unchecked.
        assert_eq!(tally.describe_notes(), Vec::<String>::new());
        let mut tally = Tally::default();
        check_signed_header(&record, &knowledge(Some("deri-hmac-sha256")), &mut tally);
        assert_eq!(tally.describe(), Vec::<String>::new());
        assert!(tally.describe_notes()[0].contains("\"nobody\" is unknown"));
    }

    #[test]
    fn a_header_without_nonce_is_not_well_formed() {
        let findings = signed(
            "/api/v2/private/x",
            format!("deri-hmac-sha256 id=c,ts={NOW},sig=ab"),
        );
        assert!(
            findings[0].contains("client.signed.well_formed"),
            "{findings:?}"
        );
    }

    #[test]
    fn a_stale_timestamp_is_stale() {
        let uri = "/api/v2/private/x";
        let ts = NOW - 61_000;
        let sig = signature(ts, uri);
        let findings = signed(
            uri,
            format!("deri-hmac-sha256 id=c,ts={ts},sig={sig},nonce=n1"),
        );
        assert!(
            findings[0].contains("client.signed.fresh") && findings[0].contains("61 s old"),
            "{findings:?}"
        );
    }

    #[test]
    fn bearer_basic_and_other_schemes_without_a_signature_are_not_judged() {
        for header in [
            "Bearer tok-sig=",
            "Basic Yzpzc2ln",
            "basic abcsig=",
            "Digest username=c",
        ] {
            for scheme in [None, Some("deri-hmac-sha256")] {
                let tally = judged("/api/v2/private/get_mmp_status", header.to_owned(), scheme);
                assert_eq!(
                    tally.describe(),
                    Vec::<String>::new(),
                    "{header} {scheme:?}"
                );
                assert_eq!(tally.iter().count(), 0, "{header} {scheme:?}");
            }
        }
        assert!(parse_signed("Bearer id=c,ts=1,nonce=n,sig=ab", None).is_none());
        assert!(parse_signed("basic id=c,ts=1,nonce=n,sig=ab", None).is_none());
        assert!(parse_signed("any-name id=c,ts=1,nonce=n,sig=ab", None).is_some());
    }
}
