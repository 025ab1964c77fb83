//! The reference's resting orders and the request that reads one back. SPEC.md describes
//! no order request but `close_position` and no read of an order ("Order state set and
//! transitions of orders: not shown beyond the sample state filled", 3), yet two of its
//! rules are about open orders: logout "does not trigger cancel-on-disconnect: open orders
//! and quotes stay active" (4.4), and `lock_portfolio` cancels "all open Direct Access
//! orders and quotes of the authenticated portfolio ... at once" (4.13). So the reference
//! keeps two kinds of open order, a `close_position` limit order priced far from the market
//! (a sell at [`RESTING_FACTOR`] times the mark or more) and the Direct Access order its
//! target file names, and serves `private/get_order_state` (the target file's
//! `order_read`, and `direct_access_order_read` over Direct Access) to read either by id.
//! The book is bounded: the oldest order goes when it is full (the fuzzer places many).

use std::collections::VecDeque;
use std::sync::{Mutex, PoisonError};

use serde_json::{Value, json};

use super::ServerState;
use super::fault::Fault;
use harness_model::target_file::OrderRead;
use harness_protocol::jsonrpc::ErrorObject;
use harness_protocol::spec;

/// The method that reads an order back, on both interfaces.
pub(crate) const ORDER_READ_METHOD: &str = "private/get_order_state";

/// The parameter carrying the order id.
pub(crate) const ORDER_ID_PARAM: &str = "order_id";

/// The state of an open order, and of a cancelled one.
pub(crate) const OPEN: &str = "open";
const CANCELLED: &str = "cancelled";

/// A close limit order priced at this many times the mark or more rests (the close is a
/// sell); the 24h high a case prices at (1.02 times the mark) still fills.
pub(crate) const RESTING_FACTOR: f64 = 1.5;

/// The limit price the reference's target file names as resting for every position.
pub(crate) const RESTING_CLOSE_PRICE: f64 = 10_000_000.0;

/// The most orders kept.
const BOOK_CAPACITY: usize = 1024;

/// The JSON-RPC read: a private method outside SPEC.md's table, served beside it.
pub(crate) static ORDER_READ: spec::Method = spec::Method {
    name: ORDER_READ_METHOD,
    section: "3",
    private: true,
    interface: spec::Interface::JsonRpc,
    scope: &[],
    scope_clause: "",
    params: &[],
    params_shown: false,
    unnamed_params: &[],
    paging: None,
    paced: false,
    rate_clause: None,
    state_changing: false,
    clause: "",
    result_clause: None,
    issues_tokens: false,
};

/// Where an order came from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Placed {
    /// A `close_position` of the JSON-RPC interface, by this user.
    JsonRpc(u64),
    /// The Direct Access interface (the one portfolio its key names).
    DirectAccess,
}

/// One order of the book.
#[derive(Debug)]
struct Order {
    id: String,
    placed: Placed,
    state: &'static str,
    entry: Value,
}

/// The orders the reference keeps, oldest first, behind a lock of their own.
#[derive(Debug, Default)]
pub(crate) struct OrderBook(Mutex<Book>);

#[derive(Debug, Default)]
struct Book {
    orders: VecDeque<Order>,
    next_id: u64,
}

impl OrderBook {
    fn book(&self) -> std::sync::MutexGuard<'_, Book> {
        self.0.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Keeps `entry` as an open order and returns its id (written into the entry).
    pub(crate) fn open(&self, placed: Placed, prefix: &str, mut entry: Value) -> String {
        let mut book = self.book();
        book.next_id += 1;
        let id = format!("{prefix}-{}", book.next_id);
        if let Some(object) = entry.as_object_mut() {
            object.insert("order_id".to_owned(), json!(id));
            object.insert("order_state".to_owned(), json!(OPEN));
        }
        if book.orders.len() == BOOK_CAPACITY {
            book.orders.pop_front();
        }
        book.orders.push_back(Order {
            id: id.clone(),
            placed,
            state: OPEN,
            entry,
        });
        id
    }

    /// Cancels every open order placed so.
    pub(crate) fn cancel_all(&self, placed: Placed) {
        for order in &mut self.book().orders {
            if order.placed == placed && order.state == OPEN {
                order.state = CANCELLED;
            }
        }
    }

    /// The order of this id, as placed so, with its current state.
    pub(crate) fn read(&self, id: &str, placed: Placed) -> Option<Value> {
        let book = self.book();
        let order = book
            .orders
            .iter()
            .find(|order| order.id == id && order.placed == placed)?;
        let mut entry = order.entry.clone();
        if let Some(object) = entry.as_object_mut() {
            object.insert("order_state".to_owned(), json!(order.state));
        }
        Some(entry)
    }

    #[cfg(test)]
    fn len(&self) -> usize {
        self.book().orders.len()
    }
}

/// The reference's `order_read` (JSON-RPC) or `direct_access_order_read`.
pub(crate) fn read_fixture(direct_access: bool) -> OrderRead {
    OrderRead {
        method: ORDER_READ_METHOD.to_owned(),
        param: ORDER_ID_PARAM.to_owned(),
        id_path: direct_access.then(|| "result.order.order_id".to_owned()),
        open_states: vec![OPEN.to_owned()],
        cancelled_states: vec![CANCELLED.to_owned()],
    }
}

impl ServerState {
    /// Logout keeps the caller's orders open (SPEC.md 4.4), unless the
    /// `logout-cancels-orders` fault is on.
    pub(crate) fn on_logout(&self, user_id: u64) {
        if self.fault(Fault::LogoutCancelsOrders) {
            self.orders.cancel_all(Placed::JsonRpc(user_id));
        }
    }

    /// The lock cancels every open Direct Access order (SPEC.md 4.13), unless the
    /// `lock-keeps-open-direct-orders` fault is on.
    pub(crate) fn on_lock(&self) {
        if !self.fault(Fault::LockKeepsOpenDirectOrders) {
            self.orders.cancel_all(Placed::DirectAccess);
        }
    }

    /// A Direct Access read of an order the Direct Access interface placed: the API key
    /// has been checked.
    pub(crate) fn direct_order_state(&self, id: Option<&str>) -> Result<Value, ErrorObject> {
        let id = id.ok_or_else(|| ErrorObject::invalid_params(ORDER_ID_PARAM, "required"))?;
        self.orders
            .read(id, Placed::DirectAccess)
            .ok_or_else(|| ErrorObject::invalid_params(ORDER_ID_PARAM, "no such order"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_cancel_reaches_only_the_open_orders_placed_its_way_and_the_book_is_bounded() {
        let book = OrderBook::default();
        let mine = book.open(Placed::JsonRpc(1), "close", json!({}));
        let direct = book.open(Placed::DirectAccess, "direct", json!({}));
        book.cancel_all(Placed::DirectAccess);
        let state = |book: &OrderBook, id: &str, placed: Placed| {
            book.read(id, placed)
                .map(|entry| entry["order_state"].clone())
        };
        assert_eq!(state(&book, &mine, Placed::JsonRpc(1)), Some(json!(OPEN)));
        assert_eq!(state(&book, &mine, Placed::JsonRpc(2)), None);
        assert_eq!(
            state(&book, &direct, Placed::DirectAccess),
            Some(json!(CANCELLED))
        );
        for _ in 0..BOOK_CAPACITY {
            book.open(Placed::DirectAccess, "direct", json!({}));
        }
        assert_eq!(book.len(), BOOK_CAPACITY);
        assert_eq!(state(&book, &mine, Placed::JsonRpc(1)), None);
    }
}
