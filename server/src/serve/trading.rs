//! Trading methods: `private/get_mmp_status` (SPEC.md 4.6),
//! `private/get_trigger_order_history` (4.7) and `private/close_position` (4.12).
//!
//! The trigger history continuation is a string (section 4.7) that encodes the position of
//! the next page's first entry. Section 4.7 does not say how the last page is marked, so
//! the reference server omits `continuation` there rather than inventing a sentinel value.
//! `close_position` is stateless: every call closes the same fixture position.

use std::sync::atomic::Ordering;

use serde_json::{Value, json};

use super::ctx::{CountFaults, Ctx, PagedFaults, PagedParams};
use super::fault::Fault;
use super::fixtures::{DEFAULT_INSTRUMENT, round};
use super::orders;
use super::state::MAIN_ID;
use harness_protocol::jsonrpc::{self, ErrorObject};
use harness_protocol::spec;

/// Marks a trigger history continuation, so a value from elsewhere is recognised as such.
const CONTINUATION_PREFIX: &str = "toh1-";

/// `private/get_mmp_status`.
pub(crate) fn get_mmp_status(ctx: &mut Ctx<'_>) -> Result<Value, ErrorObject> {
    let block_rfq = ctx.params.bool("block_rfq").unwrap_or(false);
    // The `mmp-block-rfq-scope-any` fault lets block_rfq:read stand for trade:read on the
    // plain call too.
    if block_rfq
        || (ctx.fault(Fault::MmpBlockRfqScopeAny) && ctx.require(spec::MMP_BLOCK_RFQ_SCOPE).is_ok())
    {
        ctx.require(spec::MMP_BLOCK_RFQ_SCOPE)?;
    } else {
        ctx.require_stated_scope()?;
    }
    let response_only = ctx
        .params
        .str("index_name")
        .is_some_and(|name| spec::RESPONSE_INDEX_NAMES.contains(&name));
    let index_name = ctx.listed(
        "index_name",
        ctx.fault(Fault::MmpIndexAny)
            || (response_only && ctx.fault(Fault::MmpIndexResponseValues)),
        ctx.fault(Fault::MmpIndexLastRefused),
    )?;
    let group = mmp_group(ctx, index_name)?;
    let block_rfq = block_rfq && !ctx.fault(Fault::MmpBlockRfqIgnored);
    let frozen_as_string = ctx.fault(Fault::MmpFrozenString);
    let reset_hidden = ctx.fault(Fault::MmpHidesFrozenZero) || reset_lapsed(ctx);
    // `mmp-empty-group-every-index`: an empty mmp_group answers every index's statuses.
    let empty_group_all = ctx.fault(Fault::MmpEmptyGroupEveryIndex);
    // Under the `mmp-none-triggered` variant no index is frozen for anyone.
    let held = ctx.caller()?.user_id == MAIN_ID && !ctx.variant(super::Variant::MmpNoneTriggered);
    let statuses: Vec<Value> = super::fixtures::mmp_statuses()
        .into_iter()
        .filter(|status| held && status.block_rfq == block_rfq)
        .filter(|status| !(status.block_rfq && ctx.fault(Fault::MmpBlockRfqNone)))
        .filter(|status| !(reset_hidden && status.frozen_until == 0))
        .take(
            if index_name.is_none() && ctx.fault(Fault::MmpOmittedFirstOnly) {
                1
            } else {
                usize::MAX
            },
        )
        .filter(|status| {
            index_name.is_none_or(|name| name == "all" || name == status.index_name)
                || (empty_group_all && ctx.params.str("mmp_group") == Some(""))
        })
        .filter(|status| group.is_none_or(|group| status.mmp_group == Some(group)))
        .map(|status| mmp_entry(&status, frozen_as_string))
        .collect();
    if statuses
        .iter()
        .any(|status| status["frozen_until"] == json!(0))
    {
        let _ = ctx.state.mmp_reset_reported_ms.compare_exchange(
            0,
            ctx.state.now_ms(),
            Ordering::Relaxed,
            Ordering::Relaxed,
        );
    }
    Ok(Value::Array(statuses))
}

/// The `mmp_group` asked for: none for an empty one (the default orders group, section
/// 4.6), refused without an `index_name`.
fn mmp_group<'p>(
    ctx: &'p Ctx<'_>,
    index_name: Option<&str>,
) -> Result<Option<&'p str>, ErrorObject> {
    match ctx.params.str("mmp_group") {
        Some("") if ctx.fault(Fault::MmpEmptyGroupRejected) => Err(ErrorObject::invalid_params(
            "mmp_group",
            "must not be empty",
        )),
        // An empty group names the default orders group, the same as none (section 4.6).
        Some("") | None => Ok(None),
        Some(_) if index_name.is_none() && !ctx.fault(Fault::MmpGroupWithoutIndex) => Err(
            ErrorObject::invalid_params("mmp_group", "mmp_group requires index_name"),
        ),
        Some(group) => Ok(Some(group)),
    }
}

/// One status as 4.6's result gives it (`frozen_as_string`: the `mmp-frozen-string`
/// fault).
fn mmp_entry(status: &super::fixtures::MmpStatus, frozen_as_string: bool) -> Value {
    let mut entry = json!({
        "index_name": status.index_name,
        "frozen_until": if frozen_as_string {
            json!(status.frozen_until.to_string())
        } else {
            json!(status.frozen_until)
        },
        "block_rfq": status.block_rfq,
    });
    if let (Some(group), Some(object)) = (status.mmp_group, entry.as_object_mut()) {
        object.insert("mmp_group".to_owned(), json!(group));
    }
    entry
}

/// Under the `mmp-reset-lapses` fault: whether the status frozen until manual reset was
/// first reported a second ago or more, and so has lapsed by itself (SPEC.md 3: it "stays
/// frozen until manual reset").
fn reset_lapsed(ctx: &Ctx<'_>) -> bool {
    let first = ctx.state.mmp_reset_reported_ms.load(Ordering::Relaxed);
    ctx.fault(Fault::MmpResetLapses)
        && first != 0
        && ctx.state.now_ms() >= first.saturating_add(MMP_RESET_LAPSE_MS)
}

/// How long the `mmp-reset-lapses` fault keeps a status frozen until manual reset.
const MMP_RESET_LAPSE_MS: u64 = 1_000;

/// Whether the request's `currency` is one of the transaction log's (section 4.8).
fn log_currency(ctx: &Ctx<'_>) -> bool {
    ctx.params
        .str("currency")
        .is_some_and(|currency| spec::TRANSACTION_LOG_CURRENCIES.contains(&currency))
}

/// `private/get_trigger_order_history`.
pub(crate) fn get_trigger_order_history(ctx: &mut Ctx<'_>) -> Result<Value, ErrorObject> {
    let PagedParams {
        currency, count, ..
    } = ctx.paged_params(&PagedFaults {
        // Under `trigger-currency-log-list` a currency of the transaction log's list counts
        // as any currency would under `trigger-currency-any`.
        currency_any: if log_currency(ctx) && ctx.fault(Fault::TriggerCurrencyLogList) {
            Fault::TriggerCurrencyLogList
        } else {
            Fault::TriggerCurrencyAny
        },
        currency_last_refused: Fault::TriggerCurrencyLastRefused,
        count: CountFaults {
            zero: None,
            min_refused: Fault::TriggerCount1Refused,
            over_max: None,
            max_refused: Fault::TriggerCountMaxRefused,
            default_raised: Fault::TriggerDefault30,
            default_lowered: Fault::TriggerDefault10,
            default_first_page_only: Fault::TriggerDefaultFirstPageOnly,
        },
    })?;
    let instrument = ctx
        .params
        .str("instrument_name")
        .filter(|_| !ctx.fault(Fault::TriggerInstrumentIgnored))
        .filter(|_| {
            !(ctx.fault(Fault::TriggerInstrumentFirstPageOnly) && ctx.params.has("continuation"))
        });
    let entries: &[super::ledger::TriggerEntry] = if ctx.caller()?.user_id == MAIN_ID {
        &ctx.state.ledger.triggers
    } else {
        &[]
    };
    let start = match ctx.params.str("continuation") {
        None => 0,
        Some(text) => decode_continuation(text)
            .filter(|position| *position <= entries.len())
            .ok_or_else(|| {
                ErrorObject::invalid_params("continuation", "not a continuation of this method")
            })?,
    };
    let page_len = ctx.page_len(count);
    let mut page: Vec<(usize, &Value)> = entries
        .iter()
        .enumerate()
        .skip(start)
        .filter(|(_, entry)| {
            currency.is_none_or(|code| entry.currency == code)
                && instrument.is_none_or(|name| entry.instrument_name == name)
        })
        .map(|(position, entry)| (position, &entry.body))
        .take(page_len + 1)
        .collect();
    let next = (page.len() > page_len).then(|| page[page_len].0);
    page.truncate(page_len);
    let next = match next {
        Some(_) if ctx.fault(Fault::TriggerPagesOverlap) => {
            page.last().map(|(position, _)| *position)
        }
        other => other,
    };
    let bodies = trigger_bodies(ctx, page);
    let mut result = jsonrpc::object([("entries", Value::Array(bodies))]);
    if let (Some(position), Some(object)) = (next, result.as_object_mut()) {
        object.insert(
            "continuation".to_owned(),
            json!(format!("{CONTINUATION_PREFIX}{position:x}")),
        );
    }
    Ok(result)
}

/// The bodies of a page of trigger history entries (with their positions), each unnamed
/// field (SPEC.md 2.2) broken by its fault: the order type on every entry of the history
/// but the first (the nearest miss of a check of one entry), the same on every page that
/// holds the entry.
fn trigger_bodies(ctx: &Ctx<'_>, page: Vec<(usize, &Value)>) -> Vec<Value> {
    let mut bodies: Vec<Value> = Vec::with_capacity(page.len());
    for (position, body) in page {
        let mut body = body.clone();
        if let Some(object) = body.as_object_mut() {
            if position > 0 && ctx.fault(Fault::TriggerOrderTypeAfterFirst) {
                object.insert("order_type".to_owned(), json!("stop_market"));
            }
            if ctx.fault(Fault::TriggerLabelEmpty) && !object.contains_key("label") {
                object.insert("label".to_owned(), json!(""));
            }
            if ctx.fault(Fault::TriggerPostOnlyString)
                && let Some(flag) = object.get("post_only").cloned()
            {
                object.insert("post_only".to_owned(), json!(flag.to_string()));
            }
        }
        bodies.push(body);
    }
    if ctx.fault(Fault::TriggerIndexValue)
        && let Some(Value::Object(first)) = bodies.first_mut()
    {
        first.insert("trigger".to_owned(), json!("index"));
    }
    bodies
}

fn decode_continuation(text: &str) -> Option<usize> {
    let digits = text.strip_prefix(CONTINUATION_PREFIX)?;
    if digits.is_empty() || digits.len() > 8 {
        return None;
    }
    usize::from_str_radix(digits, 16).ok()
}

/// `private/close_position`: closes the fixture position in one fill. The instrument
/// defaults to the fixture instrument and the type to `market`, since section 4.12 does
/// not say either is required.
pub(crate) fn close_position(ctx: &mut Ctx<'_>) -> Result<Value, ErrorObject> {
    ctx.require("trade:read_write")?;
    let name = ctx
        .params
        .str("instrument_name")
        .unwrap_or(DEFAULT_INSTRUMENT);
    let instrument = ctx
        .state
        .instruments
        .iter()
        .find(|instrument| instrument.name == name)
        .ok_or_else(|| ErrorObject::invalid_params("instrument_name", "unknown instrument"))?;
    // The `close-wrong-instrument` fault closes the first position of another instrument.
    let instrument = if ctx.fault(Fault::CloseWrongInstrument) {
        ctx.state
            .instruments
            .iter()
            .find(|other| other.name != name)
            .unwrap_or(instrument)
    } else {
        instrument
    };
    let order_type = ctx
        .listed("type", ctx.fault(Fault::CloseTypeAny), false)?
        .unwrap_or("market");
    // SPEC.md 4.13: "orders submitted through REST are unaffected by the lock". The
    // reference records a lock, and only the `lock-blocks-json-rpc` fault reads it.
    if ctx.fault(Fault::LockBlocksJsonRpc)
        && ctx
            .state
            .portfolio_locked
            .load(std::sync::atomic::Ordering::Relaxed)
    {
        return Err(ErrorObject::bad_request("the portfolio is locked"));
    }
    close_once(ctx, name)?;
    let is_option = name.ends_with("-C") || name.ends_with("-P");
    let amount = if is_option { 1.0 } else { 100.0 };
    let price = close_price(ctx, instrument, order_type, amount)?;
    // A limit sell far above the market rests, an open order logout must keep (4.4).
    let resting = order_type == "limit"
        && ctx.params.num("price").is_some()
        && price >= instrument.mark_price * orders::RESTING_FACTOR;
    let now_ms = ctx.state.now_ms();
    let fill = Fill {
        instrument,
        order_type,
        price,
        amount,
        now_ms,
        order_id: format!("close-{now_ms}"),
    };
    let trades = if resting {
        json!([])
    } else {
        json!([fill.trade()])
    };
    let mut result = json!({ "trades": trades });
    if let (false, Some(object)) = (ctx.fault(Fault::CloseOrderMissing), result.as_object_mut()) {
        object.insert("order".to_owned(), fill.order());
    }
    if resting {
        rest_close(ctx, &mut result, amount);
    }
    Ok(result)
}

/// Marks the position of `name` closed; a second close is refused where positions close
/// once (the `positions-close-once` variant, the `race-close` fault).
fn close_once(ctx: &Ctx<'_>, name: &str) -> Result<(), ErrorObject> {
    // The `race-close` fault closes a position once, as the `positions-close-once` variant
    // does, but marks it closed a few ms after the answer.
    let racing = ctx.fault(Fault::RaceClose);
    let closed_before = if racing {
        let closed = super::state::lock(&ctx.state.closed_positions).contains(name);
        let marked = name.to_owned();
        ctx.state.deferred.later(move |state| {
            super::state::lock(&state.closed_positions).insert(marked);
        });
        closed
    } else {
        !super::state::lock(&ctx.state.closed_positions).insert(name.to_owned())
    };
    if closed_before && (racing || ctx.variant(super::Variant::PositionsCloseOnce)) {
        return Err(ErrorObject::invalid_params(
            "instrument_name",
            "no open position",
        ));
    }
    Ok(())
}

/// The price a close fills at: a limit order's own (on the tick under
/// `limit-price-rounded`), else the instrument's mark price.
fn close_price(
    ctx: &Ctx<'_>,
    instrument: &super::fixtures::Instrument,
    order_type: &str,
    amount: f64,
) -> Result<f64, ErrorObject> {
    let price = match ctx.params.num("price") {
        Some(price) if price <= 0.0 => {
            return Err(ErrorObject::invalid_params("price", "must be positive"));
        }
        // A price so small that the fee (amount / price) is past any float: refused rather
        // than answered with a fee JSON cannot hold (found by the fuzzer's float edges).
        Some(price) if !(amount / price).is_finite() => {
            return Err(ErrorObject::invalid_params("price", "out of range"));
        }
        Some(price) if order_type == "limit" && !ctx.fault(Fault::CloseLimitPriceIgnored) => {
            if ctx.variant(super::Variant::LimitPriceRounded) {
                super::fixtures::on_tick(instrument, price)
            } else {
                price
            }
        }
        _ => instrument.mark_price,
    };
    Ok(price)
}

/// A close's one fill: what its trade and its order report.
struct Fill<'a> {
    instrument: &'a super::fixtures::Instrument,
    order_type: &'a str,
    price: f64,
    amount: f64,
    now_ms: u64,
    order_id: String,
}

impl Fill<'_> {
    /// The trade of SPEC.md 4.12's result.
    fn trade(&self) -> Value {
        json!({
            "trade_seq": 1_000 + self.now_ms % 1_000,
            "trade_id": format!("{}-{}", self.instrument.base_currency, self.now_ms),
            "timestamp": self.now_ms,
            "tick_direction": 0,
            "state": "filled",
            "reduce_only": true,
            "price": self.price,
            "post_only": false,
            "order_type": self.order_type,
            "order_id": self.order_id,
            "matching_id": null,
            "mark_price": self.instrument.mark_price,
            "liquidity": "T",
            "instrument_name": self.instrument.name,
            "index_price": self.instrument.index_price,
            "fee_currency": self.instrument.base_currency,
            "fee": round(self.amount / self.price * 0.0005, 8),
            "direction": "sell",
            "amount": self.amount,
        })
    }

    /// The order of SPEC.md 4.12's result.
    fn order(&self) -> Value {
        json!({
            "web": false,
            "api": true,
            "time_in_force": "good_til_cancelled",
            "replaced": false,
            "reduce_only": true,
            "post_only": false,
            "price": self.price,
            "order_type": self.order_type,
            "order_state": "filled",
            "order_id": self.order_id,
            "max_show": self.amount,
            "last_update_timestamp": self.now_ms,
            "creation_timestamp": self.now_ms,
            "label": "",
            "is_rebalance": false,
            "is_liquidation": false,
            "instrument_name": self.instrument.name,
            "filled_amount": self.amount,
            "average_price": self.price,
            "direction": "sell",
            "amount": self.amount,
        })
    }
}

/// Keeps the closing order of `result` open: nothing filled, its id the book's.
fn rest_close(ctx: &Ctx<'_>, result: &mut Value, amount: f64) {
    let Ok(user_id) = ctx.caller().map(|caller| caller.user_id) else {
        return;
    };
    let Some(order) = result.get_mut("order").and_then(Value::as_object_mut) else {
        return;
    };
    order.insert("filled_amount".to_owned(), json!(0.0));
    order.insert("average_price".to_owned(), json!(0.0));
    order.insert("max_show".to_owned(), json!(amount));
    let entry = Value::Object(order.clone());
    let id = ctx
        .state
        .orders
        .open(orders::Placed::JsonRpc(user_id), "close", entry);
    order.insert("order_id".to_owned(), json!(id));
    order.insert("order_state".to_owned(), json!(orders::OPEN));
}

/// The read of an order the target file names (`orders.rs`), over JSON-RPC: one of the caller's `close_position` orders.
pub(crate) fn get_order_state(ctx: &mut Ctx<'_>) -> Result<Value, ErrorObject> {
    let user_id = ctx.caller()?.user_id;
    let id = ctx
        .params
        .str(orders::ORDER_ID_PARAM)
        .ok_or_else(|| ErrorObject::invalid_params(orders::ORDER_ID_PARAM, "required"))?;
    ctx.state
        .orders
        .read(id, orders::Placed::JsonRpc(user_id))
        .ok_or_else(|| ErrorObject::invalid_params(orders::ORDER_ID_PARAM, "no such order"))
}
