//! The Direct Access order the reference serves for the target file's `direct_access_order`
//! fixture. SPEC.md describes no Direct Access order (section 1: the interface "has a
//! portfolio lock operation"), only what the lock does to one: "after `lock_portfolio`, new
//! Direct Access orders and quotes are rejected until the portfolio is unlocked" (3, 4.13).
//! So the reference takes an order at `{direct_access_url}/api/v2/private/buy` with the
//! Direct Access key as bearer, as `lock_portfolio` takes it, and refuses it once the
//! portfolio is locked. It keeps the order open until a lock cancels it (4.13: "all open
//! Direct Access orders and quotes of the authenticated portfolio are cancelled at once"),
//! and reads it back at `{direct_access_url}/api/v2/private/get_order_state` (`orders.rs`).

use std::sync::atomic::Ordering;

use serde_json::{Map, Value, json};

use super::ServerState;
use super::fault::Fault;
use super::fixtures::DEFAULT_INSTRUMENT;
use super::orders::{ORDER_ID_PARAM, Placed};
use harness_model::target_file::DirectAccessOrder;
use harness_protocol::auth::sign;
use harness_protocol::jsonrpc::ErrorObject;

/// The method of the reference's Direct Access order.
pub(crate) const DIRECT_ORDER_METHOD: &str = "private/buy";

/// The order the reference's target file names: a limit buy of the default instrument at
/// a price far below the market.
pub(crate) fn fixture() -> DirectAccessOrder {
    let params: Map<String, Value> = [
        ("instrument_name", json!(DEFAULT_INSTRUMENT)),
        ("amount", json!(10)),
        ("type", json!("limit")),
        ("price", json!(1)),
    ]
    .into_iter()
    .map(|(name, value)| (name.to_owned(), value))
    .collect();
    DirectAccessOrder {
        method: DIRECT_ORDER_METHOD.to_owned(),
        params,
    }
}

impl ServerState {
    /// A Direct Access order: the bearer value must be the Direct Access API key; refused
    /// once the portfolio is locked (unless the `lock-keeps-direct-orders` fault is on).
    pub(crate) fn direct_order(&self, authorization: Option<&str>) -> Result<Value, ErrorObject> {
        self.direct_key(authorization)?;
        if self.portfolio_locked.load(Ordering::Relaxed)
            && !self.fault(Fault::LockKeepsDirectOrders)
        {
            return Err(ErrorObject::bad_request(
                "the portfolio is locked: new direct access orders are rejected until it is unlocked",
            ));
        }
        let entry = json!({"order_state": "open", "instrument_name": DEFAULT_INSTRUMENT});
        let id = self
            .orders
            .open(Placed::DirectAccess, "direct", entry.clone());
        let mut order = entry;
        order["order_id"] = json!(id);
        Ok(json!({ "order": order }))
    }

    /// A Direct Access read of an order by id (the target file's `direct_access_order_read`).
    pub(crate) fn direct_read(
        &self,
        authorization: Option<&str>,
        params: &Map<String, Value>,
    ) -> Result<Value, ErrorObject> {
        self.direct_key(authorization)?;
        self.direct_order_state(params.get(ORDER_ID_PARAM).and_then(Value::as_str))
    }

    /// Refuses a bearer value that is not the Direct Access API key.
    fn direct_key(&self, authorization: Option<&str>) -> Result<(), ErrorObject> {
        let key_ok = authorization
            .and_then(|value| {
                let (scheme, key) = value.trim().split_once(' ')?;
                scheme.eq_ignore_ascii_case("bearer").then(|| key.trim())
            })
            .is_some_and(|key| sign::signatures_match(self.direct_access_key.expose(), key));
        if key_ok {
            Ok(())
        } else {
            Err(ErrorObject::unauthorized(
                "a valid direct access api key is required",
            ))
        }
    }
}
