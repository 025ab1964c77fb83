//! Request generation: a valid request for a method of [`rules::METHODS`], then, for most
//! requests, one defect. Everything is drawn from one `StdRng` seeded with the run's seed,
//! so the same seed and target give the same requests.

use rand::rngs::StdRng;
use rand::seq::IndexedRandom;
use rand::{Rng, SeedableRng};
use serde_json::{Map, Value, json};

mod classes;
mod mutate;

/// RFC 8259's words that leave a server's handling of a raw body of the class named
/// `class` unpredictable, if they do ([`classes::handling_left_open`]).
pub(crate) fn handling_left_open(class: &str) -> Option<&'static str> {
    classes::handling_left_open(class)
}

use super::request_auth::signature;
use super::rules::{self, LOCK_PORTFOLIO};
use super::{FuzzRequest, RequestAuth};
use harness_model::target_file::Target;
use harness_protocol::spec::{self, Fixture, Kind, Method, Required, Values};
use harness_protocol::wire::TransportKind;

/// Scopes a narrower token is requested with: the scope the MMP status, the transaction log
/// and toggling a login each state, a wallet read no method states, and the last two together.
fn narrow_scopes() -> Vec<String> {
    let stated =
        |name: &str| spec::method(name).map_or_else(String::new, |method| method.scope.join(" "));
    let trade = stated(spec::MMP_STATUS_METHOD);
    let account = stated(spec::TYPED_LOG_METHOD);
    let account_write = stated(spec::TOGGLE_LOGIN_METHOD);
    let both = format!("{account_write} {trade}");
    vec![
        trade,
        account,
        account_write,
        "wallet:read".to_owned(),
        both,
    ]
}

/// Generates `count` requests for `target` over `transports` from `seed`.
pub fn generate(
    seed: u64,
    count: usize,
    target: &Target,
    transports: &[TransportKind],
) -> Vec<FuzzRequest> {
    stream(seed, target, transports).take(count).collect()
}

/// The endless stream of requests `seed` generates for `target` over `transports`, of which
/// [`generate`] takes the first `count` (empty when no JSON-RPC transport is usable).
pub(crate) fn stream<'a>(
    seed: u64,
    target: &'a Target,
    transports: &[TransportKind],
) -> impl Iterator<Item = FuzzRequest> + 'a {
    let mut rng = StdRng::seed_from_u64(seed);
    let jsonrpc: Vec<TransportKind> = transports
        .iter()
        .copied()
        .filter(|kind| *kind != TransportKind::Rest)
        .filter(|kind| *kind != TransportKind::Ws || target.ws_url.is_some())
        .collect();
    let rest = transports.contains(&TransportKind::Rest)
        && target.direct_access_url.is_some()
        && target.fixtures.direct_access_key.is_some();
    let generator = Generator { target };
    std::iter::from_fn(move || {
        (!jsonrpc.is_empty()).then(|| generator.request(&mut rng, &jsonrpc, rest))
    })
}

/// `base` with one more defect, drawn from `rng`: how steering mutates a corpus entry
/// (`coverage.rs`). `None` for a request the generator has no rule for (the REST call).
pub(crate) fn remix(rng: &mut StdRng, target: &Target, base: &FuzzRequest) -> Option<FuzzRequest> {
    let rule = rules::method(&base.method)?;
    let mut request = FuzzRequest {
        raw: None,
        walk: false,
        // A raw body's class goes with the body; a value's stays with the value.
        class: base.class.clone().filter(|_| base.raw.is_none()),
        ..base.clone()
    };
    Generator { target }.mutate(rng, rule, &mut request);
    request.why = format!("{}, on a corpus entry", request.why);
    Some(request)
}

/// Non-ASCII text for signed `data`: two-, three- and four-byte UTF-8.
const NON_ASCII: &[&str] = &["é", "Ωμέγα", "日本", "€", "🙂"];

/// The end of a walk's time window: 2100-01-01, after every entry a history can hold.
const WINDOW_END_MS: i64 = 4_102_444_800_000;

struct Generator<'a> {
    target: &'a Target,
}

impl Generator<'_> {
    /// The next request: a REST call now and then, else a JSON-RPC request, valid, walked
    /// or with one defect.
    fn request(&self, rng: &mut StdRng, jsonrpc: &[TransportKind], rest: bool) -> FuzzRequest {
        if rest && rng.random_ratio(1, 40) {
            return self.lock_portfolio(rng);
        }
        let transport = *jsonrpc.choose(rng).unwrap_or(&TransportKind::HttpQuery);
        let rule = rules::METHODS.choose(rng).unwrap_or(&rules::METHODS[0]);
        let mut request = self.valid(rng, rule, transport);
        if rule.paging.is_some() && rng.random_ratio(1, 10) {
            // A walk: small pages from the first to the last, nothing broken on purpose,
            // over the whole history when the method takes a time window.
            request
                .params
                .insert("count".to_owned(), json!(rng.random_range(2..30)));
            for (name, value) in [("start_timestamp", 0), ("end_timestamp", WINDOW_END_MS)] {
                if let Some(bound) = request.params.get_mut(name) {
                    *bound = json!(value);
                }
            }
            request.walk = true;
            request.why = "a pagination walk".to_owned();
            return request;
        }
        if rng.random_bool(0.6) {
            self.mutate(rng, rule, &mut request);
        }
        request
    }

    fn has_account(&self, role: &str) -> bool {
        self.target.accounts.contains_key(role)
    }

    fn lock_portfolio(&self, rng: &mut StdRng) -> FuzzRequest {
        let (auth, why) = match rng.random_range(0..4) {
            0 => (RequestAuth::NONE, "no direct access key"),
            1 => (RequestAuth::api_key(false), "a wrong direct access key"),
            _ => (RequestAuth::api_key(true), "valid"),
        };
        FuzzRequest {
            transport: TransportKind::Rest,
            method: LOCK_PORTFOLIO.to_owned(),
            params: Map::new(),
            auth,
            raw: None,
            why: why.to_owned(),
            walk: false,
            class: None,
        }
    }

    /// A request the oracle should accept (or, for state-changing methods, not refuse on
    /// the spec's grounds).
    fn valid(&self, rng: &mut StdRng, rule: &Method, transport: TransportKind) -> FuzzRequest {
        let mut params = Map::new();
        for spec in rule.params {
            // Tokens come from earlier answers (walks follow them). A valid request carries
            // every parameter whose required flag SPEC.md does not show, since a server may
            // require it; leaving one out is a defect the mutations try, judged "either".
            let keep = match spec.required {
                _ if matches!(spec.values, Values::Token) => false,
                Required::Yes | Required::NotShown => true,
                Required::No | Required::When(_) => rng.random_bool(0.5),
            };
            if !keep {
                continue;
            }
            if let Some(value) = self.valid_value(rng, rule.name, spec.name, spec.kind, spec.values)
            {
                params.insert(spec.name.to_owned(), value);
            }
        }
        // Two filters SPEC.md does not relate agree only as the target file pairs them: its
        // instrument with its currency.
        if params.contains_key("currency")
            && params.get("instrument_name").and_then(Value::as_str)
                == self.target.fixtures.instrument_name.as_deref()
            && let Some(currency) = &self.target.fixtures.currency
        {
            params.insert("currency".to_owned(), Value::from(currency.clone()));
        }
        let mut auth = if rule.private {
            RequestAuth::bearer("main", None)
        } else {
            RequestAuth::NONE
        };
        let mut transport = transport;
        match rule.name {
            spec::AUTH_METHOD => {
                params.clear();
                auth = self.login_params(rng, &mut params);
            }
            spec::EXCHANGE_TOKEN_METHOD => {
                params.remove("refresh_token");
                params.remove("scope");
                auth = RequestAuth::RefreshOf {
                    account: "main".to_owned(),
                    scope: None,
                };
            }
            // A WebSocket-only method (logout): half the time it is sent over HTTP regardless.
            _ if rule.ws_only() && rng.random_bool(0.5) => transport = TransportKind::Ws,
            spec::MMP_STATUS_METHOD if !params.contains_key("index_name") => {
                params.remove("mmp_group");
            }
            _ => {}
        }
        if transport == TransportKind::Ws && self.target.ws_url.is_none() {
            transport = TransportKind::HttpBody;
        }
        if rule.private && transport.is_http() && !rule.ws_only() {
            auth = match rng.random_range(0..10) {
                0 => RequestAuth::basic("main", false),
                1 => RequestAuth::signed("main", false, signature(self.valid_age_ms(rng), false)),
                _ => auth,
            };
        }
        FuzzRequest {
            transport,
            method: rule.name.to_owned(),
            params,
            auth,
            raw: None,
            why: "valid".to_owned(),
            walk: false,
            class: None,
        }
    }

    /// How old a valid signature's timestamp is: now, or now and then well inside the 60 s
    /// window (SPEC.md 5.5, 5.6), 10 s and the target's clock skew away from its edge, so a
    /// server whose window is too narrow refuses it.
    fn valid_age_ms(&self, rng: &mut StdRng) -> i64 {
        let window = i64::try_from(harness_protocol::spec::SIGNATURE_WINDOW_MS).unwrap_or(i64::MAX);
        let skew = i64::try_from(self.target.limits.clock_skew_ms).unwrap_or(i64::MAX);
        let oldest = window.saturating_sub(10_000).saturating_sub(skew);
        if oldest <= 0 || rng.random_bool(0.7) {
            0
        } else {
            -rng.random_range(0..=oldest)
        }
    }

    fn login_params(&self, rng: &mut StdRng, params: &mut Map<String, Value>) -> RequestAuth {
        let client_id = self
            .target
            .accounts
            .get("main")
            .map_or_else(String::new, |account| account.client_id.clone());
        if rng.random_bool(0.3) {
            params.insert("scope".to_owned(), json!(narrow_scopes().choose(rng)));
        }
        match rng.random_range(0..3) {
            0 => {
                params.insert("grant_type".to_owned(), json!("client_credentials"));
                params.insert("client_id".to_owned(), json!(client_id));
                RequestAuth::client_credentials("main", false)
            }
            1 => {
                params.insert("grant_type".to_owned(), json!("client_signature"));
                params.insert("client_id".to_owned(), json!(client_id));
                if rng.random_bool(0.5) {
                    // SPEC.md 5.5 signs `data` as UTF-8: now and then it is not ASCII.
                    let mut data = random_text(rng, 12);
                    if rng.random_bool(0.3) {
                        data.push_str(NON_ASCII.choose(rng).unwrap_or(&"é"));
                    }
                    params.insert("data".to_owned(), json!(data));
                }
                RequestAuth::client_signature(
                    "main",
                    false,
                    signature(self.valid_age_ms(rng), false),
                )
            }
            _ => {
                params.insert("grant_type".to_owned(), json!("refresh_token"));
                RequestAuth::RefreshOf {
                    account: "main".to_owned(),
                    scope: None,
                }
            }
        }
    }

    fn valid_value(
        &self,
        rng: &mut StdRng,
        method: &str,
        name: &str,
        kind: Kind,
        values: Values,
    ) -> Option<Value> {
        let fixtures = &self.target.fixtures;
        Some(match (values, kind) {
            _ if name == "member_id" => match fixtures.member_id {
                Some(member) if rng.random_bool(0.5) => json!(member),
                _ => json!(rng.random_range(1..50)),
            },
            (Values::OneOf(values), _) if name == "state" => json!(values.first()),
            (Values::OneOf(values), _) => json!(values.choose(rng)),
            (Values::Range(min, max), _) if max == i64::MAX => {
                json!(rng.random_range(min.max(0)..WINDOW_END_MS))
            }
            (Values::Range(min, max), _) => match rng.random_range(0..4) {
                0 => json!(min),
                1 => json!(max),
                _ => json!(rng.random_range(min..=max.min(300))),
            },
            (Values::Fixture(Fixture::Instrument), _) => json!(fixtures.instrument_name.clone()?),
            (Values::Fixture(Fixture::Subaccount), _) => json!(fixtures.subaccount_id?),
            (Values::Fixture(Fixture::Member), _) => json!(fixtures.member_id?),
            (Values::Token, _) => return None,
            (Values::Free, Kind::Bool) => json!(rng.random_bool(0.5)),
            (Values::Free, Kind::Num) => json!(f64::from(rng.random_range(1..100_000u32)) / 2.0),
            (Values::Free, Kind::Int) => json!(rng.random_range(0..1_000_000i64)),
            (Values::Free, Kind::Str) => match (method, name) {
                (_, "instrument_name") => json!(
                    fixtures
                        .instrument_name
                        .clone()
                        .unwrap_or_else(|| "BTC-PERPETUAL".to_owned())
                ),
                (_, "mmp_group") => json!(if rng.random_bool(0.5) { "" } else { "default" }),
                _ => json!(random_text(rng, 10)),
            },
        })
    }
}

fn random_text(rng: &mut StdRng, max: usize) -> String {
    let length = rng.random_range(0..=max);
    (0..length)
        .map(|_| char::from(rng.random_range(b'a'..=b'z')))
        .collect()
}
