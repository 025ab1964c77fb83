//! `harness lint-response [--method METHOD] PATH...`: judges captured responses (files, or
//! directories of `*.json` files): a success envelope's result against the method's
//! schema, an error envelope as an error (see `harness_model::check::judge_captured`). One line
//! per file with its verdict, the observations under it, then a summary.
//!
//! Each file's method comes from `--method`, else from its name: up to the first `.`,
//! `public` or `private`, then `_` or `-`, then the method name
//! (`private_get_transaction_log.json`, `private-get_transaction_log.page2.json`). The
//! older form `lint-response METHOD FILE` still works.
//!
//! Exit codes as `harness run`: 0 no file fails, 1 a file fails, 2 bad arguments or a
//! file that cannot be judged (unreadable, not JSON, no method).

use std::io::Read;
use std::path::{Path, PathBuf};

use clap::Args;
use harness_model::check::{
    Captured, Catalog, ResponseForm, SchemaSet, Verdict, judge_captured, method_from_file_name,
};
use harness_protocol::file_error::did_you_mean;
use serde_json::Value;

use super::{CliError, CorpusArgs, exit};

#[derive(Debug, Args)]
pub(crate) struct LintResponseArgs {
    /// Captured responses: files, directories of *.json files, or `-` for standard input
    /// (with --method).
    #[arg(required = true, value_name = "PATH")]
    paths: Vec<PathBuf>,
    /// The method every file answers, e.g. private/get_transaction_log (default: from each
    /// file's name).
    #[arg(long, value_name = "METHOD")]
    method: Option<String>,
    #[command(flatten)]
    corpus: CorpusArgs,
}

pub(crate) fn lint_response(args: LintResponseArgs) -> Result<u8, CliError> {
    let corpus = args.corpus.load()?;
    let (schemas, catalog) = (corpus.schemas, corpus.catalog);
    let methods: Vec<String> = schemas
        .names()
        .filter_map(|name| name.strip_prefix("method."))
        .map(|name| name.replacen('.', "/", 1))
        .collect();
    let (method, paths) = legacy_form(args.method, args.paths);
    if let Some(method) = &method {
        check_method(method, &methods)?;
    }
    let mut files = Vec::new();
    for path in paths {
        collect(&path, &mut files)?;
    }
    if files.is_empty() {
        return Err(CliError::usage("no *.json file to judge"));
    }
    let mut counts = std::collections::BTreeMap::<Verdict, usize>::new();
    let mut unjudged = 0;
    for file in &files {
        match judge_file(file, method.as_deref(), &methods, &schemas, &catalog) {
            Ok((method, captured)) => {
                print_file(file, &method, &captured);
                *counts.entry(captured.verdict).or_default() += 1;
            }
            Err(error) => {
                outln!("{error}");
                *counts.entry(Verdict::Error).or_default() += 1;
                unjudged += 1;
            }
        }
    }
    let summary: Vec<String> = Verdict::ALL
        .iter()
        .filter_map(|verdict| {
            counts
                .get(verdict)
                .map(|count| format!("{count} {verdict}"))
        })
        .collect();
    outln!("{} file(s): {}", files.len(), summary.join(", "));
    Ok(if counts.contains_key(&Verdict::Fail) {
        exit::FAIL
    } else if unjudged > 0 {
        exit::USAGE
    } else {
        exit::PASS
    })
}

/// `lint-response METHOD FILE...` (the older form): the first argument is a method when
/// no `--method` is given, it names one, and no file has that name.
fn legacy_form(method: Option<String>, mut paths: Vec<PathBuf>) -> (Option<String>, Vec<PathBuf>) {
    if method.is_none() && paths.len() >= 2 {
        let first = paths[0].to_string_lossy().into_owned();
        let names_method = first.starts_with("public/") || first.starts_with("private/");
        if names_method && !paths[0].exists() {
            paths.remove(0);
            return (Some(first), paths);
        }
    }
    (method, paths)
}

fn check_method(method: &str, methods: &[String]) -> Result<(), CliError> {
    if methods.iter().any(|known| known == method) {
        return Ok(());
    }
    let hint = did_you_mean(method, methods.iter().map(String::as_str))
        .map(|close| format!(" (did you mean \"{close}\"?)"))
        .unwrap_or_default();
    Err(CliError::usage(format!(
        "no result schema for method \"{method}\"{hint}; known: {}",
        methods.join(", ")
    )))
}

/// A file, or every `*.json` file under a directory (in path order).
fn collect(path: &Path, files: &mut Vec<PathBuf>) -> Result<(), CliError> {
    if !path.is_dir() {
        files.push(path.to_owned());
        return Ok(());
    }
    let entries = std::fs::read_dir(path).map_err(|error| {
        CliError::usage(format!(
            "failed to read directory {}: {error}",
            path.display()
        ))
    })?;
    let mut found: Vec<PathBuf> = entries
        .filter_map(|entry| entry.ok().map(|entry| entry.path()))
        .collect();
    found.sort();
    for entry in found {
        if entry.is_dir() {
            collect(&entry, files)?;
        } else if entry.extension().is_some_and(|ext| ext == "json") {
            files.push(entry);
        }
    }
    Ok(())
}

/// Reads and judges one file; `Err` says why it cannot be judged, as its line.
fn judge_file(
    file: &Path,
    method: Option<&str>,
    methods: &[String],
    schemas: &SchemaSet,
    catalog: &Catalog,
) -> Result<(String, Captured), UnjudgedError> {
    let file_path = file.to_path_buf();
    let method = match method {
        Some(method) => method.to_owned(),
        None => {
            let name = file
                .file_name()
                .map(|name| name.to_string_lossy().into_owned())
                .unwrap_or_default();
            match method_from_file_name(&name) {
                Some(method) if methods.contains(&method) => method,
                guessed => {
                    let close = guessed
                        .as_deref()
                        .and_then(|guess| did_you_mean(guess, methods.iter().map(String::as_str)))
                        .map(str::to_owned);
                    return Err(UnjudgedError::NoMethod {
                        file: file_path,
                        close,
                    });
                }
            }
        }
    };
    let text = if file.as_os_str() == "-" {
        let mut text = String::new();
        std::io::stdin()
            .read_to_string(&mut text)
            .map_err(|source| UnjudgedError::ReadStdin {
                file: file_path.clone(),
                source,
            })?;
        text
    } else {
        std::fs::read_to_string(file).map_err(|source| UnjudgedError::Read {
            file: file_path.clone(),
            source,
        })?
    };
    let value: Value = serde_json::from_str(&text).map_err(|source| UnjudgedError::NotJson {
        file: file_path,
        source,
    })?;
    let captured = judge_captured(&method, &value, schemas, catalog);
    Ok((method, captured))
}

/// Why a file cannot be judged; shown as its line of the output.
#[derive(Debug, thiserror::Error)]
enum UnjudgedError {
    /// No `--method`, and the file's name names no known method.
    #[error(
        "{}: ERROR no known method in the file name{}: name it like private_get_transaction_log.json or pass --method",
        .file.display(),
        .close.as_ref().map(|close| format!(" (did you mean \"{close}\"?)")).unwrap_or_default()
    )]
    NoMethod {
        /// The file.
        file: PathBuf,
        /// The known method its name is close to.
        close: Option<String>,
    },
    /// `-` and standard input could not be read.
    #[error("{}: ERROR failed to read standard input: {source}", .file.display())]
    ReadStdin {
        /// The file (`-`).
        file: PathBuf,
        /// The I/O error.
        source: std::io::Error,
    },
    /// The file could not be read.
    #[error("{}: ERROR failed to read: {source}", .file.display())]
    Read {
        /// The file.
        file: PathBuf,
        /// The I/O error.
        source: std::io::Error,
    },
    /// The file is not JSON.
    #[error("{}:{}: ERROR not JSON: {source}", .file.display(), .source.line())]
    NotJson {
        /// The file.
        file: PathBuf,
        /// The parse error.
        source: serde_json::Error,
    },
}

fn print_file(file: &Path, method: &str, captured: &Captured) {
    let answer = match &captured.form {
        ResponseForm::Result => "result".to_owned(),
        ResponseForm::BareResult => "bare result".to_owned(),
        ResponseForm::Malformed => "malformed envelope".to_owned(),
        ResponseForm::Error { code, message } => format!(
            "error {} {}",
            code.map_or_else(|| "(no integer code)".to_owned(), |code| code.to_string()),
            message.as_deref().unwrap_or("(no string message)")
        ),
    };
    outln!(
        "{}: {} {method} {answer}",
        file.display(),
        captured.verdict.as_str().to_uppercase()
    );
    for observation in &captured.observations {
        outln!(
            "  {} {}: [{}] {}",
            observation.verdict,
            observation.path,
            observation.clause,
            observation.message
        );
    }
}
