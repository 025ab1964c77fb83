//! The `relogin` scenario on a clock the test moves: every refresh is refused, so a client
//! logs in again with `client_signature` whenever its token expires. One that signs each
//! login afresh is clean; one that re-sends its first timestamp with a new nonce fails
//! `client.sig.fresh` once the session is a minute old, without the test waiting a minute.

use super::*;

/// A session of `rounds` logins 6 s apart on the judge's clock: each logs in with
/// `client_signature` (its timestamp the first login's when `first_timestamp_kept`), reads
/// the MMP status, and after its token expired is refused a refresh.
async fn session(target: &Target, clock: &Clock, first_timestamp_kept: bool, rounds: u64) {
    let (_, secret) = main_account(target);
    let first = clock.now_ms();
    for round in 0..rounds {
        let timestamp = if first_timestamp_kept {
            first
        } else {
            clock.now_ms()
        };
        let nonce = format!("n-relogin-{round}");
        let signature = sign::client_signature(&secret, timestamp, &nonce, "").unwrap();
        let answers = ws(
            target,
            "",
            &[client_signature_auth(
                target, round, timestamp, &nonce, signature,
            )],
        )
        .await;
        let Some(result) = answers[0].get("result") else {
            // Refused as stale: the faulty client has nothing to go on with.
            continue;
        };
        let token = result["access_token"].as_str().unwrap().to_owned();
        let refresh = result["refresh_token"].as_str().unwrap().to_owned();
        let status = get(
            target,
            "/api/v2/private/get_mmp_status",
            &[("authorization", format!("Bearer {token}"))],
            None,
        )
        .await;
        assert!(status["result"].is_array(), "{status}");
        clock.advance(6_000);
        let refreshed = get(
            target,
            &format!("/api/v2/public/auth?grant_type=refresh_token&refresh_token={refresh}"),
            &[],
            None,
        )
        .await;
        assert!(refreshed["error"].is_object(), "refused: {refreshed}");
    }
}

fn judged(first_timestamp_kept: bool) -> Tally {
    multi_thread_runtime().block_on(async {
        let clock = Clock::manual(now_ms());
        let mut config = judge::JudgeConfig::loopback();
        config.scenario = Scenario::Relogin;
        config.clock = clock.clone();
        let judge = with_timeout(judge::start(config))
            .await
            .expect("judge starts");
        session(&judge.target().clone(), &clock, first_timestamp_kept, 12).await;
        finish(judge).await
    })
}

#[test]
fn a_client_that_signs_each_login_afresh_is_clean_under_relogin() {
    let tally = judged(false);
    assert_eq!(
        tally.failed_clauses(),
        Vec::<&str>::new(),
        "{:#?}",
        tally.describe()
    );
    assert!(
        tally
            .get("client.sig.fresh", harness::wire::TransportKind::Ws)
            .is_some_and(|cell| cell.passes >= 12),
        "{:#?}",
        tally.describe()
    );
}

#[test]
fn a_client_that_re_sends_its_first_timestamp_with_a_new_nonce_fails_once_a_minute_passed() {
    let tally = judged(true);
    let findings = tally.describe();
    assert!(
        found(&findings, Verdict::Fail, "client.sig.fresh", "66 s old"),
        "{findings:#?}"
    );
    assert_eq!(
        tally.failed_clauses(),
        vec!["client.sig.fresh"],
        "{findings:#?}"
    );
}
