//! Result shapes under the spec-open variants that change what a result looks like but not
//! what it means: further members SPEC.md describes without names, no optional `sid`,
//! `null` and string where a member's type allows them, the last trigger-history page
//! marked with `null`, and member records with other field names. One pass over a method's
//! result after its handler ran, so the handlers stay written for the reference's own
//! choices.

use serde_json::{Map, Value, json};

use super::Variant;
use super::ctx::Ctx;
use harness_protocol::spec;

/// Applies every shape-changing variant that is on to `result`.
pub(crate) fn result(ctx: &Ctx<'_>, result: &mut Value) {
    let name = ctx.method.name;
    if ctx.variant(Variant::ExtraMembers) {
        extra_members(ctx, name, result);
    }
    if ctx.variant(Variant::OptionalMembersOmitted)
        && ctx.method.issues_tokens
        && let Some(object) = result.as_object_mut()
    {
        object.remove("sid");
    }
    // The paged method whose last page's continuation SPEC.md leaves open (4.7).
    if ctx.variant(Variant::TriggerEndNull)
        && ctx.method.paging.is_some_and(|paging| !paging.null_at_end)
        && let Some(object) = result.as_object_mut()
    {
        object.entry("continuation").or_insert(Value::Null);
    }
    if ctx.variant(Variant::NullsAndStrings) && name == spec::TYPED_LOG_METHOD {
        for entry in items(result, "logs") {
            nulls_and_strings(entry);
        }
    }
}

/// The entries of an array member of an object result, or of an array result.
fn items<'a>(result: &'a mut Value, member: &str) -> Vec<&'a mut Map<String, Value>> {
    let array = match result {
        Value::Array(array) => Some(array),
        Value::Object(object) => object.get_mut(member).and_then(Value::as_array_mut),
        _ => None,
    };
    array
        .into_iter()
        .flatten()
        .filter_map(Value::as_object_mut)
        .collect()
}

/// Members SPEC.md describes without giving their names (2.1, 2.2, 2.3, 2.5, 4.1), under
/// names of the variant's choosing, and a member of its own on each paged result.
fn extra_members(ctx: &Ctx<'_>, name: &str, result: &mut Value) {
    match name {
        _ if ctx.method.issues_tokens => {
            if let Some(object) = result.as_object_mut() {
                object.insert("security_key_state".to_owned(), json!("enabled"));
                object.insert("from_identity_provider".to_owned(), json!(false));
                if let Some(state) = ctx.params.str("state") {
                    object.insert("state".to_owned(), json!(state));
                }
            }
        }
        "private/get_trigger_order_history" => {
            for entry in items(result, "entries") {
                entry.insert("reduce_only".to_owned(), json!(false));
                entry.insert("post_only".to_owned(), json!(true));
                entry.insert("order_type".to_owned(), json!("limit"));
                entry.insert("is_secondary_oto".to_owned(), json!(false));
            }
            page_total(result);
        }
        "private/get_transaction_log" => {
            for entry in items(result, "logs") {
                entry.insert("fee_balance".to_owned(), json!(0.0));
                entry.insert("contracts".to_owned(), json!(1.0));
            }
            page_total(result);
        }
        "public/get_currencies" => {
            for entry in items(result, "") {
                entry.insert("in_cross_collateral_pool".to_owned(), json!(true));
                entry.insert("apr".to_owned(), json!(0.0));
            }
        }
        _ => {}
    }
}

fn page_total(result: &mut Value) {
    if let Some(object) = result.as_object_mut() {
        object.insert("server_time_ms".to_owned(), json!(0));
    }
}

/// Section 2.3's "or null" members null, and `info` as a string.
fn nulls_and_strings(entry: &mut Map<String, Value>) {
    for member in ["commission", "interest_pl"] {
        if entry.contains_key(member) {
            entry.insert(member.to_owned(), Value::Null);
        }
    }
    let info = match entry.get("info") {
        Some(Value::String(text)) => text.clone(),
        Some(Value::Null) | None => String::new(),
        Some(other) => other.to_string(),
    };
    entry.insert("info".to_owned(), Value::String(info));
}
