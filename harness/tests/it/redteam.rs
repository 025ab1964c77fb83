//! The red-team record (`docs/redteam/`, see its README.md): readers who saw only SPEC.md
//! and each clause's one line said how a check could fail a conforming server or pass a
//! breaking one, and how an excused statement could be checked after all; the record says,
//! for each answer, what the harness does about it.
//!
//! The record is held to the catalog and the statement table: every `must` clause of
//! `cases/clauses.toml` has an entry in `must.toml` and every entry names a `must` clause;
//! every statement of `cases/statements.toml` with an excuse has an entry in
//! `excuses.toml` and every entry names one (or says `fixed:`, its excuse gone because the
//! statement is now checked). Every decision is settled (`rebutted:`, `fixed:`, and for an
//! excuse `stands:`) or still `open:`; the open ones are printed, and none may remain: every
//! decision is settled.
//!
//! The workspace's crates read TOML with a crate this test binary does not depend on, so
//! the record is read with [`parse`], which knows what the record is made of: `[[table]]`
//! headers, comments, and keys whose values are strings in any of TOML's four forms.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use harness::check::{Catalog, Level};

/// The keys of an entry of `must.toml`.
const CLAUSE_KEYS: [&str; 6] = [
    "id",
    "conforming_but_fails",
    "breaking_but_passes",
    "risk",
    "on_false_failure",
    "on_false_pass",
];

/// The keys of an entry of `excuses.toml`.
const STATEMENT_KEYS: [&str; 3] = ["id", "proposal", "decision"];

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

fn catalog() -> Catalog {
    Catalog::load(&root().join("cases/clauses.toml")).expect("catalog and statement table load")
}

/// One `[[table]]` of the record: the line of its header and its keys.
#[derive(Debug)]
struct Entry {
    line: usize,
    fields: BTreeMap<String, String>,
}

impl Entry {
    fn get(&self, key: &str) -> &str {
        self.fields.get(key).map_or("", String::as_str)
    }
}

/// The entries of a file of the record, each a `[[table]]` of string keys; any other
/// shape is an error naming its line.
fn record(name: &str, table: &str) -> Vec<Entry> {
    let path = root().join("docs/redteam").join(name);
    let text = std::fs::read_to_string(&path)
        .unwrap_or_else(|error| panic!("{}: {error}", path.display()));
    parse(&text, table).unwrap_or_else(|problem| panic!("{}:{problem}", path.display()))
}

/// The `[[table]]` entries of `text`: comments, blank lines, headers and `key = "string"`
/// lines, a string being basic ("..."), literal ('...') or either's multi-line form.
fn parse(text: &str, table: &str) -> Result<Vec<Entry>, String> {
    let chars: Vec<char> = text.chars().collect();
    let header = format!("[[{table}]]");
    let (mut at, mut line) = (0, 1);
    let mut entries: Vec<Entry> = Vec::new();
    loop {
        while let Some(&c) = chars.get(at) {
            match c {
                '\n' => line += 1,
                ' ' | '\t' | '\r' => {}
                '#' => {
                    while chars.get(at).is_some_and(|&c| c != '\n') {
                        at += 1;
                    }
                    continue;
                }
                _ => break,
            }
            at += 1;
        }
        let Some(&first) = chars.get(at) else {
            return Ok(entries);
        };
        if first == '[' {
            let end = chars[at..]
                .iter()
                .position(|&c| c == '\n')
                .map_or(chars.len(), |end| at + end);
            let found: String = chars[at..end].iter().collect();
            let found = found.split('#').next().unwrap_or_default().trim();
            if found != header {
                return Err(format!("{line}: expected {header}, found {found}"));
            }
            entries.push(Entry {
                line,
                fields: BTreeMap::new(),
            });
            at = end;
            continue;
        }
        let start = at;
        while chars
            .get(at)
            .is_some_and(|&c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
        {
            at += 1;
        }
        let key: String = chars[start..at].iter().collect();
        if key.is_empty() {
            return Err(format!("{line}: expected a key or {header}"));
        }
        while chars.get(at).is_some_and(|&c| c == ' ' || c == '\t') {
            at += 1;
        }
        if chars.get(at) != Some(&'=') {
            return Err(format!("{line}: expected = after {key}"));
        }
        at += 1;
        while chars.get(at).is_some_and(|&c| c == ' ' || c == '\t') {
            at += 1;
        }
        let key_line = line;
        let value = string(&chars, &mut at, &mut line)
            .map_err(|problem| format!("{key_line}: {key}: {problem}"))?;
        while chars
            .get(at)
            .is_some_and(|&c| c == ' ' || c == '\t' || c == '\r')
        {
            at += 1;
        }
        if chars.get(at) == Some(&'#') {
            while chars.get(at).is_some_and(|&c| c != '\n') {
                at += 1;
            }
        }
        if chars.get(at).is_some_and(|&c| c != '\n') {
            return Err(format!("{line}: {key}: text after the value"));
        }
        let Some(entry) = entries.last_mut() else {
            return Err(format!("{key_line}: {key} before the first {header}"));
        };
        if entry.fields.insert(key.clone(), value).is_some() {
            return Err(format!("{key_line}: {key} given twice"));
        }
    }
}

/// The TOML string starting at `at` (basic, literal, or either's multi-line form), `at`
/// left after its closing quotes and `line` counting the newlines it holds.
fn string(chars: &[char], at: &mut usize, line: &mut usize) -> Result<String, String> {
    let quote = match chars.get(*at) {
        Some(&quote @ ('"' | '\'')) => quote,
        _ => return Err("only string values are read here".to_owned()),
    };
    let literal = quote == '\'';
    let multi = chars.get(*at + 1) == Some(&quote) && chars.get(*at + 2) == Some(&quote);
    let mut value = String::new();
    if multi {
        *at += 3;
        // A newline right after the opening quotes is not part of the string.
        if chars.get(*at) == Some(&'\r') && chars.get(*at + 1) == Some(&'\n') {
            *at += 1;
        }
        if chars.get(*at) == Some(&'\n') {
            *at += 1;
            *line += 1;
        }
    } else {
        *at += 1;
    }
    loop {
        let Some(&c) = chars.get(*at) else {
            return Err("the string is not closed".to_owned());
        };
        if c == quote {
            if !multi {
                *at += 1;
                return Ok(value);
            }
            // Up to two quotes may end the content, just before the closing three.
            let run = chars[*at..].iter().take_while(|&&c| c == quote).count();
            *at += run;
            if run >= 3 {
                if run > 5 {
                    return Err("more quotes than a string can end with".to_owned());
                }
                value.extend(std::iter::repeat_n(quote, run - 3));
                return Ok(value);
            }
            value.extend(std::iter::repeat_n(quote, run));
            continue;
        }
        if c == '\n' {
            if !multi {
                return Err("a newline in a one-line string".to_owned());
            }
            *line += 1;
        }
        if c == '\\' && !literal {
            let Some(&escape) = chars.get(*at + 1) else {
                return Err("the string is not closed".to_owned());
            };
            *at += 2;
            match escape {
                'n' => value.push('\n'),
                't' => value.push('\t'),
                'r' => value.push('\r'),
                'b' => value.push('\u{8}'),
                'f' => value.push('\u{c}'),
                'e' => value.push('\u{1b}'),
                '"' => value.push('"'),
                '\\' => value.push('\\'),
                'u' | 'U' => {
                    let digits = if escape == 'u' { 4 } else { 8 };
                    let hex: String = chars
                        .get(*at..*at + digits)
                        .ok_or("a short \\u escape")?
                        .iter()
                        .collect();
                    let decoded = u32::from_str_radix(&hex, 16)
                        .ok()
                        .and_then(char::from_u32)
                        .ok_or_else(|| format!("\\{escape}{hex} is no character"))?;
                    value.push(decoded);
                    *at += digits;
                }
                ' ' | '\t' | '\r' | '\n' if multi => {
                    // A backslash ending a line drops the whitespace up to the next text.
                    *at -= 1;
                    while let Some(&blank) = chars.get(*at) {
                        match blank {
                            '\n' => *line += 1,
                            ' ' | '\t' | '\r' => {}
                            _ => break,
                        }
                        *at += 1;
                    }
                }
                other => return Err(format!("unknown escape \\{other}")),
            }
            continue;
        }
        value.push(c);
        *at += 1;
    }
}

/// Each entry of `file` has exactly `keys`, and a non-empty id given once.
fn shape(file: &str, entries: &[Entry], keys: &[&str]) -> Vec<String> {
    let mut problems = Vec::new();
    let mut seen = BTreeSet::new();
    for entry in entries {
        let at = format!("docs/redteam/{file}:{}", entry.line);
        for key in keys {
            if !entry.fields.contains_key(*key) {
                problems.push(format!("{at}: no {key}"));
            }
        }
        for key in entry.fields.keys() {
            if !keys.contains(&key.as_str()) {
                problems.push(format!(
                    "{at}: unknown key {key} (keys: {})",
                    keys.join(", ")
                ));
            }
        }
        let id = entry.get("id");
        if id.is_empty() {
            problems.push(format!("{at}: an empty id"));
        } else if !seen.insert(id) {
            problems.push(format!("{at}: a second entry for {id}"));
        }
    }
    problems
}

#[test]
fn every_must_clause_has_an_entry_and_every_entry_is_a_must_clause() {
    let catalog = catalog();
    let entries = record("must.toml", "clause");
    let mut problems = shape("must.toml", &entries, &CLAUSE_KEYS);
    let named: BTreeSet<&str> = entries.iter().map(|entry| entry.get("id")).collect();
    for entry in &entries {
        let id = entry.get("id");
        let at = format!("docs/redteam/must.toml:{}", entry.line);
        match catalog.get(id) {
            None => problems.push(format!("{at}: {id} is no clause of cases/clauses.toml")),
            Some(clause) if clause.level != Level::Must => problems.push(format!(
                "{at}: {id} is a {:?} clause, not a must clause",
                clause.level
            )),
            Some(_) => {}
        }
    }
    for clause in catalog.iter().filter(|clause| clause.level == Level::Must) {
        if !named.contains(clause.id.as_str()) {
            problems.push(format!(
                "docs/redteam/must.toml: the must clause {} has no entry (give it one: a reader's answers, or a review of its own)",
                clause.id
            ));
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

#[test]
fn every_excused_statement_has_an_entry_and_every_entry_is_excused() {
    let catalog = catalog();
    let entries = record("excuses.toml", "statement");
    let mut problems = shape("excuses.toml", &entries, &STATEMENT_KEYS);
    let named: BTreeSet<&str> = entries.iter().map(|entry| entry.get("id")).collect();
    for entry in &entries {
        let id = entry.get("id");
        let at = format!("docs/redteam/excuses.toml:{}", entry.line);
        let statement = catalog
            .statements()
            .iter()
            .find(|statement| statement.id == id);
        match statement {
            None => problems.push(format!(
                "{at}: {id} is no statement of cases/statements.toml"
            )),
            // An excuse removed because the statement is now checked keeps its entry, which
            // says what was done.
            Some(statement)
                if statement.excuse.is_none()
                    && !entry.get("decision").trim_start().starts_with("fixed:") =>
            {
                problems.push(format!(
                    "{at}: {id} has no excuse in cases/statements.toml (say `fixed: <what was done>`, or drop the entry)"
                ));
            }
            Some(_) => {}
        }
    }
    for statement in catalog.statements().iter() {
        if statement.excuse.is_some() && !named.contains(statement.id.as_str()) {
            problems.push(format!(
                "docs/redteam/excuses.toml: the excused statement {} has no entry",
                statement.id
            ));
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

#[test]
fn every_decision_is_settled_or_open_and_the_open_ones_only_shrink() {
    let columns = [
        (
            "must.toml",
            record("must.toml", "clause"),
            ["on_false_failure", "on_false_pass"].as_slice(),
            ["rebutted:", "fixed:"].as_slice(),
        ),
        (
            "excuses.toml",
            record("excuses.toml", "statement"),
            ["decision"].as_slice(),
            ["stands:", "rebutted:", "fixed:"].as_slice(),
        ),
    ];
    let mut problems = Vec::new();
    let mut open = Vec::new();
    for (file, entries, keys, settled) in &columns {
        for entry in entries {
            for key in *keys {
                let decision = entry.get(key).trim_start();
                let at = format!(
                    "docs/redteam/{file}:{} {} {key}",
                    entry.line,
                    entry.get("id")
                );
                let prefix = settled
                    .iter()
                    .chain(&["open:"])
                    .find(|prefix| decision.starts_with(**prefix));
                match prefix {
                    None => problems.push(format!(
                        "{at}: starts with neither {} nor open:",
                        settled.join(", ")
                    )),
                    Some(prefix) if decision[prefix.len()..].trim().is_empty() => {
                        problems.push(format!("{at}: {prefix} says nothing"));
                    }
                    Some(&"open:") => open.push(format!("{at}: {decision}")),
                    Some(_) => {}
                }
            }
        }
    }
    println!("{} open entries in docs/redteam:", open.len());
    for entry in &open {
        println!("  {entry}");
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
    assert!(
        open.is_empty(),
        "{} open entries: settle each decision (`fixed: <what was done>` or `rebutted: ...`) rather than leave it open:\n{}",
        open.len(),
        open.join("\n")
    );
}

#[test]
fn the_reader_reads_every_string_form() {
    let text = "# comment\n[[t]]\na = \"x\\\"y\\u00e9\" # after\nb = 'c:\\d'\nc = '''\nline\n'one''''\nd = \"\"\"\nx \\\n   y\"\"\"\n";
    let entries = parse(text, "t").unwrap();
    assert_eq!(entries.len(), 1);
    assert_eq!(entries[0].line, 2);
    assert_eq!(entries[0].get("a"), "x\"yé");
    assert_eq!(entries[0].get("b"), "c:\\d");
    assert_eq!(entries[0].get("c"), "line\n'one'");
    assert_eq!(entries[0].get("d"), "x y");
    assert!(
        parse("[[u]]\n", "t")
            .unwrap_err()
            .starts_with("1: expected [[t]]")
    );
    assert!(
        parse("[[t]]\na = 1\n", "t")
            .unwrap_err()
            .contains("only string values")
    );
    assert!(
        parse("[[t]]\na = 'x'\na = 'y'\n", "t")
            .unwrap_err()
            .contains("given twice")
    );
}
