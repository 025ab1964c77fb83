//! The prose kept true: every count README.md, CONTRIBUTING.md and ARCHITECTURE.md state
//! (seeded faults, SPEC.md's statements, the reference's default transaction log, crates,
//! rule dimensions, fuzz targets, independent servers and clients, the paced plan, race
//! bounds, command-line defaults) is the code's, and a count written near one of the words
//! these are counted in that no check reads fails too; every fault and variant the docs
//! name is one the reference has, README shows every command and only those, and every
//! call the docs tell a contributor to write (`ctx.fault(Fault::YourFault)`,
//! `state.deferred.later(...)`) is one the library code makes. A number or a name in the docs that drifts from the code fails
//! here, not in a newcomer's first afternoon.

use std::collections::BTreeMap;
use std::path::Path;
use std::process::Command;
use std::sync::{Mutex, OnceLock};

use harness::check::{Dimension, spec_statements};
use harness::serve::Fault;

use super::{repository, sources};

/// The docs whose counts and names are held to the code.
pub(super) const DOCS: [&str; 3] = ["README.md", "CONTRIBUTING.md", "ARCHITECTURE.md"];

pub(super) fn read(path: &str) -> String {
    std::fs::read_to_string(repository().join(path)).unwrap()
}

/// Numbers the docs spell out in words.
const NUMBER_WORDS: [&str; 21] = [
    "zero",
    "one",
    "two",
    "three",
    "four",
    "five",
    "six",
    "seven",
    "eight",
    "nine",
    "ten",
    "eleven",
    "twelve",
    "thirteen",
    "fourteen",
    "fifteen",
    "sixteen",
    "seventeen",
    "eighteen",
    "nineteen",
    "twenty",
];

/// The number written at the start of `text` (`1,074`, `211`, `seven`, `Three`) and its
/// length in bytes.
fn number_at(text: &str) -> Option<(usize, usize)> {
    let bytes = text.as_bytes();
    let mut end = 0;
    while end < bytes.len() {
        // A thousands comma only between digits and three more: `1,074`, not `37, two`.
        let thousands = bytes[end] == b','
            && end > 0
            && bytes.len() >= end + 4
            && bytes[end + 1..end + 4].iter().all(u8::is_ascii_digit)
            && bytes.get(end + 4).is_none_or(|b| !b.is_ascii_digit());
        if !(bytes[end].is_ascii_digit() || thousands) {
            break;
        }
        end += 1;
    }
    if end > 0 {
        let digits: String = text[..end].chars().filter(char::is_ascii_digit).collect();
        return digits.parse().ok().map(|value| (value, end));
    }
    let word: String = text.chars().take_while(char::is_ascii_alphabetic).collect();
    let value = NUMBER_WORDS
        .iter()
        .position(|number| number.eq_ignore_ascii_case(&word))?;
    Some((value, word.len()))
}

/// Every place `pattern` matches `line`: literal text, where `#` stands for a number (digits
/// or a word) and `@` for any text up to the next literal piece. Gives the byte range
/// matched and the text in each place, numbers as digits.
fn matches(line: &str, pattern: &str) -> Vec<(std::ops::Range<usize>, Vec<String>)> {
    let pieces: Vec<(&str, Option<char>)> = {
        let mut pieces = Vec::new();
        let mut rest = pattern;
        while let Some(at) = rest.find(['#', '@']) {
            pieces.push((&rest[..at], rest[at..].chars().next()));
            rest = &rest[at + 1..];
        }
        pieces.push((rest, None));
        pieces
    };
    let word_start = |at: usize| {
        line[..at]
            .chars()
            .next_back()
            .is_none_or(|c| !(c.is_ascii_alphanumeric() || c == '^' || c == '.'))
    };
    let mut found = Vec::new();
    let mut start = 0;
    'start: while start <= line.len() {
        if !line.is_char_boundary(start) {
            start += 1;
            continue;
        }
        let mut at = start;
        let mut values = Vec::new();
        for (index, (literal, place)) in pieces.iter().enumerate() {
            if !line[at..].starts_with(literal) {
                start += 1;
                continue 'start;
            }
            at += literal.len();
            match place {
                Some('#') => match number_at(&line[at..]) {
                    Some((value, length)) if word_start(at) => {
                        values.push(value.to_string());
                        at += length;
                    }
                    _ => {
                        start += 1;
                        continue 'start;
                    }
                },
                Some(_) => {
                    let next = pieces[index + 1].0;
                    let Some(length) = line[at..].find(next).filter(|_| !next.is_empty()) else {
                        start += 1;
                        continue 'start;
                    };
                    values.push(line[at..at + length].to_owned());
                    at += length;
                }
                None => {}
            }
        }
        found.push((start..at, values));
        start = at.max(start + 1);
    }
    found
}

/// `pattern` with its places filled by `values`: what the doc says, or what it should.
fn filled(pattern: &str, values: &[String]) -> String {
    let mut values = values.iter();
    pattern
        .chars()
        .map(|c| match c {
            '#' | '@' => values.next().cloned().unwrap_or_default(),
            c => c.to_string(),
        })
        .collect()
}

/// A count (or a default) a doc states: the words it is stated in, and the code's values.
struct Fact {
    pattern: &'static str,
    values: Vec<String>,
    /// Where the values come from, for the message.
    source: &'static str,
}

fn fact(pattern: &'static str, values: &[usize], source: &'static str) -> Fact {
    Fact {
        pattern,
        values: values.iter().map(usize::to_string).collect(),
        source,
    }
}

/// `harness <command> --help`, once per command.
pub(super) fn help(command: &[&str]) -> String {
    static HELP: OnceLock<Mutex<BTreeMap<Vec<String>, String>>> = OnceLock::new();
    let key: Vec<String> = command.iter().map(|word| (*word).to_owned()).collect();
    let mut cache = HELP.get_or_init(Default::default).lock().unwrap();
    cache
        .entry(key)
        .or_insert_with(|| {
            let output = Command::new(env!("CARGO_BIN_EXE_harness"))
                .args(command)
                .arg("--help")
                .output()
                .expect("harness --help runs");
            String::from_utf8_lossy(&output.stdout).into_owned()
        })
        .clone()
}

/// The flags `harness <command> --help` lists, each with its default, if it shows one.
pub(super) fn flags(command: &[&str]) -> BTreeMap<String, Option<String>> {
    help(command)
        .lines()
        .map(str::trim_start)
        .filter(|line| line.starts_with('-'))
        .filter_map(|line| {
            let flag = line
                .split([' ', ','])
                .find(|word| word.starts_with("--"))?
                .to_owned();
            let default = line
                .split_once("[default: ")
                .and_then(|(_, rest)| rest.split_once(']'))
                .map(|(default, _)| default.to_owned());
            Some((flag, default))
        })
        .collect()
}

/// The default `harness <command> --help` shows for `flag`.
fn flag_default(command: &[&str], flag: &str) -> String {
    flags(command)
        .remove(flag)
        .flatten()
        .unwrap_or_else(|| panic!("harness {} {flag} shows no default", command.join(" ")))
}

/// Entries of `dir` (relative to the repository) that hold a file `name`.
fn folders_holding(dir: &str, name: &str) -> usize {
    std::fs::read_dir(repository().join(dir))
        .unwrap()
        .filter(|entry| entry.as_ref().unwrap().path().join(name).is_file())
        .count()
}

/// The paced plan of the suite against the reference paced at 1 request per second with
/// burst 1 per user (`scripts/bench-paced-history.sh`): `harness run --plan`'s first line.
fn paced_plan() -> (harness::run::PacedPlan, harness::target_file::RateLimits) {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let target = runtime.block_on(async {
        let mut config = harness::serve::ServeConfig::loopback();
        config.variants = vec![harness::serve::Variant::RatePerUserBurst1];
        let running = harness::serve::start(config).await.unwrap();
        let target = running.target();
        running.shutdown().await;
        target
    });
    let limits = target.limits.clone();
    let corpus = harness::corpus::Corpus::embedded().unwrap();
    let config = harness::run::RunConfig::new(target, corpus.cases, corpus.catalog, corpus.schemas);
    (harness::run::paced_plan(&config), limits)
}

/// How far below the target's rate the runner paces, in percent, as the plan shows it: the
/// busiest budget's calls past the burst take the plan's time at the paced rate.
fn pacing_margin(
    plan: &harness::run::PacedPlan,
    limits: &harness::target_file::RateLimits,
) -> usize {
    let busiest = plan.by_budget.values().max().copied().unwrap_or_default();
    let beyond_burst = busiest.saturating_sub(limits.transaction_log_burst as usize) as f64;
    let paced_rate = beyond_burst / plan.duration.as_secs_f64();
    ((limits.transaction_log_per_second / paced_rate - 1.0) * 100.0).round() as usize
}

/// The numbers of the first `(A to B)` in `text`.
fn range_in(text: &str) -> [usize; 2] {
    let found = matches(text, "(# to #)");
    let (_, values) = found
        .first()
        .unwrap_or_else(|| panic!("no (A to B) in {text:?}"));
    [values[0].parse().unwrap(), values[1].parse().unwrap()]
}

/// The bounds of `in_flight` the case loader gives when a step asks for too many.
fn in_flight_bounds() -> [usize; 2] {
    let corpus = harness::corpus::Corpus::embedded().unwrap();
    let clause = corpus.catalog.iter().next().unwrap().id.clone();
    let text = format!(
        "id = \"tidy.in_flight\"\ntitle = \"t\"\nclauses = [\"{clause}\"]\ntransports = [\"ws\"]\n\n[[step]]\ncall = \"public/get_time\"\nin_flight = 100000\n"
    );
    let error = harness::case::parse_case(
        Path::new("tidy.toml"),
        &text,
        &corpus.catalog,
        &corpus.schemas,
    )
    .expect_err("in_flight = 100000 is refused");
    range_in(&error.to_string())
}

/// The longest excuse the traceability table takes, as its loader says when one is longer.
fn excuse_limit() -> usize {
    let text = format!(
        "[[statement]]\nid = \"1.1\"\ntext = \"t\"\nexcuse = \"{}\"\n",
        "x".repeat(10_000)
    );
    let problem = harness::check::Statements::parse(Path::new("statements.toml"), &text)
        .expect_err("an excuse of 10,000 characters is refused")
        .to_string();
    let (_, values) = matches(&problem, "at most # characters")
        .into_iter()
        .next()
        .unwrap_or_else(|| panic!("{problem}"));
    values[0].parse().unwrap()
}

/// Every count the docs state, in the words they state it in, with the code's values.
fn facts() -> Vec<Fact> {
    let race = harness::case::Race::DEFAULT_ROUNDS as usize;
    let (plan, limits) = paced_plan();
    let budget = |name: &str| plan.by_budget.get(name).copied().unwrap_or_default();
    let seconds: usize = format!("{:.0}", plan.duration.as_secs_f64())
        .parse()
        .unwrap();
    let members = read("Cargo.toml")
        .lines()
        .find_map(|line| line.strip_prefix("members = ["))
        .expect("Cargo.toml lists the workspace's members")
        .matches('"')
        .count()
        / 2;
    let max_argued = read("independent/check")
        .lines()
        .find_map(|line| line.strip_prefix("MAX_ARGUED = "))
        .and_then(|value| value.trim().parse().ok())
        .expect("independent/check sets MAX_ARGUED");
    let timeout_ms: usize = flag_default(&["run"], "--timeout-ms").parse().unwrap();
    let number =
        |command: &[&str], flag: &str| -> usize { flag_default(command, flag).parse().unwrap() };
    assert_eq!(
        plan.by_budget.keys().collect::<Vec<_>>(),
        ["anonymous", "main", "sub", "two_factor"],
        "README.md's sentence on the paced plan names these budgets"
    );
    let check = read("independent/check");
    let check_default = |option: &str| -> usize {
        check
            .lines()
            .find(|line| line.contains(&format!("add_argument(\"{option}\"")))
            .and_then(|line| line.split("default=").nth(1))
            .map(|default| {
                default
                    .trim_matches(|c: char| !c.is_ascii_digit())
                    .rsplit(',')
                    .next()
                    .unwrap()
                    .parse()
                    .unwrap()
            })
            .unwrap_or_else(|| panic!("independent/check has no default for {option}"))
    };
    let mut facts = vec![
        fact("# seeded faults", &[Fault::ALL.len()], "Fault::ALL"),
        fact(
            "`in_flight = N` (# to #)",
            &in_flight_bounds(),
            "case::parse_case's refusal of a larger in_flight",
        ),
        fact(
            "one line of at most # characters",
            &[excuse_limit()],
            "Statements::parse of a longer excuse",
        ),
        fact(
            "#% below your rate",
            &[pacing_margin(&plan, &limits)],
            "run::paced_plan's time at the target's rate",
        ),
        fact(
            "at #% below the target file's",
            &[pacing_margin(&plan, &limits)],
            "run::paced_plan's time at the target's rate",
        ),
        fact(
            "with seeds 1 to # at # requests",
            &[check_default("--seeds"), check_default("--requests")],
            "independent/check's --seeds and --requests",
        ),
        fact(
            "answering: # requests in a row timed out after # s",
            &[number(&["run"], "--no-answer-limit"), timeout_ms / 1000],
            "harness run --help",
        ),
        fact(
            "(# for interface 2.1.1",
            &[spec_statements(&read("cases/SPEC.md")).len()],
            "spec_statements(cases/SPEC.md)",
        ),
        fact(
            "(default: the fixed # entries the snapshots are taken from",
            &[harness::serve::MAIN_LOG_ENTRIES],
            "serve::MAIN_LOG_ENTRIES",
        ),
        fact(
            "The workspace is # crates",
            &[members],
            "Cargo.toml's members",
        ),
        fact(
            "along # dimensions",
            &[Dimension::ALL.len()],
            "Dimension::ALL",
        ),
        fact(
            "the # parser and signer cargo-fuzz targets",
            &[harness_model::fuzz_targets::TARGETS.len()],
            "fuzz_targets::TARGETS",
        ),
        fact(
            "# servers are in CI today",
            &[folders_holding("independent", "server.toml")],
            "independent/*/server.toml",
        ),
        fact(
            "holds # clients",
            &[folders_holding("independent/clients", "client.toml")],
            "independent/clients/*/client.toml",
        ),
        fact(
            "(at most # per server)",
            &[max_argued],
            "MAX_ARGUED of independent/check",
        ),
        fact(
            "and takes at most # per server",
            &[max_argued],
            "MAX_ARGUED of independent/check",
        ),
        fact(
            "the suite plans # paced calls (main #, two_factor #, sub #, anonymous #), about # s",
            &[
                plan.calls(),
                budget("main"),
                budget("two_factor"),
                budget("sub"),
                budget("anonymous"),
                seconds,
            ],
            "run::paced_plan against `harness serve --variant rate-per-user-burst-1`",
        ),
        fact(
            "Each case runs # rounds",
            &[race],
            "case::Race::DEFAULT_ROUNDS",
        ),
        fact(
            "`rounds` (default #, 1 to #)",
            &[race, harness::case::Race::MAX_ROUNDS as usize],
            "case::Race::DEFAULT_ROUNDS, MAX_ROUNDS",
        ),
        fact(
            "copies are bounded (2 to # per race, 1 to # rounds",
            &[
                harness::case::Race::MAX_COPIES,
                harness::case::Race::MAX_ROUNDS as usize,
            ],
            "case::Race::MAX_COPIES, MAX_ROUNDS",
        ),
        fact(
            "up to # copies of",
            &[harness::case::Race::MAX_COPIES],
            "case::Race::MAX_COPIES",
        ),
        fact(
            "answers over # MiB are refused",
            &[harness::transport::RequestLimits::default().max_response_bytes >> 20],
            "transport::RequestLimits::default()",
        ),
        fact(
            "at most # KiB of an answer is kept",
            &[harness::wire::RECORDED_BODY_BYTES >> 10],
            "wire::RECORDED_BODY_BYTES",
        ),
        fact(
            "`--timeout-ms` (default # s)",
            &[timeout_ms / 1000],
            "harness run --help",
        ),
        fact(
            "`--no-answer-limit` requests in a row without an answer (default #:",
            &[number(&["run"], "--no-answer-limit")],
            "harness run --help",
        ),
        fact(
            "`--stateful PERCENT` of the `--requests` budget (default #)",
            &[number(&["fuzz"], "--stateful")],
            "harness fuzz --help",
        ),
        fact(
            "with a burst of # (`--burst`)",
            &[number(&["judge"], "--burst")],
            "harness judge --help",
        ),
        fact(
            "`[limits] clock_skew_ms` (default #)",
            &[harness::target_file::RateLimits::default().clock_skew_ms as usize],
            "target_file::RateLimits::default()",
        ),
    ];
    for (pattern, command) in [
        ("transport seen) to `--out` (default `@`)", "judge"),
        ("writes the four reports to `--out` (default `@`)", "proxy"),
    ] {
        facts.push(Fact {
            pattern,
            values: vec![flag_default(&[command], "--out")],
            source: if command == "judge" {
                "harness judge --help"
            } else {
                "harness proxy --help"
            },
        });
    }
    facts
}

/// Nouns a count of the code's is stated in: a number just before one of them (at most two
/// words between) must be one a fact checks.
const COUNTED: [&str; 14] = [
    "faults",
    "variants",
    "cases",
    "clauses",
    "statements",
    "crates",
    "dimensions",
    "entries",
    "targets",
    "servers",
    "clients",
    "subcommands",
    "modules",
    "points",
];

/// Counts near a counted noun that say nothing of the code, each with why.
const NOT_COUNTS: [(&str, &str); 2] = [
    ("## Two commands", "the section's own two commands"),
    ("Two modules never import each other", "a rule of any two"),
];

/// The places in `line` where a number stands before a counted noun or after `default`.
fn counts_stated(line: &str) -> Vec<std::ops::Range<usize>> {
    let mut places = Vec::new();
    for noun in COUNTED {
        for filler in ["# ", "# @ ", "# @ @ "] {
            let pattern = format!("{filler}{noun}");
            for (range, values) in matches(line, &pattern) {
                let words_between = values[1..].iter().all(|word| {
                    !word.is_empty()
                        && word
                            .chars()
                            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
                });
                let end = range.end;
                let whole_word = line[end..]
                    .chars()
                    .next()
                    .is_none_or(|c| !c.is_ascii_alphanumeric());
                if words_between && whole_word && values[0] != "1" {
                    places.push(range);
                }
            }
        }
    }
    for pattern in ["(default #", "(default: the fixed #", "`--@` (default `@`"] {
        places.extend(
            matches(line, pattern)
                .into_iter()
                .filter(|(_, values)| !values[0].contains(' '))
                .map(|(range, _)| range),
        );
    }
    places
}

#[test]
fn the_counts_the_docs_state_are_the_codes() {
    let facts = facts();
    let mut wrong = Vec::new();
    let mut stated = vec![0; facts.len()];
    for doc in DOCS {
        for (number, line) in read(doc).lines().enumerate() {
            let mut checked = Vec::new();
            for (index, fact) in facts.iter().enumerate() {
                for (range, values) in matches(line, fact.pattern) {
                    stated[index] += 1;
                    checked.push(range);
                    if values != fact.values {
                        wrong.push(format!(
                            "{doc}:{}: says \"{}\", the code has \"{}\" ({})",
                            number + 1,
                            filled(fact.pattern, &values),
                            filled(fact.pattern, &fact.values),
                            fact.source
                        ));
                    }
                }
            }
            for place in counts_stated(line) {
                let covered = checked
                    .iter()
                    .any(|range| range.start <= place.start && place.end <= range.end);
                let exempt = NOT_COUNTS.iter().any(|(text, _)| line.contains(text));
                if !covered && !exempt {
                    wrong.push(format!(
                        "{doc}:{}: states \"{}\", a count no test checks: add its words and the code's value to `facts` in tidy/docs.rs, or drop it",
                        number + 1,
                        &line[place]
                    ));
                }
            }
        }
    }
    for (fact, times) in facts.iter().zip(stated) {
        if times == 0 {
            wrong.push(format!(
                "no doc says \"{}\" any more: reword the fact in tidy/docs.rs to the doc's words, or drop it",
                fact.pattern
            ));
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

#[test]
fn the_count_scan_reads_numbers_in_their_words() {
    assert_eq!(
        matches("of the 1,074 seeded faults", "# seeded faults"),
        [(7..26, vec!["1074".to_owned()])]
    );
    assert_eq!(
        matches("Three servers are in CI today", "# servers are in CI today")[0].1,
        ["3"]
    );
    assert_eq!(
        matches(
            "to `--out` (default `reports/judge`)",
            "to `--out` (default `@`)"
        )[0]
        .1,
        ["reports/judge"]
    );
    assert!(matches("the 10^5 log entries", "# log entries").is_empty());
    assert!(matches("(main 37, two", "main #, two").len() == 1);
    assert_eq!(counts_stated("holds 211 seeded faults"), vec![6..23]);
    assert!(counts_stated("one entry per case").is_empty());
    assert!(counts_stated("as `account` (default `main`)").is_empty());
    assert_eq!(counts_stated("to `--out` (default `x`)").len(), 1);
    assert_eq!(
        filled("# seeded faults", &["128".to_owned()]),
        "128 seeded faults"
    );
}

/// The calls the docs tell a contributor to write, as the code would hold them: a method
/// called on a receiver (`state.deferred.later(`), with the type of its argument when it
/// names one (`ctx.fault(Fault::`).
fn documented_calls(text: &str) -> Vec<String> {
    let mut calls = Vec::new();
    for span in text.split('`').skip(1).step_by(2) {
        let Some(open) = span.find('(') else {
            continue;
        };
        let (call, argument) = (&span[..open], &span[open + 1..]);
        let word = |text: &str| {
            !text.is_empty()
                && text
                    .chars()
                    .all(|character| character.is_ascii_alphanumeric() || character == '_')
        };
        let chain: Vec<&str> = call.split('.').collect();
        if chain.len() < 2 || !chain.iter().all(|link| word(link)) {
            continue;
        }
        match argument.split_once("::") {
            Some((kind, _)) if word(kind) => calls.push(format!("{call}({kind}::")),
            _ => calls.push(format!("{call}(")),
        }
    }
    calls
}

#[test]
fn every_call_the_docs_tell_a_contributor_to_write_is_one_the_code_makes() {
    let sources = sources();
    let mut missing = Vec::new();
    let mut documented = 0;
    for doc in DOCS {
        for (number, line) in read(doc).lines().enumerate() {
            for call in documented_calls(line) {
                documented += 1;
                if !sources
                    .iter()
                    .any(|source| source.code.contains(call.as_str()))
                {
                    missing.push(format!(
                        "{doc}:{}: tells a contributor to write `{call}...`, which no library code makes",
                        number + 1
                    ));
                }
            }
        }
    }
    assert!(documented >= 3, "the scan found {documented} calls");
    assert!(missing.is_empty(), "{}", missing.join("\n"));
    assert_eq!(
        documented_calls("see `ctx.fault(Fault::YourFault)`, `a.b.c(...)` and `x(y)`"),
        ["ctx.fault(Fault::", "a.b.c("]
    );
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
pub(super) fn subcommands() -> Vec<String> {
    help(&[])
        .lines()
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
        "ARCHITECTURE.md",
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
    let listing = Command::new(env!("CARGO_BIN_EXE_harness"))
        .args(["judge", "--list-scenarios"])
        .output()
        .expect("harness judge --list-scenarios runs");
    let scenarios: Vec<String> = String::from_utf8_lossy(&listing.stdout)
        .lines()
        .filter_map(|line| line.split_whitespace().next())
        .map(str::to_owned)
        .collect();
    let listed = readme
        .split_once("`--scenario` provokes common bugs:")
        .and_then(|(_, rest)| rest.split_once("(`--scenario list`"))
        .map(|(list, _)| list)
        .expect("README.md lists the judge's scenarios");
    // The scenarios are the spans outside the parentheses that describe some of them.
    let (mut named, mut depth) = (Vec::new(), 0);
    for (at, piece) in listed.split('`').enumerate() {
        if at % 2 == 1 {
            if depth == 0 {
                named.push(piece.to_owned());
            }
        } else {
            depth += piece.matches('(').count();
            depth -= piece.matches(')').count();
        }
    }
    for scenario in &scenarios {
        if scenario != "default" && !named.contains(scenario) {
            wrong.push(format!(
                "README.md does not list the judge's scenario `{scenario}`"
            ));
        }
    }
    for scenario in &named {
        if !scenarios.contains(scenario) {
            wrong.push(format!(
                "README.md lists the judge's scenario `{scenario}`, which harness judge --list-scenarios lacks"
            ));
        }
    }
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
