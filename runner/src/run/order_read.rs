//! The target file's order reads in a case: what their templates see
//! (`{{fixtures.order_read.method}}`, `.open_states`, `.cancelled_states`, the same under
//! `fixtures.direct_access_order_read`, with its `.id_path`, and
//! `{{fixtures.resting_close_price}}`), and the parameter a read step sends the order id
//! in. SPEC.md describes no request that reads an order back, so a case writes the id as
//! `order_id` and the target file's `param` names it on the wire.

use serde_json::Value;

use harness_model::target_file::{Fixtures, OrderRead};
use harness_protocol::wire::TransportKind;

/// The name a case gives the order id of a read step.
const CASE_PARAM: &str = "order_id";

/// The value of a template naming an order read or the resting price, if it is one of
/// them and the target file gives it.
pub(super) fn binding(fixtures: &Fixtures, name: &str) -> Option<Value> {
    if name == "fixtures.resting_close_price" {
        return fixtures.resting_close_price.map(Value::from);
    }
    let (read, member) = if let Some(member) = name.strip_prefix("fixtures.order_read.") {
        (fixtures.order_read.as_ref()?, member)
    } else {
        let member = name.strip_prefix("fixtures.direct_access_order_read.")?;
        (fixtures.direct_access_order_read.as_ref()?, member)
    };
    let list = |states: &[String]| Value::from(states.to_vec());
    match member {
        "method" => Some(Value::from(read.method.clone())),
        "id_path" => read.id_path.clone().map(Value::from),
        "open_states" => Some(list(&read.open_states)),
        "cancelled_states" => Some(list(&read.cancelled_states)),
        _ => None,
    }
}

/// The read a step over `transport` calling `method` sends, if it is one: the Direct
/// Access read over `rest`, the JSON-RPC one elsewhere.
fn read_of<'a>(
    fixtures: &'a Fixtures,
    method: &str,
    transport: TransportKind,
) -> Option<&'a OrderRead> {
    let read = if transport == TransportKind::Rest {
        fixtures.direct_access_order_read.as_ref()
    } else {
        fixtures.order_read.as_ref()
    }?;
    (read.method == method).then_some(read)
}

/// Renames a read step's `order_id` to the parameter the target file names.
pub(super) fn name_the_id(
    fixtures: &Fixtures,
    method: &str,
    transport: TransportKind,
    params: &mut serde_json::Map<String, Value>,
) {
    if let Some(read) = read_of(fixtures, method, transport)
        && read.param != CASE_PARAM
        && let Some(id) = params.remove(CASE_PARAM)
    {
        params.insert(read.param.clone(), id);
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn read(method: &str, param: &str) -> OrderRead {
        OrderRead {
            method: method.to_owned(),
            param: param.to_owned(),
            id_path: None,
            open_states: vec!["open".to_owned()],
            cancelled_states: Vec::new(),
        }
    }

    #[test]
    fn templates_see_the_reads_and_the_id_goes_in_the_parameter_of_the_transports_read() {
        let fixtures = Fixtures {
            order_read: Some(read("private/get_order_state", "id")),
            direct_access_order_read: Some(read("private/order", CASE_PARAM)),
            ..Fixtures::default()
        };
        assert_eq!(
            binding(&fixtures, "fixtures.order_read.open_states"),
            Some(json!(["open"]))
        );
        assert_eq!(
            binding(&fixtures, "fixtures.order_read.cancelled_states"),
            Some(json!([]))
        );
        assert_eq!(
            binding(&fixtures, "fixtures.direct_access_order_read.id_path"),
            None
        );
        assert_eq!(binding(&fixtures, "fixtures.resting_close_price"), None);
        let sent = |method: &str, transport| {
            let mut params = serde_json::Map::from_iter([(CASE_PARAM.to_owned(), json!("o-1"))]);
            name_the_id(&fixtures, method, transport, &mut params);
            Value::Object(params)
        };
        assert_eq!(
            sent("private/get_order_state", TransportKind::Ws),
            json!({"id": "o-1"})
        );
        // Over Direct Access the Direct Access read's parameter is the case's own name.
        assert_eq!(
            sent("private/get_order_state", TransportKind::Rest),
            json!({"order_id": "o-1"})
        );
        assert_eq!(
            sent("private/close_position", TransportKind::Ws),
            json!({"order_id": "o-1"})
        );
    }
}
