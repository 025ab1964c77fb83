//! Unit tests of the signers: published vectors, strings to sign, the signed `Authorization` header, and their properties.

use proptest::prelude::*;

use super::*;

/// The published vector for the HTTP signed scheme.
#[test]
fn http_signature_matches_published_vector() {
    let signature = http_signature(
        "AMANDASECRECT",
        &HttpSignedFields::get(
            1_576_074_319_000,
            "1iqt2wls",
            "/api/v2/private/get_account_summary?currency=BTC",
        ),
    )
    .unwrap();
    assert_eq!(
        signature,
        "9bfbc51a2bc372d72cc396cf1a213dc78d42eb74cb7dc272351833ad0de276ab"
    );
}

#[test]
fn client_string_to_sign_ends_with_line_feed_when_data_is_empty() {
    assert_eq!(client_string_to_sign(1, "abc", "").unwrap(), "1\nabc\n");
}

#[test]
fn client_signature_known_answer() {
    // Computed independently: printf '1576074319000\n1iqt2wls\n' | openssl dgst -sha256 -hmac AMANDASECRECT
    let signature = client_signature("AMANDASECRECT", 1_576_074_319_000, "1iqt2wls", "").unwrap();
    assert_eq!(
        signature,
        hmac_hex(b"AMANDASECRECT", b"1576074319000\n1iqt2wls\n")
    );
    assert_eq!(signature.len(), 64);
}

#[test]
fn request_data_uppercases_method_and_ends_with_line_feed() {
    assert_eq!(
        request_data("get", "/a?b=1", b"{}").unwrap(),
        b"GET\n/a?b=1\n{}\n"
    );
}

#[test]
fn the_lowercase_method_signature_differs_only_in_the_method() {
    let fields = HttpSignedFields::get(1_700_000_000_000, "n", "/a?b=1");
    let lower = http_signature_lowercase_method("k", &fields).unwrap();
    assert_ne!(lower, http_signature("k", &fields).unwrap());
    assert_eq!(lower, hmac_hex(b"k", b"1700000000000\nn\nget\n/a?b=1\n\n"));
}

#[test]
fn line_feed_in_nonce_is_refused() {
    assert_eq!(
        client_string_to_sign(1, "a\nb", "c"),
        Err(SignError::LineFeedIn("nonce"))
    );
    assert_eq!(
        http_string_to_sign(&HttpSignedFields::get(1, "a\nb", "/")),
        Err(SignError::LineFeedIn("nonce"))
    );
    assert_eq!(
        http_string_to_sign(&HttpSignedFields::get(1, "a", "/\n")),
        Err(SignError::LineFeedIn("uri"))
    );
}

#[test]
fn header_parses_pairs_in_any_order_with_spaces() {
    let header = SignedHeader::parse(
        "svc-hmac-sha256 sig=ab, nonce=n1,ts=5 , id=client",
        DEFAULT_SCHEME,
    )
    .unwrap();
    assert_eq!(header.client_id, "client");
    assert_eq!(header.timestamp, 5);
    assert_eq!(header.nonce, "n1");
    assert_eq!(header.signature, "ab");
}

#[test]
fn header_with_other_scheme_or_missing_key_is_refused() {
    assert_eq!(
        SignedHeader::parse("other id=a,ts=1,nonce=n,sig=s", DEFAULT_SCHEME),
        Err(HeaderError::WrongScheme)
    );
    assert_eq!(
        SignedHeader::parse("svc-hmac-sha256 id=a,ts=1,nonce=n", DEFAULT_SCHEME),
        Err(HeaderError::MissingKey("sig"))
    );
    assert_eq!(
        SignedHeader::parse(
            "svc-hmac-sha256 id=a,id=b,ts=1,nonce=n,sig=s",
            DEFAULT_SCHEME
        ),
        Err(HeaderError::DuplicateKey("id".to_owned()))
    );
}

#[test]
fn basic_round_trips() {
    let value = basic_header_value("client", "se:cret");
    assert_eq!(
        parse_basic(&value),
        Some(("client".to_owned(), "se:cret".to_owned()))
    );
}

fn field() -> impl Strategy<Value = String> {
    "[A-Za-z0-9._~-]{1,24}"
}

proptest! {
    #[test]
    fn signature_is_64_lowercase_hex(secret in ".{0,40}", timestamp in any::<u64>(), nonce in "[^\n]{0,30}", data in ".{0,60}") {
        let signature = client_signature(&secret, timestamp, &nonce, &data).unwrap();
        prop_assert_eq!(signature.len(), 64);
        prop_assert!(signature.bytes().all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b)));
    }

    #[test]
    fn changing_any_byte_changes_the_client_signature(
        secret in "[ -~]{1,20}", timestamp in 0u64..u64::MAX, nonce in "[ -~]{1,20}", data in "[ -~]{0,40}",
        which in 0usize..4, position in any::<prop::sample::Index>(), flip in 1u8..=127,
    ) {
        let original = client_signature(&secret, timestamp, &nonce, &data).unwrap();
        let mutate = |text: &str| -> String {
            if text.is_empty() { return "x".to_owned(); }
            let mut bytes = text.as_bytes().to_vec();
            let index = position.index(bytes.len());
            bytes[index] = (bytes[index] ^ flip) & 0x7f;
            if bytes[index] == b'\n' || bytes[index] == text.as_bytes()[index] { bytes[index] = if text.as_bytes()[index] == b'a' { b'b' } else { b'a' }; }
            String::from_utf8(bytes).unwrap()
        };
        let changed = match which {
            0 => client_signature(&mutate(&secret), timestamp, &nonce, &data),
            1 => client_signature(&secret, timestamp ^ 1, &nonce, &data),
            2 => client_signature(&secret, timestamp, &mutate(&nonce), &data),
            _ => client_signature(&secret, timestamp, &nonce, &mutate(&data)),
        }.unwrap();
        prop_assert_ne!(original, changed);
    }

    #[test]
    fn changing_any_http_input_changes_the_signature(
        timestamp in any::<u64>(), nonce in field(), uri in "/[a-z/_?=&0-9]{0,40}", body in proptest::collection::vec(any::<u8>(), 0..40),
    ) {
        let fields = HttpSignedFields { timestamp, nonce: &nonce, method: "GET", uri: &uri, body: &body };
        let original = http_signature("secret", &fields).unwrap();
        let longer_uri = format!("{uri}x");
        prop_assert_ne!(&original, &http_signature("secret", &HttpSignedFields { uri: &longer_uri, ..fields }).unwrap());
        prop_assert_ne!(&original, &http_signature("secret", &HttpSignedFields { method: "POST", ..fields }).unwrap());
        let mut longer = body.clone();
        longer.push(b'\n');
        prop_assert_ne!(&original, &http_signature("secret", &HttpSignedFields { body: &longer, ..fields }).unwrap());
        prop_assert_ne!(&original, &http_signature("secrets", &fields).unwrap());
    }

    #[test]
    fn header_build_then_parse_round_trips(client_id in field(), timestamp in any::<u64>(), nonce in field(), spaces in any::<bool>()) {
        let header = SignedHeader::sign(DEFAULT_SCHEME, &client_id, "s", &HttpSignedFields::get(timestamp, &nonce, "/x")).unwrap();
        let mut text = header.to_header_value();
        if spaces { text = text.replace(',', ", "); }
        prop_assert_eq!(SignedHeader::parse(&text, DEFAULT_SCHEME).unwrap(), header);
    }

    #[test]
    fn client_framing_is_unambiguous(timestamp in any::<u64>(), nonce in "[^\n]{0,20}", data in "(.|\n){0,40}") {
        let text = client_string_to_sign(timestamp, &nonce, &data).unwrap();
        prop_assert_eq!(parse_client_string_to_sign(&text), Some((timestamp, nonce.as_str(), data.as_str())));
    }
}

/// Strings of any characters, LF and commas included, which the fuzz properties must
/// handle whatever they hold.
fn any_text() -> impl Strategy<Value = String> {
    "(.|\n|,| |=){0,24}"
}

proptest! {
    #[test]
    fn string_to_sign_property_holds(
        timestamp in any::<u64>(), nonce in any_text(), data in any_text(), method in "(GET|get|[a-zA-Z\n]{0,6})",
        uri in any_text(), body in proptest::collection::vec(any::<u8>(), 0..40),
    ) {
        let input = SignInput { timestamp, nonce, data, method, uri, body };
        prop_assert_eq!(string_to_sign_roundtrip(&input), Ok(()));
    }

    #[test]
    fn client_signature_property_holds(
        secret in "(.){0,80}", timestamp in any::<u64>(), nonce in any_text(), data in any_text(),
        tamper_at in any::<u8>(), tamper_by in any::<u8>(),
    ) {
        let input = SignatureInput { secret, timestamp, nonce, data, tamper_at, tamper_by };
        prop_assert_eq!(client_signature_verifies(&input), Ok(()));
    }

    #[test]
    fn parsed_header_builds_back_to_itself(text in "(svc-hmac-sha256 |Bearer )?((id|ts|nonce|sig|x)=[a-z0-9 =]{0,6},? ?){0,5}") {
        prop_assert_eq!(signed_header_roundtrip(&text), Ok(()));
    }

    #[test]
    fn representable_header_parses_back(client_id in any_text(), timestamp in any::<u64>(), nonce in any_text(), signature in any_text()) {
        let header = SignedHeader { scheme: DEFAULT_SCHEME.to_owned(), client_id, timestamp, nonce, signature };
        if header_is_representable(&header) {
            prop_assert_eq!(SignedHeader::parse(&header.to_header_value(), DEFAULT_SCHEME), Ok(header));
        }
    }
}

proptest! {
    #[test]
    fn prepared_signer_equals_one_shot_signing(secret in ".{0,40}", timestamp in any::<u64>(), nonce in "[^\n]{0,30}", data in ".{0,60}") {
        let signer = Signer::new(&secret);
        prop_assert_eq!(signer.client_signature(timestamp, &nonce, &data).unwrap(), client_signature(&secret, timestamp, &nonce, &data).unwrap());
    }
}
