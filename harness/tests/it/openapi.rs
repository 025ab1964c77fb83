//! `docs/openapi/get-endpoints.json`, the OpenAPI 3.1 description of SPEC.md's HTTP GET
//! endpoints (what Schemathesis fuzzes in `scripts/bench-side-by-side.sh`), agrees with the
//! harness's method table, `spec::METHODS`: every method served over HTTP GET has its path
//! and no other path is there, the WebSocket-only one is named as such, and each
//! parameter's name, type, listed values, bounds, default and requirement are the table's,
//! as are each method's scope, paging, pacing and authentication. A change to either that
//! the other lacks fails here.

use std::collections::BTreeSet;
use std::path::Path;

use harness::spec::{self, Interface, Method, Param, Required};
use serde_json::{Value, json};

fn document() -> Value {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../docs/openapi/get-endpoints.json");
    let text = std::fs::read_to_string(&path).expect("docs/openapi/get-endpoints.json is there");
    serde_json::from_str(&text).expect("the OpenAPI document is JSON")
}

/// The methods a client calls with HTTP GET: all but the WebSocket-only ones.
fn get_methods() -> impl Iterator<Item = &'static Method> {
    spec::METHODS
        .iter()
        .filter(|method| method.interface != Interface::WsOnly)
}

fn operation<'a>(document: &'a Value, method: &Method) -> Option<&'a Value> {
    let operation = &document["paths"][format!("/{}", method.name).as_str()]["get"];
    operation.is_object().then_some(operation)
}

/// What the document writes for a requirement: `yes`, `no`, `when <grant types>`,
/// `not-shown`.
fn required_text(required: Required) -> String {
    match required {
        Required::Yes => "yes".to_owned(),
        Required::No => "no".to_owned(),
        Required::When(condition) => format!("when {condition}"),
        Required::NotShown => "not-shown".to_owned(),
    }
}

/// The differences between one parameter of the table and the document's.
fn parameter_problems(method: &Method, param: &Param, documented: &Value) -> Vec<String> {
    let at = format!("{} {}", method.name, param.name);
    let schema = &documented["schema"];
    let mut problems = Vec::new();
    let mut expect = |what: &str, found: &Value, wanted: Value| {
        if *found != wanted {
            problems.push(format!("{at}: {what} is {found}, the table says {wanted}"));
        }
    };
    expect("in", &documented["in"], json!("query"));
    expect("schema.type", &schema["type"], json!(param.kind.name()));
    expect(
        "schema.enum",
        &schema["enum"],
        param.listed().map_or(Value::Null, |values| json!(values)),
    );
    let (minimum, maximum) = param
        .range()
        .map_or((Value::Null, Value::Null), |(min, max)| {
            (json!(min), json!(max))
        });
    expect("schema.minimum", &schema["minimum"], minimum);
    expect("schema.maximum", &schema["maximum"], maximum);
    expect(
        "schema.default",
        &schema["default"],
        param.default.map_or(Value::Null, |default| json!(default)),
    );
    expect(
        "required",
        &documented["required"],
        json!(param.required == Required::Yes),
    );
    expect(
        "x-spec-required",
        &documented["x-spec-required"],
        json!(required_text(param.required)),
    );
    expect(
        "x-type-shown",
        &documented["x-type-shown"],
        if param.kind_shown {
            Value::Null
        } else {
            json!(false)
        },
    );
    problems
}

/// The differences between one method of the table and its operation.
fn method_problems(document: &Value, method: &Method) -> Vec<String> {
    let Some(operation) = operation(document, method) else {
        return vec![format!("/{}: no GET operation for the method", method.name)];
    };
    let mut problems = Vec::new();
    let documented: Vec<&Value> = operation["parameters"]
        .as_array()
        .map(|params| params.iter().collect())
        .unwrap_or_default();
    let names: Vec<&str> = documented
        .iter()
        .filter_map(|param| param["name"].as_str())
        .collect();
    let table: Vec<&str> = method.params.iter().map(|param| param.name).collect();
    if names != table {
        problems.push(format!(
            "{}: parameters {names:?}, the table has {table:?}",
            method.name
        ));
    }
    for (param, documented) in method.params.iter().zip(documented) {
        problems.extend(parameter_problems(method, param, documented));
    }
    let mut expect = |what: &str, wanted: Value| {
        if operation[what] != wanted {
            problems.push(format!(
                "{}: {what} is {}, the table says {wanted}",
                method.name, operation[what]
            ));
        }
    };
    expect("x-spec-section", json!(method.section));
    expect(
        "x-scope",
        if method.scope.is_empty() {
            Value::Null
        } else {
            json!(method.scope)
        },
    );
    expect("x-paged", bool_or_null(method.paging.is_some()));
    expect("x-state-changing", bool_or_null(method.state_changing));
    expect(
        "x-parameters-shown",
        if method.params_shown {
            Value::Null
        } else {
            json!(false)
        },
    );
    expect(
        "x-unnamed-parameters",
        if method.unnamed_params.is_empty() {
            Value::Null
        } else {
            json!(method.unnamed_params)
        },
    );
    problems.extend(auth_problems(operation, method));
    problems
}

fn bool_or_null(flag: bool) -> Value {
    if flag { json!(true) } else { Value::Null }
}

/// A public method needs no credentials (5.1); a private one a bearer token or the Basic
/// header (5.2, 5.6); the Direct Access one its own API key as bearer (4.13), and is served
/// at `{direct_access_url}/api/v2`. Only the paced method is marked paced.
fn auth_problems(operation: &Value, method: &Method) -> Vec<String> {
    let security = match (method.private, method.interface) {
        (_, Interface::DirectAccess) => json!([{ "directAccessKey": [] }]),
        (true, _) => json!([{ "bearerAuth": [] }, { "basicAuth": [] }]),
        (false, _) => json!([]),
    };
    let mut problems = Vec::new();
    if operation["security"] != security {
        problems.push(format!(
            "{}: security is {}, SPEC.md gives it {security}",
            method.name, operation["security"]
        ));
    }
    let paced = operation.get("x-paced").is_some();
    if paced != method.paced {
        problems.push(format!(
            "{}: x-paced {paced}, the table says {}",
            method.name, method.paced
        ));
    }
    problems
}

#[test]
fn the_openapi_document_covers_every_get_method_with_the_tables_parameters() {
    let document = document();
    assert_eq!(document["openapi"], json!("3.1.0"));
    assert_eq!(document["info"]["version"], json!(spec::INTERFACE_VERSION));
    let mut problems: Vec<String> = get_methods()
        .flat_map(|method| method_problems(&document, method))
        .collect();
    let paths: BTreeSet<String> = document["paths"]
        .as_object()
        .expect("paths")
        .keys()
        .cloned()
        .collect();
    let wanted: BTreeSet<String> = get_methods()
        .map(|method| format!("/{}", method.name))
        .collect();
    for extra in paths.difference(&wanted) {
        problems.push(format!(
            "{extra}: a path the method table has no GET method for"
        ));
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

#[test]
fn the_websocket_only_methods_are_named_and_left_out() {
    let document = document();
    let ws_only: Vec<&str> = spec::METHODS
        .iter()
        .filter(|method| method.interface == Interface::WsOnly)
        .map(|method| method.name)
        .collect();
    assert!(!ws_only.is_empty());
    assert_eq!(document["x-ws-only-methods"], json!(ws_only));
    for name in ws_only {
        assert!(document["paths"].get(format!("/{name}")).is_none());
    }
}

#[test]
fn the_servers_are_spec_md_base_url_and_direct_access_url() {
    let document = document();
    assert_eq!(document["servers"][0]["url"], json!("{base_url}"));
    let default = document["servers"][0]["variables"]["base_url"]["default"]
        .as_str()
        .expect("a default base_url");
    assert!(default.ends_with(spec::API_PREFIX), "{default}");
    for method in get_methods() {
        let servers = &document["paths"][format!("/{}", method.name).as_str()]["servers"];
        if method.interface == Interface::DirectAccess {
            let url = format!("{{direct_access_url}}{}", spec::API_PREFIX);
            assert_eq!(servers[0]["url"], json!(url), "{}", method.name);
        } else {
            assert!(servers.is_null(), "{}: a server of its own", method.name);
        }
    }
}
