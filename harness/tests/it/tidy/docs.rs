//! The prose kept true: the counts README.md states (seeded faults, SPEC.md's statements,
//! the reference's default transaction log) are the code's, every fault and variant the
//! docs name is one the reference has, README shows every command and only those, and
//! every call CONTRIBUTING.md tells a contributor to write (`ctx.fault(Fault::YourFault)`)
//! is one the library code makes. A number or a name in the docs that drifts from the code fails here, not in a
//! newcomer's first afternoon.

use std::path::Path;

use harness::check::spec_statements;
use harness::serve::Fault;

use super::{repository, sources};

fn read(path: &str) -> String {
    std::fs::read_to_string(repository().join(path)).unwrap()
}

/// Every number README.md writes just before `words` (`128 seeded faults`).
fn numbers_before(text: &str, words: &str) -> Vec<usize> {
    text.match_indices(words)
        .filter_map(|(at, _)| {
            let before = text[..at].trim_end();
            let digits: String = before
                .chars()
                .rev()
                .take_while(|character| character.is_ascii_digit() || *character == ',')
                .collect::<Vec<_>>()
                .into_iter()
                .rev()
                .filter(char::is_ascii_digit)
                .collect();
            digits.parse().ok()
        })
        .collect()
}

#[test]
fn the_counts_readme_states_are_the_codes() {
    let readme = read("README.md");
    let mut wrong = Vec::new();
    let faults = Fault::ALL.len();
    for stated in numbers_before(&readme, " seeded faults") {
        if stated != faults {
            wrong.push(format!(
                "README.md says {stated} seeded faults; Fault::ALL has {faults}"
            ));
        }
    }
    let statements = spec_statements(&read("cases/SPEC.md")).len();
    for stated in numbers_before(&readme, " for interface 2.1.1") {
        if stated != statements {
            wrong.push(format!(
                "README.md says SPEC.md holds {stated} statements; the rule finds {statements}"
            ));
        }
    }
    let entries = harness::serve::MAIN_LOG_ENTRIES;
    for stated in numbers_before(&readme, " the snapshots are taken from") {
        if stated != entries {
            wrong.push(format!(
                "README.md says the default transaction log holds {stated} entries; the reference's holds {entries}"
            ));
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

/// The calls a contributor is told to write: `receiver.method(Type::` in a code span.
fn documented_calls(text: &str) -> Vec<String> {
    let mut calls = Vec::new();
    for span in text.split('`').skip(1).step_by(2) {
        let Some(open) = span.find('(') else {
            continue;
        };
        let (call, argument) = (&span[..open], &span[open + 1..]);
        let Some((receiver, method)) = call.rsplit_once('.') else {
            continue;
        };
        let word = |text: &str| {
            !text.is_empty()
                && text
                    .chars()
                    .all(|character| character.is_ascii_alphanumeric() || character == '_')
        };
        let Some((kind, _)) = argument.split_once("::") else {
            continue;
        };
        if word(receiver) && word(method) && word(kind) {
            calls.push(format!("{receiver}.{method}({kind}::"));
        }
    }
    calls
}

#[test]
fn every_call_contributing_md_tells_a_contributor_to_write_is_one_the_code_makes() {
    let contributing = read("CONTRIBUTING.md");
    let calls = documented_calls(&contributing);
    assert!(!calls.is_empty(), "CONTRIBUTING.md documents no call");
    let sources = sources();
    let missing: Vec<&String> = calls
        .iter()
        .filter(|call| {
            !sources
                .iter()
                .any(|source| source.code.contains(call.as_str()))
        })
        .collect();
    assert!(
        missing.is_empty(),
        "CONTRIBUTING.md tells a contributor to write calls no library code makes: {missing:?}"
    );
    assert_eq!(
        documented_calls("see `ctx.fault(Fault::YourFault)` and `a.b` and `x(y)`"),
        vec!["ctx.fault(Fault::"]
    );
    assert!(Path::new(&repository()).join("CONTRIBUTING.md").is_file());
}

/// The words after each `flag ` in `text` (`--fault sig-nonce-reuse` gives `sig-nonce-reuse`),
/// placeholders in capitals left out.
fn values_after(text: &str, flag: &str) -> Vec<String> {
    text.match_indices(flag)
        .filter_map(|(at, _)| {
            let value: String = text[at + flag.len()..]
                .chars()
                .take_while(|character| character.is_ascii_alphanumeric() || *character == '-')
                .collect();
            (!value.is_empty() && value.chars().any(|c| c.is_ascii_lowercase())).then_some(value)
        })
        .collect()
}

/// The subcommands `harness --help` lists, `help` left out.
fn subcommands() -> Vec<String> {
    let output = std::process::Command::new(env!("CARGO_BIN_EXE_harness"))
        .arg("--help")
        .output()
        .expect("harness --help runs");
    let help = String::from_utf8_lossy(&output.stdout).into_owned();
    help.lines()
        .skip_while(|line| !line.starts_with("Commands:"))
        .skip(1)
        .take_while(|line| line.starts_with("  "))
        .filter_map(|line| line.split_whitespace().next())
        .filter(|name| *name != "help")
        .map(str::to_owned)
        .collect()
}

#[test]
fn the_names_the_docs_give_are_the_codes() {
    let docs = [
        "README.md",
        "CONTRIBUTING.md",
        "docs/ci.md",
        "BENCHMARKS.md",
    ];
    let faults: Vec<&str> = Fault::ALL.iter().map(|fault| fault.name()).collect();
    let variants: Vec<&str> = harness::serve::Variant::ALL
        .iter()
        .map(|variant| variant.name())
        .chain(
            harness::serve::Extreme::ALL
                .iter()
                .map(|extreme| extreme.name()),
        )
        .chain(["all"])
        .collect();
    let mut wrong = Vec::new();
    for doc in docs {
        let text = read(doc);
        for fault in values_after(&text, "--fault ") {
            if !faults.contains(&fault.as_str()) {
                wrong.push(format!(
                    "{doc} names --fault {fault}, which Fault::ALL lacks"
                ));
            }
        }
        for variant in values_after(&text, "--variant ") {
            if !variants.contains(&variant.as_str()) {
                wrong.push(format!(
                    "{doc} names --variant {variant}, which Variant::ALL lacks"
                ));
            }
        }
    }
    let readme = read("README.md");
    let commands = subcommands();
    assert!(commands.len() > 5, "{commands:?}");
    for command in &commands {
        if !readme.contains(&format!("`harness {command}")) {
            wrong.push(format!("README.md does not show `harness {command}`"));
        }
    }
    for row in readme
        .lines()
        .filter(|line| line.starts_with("| `harness "))
    {
        let named = row["| `harness ".len()..]
            .split(|c: char| !(c.is_ascii_alphanumeric() || c == '-'))
            .next()
            .unwrap_or_default();
        if !named.is_empty() && !named.starts_with('-') && !commands.iter().any(|c| c == named) {
            wrong.push(format!(
                "README.md's table shows `harness {named}`, no such command"
            ));
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
    assert_eq!(
        values_after("a --fault x-1 and --fault NAME", "--fault "),
        ["x-1"]
    );
}
