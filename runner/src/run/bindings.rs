//! What a template of a step sees (`{{name}}`): the execution's captures, the target
//! file's fixtures, account ids and field names (`[field_names]`, for fields SPEC.md
//! describes without naming), the clock, a fresh nonce, a word unique to the execution
//! (`unique`, for names a server may hold unique), the JSON-RPC id of the request
//! about to go (`request_id`), and the position this execution
//! drew from the target's pool for a closing case ([`Shared::draw_position`](super::Shared::draw_position)),
//! and the option that expired out of the money the current pass checks
//! (`fixtures.expired_otm_option.*`: each option of the target's pool in turn).

use serde_json::Value;

use super::exec::Execution;
use super::template::Bindings;
use harness_protocol::auth::nonce::fresh_nonce;

impl Bindings for Execution<'_> {
    fn value_of(&self, name: &str) -> Option<Value> {
        if let Some(value) = self.captures.get(name) {
            return Some(value.clone());
        }
        if let Some(value) = self.execution_value(name) {
            return Some(value);
        }
        let target = &self.shared.target;
        let fixtures = &target.fixtures;
        if let Some(value) = fixture_value(fixtures, name) {
            return Some(value);
        }
        // A subscription the target file names: `{{fixtures.subscription.method}}`.
        if let Some(request) = name
            .strip_prefix("fixtures.")
            .and_then(|key| key.strip_suffix(".method"))
            .and_then(|key| fixtures.subscription_of(key))
        {
            return Some(Value::from(request.method.clone()));
        }
        if let Some(value) = super::order_read::binding(fixtures, name) {
            return Some(value);
        }
        if let Some(field) = name.strip_prefix("field_names.") {
            let (record, field) = field.split_once('.')?;
            let names = target.field_names.get(record)?;
            return names.get(field).cloned().map(Value::from);
        }
        let role = name.strip_prefix("account.")?.strip_suffix(".client_id")?;
        target
            .accounts
            .get(role)
            .map(|account| Value::from(account.client_id.clone()))
    }
}

impl Execution<'_> {
    /// The names whose value is the execution's own: the clock, a nonce, the next id, its
    /// unique word, its position, the expired option of its pass, and the limits it reads.
    fn execution_value(&self, name: &str) -> Option<Value> {
        let limits = &self.shared.target.limits;
        let option = self.expired_option.as_ref();
        match name {
            "now_ms" => Some(Value::from(self.session.timestamp(0))),
            "nonce" => Some(Value::from(fresh_nonce())),
            "request_id" => Some(Value::from(self.next_id)),
            "unique" => {
                let unique = self.unique.get_or_init(|| {
                    let word = fresh_nonce().to_ascii_lowercase();
                    self.shared.redactor.add(word.clone());
                    word
                });
                Some(Value::from(unique.clone()))
            }
            "fixtures.position" => self.position.clone().map(Value::from),
            "fixtures.expired_otm_option.instrument_name" => {
                option.map(|option| Value::from(option.instrument_name.clone()))
            }
            "fixtures.expired_otm_option.currency" => {
                option.map(|option| Value::from(option.currency.clone()))
            }
            "fixtures.expired_otm_option.expired_at" => {
                option.and_then(|option| option.expired_at).map(Value::from)
            }
            "limits.transaction_log_burst" => Some(Value::from(limits.transaction_log_burst)),
            // How far apart two clocks, each within the target file's skew of the true
            // time, may read: the wait after which a timestamp put inside the window by
            // the skew has surely left it on the target's clock.
            "limits.clock_skew_span_s" => Some(Value::from(
                limits.clock_skew_ms.saturating_mul(2) as f64 / 1000.0,
            )),
            _ => None,
        }
    }
}

/// The value of a fixture the target file gives (`fixtures.<name>`), for the fixtures
/// that are one value.
fn fixture_value(fixtures: &harness_model::target_file::Fixtures, name: &str) -> Option<Value> {
    match name {
        "fixtures.subaccount_id" => fixtures.subaccount_id.map(Value::from),
        "fixtures.member_id" => fixtures.member_id.map(Value::from),
        "fixtures.kept_member_id" => fixtures.kept_member_id.map(Value::from),
        "fixtures.second_member_id" => fixtures.second_member_id.map(Value::from),
        "fixtures.two_factor_subaccount_id" => fixtures.two_factor_subaccount_id.map(Value::from),
        "fixtures.no_direct_access_member_id" => {
            fixtures.no_direct_access_member_id.map(Value::from)
        }
        "fixtures.mmp_reset_index" => fixtures.mmp_reset_index.clone().map(Value::from),
        "fixtures.mmp_triggered_index" => fixtures.mmp_triggered_index.clone().map(Value::from),
        "fixtures.mmp_block_rfq_index" => fixtures.mmp_block_rfq_index.clone().map(Value::from),
        "fixtures.direct_access_order.method" => fixtures
            .direct_access_order
            .as_ref()
            .map(|order| Value::from(order.method.clone())),
        "fixtures.instrument_name" => fixtures.instrument_name.clone().map(Value::from),
        "fixtures.other_instrument_name" => fixtures.other_instrument_name.clone().map(Value::from),
        "fixtures.currency" => fixtures.currency.clone().map(Value::from),
        _ => None,
    }
}
