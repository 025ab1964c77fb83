//! A hostile target alone, for `scripts/bench-hostile.sh` (issue 49): the hostile server of
//! the integration tests (`tests/it/hostile/server.rs`: a reference server behind raw HTTP
//! and WebSocket listeners that misbehave in one chosen way), its target file written out,
//! serving until killed; with `--honest-first` the first request over each listener is
//! answered as it should (the harness's first call finds the target up), as an attacker
//! would.
//!
//! `cargo run --release --example hostile -- endless-close --honest-first --target-out /tmp/hostile.toml`

#[path = "../tests/it/hostile/server.rs"]
mod server;

use std::path::PathBuf;
use std::time::Duration;

use clap::Parser;
use server::{Behaviour, Hostile};

/// Serves one hostile behaviour until killed.
#[derive(Debug, Parser)]
struct Args {
    /// The behaviour, by name (`--help` lists them).
    #[arg(value_parser = behaviour, help = behaviours_help())]
    behaviour: Behaviour,
    /// Where to write the target file (written whole once the listeners are up).
    #[arg(long, value_name = "FILE")]
    target_out: PathBuf,
    /// Answer the first request over each listener as it should, then misbehave (so the
    /// harness's first call finds the target up).
    #[arg(long)]
    honest_first: bool,
}

/// Every behaviour by name, as the bench script names them.
const BEHAVIOURS: &[(&str, Behaviour)] = &[
    ("silent", Behaviour::Silent),
    ("slow-10s", Behaviour::Slow(Duration::from_secs(10))),
    ("trickle", Behaviour::Trickle),
    ("endless-chunked", Behaviour::Endless),
    ("endless-close", Behaviour::EndlessClose),
    ("empty-continuations", Behaviour::EmptyContinuations),
    ("oversized-16mb", Behaviour::Oversized(16 * 1024 * 1024)),
    ("body-1mb", Behaviour::Padded(1_000_000)),
    ("invalid-utf8", Behaviour::InvalidUtf8),
    ("gzip-1mb", Behaviour::Gzip(1_000_000)),
    ("not-json", Behaviour::NotJson),
    ("wrong-id", Behaviour::WrongId),
    ("duplicate-members", Behaviour::DuplicateMembers),
    ("long-integer", Behaviour::HugeInteger(1_000_000)),
    ("binary-frames", Behaviour::BinaryFrame),
    ("duplicate-answer", Behaviour::DuplicateAnswer),
    ("notifications", Behaviour::Notifications(3)),
    ("notification-flood", Behaviour::NotificationFlood),
    ("pings", Behaviour::Pings(20)),
    ("ping-flood", Behaviour::PingFlood),
    ("close-mid-answer", Behaviour::CloseMidAnswer),
    ("close-frame", Behaviour::CloseFrame),
    ("status-500", Behaviour::Status(500)),
    ("server-error", Behaviour::ServerError),
    ("not-found", Behaviour::NotFound),
    ("not-http", Behaviour::NotHttp),
    ("refuse-upgrade", Behaviour::RefuseUpgrade),
    ("no-handshake", Behaviour::NoHandshake),
    ("tls-garbage", Behaviour::TlsGarbage),
];

fn behaviour(name: &str) -> Result<Behaviour, String> {
    BEHAVIOURS
        .iter()
        .find(|(known, _)| *known == name)
        .map(|(_, behaviour)| *behaviour)
        .ok_or_else(|| format!("no behaviour named {name}; {}", behaviours_help()))
}

fn behaviours_help() -> String {
    let names: Vec<&str> = BEHAVIOURS.iter().map(|(name, _)| *name).collect();
    format!("one of: {}", names.join(", "))
}

#[tokio::main]
async fn main() {
    let args = Args::parse();
    let hostile = if args.honest_first {
        Hostile::start_with(args.behaviour, true).await
    } else {
        Hostile::start(args.behaviour).await
    };
    let written = args.target_out.with_extension("toml.part");
    std::fs::write(&written, hostile.target().to_toml()).expect("target file written");
    std::fs::rename(&written, &args.target_out).expect("target file in place");
    std::future::pending::<()>().await;
    hostile.stop().await;
}
