//! `harness diff OLD/report.json NEW/report.json`: what newly fails, what newly passes,
//! and the executions added and removed; exit 1 on a regression. `--format markdown`
//! prints a pull-request comment.

use std::path::{Path, PathBuf};

use clap::{Args, ValueEnum};
use harness_model::diff::{self, Row};

use super::{CliError, exit};

#[derive(Debug, Args)]
pub(crate) struct DiffArgs {
    /// The earlier run's report.json (or its directory).
    old: PathBuf,
    /// The later run's report.json (or its directory).
    new: PathBuf,
    /// Output: text for a terminal, markdown for a pull-request comment.
    #[arg(long, value_enum, default_value_t = Format::Text)]
    format: Format,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
enum Format {
    Text,
    Markdown,
}

pub(crate) fn diff(args: DiffArgs) -> Result<u8, CliError> {
    let old = read(&args.old)?;
    let new = read(&args.new)?;
    let diff = diff::diff(&old, &new);
    match args.format {
        Format::Text => out!("{}", diff::render_text(&diff)),
        Format::Markdown => out!("{}", diff::render_markdown(&diff)),
    }
    Ok(if !diff.regressions.is_empty() {
        exit::FAIL
    } else {
        exit::PASS
    })
}

/// Reads a report.json, given as the file or the directory holding it.
fn read(path: &Path) -> Result<Vec<Row>, CliError> {
    let path = if path.is_dir() {
        path.join("report.json")
    } else {
        path.to_owned()
    };
    let text = std::fs::read_to_string(&path)
        .map_err(|error| CliError::usage(format!("failed to read {}: {error}", path.display())))?;
    diff::read_report(&text).map_err(|error| {
        CliError::usage(match error.line {
            0 => format!("{}: {}", path.display(), error.message),
            line => format!("{}:{line}: {}", path.display(), error.message),
        })
    })
}
