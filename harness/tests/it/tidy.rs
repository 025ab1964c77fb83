//! ARCHITECTURE.md kept true by a test, as rust-analyzer's `tidy` keeps its own: the
//! imports of every module of every crate of the workspace against the layers table (and the
//! crate each row says the module lives in), what the runner and the model crates may not
//! depend on, the invariants that a grep can see (no network I/O in the protocol and model
//! crates, one reader of the system clock, clap only in `cli/`), every clause id written in
//! Rust found in the catalog, no behaviour that hangs on how a clause id is spelt, and no
//! fact of SPEC.md (a method's name, a scope, a code, a bound, a rate) written outside
//! `protocol/src/spec/`. Library code only: tests may do as they like. The prose is held
//! too: every count README.md, CONTRIBUTING.md and ARCHITECTURE.md state is the code's
//! (`docs.rs`), and every item, path, command, flag and cargo command they name exists
//! (`doc_names.rs`).

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

mod code;
mod doc_names;
mod docs;
mod lengths;
mod spec_facts;

use code::{CRATES, ONE_MODULE_CRATES, Source, Workspace};

fn repository() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// Every library and binary source file of the workspace's code crates, parsed; files
/// under a `tests` directory, named `tests.rs`, or declared `#[cfg(test)] mod x;` are
/// tests and left out. Parsed once per test binary: every tidy test reads the same set.
fn sources() -> &'static [Source] {
    static SOURCES: OnceLock<Vec<Source>> = OnceLock::new();
    SOURCES.get_or_init(parse_sources)
}

fn parse_sources() -> Vec<Source> {
    let mut sources = Vec::new();
    for (krate, dir) in CRATES {
        let src = repository().join(dir).join("src");
        let mut stack = vec![src.clone()];
        while let Some(dir_path) = stack.pop() {
            for entry in std::fs::read_dir(&dir_path).unwrap() {
                let path = entry.unwrap().path();
                if path.is_dir() {
                    if path.file_name().is_some_and(|name| name != "tests") {
                        stack.push(path);
                    }
                    continue;
                }
                let relative = path
                    .strip_prefix(&src)
                    .unwrap()
                    .to_string_lossy()
                    .replace('\\', "/");
                // A crate root declares the modules; it is no module of its own, but in a
                // crate that is one module, whose root is that module's code.
                let one_module = ONE_MODULE_CRATES.iter().any(|(name, _)| name == krate);
                if !relative.ends_with(".rs")
                    || relative.ends_with("tests.rs")
                    || (relative == "lib.rs" && !one_module)
                {
                    continue;
                }
                let text = std::fs::read_to_string(&path).unwrap();
                let source = Source::parse(&format!("{dir}/src/{relative}"), krate, &text)
                    .unwrap_or_else(|error| panic!("{error}"));
                sources.push(source);
            }
        }
    }
    let test_only: BTreeSet<(String, Vec<String>)> = sources
        .iter()
        .flat_map(|source| {
            source
                .test_modules
                .iter()
                .map(|module| (source.krate.clone(), module.clone()))
        })
        .collect();
    sources
        .retain(|source| !test_only.contains(&(source.krate.clone(), source.module_path.clone())));
    sources.sort_by(|a, b| a.path.cmp(&b.path));
    sources
}

/// One row of the layers table.
struct Row {
    krate: String,
    module: String,
    uses: BTreeSet<String>,
}

/// The layers table of ARCHITECTURE.md: crate, module, the modules it may use; in table order.
fn layers() -> Vec<Row> {
    let text = std::fs::read_to_string(repository().join("ARCHITECTURE.md")).unwrap();
    let section = text
        .split("\n## Layers\n")
        .nth(1)
        .expect("ARCHITECTURE.md has a ## Layers section");
    let section = section.split("\n## ").next().unwrap();
    let names = |cell: &str| -> Vec<String> {
        cell.split(',')
            .map(|name| name.trim().trim_matches('`').to_owned())
            .filter(|name| !name.is_empty())
            .collect()
    };
    section
        .lines()
        .filter(|line| line.starts_with("| `"))
        .map(|line| {
            let cells: Vec<&str> = line.trim_matches('|').split('|').collect();
            Row {
                krate: names(cells[0]).remove(0),
                module: names(cells[1]).remove(0),
                uses: names(cells.get(2).copied().unwrap_or(""))
                    .into_iter()
                    .collect(),
            }
        })
        .collect()
}

/// The longest line of ARCHITECTURE.md's codemap: a module's line says what it is and the
/// names to look for; the rest is the module's own `//!` doc.
const CODEMAP_LINE: usize = 140;

/// ARCHITECTURE.md's codemap gives every module of the layers table, and `cli/`, one line,
/// and no line of it is long.
#[test]
fn the_codemap_is_one_short_line_per_module() {
    let text = std::fs::read_to_string(repository().join("ARCHITECTURE.md")).unwrap();
    let mut lines_of: BTreeMap<String, usize> = BTreeMap::new();
    let mut wrong = Vec::new();
    let (mut inside, mut beside) = (false, false);
    for (number, line) in text.lines().enumerate() {
        if line.starts_with("## ") {
            inside = line == "## Codemap";
            continue;
        }
        if line.starts_with("### ") {
            beside = line == "### Beside the crates";
        }
        let Some(bullet) = line.strip_prefix("- ").filter(|_| inside) else {
            continue;
        };
        let length = line.chars().count();
        if length > CODEMAP_LINE {
            wrong.push(format!(
                "ARCHITECTURE.md:{}: a codemap line of {length} characters (at most {CODEMAP_LINE}): move the detail to the module's `//!` doc",
                number + 1
            ));
        }
        if let Some(name) = bullet.split('`').nth(1).filter(|_| !beside) {
            let module = name.trim_end_matches('/').trim_end_matches(".rs");
            *lines_of.entry(module.to_owned()).or_default() += 1;
        }
    }
    let modules = layers()
        .into_iter()
        .map(|row| row.module)
        .chain(["cli".to_owned()]);
    for module in modules {
        let lines = lines_of.get(&module).copied().unwrap_or_default();
        if lines != 1 {
            wrong.push(format!(
                "ARCHITECTURE.md's codemap gives module `{module}` {lines} lines, not one"
            ));
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

#[test]
fn every_import_is_one_the_layers_table_allows() {
    let layers: BTreeMap<String, Row> = layers()
        .into_iter()
        .map(|row| (row.module.clone(), row))
        .collect();
    let sources = sources();
    let workspace = Workspace::new(sources);
    let mut broken = Vec::new();
    let mut used_by: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for source in sources.iter().filter(|source| source.module != "cli") {
        let Some(row) = layers.get(&source.module) else {
            broken.push(format!(
                "{}: module `{}` has no row in ARCHITECTURE.md's layers table",
                source.path, source.module
            ));
            continue;
        };
        if row.krate != source.krate {
            broken.push(format!(
                "{}: module `{}` is in `{}`, but its row says `{}`",
                source.path, source.module, source.krate, row.krate
            ));
        }
        for used in workspace.imports(source) {
            used_by
                .entry(source.module.clone())
                .or_default()
                .insert(used.clone());
            if !row.uses.contains(&used) {
                broken.push(format!(
                    "{}: `{}` uses `{used}`, which its row of ARCHITECTURE.md's layers table does not allow",
                    source.path, source.module
                ));
            }
        }
    }
    // The table states what is, not only what may be: an allowance no code uses is stale.
    for (module, row) in &layers {
        let used = used_by.get(module).cloned().unwrap_or_default();
        for stale in row.uses.difference(&used) {
            broken.push(format!(
                "ARCHITECTURE.md: `{module}` may use `{stale}`, but no code of it does (remove it)"
            ));
        }
    }
    assert!(broken.is_empty(), "{}", broken.join("\n"));
}

#[test]
fn the_layers_table_names_every_module_once_and_only_rows_above_its_own() {
    let layers = layers();
    let sources = sources();
    let modules: BTreeSet<String> = sources
        .iter()
        .map(|source| source.module.clone())
        .filter(|module| module != "cli")
        .collect();
    let listed: Vec<&str> = layers.iter().map(|row| row.module.as_str()).collect();
    let unique: BTreeSet<&str> = listed.iter().copied().collect();
    assert_eq!(
        listed.len(),
        unique.len(),
        "a module listed twice: {listed:?}"
    );
    let listed: BTreeSet<String> = unique.iter().map(|name| (*name).to_owned()).collect();
    assert_eq!(
        listed, modules,
        "the table's modules and the crates' modules"
    );
    // Floors: a row names only rows before it, so the table has no cycle; and the crates
    // come in the order of `CRATES`, so no module uses one of a crate above its own.
    let floor = |krate: &str| CRATES.iter().position(|(name, _)| *name == krate);
    let mut above = BTreeSet::new();
    let mut last_floor = 0;
    for row in &layers {
        let Some(row_floor) = floor(&row.krate) else {
            panic!(
                "`{}`'s crate `{}` is not a workspace crate",
                row.module, row.krate
            );
        };
        assert!(
            row_floor >= last_floor,
            "`{}` of `{}` comes after a row of a crate above it",
            row.module,
            row.krate
        );
        last_floor = row_floor;
        for used in &row.uses {
            assert!(
                above.contains(used),
                "`{}` may use `{used}`, which is not a row above it",
                row.module
            );
        }
        above.insert(row.module.clone());
    }
}

/// No two files of a crate import each other, directly or round a loop: a type or function
/// two files need lives in a third (ARCHITECTURE.md's invariant, at the level of files).
#[test]
fn no_two_files_import_each_other() {
    let sources = sources();
    let cycles: Vec<String> = Workspace::new(sources)
        .file_cycles()
        .into_iter()
        .map(|cycle| cycle.join(" <-> "))
        .collect();
    assert!(
        cycles.is_empty(),
        "files importing each other:\n{}",
        cycles.join("\n")
    );
}

/// An item is named where it lives: a `pub use` of another module's or crate's item would
/// hide the dependency from the layers table (the facade `harness/src/lib.rs`, a crate
/// root, is no module and is not read).
#[test]
fn no_module_reexports_another_modules_item() {
    let sources = sources();
    let workspace = Workspace::new(sources);
    let found: Vec<String> = sources
        .iter()
        .flat_map(|source| workspace.reexports(source))
        .collect();
    assert!(
        found.is_empty(),
        "re-exports across modules:\n{}",
        found.join("\n")
    );
}

/// Every package `package` builds with (its normal dependencies, default features and
/// `features`), as `cargo tree` prints them: what a crate depending on it compiles.
fn normal_dependencies(package: &str, features: &[&str]) -> BTreeSet<String> {
    let mut args = vec![
        "tree",
        "--offline",
        "-e",
        "normal",
        "--prefix",
        "none",
        "-p",
        package,
    ];
    if !features.is_empty() {
        args.push("--features");
        args.extend(features);
    }
    let output = std::process::Command::new(env!("CARGO"))
        .args(&args)
        .current_dir(repository())
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "cargo tree -p {package}: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8_lossy(&output.stdout)
        .lines()
        .filter_map(|line| line.split(' ').next())
        .map(str::to_owned)
        .collect()
}

/// What a server team links with the runner, and what the parse and sign fuzz targets link
/// with the model, stays free of the fuzzer, the server, the command line and the binary's allocator
/// (the runner's `conformance` feature adds libtest-mimic, and with it clap, for the trials).
#[test]
fn the_runner_and_the_model_build_no_server_and_no_command_line() {
    let banned_from_runner = [
        "axum",
        "clap",
        "indicatif",
        "mimalloc",
        "rcgen",
        "harness-server",
        "harness-fuzz",
    ];
    let runner = normal_dependencies("harness-runner", &[]);
    assert!(runner.contains("reqwest"), "is cargo tree still read?");
    let found: Vec<&&str> = banned_from_runner
        .iter()
        .filter(|name| runner.contains(**name))
        .collect();
    assert!(found.is_empty(), "harness-runner depends on {found:?}");
    // With the trials (`conformance`), libtest-mimic brings clap, and nothing else banned.
    let trials = normal_dependencies("harness-runner", &["conformance"]);
    assert!(
        trials.contains("libtest-mimic"),
        "is the feature still read?"
    );
    let found: Vec<&&str> = banned_from_runner
        .iter()
        .filter(|name| **name != "clap" && trials.contains(**name))
        .collect();
    assert!(
        found.is_empty(),
        "harness-runner with `conformance` depends on {found:?}"
    );
    let model = normal_dependencies("harness-model", &[]);
    let banned_from_model = [
        "tokio",
        "reqwest",
        "axum",
        "harness-runner",
        "harness-server",
    ];
    let found: Vec<&&str> = banned_from_model
        .iter()
        .filter(|name| model.contains(**name))
        .collect();
    assert!(found.is_empty(), "harness-model depends on {found:?}");
}

/// Files whose code matches none of `patterns`, but those `allowed`.
fn offenders(patterns: &[&str], scope: impl Fn(&Source) -> bool, allowed: &[&str]) -> Vec<String> {
    sources()
        .iter()
        .filter(|source| scope(source) && !allowed.contains(&source.path.as_str()))
        .filter_map(|source| {
            patterns
                .iter()
                .find(|pattern| source.code.contains(**pattern))
                .map(|pattern| format!("{}: {pattern}", source.path))
        })
        .collect()
}

#[test]
fn the_invariants_a_grep_can_see_hold() {
    let pure = ["harness-protocol", "harness-model"];
    let network = [
        "tokio::net",
        "std::net::TcpStream",
        "reqwest",
        "tokio_tungstenite",
        "hyper",
    ];
    let io = offenders(
        &network,
        |source| pure.contains(&source.krate.as_str()),
        &[],
    );
    assert!(
        io.is_empty(),
        "network I/O in the protocol or model crate: {io:?}"
    );
    let clock = offenders(
        &["SystemTime::now"],
        |_| true,
        &["protocol/src/auth/clock.rs"],
    );
    assert!(
        clock.is_empty(),
        "the system clock read outside auth/clock.rs: {clock:?}"
    );
    // The path prefix is `spec::API_PREFIX` (and the WebSocket path `spec::WS_PATH`); the
    // target-file property writes a whole target file as its input.
    let prefix = offenders(
        &["/api/v2"],
        |source| !source.path.starts_with("protocol/src/spec/"),
        &["model/src/target_file/property.rs"],
    );
    assert!(prefix.is_empty(), "the path prefix written out: {prefix:?}");
    let clap = offenders(
        &["clap::", "use clap"],
        |source| source.module != "cli",
        &[],
    );
    assert!(clap.is_empty(), "clap outside cli/: {clap:?}");
    let exits = offenders(
        &["std::process::exit", "ExitCode"],
        |source| source.module != "cli",
        &[],
    );
    assert!(exits.is_empty(), "exit codes outside cli/: {exits:?}");
    // One step model: the fuzzers build the runner's steps and send them through its
    // executor (`run/step_call.rs`), so they build no request, credential or connection.
    let requests = offenders(
        &[
            "Outgoing",
            "call_http",
            "call_over",
            "place_bearer",
            "insert_client_",
            "signed_plan",
            "SignatureParams",
            "login_request",
            "HttpClient",
            "WsSession",
        ],
        |source| source.path.starts_with("fuzzer/src/"),
        &[],
    );
    assert!(
        requests.is_empty(),
        "request code of the fuzzers' own: {requests:?}"
    );
}

/// Every string literal of the code shaped like a clause id (`env.response.id`).
fn id_literals(code: &str) -> Vec<String> {
    let mut literals = Vec::new();
    for piece in code.split('"').skip(1).step_by(2) {
        let shaped = piece.contains('.')
            && piece.split('.').all(|part| {
                !part.is_empty()
                    && part
                        .chars()
                        .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_')
            });
        if shaped {
            literals.push(piece.to_owned());
        }
    }
    literals
}

/// Template names (`{{limits.transaction_log_burst}}`, `run/bindings.rs`) that share a
/// family with clause ids (`limits.transaction_log_rate`) without being one.
const TEMPLATE_NAMES: &[&str] = &["limits.transaction_log_burst", "limits.clock_skew_span_s"];

#[test]
fn every_clause_id_written_in_rust_is_in_the_catalog() {
    let corpus = harness::corpus::Corpus::embedded().unwrap();
    let catalog: BTreeSet<&str> = corpus.catalog.ids().collect();
    let prefixes: BTreeSet<&str> = catalog
        .iter()
        .map(|id| id.split('.').next().unwrap())
        .collect();
    let open_points: BTreeSet<&str> = harness::spec::OPEN_POINTS
        .iter()
        .map(|point| point.id)
        .collect();
    let mut unknown = Vec::new();
    let mut written = 0;
    for source in sources() {
        for literal in id_literals(&source.code) {
            let prefix = literal.split('.').next().unwrap();
            if !prefixes.contains(prefix)
                || open_points.contains(literal.as_str())
                || TEMPLATE_NAMES.contains(&literal.as_str())
            {
                continue;
            }
            written += 1;
            let spelt_prefix = STILL_SPELLING.contains(&source.path.as_str())
                && catalog.iter().any(|id| id.starts_with(literal.as_str()));
            if !catalog.contains(literal.as_str()) && !spelt_prefix {
                unknown.push(format!("{}: \"{literal}\"", source.path));
            }
        }
    }
    assert!(
        written > 100,
        "the scan found {written} clause ids: is it still reading the code?"
    );
    assert!(
        unknown.is_empty(),
        "clause ids not in cases/clauses.toml: {unknown:?}"
    );
}

/// Code that decides by how a clause id is spelt (`clause.starts_with("client.sig.")`)
/// breaks when a clause is renamed and hides the decision from the catalog. The files that
/// still do are listed; the list may only shrink.
const STILL_SPELLING: &[&str] = &[];

#[test]
fn no_new_behaviour_hangs_on_the_spelling_of_a_clause_id() {
    let corpus = harness::corpus::Corpus::embedded().unwrap();
    let prefixes: BTreeSet<String> = corpus
        .catalog
        .ids()
        .map(|id| id.split('.').next().unwrap().to_owned())
        .collect();
    let mut patterns: Vec<String> = Vec::new();
    for prefix in &prefixes {
        patterns.push(format!("starts_with(\"{prefix}."));
    }
    let mut found = Vec::new();
    for source in sources() {
        let spelling = patterns
            .iter()
            .any(|pattern| source.code.contains(pattern.as_str()))
            || (source.code.contains("clause") && source.code.contains(".ends_with(suffix)"));
        if spelling {
            found.push(source.path.clone());
        }
    }
    let new: Vec<&String> = found
        .iter()
        .filter(|path| !STILL_SPELLING.contains(&path.as_str()))
        .collect();
    assert!(
        new.is_empty(),
        "decisions on a clause id's spelling: {new:?}"
    );
    let gone: Vec<&&str> = STILL_SPELLING
        .iter()
        .filter(|path| !found.iter().any(|found| found == *path))
        .collect();
    assert!(
        gone.is_empty(),
        "no longer spelling, remove from the list: {gone:?}"
    );
}

/// Whether `code` defines `name`: an item (`fn`, `struct`, `enum`, ...), a line that
/// starts with it as an enum's variant does (`Skip,`, `RowFinished {`), or a struct's field.
fn defines(code: &str, name: &str) -> bool {
    let ends = |rest: &str| !rest.starts_with(|c: char| c.is_ascii_alphanumeric() || c == '_');
    code.lines().any(|line| {
        let line = line.trim_start();
        let item = [
            "fn ", "struct ", "enum ", "const ", "static ", "type ", "trait ", "mod ",
        ]
        .iter()
        .any(|keyword| {
            line.match_indices(&format!("{keyword}{name}"))
                .any(|(at, found)| {
                    let before = line[..at].chars().next_back();
                    before.is_none_or(|c| c == ' ' || c == '(') && ends(&line[at + found.len()..])
                })
        });
        let variant = line
            .strip_prefix(name)
            .is_some_and(|rest| rest.is_empty() || rest.starts_with([',', '(', ' ', '{']));
        // A struct's field: `pub state_changing: bool,`.
        let field = ["pub ", "pub(crate) ", "pub(super) ", ""]
            .iter()
            .any(|visibility| {
                line.strip_prefix(visibility)
                    .and_then(|rest| rest.strip_prefix(name))
                    .is_some_and(|rest| rest.starts_with(':') && !rest.starts_with("::"))
            });
        item || variant || field
    })
}

/// README.md's `harness --version` line is the binary's, with the places of what changes
/// with every case added (the corpus digest and its count of files) shown, not a number
/// that drifts.
#[test]
fn readme_shows_the_version_line_of_the_binary() {
    let readme = std::fs::read_to_string(repository().join("README.md")).unwrap();
    let shown = readme
        .lines()
        .find(|line| line.starts_with("harness --version"))
        .and_then(|line| line.split_once('#'))
        .map(|(_, shown)| shown.trim())
        .expect("README.md shows `harness --version`");
    let actual = format!("harness {}", harness::corpus::version_line());
    let (head, tail) = actual.split_once("sha256:").unwrap();
    let (digest, tail) = tail.split_once(", ").unwrap();
    let (count, tail) = tail.split_once(' ').unwrap();
    assert!(digest.chars().all(|c| c.is_ascii_hexdigit()), "{actual}");
    assert!(
        count.parse::<usize>().is_ok_and(|count| count > 100),
        "{actual}"
    );
    assert_eq!(shown, format!("{head}sha256:<digest>, <count> {tail}"));
}
