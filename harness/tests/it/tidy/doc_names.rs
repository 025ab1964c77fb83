//! The names README.md, CONTRIBUTING.md and ARCHITECTURE.md write in backticks are the
//! code's: every item path (`spec::is_paced`, `Verdict::worst`, `harness_runner::conformance::trials`)
//! and macro (`faults!`) is defined where it says, every file or folder path exists, every
//! `harness <command> --flag` they show is a command and a flag of it (and every `--flag`
//! they name is one of some command's, or of a tool listed here), and every cargo command
//! names a package, a test target and a test filter that exist.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::OnceLock;

use super::docs::{DOCS, flags, help, read, subcommands};
use super::{defines, repository, sources};

/// A piece of code a doc writes: its line, and the text.
struct Written {
    line: usize,
    text: String,
}

/// The code spans of `text` outside fenced blocks, with their lines.
fn code_spans(text: &str) -> Vec<Written> {
    let mut spans = Vec::new();
    let mut fenced = false;
    for (number, line) in text.lines().enumerate() {
        if line.trim_start().starts_with("```") {
            fenced = !fenced;
            continue;
        }
        if fenced {
            continue;
        }
        for span in line.split('`').skip(1).step_by(2) {
            spans.push(Written {
                line: number + 1,
                text: span.to_owned(),
            });
        }
    }
    spans
}

/// The lines of the `sh` blocks of `text`, comments taken off.
fn shell_lines(text: &str) -> Vec<Written> {
    let mut lines = Vec::new();
    let mut shell = None;
    for (number, line) in text.lines().enumerate() {
        let trimmed = line.trim_start();
        if let Some(language) = trimmed.strip_prefix("```") {
            shell = match shell {
                None => Some(language == "sh"),
                Some(_) => None,
            };
            continue;
        }
        if shell == Some(true) {
            let code = line.split(" #").next().unwrap_or_default().trim();
            lines.push(Written {
                line: number + 1,
                text: code.to_owned(),
            });
        }
    }
    lines
}

fn identifier(text: &str) -> bool {
    !text.is_empty()
        && text.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
        && !text.starts_with(|c: char| c.is_ascii_digit())
}

/// Every item path and macro the docs write in backticks is defined where it says: a path's
/// module is a module of the workspace (a crate's name leads to its modules; the facade
/// `harness` to every crate's) and each name after it is defined in that module's code (an
/// item, or an enum's variant); a path that starts with a type (`Verdict::worst`) names a
/// type some module defines and an item its crate defines; a macro (`faults!`) is one some
/// `macro_rules!` declares. So the docs cannot go on naming what was renamed or removed.
#[test]
fn the_docs_name_only_items_that_exist() {
    let sources = sources();
    let mut missing = Vec::new();
    let mut named = 0;
    for doc in DOCS {
        for span in code_spans(&read(doc)) {
            // A call names its function: `spec::method("...")`, `fault::race_pause()`.
            let path = span.text.split('(').next().unwrap_or_default();
            if let Some(name) = path.strip_suffix('!').filter(|name| identifier(name)) {
                named += 1;
                if !OTHER_CRATES_MACROS.contains(&name)
                    && !sources
                        .iter()
                        .any(|source| source.code.contains(&format!("macro_rules! {name} ")))
                {
                    missing.push(format!(
                        "{doc}:{}: `{}`: no macro_rules! {name}",
                        span.line, span.text
                    ));
                }
                continue;
            }
            let mut segments: Vec<&str> = path.split("::").collect();
            if segments.len() < 2 || !segments.iter().all(|segment| identifier(segment)) {
                continue;
            }
            named += 1;
            if segments[0] == "harness" || segments[0].starts_with("harness_") {
                segments.remove(0);
            }
            let first = segments[0];
            let scope: Vec<&super::code::Source> = if first.starts_with(char::is_uppercase) {
                // A type's item: the crates that define the type.
                let crates: BTreeSet<&str> = sources
                    .iter()
                    .filter(|source| {
                        ["struct ", "enum ", "trait ", "type "]
                            .iter()
                            .any(|keyword| defines_as(&source.code, keyword, first))
                    })
                    .map(|source| source.krate.as_str())
                    .collect();
                sources
                    .iter()
                    .filter(|source| crates.contains(source.krate.as_str()))
                    .collect()
            } else {
                sources
                    .iter()
                    .filter(|source| source.module_path.iter().any(|name| name == first))
                    .collect()
            };
            if scope.is_empty() {
                missing.push(format!(
                    "{doc}:{}: `{}`: no module or type `{first}`",
                    span.line, span.text
                ));
                continue;
            }
            for name in &segments[1..] {
                if !scope.iter().any(|source| defines(&source.code, name)) {
                    missing.push(format!(
                        "{doc}:{}: `{}`: nothing named `{name}` in `{first}`",
                        span.line, span.text
                    ));
                }
            }
        }
    }
    assert!(
        named > 30,
        "the scan found {named} paths: is it still reading?"
    );
    assert!(missing.is_empty(), "{}", missing.join("\n"));
}

/// Macros the docs name of the standard library and of dependencies.
const OTHER_CRATES_MACROS: [&str; 2] = ["include_str", "json"];

/// Whether `code` has `keyword name` as a whole word (`enum Verdict`).
fn defines_as(code: &str, keyword: &str, name: &str) -> bool {
    code.match_indices(&format!("{keyword}{name}"))
        .any(|(at, found)| {
            let before = code[..at].chars().next_back();
            let after = code[at + found.len()..].chars().next();
            before.is_none_or(|c| !c.is_ascii_alphanumeric() && c != '_')
                && after.is_none_or(|c| !c.is_ascii_alphanumeric() && c != '_')
        })
}

/// Every file and folder of the repository, relative to it with `/` (folders end in `/`);
/// build output and git's own files left out.
fn repository_paths() -> &'static BTreeSet<String> {
    static PATHS: OnceLock<BTreeSet<String>> = OnceLock::new();
    PATHS.get_or_init(|| {
        let root = repository();
        let mut paths = BTreeSet::new();
        let mut stack = vec![root.clone()];
        while let Some(dir) = stack.pop() {
            for entry in std::fs::read_dir(&dir).unwrap() {
                let path = entry.unwrap().path();
                let name = path.file_name().unwrap().to_string_lossy();
                if name == ".git" || name == "target" || name == "node_modules" {
                    continue;
                }
                let relative = path
                    .strip_prefix(&root)
                    .unwrap()
                    .to_string_lossy()
                    .replace('\\', "/");
                if path.is_dir() {
                    paths.insert(format!("{relative}/"));
                    stack.push(path);
                } else {
                    paths.insert(relative);
                }
            }
        }
        paths
    })
}

/// The part of a path written in a doc that must exist: up to a placeholder (`<name>`,
/// `{base_url}`, a glob's `*`), cut back to its last `/`; `None` for what is no path of
/// the repository (a URL, an absolute or parent path, a method's name such as
/// `private/logout`, a report written at run time, a placeholder such as `DIR/cases`).
fn checked_path(written: &str) -> Option<&str> {
    let word = written.split_whitespace().next()?;
    if !word.contains('/') || word.contains("://") || word.starts_with(['/', '-']) {
        return None;
    }
    let first = word.split('/').next()?;
    let not_ours = ["private", "public", "reports", "..", ""];
    if not_ours.contains(&first)
        || first.chars().all(|c| !c.is_ascii_lowercase())
        || word.contains(['?', '=', ':', '[', '|', '\\'])
    {
        return None;
    }
    let whole = match word.find(['<', '{', '*']) {
        Some(at) => &word[..=word[..at].rfind('/')?],
        None => word,
    };
    Some(whole)
}

/// Whether `path` names a file or folder of the repository: from its root, or, as
/// ARCHITECTURE.md and CONTRIBUTING.md write them inside a crate (`serve/fault.rs`,
/// `tests/it/events.rs`), as the end of one.
fn exists(path: &str) -> bool {
    let paths = repository_paths();
    let folder = format!("{}/", path.trim_end_matches('/'));
    let ends = |candidate: &String| {
        candidate == path
            || candidate == &folder
            || candidate.ends_with(&format!("/{path}"))
            || (!path.ends_with('/') && candidate.ends_with(&format!("/{folder}")))
    };
    paths.iter().any(ends)
}

#[test]
fn the_paths_the_docs_write_exist() {
    let mut missing = Vec::new();
    let mut checked = 0;
    for doc in DOCS {
        for span in code_spans(&read(doc)) {
            let Some(path) = checked_path(&span.text) else {
                continue;
            };
            checked += 1;
            if !exists(path) {
                missing.push(format!(
                    "{doc}:{}: `{}`: no file or folder `{path}` in the repository",
                    span.line, span.text
                ));
            }
        }
    }
    assert!(
        checked > 50,
        "the scan found {checked} paths: is it still reading?"
    );
    assert!(missing.is_empty(), "{}", missing.join("\n"));
    assert_eq!(checked_path("cases/<area>/"), Some("cases/"));
    assert_eq!(
        checked_path(".github/workflows/cflite_*.yml"),
        Some(".github/workflows/")
    );
    assert_eq!(checked_path("private/get_transaction_log"), None);
    assert_eq!(checked_path("DIR/cases"), None);
    assert_eq!(checked_path("https://api.example.com/x"), None);
    assert!(exists("serve/fault.rs") && exists("harness/tests/it") && !exists("serve/x.rs"));
}

/// The `harness ...` command lines a doc shows: its code spans that start with `harness `,
/// and the lines of its `sh` blocks that run `harness` or `cargo run [--release] --`, as
/// the words after `harness`.
fn harness_commands(text: &str) -> Vec<Written> {
    let mut commands = Vec::new();
    for span in code_spans(text) {
        if let Some(rest) = span.text.strip_prefix("harness ") {
            commands.push(Written {
                line: span.line,
                text: rest.to_owned(),
            });
        }
    }
    for line in shell_lines(text) {
        let words: Vec<&str> = line.text.split_whitespace().collect();
        let after = words
            .iter()
            .position(|word| *word == "harness")
            .filter(|&at| at == 0 || words[at - 1] == "&&")
            .map(|at| at + 1)
            .or_else(|| {
                let cargo_run = words.windows(2).position(|pair| pair == ["cargo", "run"])?;
                let dashes = words[cargo_run..].iter().position(|word| *word == "--")?;
                Some(cargo_run + dashes + 1)
            });
        if let Some(after) = after.filter(|&after| after < words.len()) {
            commands.push(Written {
                line: line.line,
                text: words[after..].join(" "),
            });
        }
    }
    commands
}

/// The `--flags` in `words` (`[--for SECONDS \| --requests N]` gives `--for`, `--requests`).
fn flags_in(words: &str) -> Vec<String> {
    words
        .split_whitespace()
        .map(|word| word.trim_start_matches(['[', '(']))
        .filter(|word| word.starts_with("--"))
        .map(|word| {
            let name: String = word[2..]
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric() || *c == '-')
                .collect();
            format!("--{name}")
        })
        .filter(|flag| flag.len() > 2)
        .collect()
}

/// Every `harness <command>` a doc shows is a subcommand (`run\|fuzz` each one), and every
/// `--flag` written after it is one `harness <command> --help` lists.
#[test]
fn every_harness_command_the_docs_show_is_one_with_those_flags() {
    let commands = subcommands();
    let mut wrong = Vec::new();
    let mut shown = 0;
    for doc in DOCS {
        for written in harness_commands(&read(doc)) {
            shown += 1;
            let mut words = written.text.split_whitespace();
            let first = words.next().unwrap_or_default();
            let named: Vec<Vec<&str>> = if first.starts_with('-') {
                vec![vec![]]
            } else {
                first
                    .split("\\|")
                    .flat_map(|name| name.split('|'))
                    .map(|name| {
                        // A command of a command: `harness fuzz merge`.
                        let second = written.text.split_whitespace().nth(1).unwrap_or_default();
                        let nested = !second.is_empty()
                            && second.chars().all(|c| c.is_ascii_lowercase() || c == '-')
                            && help(&[name, second])
                                .contains(&format!("Usage: harness {name} {second}"));
                        if nested {
                            vec![name, second]
                        } else {
                            vec![name]
                        }
                    })
                    .collect()
            };
            for command in named {
                if let Some(name) = command.first()
                    && !commands.iter().any(|known| known == name)
                {
                    wrong.push(format!(
                        "{doc}:{}: shows `harness {}`: no such command",
                        written.line, written.text
                    ));
                    continue;
                }
                let known = flags(&command);
                for flag in flags_in(&written.text) {
                    if !known.contains_key(&flag) {
                        wrong.push(format!(
                            "{doc}:{}: shows `harness {}`: `harness {}` has no {flag}",
                            written.line,
                            written.text,
                            command.join(" ")
                        ));
                    }
                }
            }
        }
    }
    assert!(
        shown > 30,
        "the scan found {shown} commands: is it still reading?"
    );
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
    assert_eq!(
        flags_in("judge [--for SECONDS \\| --requests N] --tls"),
        ["--for", "--requests", "--tls"]
    );
}

/// Flags the docs name of other tools than `harness`: cargo's, the CI scripts', the
/// independent checks'.
const OTHER_TOOLS_FLAGS: [&str; 12] = [
    "--example",
    "--change",
    "--release",
    "--workspace",
    "--review",
    "--locked",
    "--path",
    "--workspace-root",
    "--proxy",
    "--harness",
    "--jobs",
    "--retries",
];

/// Every `--flag` a doc names in a code span is one some `harness` command lists, or a flag
/// of another tool listed above.
#[test]
fn every_flag_the_docs_name_is_one_of_a_command() {
    let mut commands: Vec<Vec<String>> = vec![vec![]];
    commands.extend(subcommands().into_iter().map(|name| vec![name]));
    commands.push(vec!["fuzz".to_owned(), "merge".to_owned()]);
    let known: BTreeSet<String> = commands
        .iter()
        .flat_map(|command| {
            let words: Vec<&str> = command.iter().map(String::as_str).collect();
            flags(&words).into_keys()
        })
        .chain(OTHER_TOOLS_FLAGS.iter().map(|flag| (*flag).to_owned()))
        .collect();
    let mut wrong = Vec::new();
    for doc in DOCS {
        for span in code_spans(&read(doc)) {
            if span.text.contains("cargo ") {
                continue;
            }
            for flag in flags_in(&span.text) {
                if !known.contains(&flag) {
                    wrong.push(format!(
                        "{doc}:{}: `{}`: no command has {flag}",
                        span.line, span.text
                    ));
                }
            }
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

/// The packages of the workspace: name and folder.
fn packages() -> BTreeMap<String, String> {
    read("Cargo.toml")
        .lines()
        .find_map(|line| line.strip_prefix("members = ["))
        .expect("Cargo.toml lists the workspace's members")
        .split('"')
        .skip(1)
        .step_by(2)
        .map(|member| {
            let name = read(&format!("{member}/Cargo.toml"))
                .lines()
                .find_map(|line| line.strip_prefix("name = \""))
                .and_then(|name| name.strip_suffix('"'))
                .expect("a member names its package")
                .to_owned();
            (name, member.to_owned())
        })
        .collect()
}

/// The tests of this binary (`tests/it`), by name.
fn it_tests() -> Vec<String> {
    let output = std::process::Command::new(std::env::current_exe().unwrap())
        .args(["--list", "--format", "terse"])
        .output()
        .expect("the test binary lists its tests");
    String::from_utf8_lossy(&output.stdout)
        .lines()
        .filter_map(|line| line.strip_suffix(": test"))
        .map(str::to_owned)
        .collect()
}

/// Every cargo command a doc shows names what exists: `-p` a package of the workspace,
/// `--test` a test target of one, the filter after `--test it` some test of it, and
/// `--path` a folder.
#[test]
fn every_cargo_command_the_docs_show_names_what_exists() {
    let packages = packages();
    let tests = it_tests();
    assert!(tests.len() > 100, "{} tests listed", tests.len());
    let mut wrong = Vec::new();
    let mut shown = 0;
    for doc in DOCS {
        let text = read(doc);
        let written = code_spans(&text)
            .into_iter()
            .chain(shell_lines(&text))
            .filter_map(|written| {
                let at = written.text.find("cargo ")?;
                Some(Written {
                    line: written.line,
                    text: written.text[at..].to_owned(),
                })
            });
        for command in written {
            shown += 1;
            let words: Vec<&str> = command.text.split_whitespace().collect();
            let mut problems = Vec::new();
            let own = words
                .iter()
                .position(|word| *word == "--")
                .unwrap_or(words.len());
            for (at, pair) in words[..own].windows(2).enumerate() {
                match pair[0] {
                    "-p" if !packages.contains_key(pair[1]) => {
                        problems.push(format!("no package {}", pair[1]));
                    }
                    "--test" => {
                        let target = pair[1];
                        let found = packages.values().any(|dir| {
                            let tests = repository().join(dir).join("tests");
                            tests.join(format!("{target}.rs")).is_file()
                                || tests.join(target).join("main.rs").is_file()
                        });
                        if !found {
                            problems.push(format!("no test target {target}"));
                        }
                        let filter = words[..own]
                            .get(at + 2)
                            .filter(|word| !word.starts_with('-'));
                        if let Some(filter) = filter
                            && target == "it"
                            && !tests.iter().any(|test| test.contains(filter))
                        {
                            problems.push(format!("no test of `it` matches {filter}"));
                        }
                    }
                    "--path" if !exists(pair[1]) => {
                        problems.push(format!("no folder {}", pair[1]));
                    }
                    _ => {}
                }
            }
            for problem in problems {
                wrong.push(format!(
                    "{doc}:{}: `{}`: {problem}",
                    command.line, command.text
                ));
            }
        }
    }
    assert!(
        shown > 10,
        "the scan found {shown} cargo commands: is it still reading?"
    );
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}
