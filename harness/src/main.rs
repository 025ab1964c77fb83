//! The `harness` command line: see `harness --help` and README.md.

mod cli;

use std::process::ExitCode;

#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> ExitCode {
    let args = <cli::Args as clap::Parser>::parse();
    match cli::run(args) {
        Ok(code) => ExitCode::from(code),
        Err(error) => {
            let mut shown = error.to_string();
            eprintln!("error: {shown}");
            let mut source = std::error::Error::source(&*error.inner);
            while let Some(cause) = source {
                // A typed error's message often ends with its source's ("path: reason"):
                // a cause already shown is not shown again.
                let text = cause.to_string();
                if !shown.ends_with(&text) {
                    eprintln!("  caused by: {text}");
                }
                shown = text;
                source = cause.source();
            }
            ExitCode::from(error.exit_code)
        }
    }
}
