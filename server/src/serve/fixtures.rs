//! The reference server's market catalog: currencies, instruments, Direct Access members,
//! MMP statuses and volatility series. Everything is fixed or drawn from a seeded
//! generator, so every start serves the same data and snapshots stay stable.
//!
//! The account histories (transaction log, trigger orders) live in [`super::ledger`].

use std::sync::LazyLock;

use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use serde_json::{Value, json};

/// The parameter the reference takes the second factor in (SPEC.md 5.7 names none; the
/// target file says `second_factor = { parameter = ... }`): a TOTP code of the user's secret.
pub(crate) const SECOND_FACTOR_PARAM: &str = "authorization_code";

/// The parameter the reference takes the transaction log's filter keywords in (SPEC.md 4.8:
/// "Parameter name: not shown"; the target file names it): space-separated, all must match.
pub(crate) const KEYWORDS_PARAM: &str = "query";

/// The instant the fixture data is built around (2024-01-01T00:00:00Z): histories run
/// forward from here, so any clock later than mid-2024 sees all of them in the past.
pub(crate) const FIXTURE_EPOCH_MS: u64 = 1_704_067_200_000;

/// The instrument whose position `close_position` closes by default and whose book summary
/// the target advertises.
pub(crate) const DEFAULT_INSTRUMENT: &str = "BTC-PERPETUAL";

/// A second instrument whose book summary the target advertises, of another kind than the
/// default one: an option.
pub(crate) const OTHER_INSTRUMENT: &str = "ETH-27JUN25-3000-C";

/// The member id the target advertises as deletable: 1, the least `member_id` SPEC.md 4.11
/// allows (`>= 1`), so that deleting it is the nearest miss of the bound on the side that
/// must be accepted (a server that checks `> 1` fails `m.delete_member.delete_ok`).
pub(crate) const FIXTURE_MEMBER_ID: u64 = 1;

/// A member of the main account the target advertises as kept: the suite never deletes
/// it, so the members remaining after `FIXTURE_MEMBER_ID`'s deletion hold it. It follows
/// the deleted member in the list, where a server deleting one member too many would take it.
pub(crate) const KEPT_MEMBER_ID: u64 = 3;

/// A second member of the main account the target advertises as deletable: the suite
/// deletes it after `FIXTURE_MEMBER_ID`, and its answer shows that one still gone.
pub(crate) const SECOND_MEMBER_ID: u64 = 2;

/// The member of the `two_factor` account, a main account whose Direct Access trading is
/// not enabled: every `delete_member` of that account is refused (SPEC.md 4.11), this one
/// included. The target file names it, and the account as `no_direct_access`.
pub(crate) const NO_DIRECT_ACCESS_MEMBER_ID: u64 = 4;

/// One tradable instrument.
#[derive(Clone, Debug)]
pub(crate) struct Instrument {
    pub(crate) name: &'static str,
    pub(crate) base_currency: &'static str,
    pub(crate) quote_currency: &'static str,
    pub(crate) underlying_index: &'static str,
    pub(crate) mark_price: f64,
    pub(crate) index_price: f64,
    pub(crate) creation_timestamp: u64,
}

/// The instruments the server knows: two perpetuals, three dated futures and three options,
/// each with a position the suite may close (`[fixtures] positions`: the closing cases
/// and the race of closes, one each per execution).
pub(crate) fn instruments() -> Vec<Instrument> {
    let instrument = |name, base_currency, underlying_index, mark_price, index_price| Instrument {
        name,
        base_currency,
        quote_currency: "USD",
        underlying_index,
        mark_price,
        index_price,
        creation_timestamp: FIXTURE_EPOCH_MS - 86_400_000 * 200,
    };
    vec![
        instrument("BTC-PERPETUAL", "BTC", "index_price", 64_250.5, 64_231.2),
        instrument("ETH-PERPETUAL", "ETH", "index_price", 3_412.25, 3_410.9),
        instrument("BTC-27JUN25", "BTC", "BTC-27JUN25", 65_120.0, 64_231.2),
        instrument(
            "BTC-27JUN25-70000-C",
            "BTC",
            "BTC-27JUN25",
            0.0415,
            64_231.2,
        ),
        instrument("ETH-27JUN25", "ETH", "ETH-27JUN25", 3_455.5, 3_410.9),
        instrument(
            "BTC-27JUN25-60000-P",
            "BTC",
            "BTC-27JUN25",
            0.0312,
            64_231.2,
        ),
        instrument("BTC-26SEP25", "BTC", "BTC-26SEP25", 66_010.0, 64_231.2),
        instrument("ETH-27JUN25-3000-C", "ETH", "ETH-27JUN25", 0.0921, 3_410.9),
    ]
}

/// The currency entries of SPEC.md section 2.5, built once: `public/get_currencies` is the
/// most called method of load tests, and a copy costs a fraction of building the entries.
pub(crate) fn currencies() -> Vec<Value> {
    static CURRENCIES: LazyLock<Vec<Value>> = LazyLock::new(currency_entries);
    CURRENCIES.clone()
}

fn currency_entries() -> Vec<Value> {
    let entry =
        |code: &str, long: &str, coin_type: &str, decimals: u32, fee: f64, network: &str| {
            json!({
                "currency": code,
                "currency_long": long,
                "coin_type": coin_type,
                "decimals": decimals,
                "min_confirmations": if coin_type == "BITCOIN" { 1 } else { 12 },
                "withdrawal_fee": fee,
                "min_withdrawal_fee": fee / 2.0,
                "withdrawal_priorities": if code == "BTC" {
                    json!([{"name": "low", "value": 0.0}, {"name": "high", "value": 0.5}])
                } else {
                    json!([])
                },
                "network_currency": network,
                "network_fee": fee / 4.0,
                CURRENCY_CROSS_COLLATERAL: code != "EURR",
            })
        };
    // The stable coins list the networks an external-custody wallet takes them on (2.5).
    let with_networks = |mut entry: Value, networks: &[&str]| {
        let networks: Vec<Value> = networks
            .iter()
            .map(|name| json!({ "resource_name": name }))
            .collect();
        entry[CURRENCY_NETWORKS] = Value::Array(networks);
        entry
    };
    vec![
        entry("BTC", "Bitcoin", "BITCOIN", 8, 0.0001, "BTC"),
        entry("ETH", "Ethereum", "ETHER", 8, 0.0016, "ETH"),
        with_networks(
            entry("USDC", "USD Coin", "ETHER", 6, 1.0, "ETH"),
            &["ethereum", "solana"],
        ),
        with_networks(
            entry("USDT", "Tether USD", "ETHER", 6, 1.0, "ETH"),
            &["ethereum"],
        ),
        entry("EURR", "StablR Euro", "ETHER", 6, 1.0, "ETH"),
    ]
}

/// The reference's names for a delivery entry's settlement and index prices (SPEC.md 2.3:
/// "settlement and index price during delivery", names not given); its target file gives
/// them.
pub(crate) const LOG_DELIVERY_SETTLEMENT_PRICE: &str = "delivery_price";
/// See [`LOG_DELIVERY_SETTLEMENT_PRICE`].
pub(crate) const LOG_DELIVERY_INDEX_PRICE: &str = "index_price";

/// The reference's name for the token set's copy of the input `state` (SPEC.md 4.1
/// describes it without a name; its target file gives this one).
pub(crate) const TOKEN_STATE_COPY: &str = "state";
/// The reference's name for the token set's identity-provider flag (SPEC.md 4.1: "a flag
/// that the token came from an external identity-provider login").
pub(crate) const TOKEN_IDP_LOGIN: &str = "is_idp_login";

/// The names of the currency entry's cross-collateral-pool flag and networks list, which
/// SPEC.md 2.5 describes without showing: the reference's own. The target file gives them.
pub(crate) const CURRENCY_CROSS_COLLATERAL: &str = "in_cross_collateral_pool";

/// See [`CURRENCY_CROSS_COLLATERAL`].
pub(crate) const CURRENCY_NETWORKS: &str = "networks";

/// Half the book's spread: the best bid and ask sit this far either side of the mark.
fn half_spread(instrument: &Instrument) -> f64 {
    (instrument.mark_price * 0.0002).max(0.0001)
}

/// `price` rounded to the instrument's tick under the `limit-price-rounded` variant: a
/// fifth of the book's spread, as a tick is at most the distance between a best bid and
/// a best ask (both lie on it).
pub(crate) fn on_tick(instrument: &Instrument, price: f64) -> f64 {
    let tick = half_spread(instrument) * 2.0 / 5.0;
    (price / tick).round() * tick
}

/// The book summary entry of SPEC.md section 2.8 for an instrument.
pub(crate) fn book_summary(instrument: &Instrument) -> Value {
    let mark = instrument.mark_price;
    let spread = half_spread(instrument);
    json!({
        "instrument_name": instrument.name,
        "base_currency": instrument.base_currency,
        "quote_currency": instrument.quote_currency,
        "volume": 12_345.6,
        "underlying_price": instrument.index_price,
        "underlying_index": instrument.underlying_index,
        "price_change": -1.25,
        "open_interest": 987_654.0,
        "mid_price": mark,
        "mark_price": mark,
        "low": mark * 0.97,
        "high": mark * 1.02,
        "last": mark,
        "bid_price": mark - spread,
        "ask_price": mark + spread,
        "interest_rate": 0.0,
        "creation_timestamp": instrument.creation_timestamp,
    })
}

/// Hourly volatility points of a currency over two days: `[integer ms, number]` pairs.
pub(crate) fn volatility(currency: &str) -> Vec<(u64, f64)> {
    let seed = currency.bytes().fold(7u64, |hash, byte| {
        hash.wrapping_mul(31).wrapping_add(u64::from(byte))
    });
    let mut rng = StdRng::seed_from_u64(seed);
    let base = match currency {
        "BTC" => 48.0,
        "ETH" => 61.0,
        _ => 4.0,
    };
    (0..48u64)
        .map(|hour| {
            let wobble: f64 = rng.random_range(-3.0..3.0);
            (FIXTURE_EPOCH_MS + hour * 3_600_000, round(base + wobble, 4))
        })
        .collect()
}

/// One MMP status of SPEC.md section 2.4, held by the main account.
#[derive(Clone, Debug)]
pub(crate) struct MmpStatus {
    pub(crate) index_name: &'static str,
    pub(crate) frozen_until: u64,
    pub(crate) mmp_group: Option<&'static str>,
    pub(crate) block_rfq: bool,
}

/// The index of the MMP status frozen until manual reset, which the target file advertises.
pub(crate) const MMP_RESET_INDEX: &str = "btc_usd";

/// The index of the second order/quote MMP status, a Mass Quote group's, which the target
/// file advertises as triggered all run.
pub(crate) const MMP_TRIGGERED_INDEX: &str = "eth_usdc";

/// The index of the Block RFQ MMP status, which the target file advertises.
pub(crate) const MMP_BLOCK_RFQ_INDEX: &str = "btc_usdc";

/// Triggered MMP statuses: one frozen until manual reset, one from a Mass Quote group and
/// one of Block RFQ. The timed ones are frozen until late 2045, so they are still triggered
/// whenever the suite runs (a time already past would no longer be triggered, SPEC.md 2.4).
pub(crate) fn mmp_statuses() -> Vec<MmpStatus> {
    vec![
        MmpStatus {
            index_name: MMP_RESET_INDEX,
            frozen_until: 0,
            mmp_group: None,
            block_rfq: false,
        },
        MmpStatus {
            index_name: MMP_TRIGGERED_INDEX,
            frozen_until: FIXTURE_EPOCH_MS + 86_400_000 * 8000,
            mmp_group: Some("mq_alpha"),
            block_rfq: false,
        },
        MmpStatus {
            index_name: MMP_BLOCK_RFQ_INDEX,
            frozen_until: FIXTURE_EPOCH_MS + 86_400_000 * 8000,
            mmp_group: None,
            block_rfq: true,
        },
    ]
}

/// A Direct Access member (SPEC.md section 2.6). The spec does not name the record's
/// fields; these names are the reference server's own.
#[derive(Clone, Debug)]
pub(crate) struct Member {
    pub(crate) member_id: u64,
    /// The main account the member belongs to (SPEC.md 2.6: "a Direct Access trading
    /// identity of a main account").
    pub(crate) owner_id: u64,
    pub(crate) name: &'static str,
    pub(crate) active: bool,
    pub(crate) account_ids: Vec<u64>,
    pub(crate) last_modified: u64,
}

/// The names of the member record's identifier and name fields, which SPEC.md 2.6 does not
/// show; `renamed` picks the `member-field-names` variant's. The target file gives them.
pub(crate) fn member_field_names(renamed: bool) -> (&'static str, &'static str) {
    if renamed {
        ("id", "member_name")
    } else {
        ("member_id", "name")
    }
}

impl Member {
    /// The record as the main account sees it, with owner and account list. SPEC.md 2.6
    /// does not show the field names; `renamed` picks the `member-field-names` variant's.
    pub(crate) fn to_json(&self, renamed: bool) -> Value {
        let owner_id = self.owner_id;
        if renamed {
            return json!({
                "id": self.member_id,
                "member_name": self.name,
                "is_active": self.active,
                "main_user_id": owner_id,
                "user_ids": self.account_ids,
                "updated_at": self.last_modified,
            });
        }
        json!({
            "member_id": self.member_id,
            "name": self.name,
            "active": self.active,
            "owner_id": owner_id,
            "account_ids": self.account_ids,
            "last_modification_timestamp": self.last_modified,
        })
    }
}

/// The members of the two main accounts: three of the main account, and one of the
/// `two_factor` account, whose Direct Access trading is not enabled.
pub(crate) fn members(main_id: u64, sub_id: u64, two_factor_id: u64) -> Vec<Member> {
    vec![
        Member {
            member_id: SECOND_MEMBER_ID,
            name: "desk-alpha",
            owner_id: main_id,
            active: true,
            account_ids: vec![main_id],
            last_modified: FIXTURE_EPOCH_MS,
        },
        Member {
            member_id: FIXTURE_MEMBER_ID,
            name: "desk-beta",
            owner_id: main_id,
            active: true,
            account_ids: vec![main_id, sub_id],
            last_modified: FIXTURE_EPOCH_MS + 3_600_000,
        },
        Member {
            member_id: KEPT_MEMBER_ID,
            name: "desk-gamma (inactive)",
            owner_id: main_id,
            active: false,
            account_ids: vec![sub_id],
            last_modified: FIXTURE_EPOCH_MS + 7_200_000,
        },
        Member {
            member_id: NO_DIRECT_ACCESS_MEMBER_ID,
            name: "desk-delta (of an account without direct access)",
            owner_id: two_factor_id,
            active: false,
            account_ids: vec![two_factor_id],
            last_modified: FIXTURE_EPOCH_MS + 10_800_000,
        },
    ]
}

/// Rounds to `places` decimals so generated numbers read like prices, not float noise.
pub(crate) fn round(value: f64, places: i32) -> f64 {
    let scale = 10f64.powi(places);
    (value * scale).round() / scale
}
