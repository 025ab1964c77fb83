//! Public market data: `public/get_currencies` (SPEC.md 4.9),
//! `public/get_historical_volatility` (4.10) and `public/get_book_summary_by_instrument`
//! (4.14). They need no credentials and read only fixed fixture data.

use serde_json::{Value, json};

use super::ctx::Ctx;
use super::fault::Fault;
use super::fixtures;
use harness_protocol::jsonrpc::ErrorObject;
use harness_protocol::spec;

/// `public/get_currencies`.
pub(crate) fn get_currencies(ctx: &mut Ctx<'_>) -> Result<Value, ErrorObject> {
    let mut currencies = fixtures::currencies();
    // The whole list, or (the nearest miss of a check of the first entry only) every entry
    // but the first.
    let first_kept = usize::from(!ctx.fault(Fault::CurrencyDecimalsString));
    if ctx.fault(Fault::CurrencyDecimalsString)
        || ctx.fault(Fault::CurrencyDecimalsStringAfterFirst)
    {
        for currency in currencies.iter_mut().skip(first_kept) {
            if let Some(object) = currency.as_object_mut()
                && let Some(decimals) = object.get("decimals").cloned()
            {
                object.insert("decimals".to_owned(), json!(decimals.to_string()));
            }
        }
    }
    let flag = fixtures::CURRENCY_CROSS_COLLATERAL;
    for (index, currency) in currencies.iter_mut().enumerate() {
        let Some(object) = currency.as_object_mut() else {
            continue;
        };
        if index > 0 && ctx.fault(Fault::CurrencyCrossCollateralAfterFirst) {
            object.remove(flag);
        }
        if ctx.fault(Fault::CurrencyCrossCollateralString)
            && let Some(value) = object.get(flag).cloned()
        {
            object.insert(flag.to_owned(), json!(value.to_string()));
        }
        if index > 0
            && ctx.fault(Fault::CurrencyNetworksEmpty)
            && let Some(networks) = object.get_mut(fixtures::CURRENCY_NETWORKS)
        {
            *networks = json!([]);
        }
        if ctx.fault(Fault::CurrencyNetworkUnnamed)
            && let Some(last) = object
                .get_mut(fixtures::CURRENCY_NETWORKS)
                .and_then(Value::as_array_mut)
                .and_then(|networks| networks.last_mut())
            && let Some(name) = last
                .as_object_mut()
                .and_then(|network| network.remove("resource_name"))
        {
            last["name"] = name;
        }
    }
    Ok(Value::Array(currencies))
}

/// `public/get_historical_volatility`. The currency defaults to BTC: section 4.10 does not
/// say it is required.
pub(crate) fn get_historical_volatility(ctx: &mut Ctx<'_>) -> Result<Value, ErrorObject> {
    let log_currency = ctx
        .params
        .str("currency")
        .is_some_and(|currency| spec::TRANSACTION_LOG_CURRENCIES.contains(&currency));
    let currency = ctx
        .listed(
            "currency",
            ctx.fault(Fault::VolatilityCurrencyAny)
                || (log_currency && ctx.fault(Fault::VolatilityCurrencyLogList)),
            ctx.fault(Fault::VolatilityCurrencyLastRefused),
        )?
        .unwrap_or("BTC");
    let float_timestamps = ctx.fault(Fault::VolatilityFloatTimestamp);
    let in_seconds = currency != "BTC" && ctx.fault(Fault::VolatilitySecondsBesidesBtc);
    let points: Vec<Value> = fixtures::volatility(currency)
        .into_iter()
        .map(|(timestamp, volatility)| {
            let timestamp = if in_seconds {
                timestamp / 1_000
            } else {
                timestamp
            };
            if float_timestamps {
                // A whole float would still pass as an integer in JSON Schema, so the
                // fault adds a fraction that no integer can have.
                json!([timestamp as f64 + 0.5, volatility])
            } else {
                json!([timestamp, volatility])
            }
        })
        .collect();
    Ok(Value::Array(points))
}

/// `public/get_book_summary_by_instrument`: an array holding the one instrument's summary.
pub(crate) fn get_book_summary_by_instrument(ctx: &mut Ctx<'_>) -> Result<Value, ErrorObject> {
    let name = ctx.params.required_str("instrument_name")?;
    let instruments = &ctx.state.instruments;
    let Some(position) = instruments
        .iter()
        .position(|instrument| instrument.name == name)
    else {
        if ctx.variant(super::Variant::UnknownIsEmpty) {
            return Ok(json!([]));
        }
        return Err(ErrorObject::invalid_params(
            "instrument_name",
            "unknown instrument",
        ));
    };
    let position = if ctx.fault(Fault::BookSummaryWrongInstrument) {
        (position + 1) % instruments.len()
    } else if ctx.fault(Fault::BookSummaryFirstInstrument) {
        0
    } else {
        position
    };
    let mut summary = fixtures::book_summary(&instruments[position]);
    // An option's name ends in its kind, C or P.
    let option = instruments[position].name.ends_with(['C', 'P']);
    if option
        && ctx.fault(Fault::BookSummaryOptionNullBid)
        && let Some(object) = summary.as_object_mut()
    {
        object.insert("bid_price".to_owned(), Value::Null);
    }
    if ctx.fault(Fault::BookSummaryMissingMark)
        && let Some(object) = summary.as_object_mut()
    {
        object.remove("mark_price");
    }
    if ctx.fault(Fault::BookSummaryExtraInstrument) {
        // The right entry first, then one of the next instrument: only a check of every
        // entry catches it.
        let other = fixtures::book_summary(&instruments[(position + 1) % instruments.len()]);
        return Ok(json!([summary, other]));
    }
    Ok(json!([summary]))
}
