//! `harness lint-response METHOD FILE`: checks a captured response (a JSON-RPC envelope or
//! a bare result) against the method's result schema and prints each violation with its
//! JSON path and the clause it breaks.

use std::path::PathBuf;

use clap::Args;
use harness::check::{Catalog, SchemaSet};
use harness::jsonrpc::validate_response;
use serde_json::Value;

use super::{CliError, cases_dir, exit};

#[derive(Debug, Args)]
pub(crate) struct LintResponseArgs {
    /// The method whose result the file holds, e.g. private/get_transaction_log.
    method: String,
    /// The captured response; `-` reads standard input.
    file: PathBuf,
    /// Case directory holding clauses.toml and schemas/ (default: ./cases).
    #[arg(long, value_name = "DIR")]
    cases: Option<PathBuf>,
}

/// The clause a method's result schema stands for.
fn result_clause(method: &str) -> String {
    if method == "public/auth" {
        return "auth.token_set.shape".to_owned();
    }
    let name = method.rsplit('/').next().unwrap_or(method);
    format!("m.{name}.result")
}

pub(crate) fn lint_response(args: LintResponseArgs) -> Result<u8, CliError> {
    let dir = cases_dir(args.cases);
    let schemas = SchemaSet::load(&dir.join("schemas")).map_err(CliError::usage)?;
    let catalog = Catalog::load(&dir.join("clauses.toml")).map_err(CliError::usage)?;
    let Some(schema) = schemas.for_method(&args.method) else {
        let known: Vec<&str> = schemas
            .names()
            .filter_map(|name| name.strip_prefix("method."))
            .collect();
        let methods: Vec<String> = known
            .iter()
            .map(|name| name.replacen('.', "/", 1))
            .collect();
        let hint =
            harness::file_error::did_you_mean(&args.method, methods.iter().map(String::as_str))
                .map(|method| format!(" (did you mean \"{method}\"?)"))
                .unwrap_or_default();
        return Err(CliError::usage(format!(
            "no result schema for method \"{}\"{hint}; known: {}",
            args.method,
            methods.join(", ")
        )));
    };
    let text = if args.file.as_os_str() == "-" {
        std::io::read_to_string(std::io::stdin()).map_err(CliError::usage)?
    } else {
        std::fs::read_to_string(&args.file).map_err(|error| {
            CliError::usage(format!("failed to read {}: {error}", args.file.display()))
        })?
    };
    let value: Value = serde_json::from_str(&text).map_err(|error| {
        CliError::usage(format!(
            "{}:{}: not JSON: {error}",
            args.file.display(),
            error.line()
        ))
    })?;
    let is_envelope = value
        .as_object()
        .is_some_and(|object| object.contains_key("jsonrpc") || object.contains_key("error"));
    let mut violations: Vec<(String, String, String)> = Vec::new();
    let result = if is_envelope {
        for violation in validate_response(&value, None) {
            violations.push((
                "/".to_owned(),
                violation.clause().to_owned(),
                violation.to_string(),
            ));
        }
        match value.get("result") {
            Some(result) => result.clone(),
            None => {
                violations.push((
                    "/".to_owned(),
                    "env.response.result".to_owned(),
                    "the envelope carries no result to check".to_owned(),
                ));
                Value::Null
            }
        }
    } else {
        value
    };
    let clause = result_clause(&args.method);
    let clause = if catalog.get(&clause).is_some() {
        clause
    } else {
        String::from("-")
    };
    if !result.is_null() || !is_envelope {
        for violation in schemas.validate(&schema, &result).unwrap_or_default() {
            let path = if violation.path.is_empty() {
                "/".to_owned()
            } else {
                violation.path.clone()
            };
            violations.push((path, clause.clone(), violation.message));
        }
    }
    for (path, clause, message) in &violations {
        println!("{}: {path}: [{clause}] {message}", args.file.display());
    }
    if violations.is_empty() {
        println!("{}: conforms to {schema}", args.file.display());
        Ok(exit::PASS)
    } else {
        println!("{} violation(s) of {schema}", violations.len());
        Ok(exit::FAIL)
    }
}
