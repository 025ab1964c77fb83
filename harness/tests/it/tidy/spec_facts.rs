//! Only `protocol/src/spec/` states a fact of SPEC.md: outside it, library code writes no
//! method name of `spec::METHODS` (but as a lookup's argument or in a table keyed by method
//! name that a test holds to the spec), no scope a method states, no second-factor error
//! name, and none of SPEC.md's numbers (13668, the signature window, `count`'s maxima and
//! defaults, the member name's length, the paced rate) where the code around says what they
//! are. Each restatement issue 29 listed would be caught; no file is allowed to restate
//! (`STILL_RESTATING` is empty and may only stay so).

use std::collections::{BTreeMap, BTreeSet};

use super::{Source, sources};

/// The string literals of some code, escapes left as written (`"a\"b"` gives `a\"b`), each
/// with the code before it; raw strings (`r#"..."#`) and the char `'"'` are understood.
fn string_literals(code: &str) -> Vec<(&str, &str)> {
    let bytes = code.as_bytes();
    let mut literals = Vec::new();
    let mut at = 0;
    while at < bytes.len() {
        if bytes[at..].starts_with(b"'\"'") {
            at += 3;
            continue;
        }
        if bytes[at] != b'"' {
            at += 1;
            continue;
        }
        // `r#"`: the closing quote needs as many `#` after it.
        let hashes = code[..at].len() - code[..at].trim_end_matches('#').len();
        let raw = code[..at].trim_end_matches('#').ends_with('r');
        let start = at + 1;
        let mut end = start;
        while end < bytes.len() {
            if !raw && bytes[end] == b'\\' {
                end += 2;
                continue;
            }
            if bytes[end] == b'"' && bytes[end + 1..].starts_with("#".repeat(hashes).as_bytes()) {
                break;
            }
            end += 1;
        }
        let end = end.min(bytes.len());
        literals.push((&code[start..end], &code[..at]));
        at = end + 1 + hashes;
    }
    literals
}

/// The numbers written in some text (code or a literal's words): whole tokens, not part of
/// a name, a clause id, an instrument name or a longer number (`1_000.0` is one token).
fn numbers(text: &str) -> Vec<(usize, &str)> {
    let joined = |c: char| c.is_ascii_alphanumeric() || c == '_' || c == '.' || c == '-';
    let mut found = Vec::new();
    let mut at = 0;
    while let Some(offset) = text[at..].find(|c: char| c.is_ascii_digit()) {
        let start = at + offset;
        let end = text[start..]
            .find(|c: char| !(c.is_ascii_digit() || c == '_' || c == '.'))
            .map_or(text.len(), |length| start + length);
        let token = text[start..end].trim_end_matches('.');
        let before = text[..start].chars().next_back();
        let after = text[start + token.len()..].chars().next();
        if !before.is_some_and(joined)
            && !after.is_some_and(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
        {
            found.push((start, token));
        }
        at = end;
    }
    found
}

/// Files outside `protocol/src/spec/` that still state a fact of SPEC.md themselves: none
/// since the fuzzer reads its facts from the spec module. The list may only shrink.
const STILL_RESTATING: &[&str] = &[];

/// Files that only describe, in words, how they depart from SPEC.md: not scanned.
const DESCRIBES_ONLY: &[(&str, &str)] = &[(
    "server/src/serve/fault.rs",
    "the declaration of the faults, each with a one-line description of the rule it breaks \
     (\"rejects count 250, its maximum\"); the behaviour is where the server tests the fault",
)];

/// Tables keyed by method name, each name checked against `spec::METHODS` by a test of its
/// own: they attach the reference server's code to the spec's methods, and state no fact.
const KEYED_BY_METHOD: &[(&str, &str)] = &[
    (
        "server/src/serve/call.rs",
        "HANDLERS, a handler per method, and the methods the `require-unflagged` variant \
         requires more of (`every_handler_serves_a_method_of_the_spec`, \
         `the_variant_requires_only_parameters_the_spec_leaves_unflagged`)",
    ),
    (
        "server/src/serve/reshape.rs",
        "the members the `extra-members` variant adds to each method's answer, under names \
         of its own choosing",
    ),
];

/// Files naming a method of the reference's own that SPEC.md does not describe, as a
/// target file names one of its server's: method-shaped, outside `spec::METHODS`, and no
/// typo of a spec method.
const OWN_METHODS: &[(&str, &str)] = &[
    (
        "server/src/serve/direct_order.rs",
        "the Direct Access order the reference serves and names as its target file's \
         `direct_access_order` (SPEC.md 3 and 4.13 only say such orders are rejected after a lock)",
    ),
    (
        "server/src/serve/subscription.rs",
        "the subscription methods the reference serves and names as its target file's \
         `subscription` and `raw_feed_subscription` (SPEC.md 6: subscription operations are \
         not shown)",
    ),
    (
        "server/src/serve/orders.rs",
        "the read of an order the reference serves and names as its target file's `order_read` \
         and `direct_access_order_read` (SPEC.md 3: order states \"not shown beyond the sample \
         state filled\")",
    ),
];

/// What a file outside `protocol/src/spec/` writes that only the spec module may state:
/// each as `what: the text`, once per kind and text.
fn restatements(source: &Source) -> Vec<String> {
    use harness::spec;
    let methods: BTreeSet<&str> = spec::METHODS.iter().map(|method| method.name).collect();
    let scopes: BTreeSet<&str> = spec::METHODS
        .iter()
        .flat_map(|method| method.scope.iter().copied())
        .chain([spec::MMP_BLOCK_RFQ_SCOPE])
        .collect();
    let mut found = BTreeSet::new();
    let keyed = KEYED_BY_METHOD.iter().any(|(path, _)| *path == source.path);
    let own = OWN_METHODS.iter().any(|(path, _)| *path == source.path);
    for (literal, before) in string_literals(&source.code) {
        // `spec::method("public/auth")`: the name only looks the facts up.
        let lookup = before.trim_end().ends_with("method(");
        if methods.contains(literal) && !lookup && !keyed {
            found.insert(format!("a method's name: \"{literal}\""));
        }
        let method_shaped = ["public/", "private/"].iter().any(|prefix| {
            literal.strip_prefix(prefix).is_some_and(|name| {
                !name.is_empty() && name.chars().all(|c| c.is_ascii_lowercase() || c == '_')
            })
        });
        if method_shaped && !methods.contains(literal) && !own {
            found.insert(format!(
                "a method spec::METHODS does not have: \"{literal}\""
            ));
        }
        if scopes.contains(literal) {
            found.insert(format!("a scope a method states: \"{literal}\""));
        }
        if literal == spec::SECOND_FACTOR_ERROR_NAME {
            found.insert(format!("the second-factor error's name: \"{literal}\""));
        }
    }
    // Numbers, in code and in literals alike (a case file written by code states them too),
    // each where the lines around it say what it is.
    let count_numbers: BTreeSet<String> = spec::METHODS
        .iter()
        .filter_map(|method| method.count_bounds())
        .flat_map(|(_, max, default)| [max, default])
        .map(|number| number.to_string())
        .collect();
    let lines: Vec<&str> = source.code.lines().collect();
    for (index, line) in lines.iter().enumerate() {
        let near = lines[index.saturating_sub(3)..(index + 4).min(lines.len())]
            .join("\n")
            .to_lowercase();
        // `count` as a word of its own or the head of a name (`count_default`), not `counted`.
        let mentions_count = near.match_indices("count").any(|(at, _)| {
            let letter = |c: Option<char>| c.is_some_and(|c| c.is_ascii_alphabetic());
            !letter(near[..at].chars().next_back()) && !letter(near[at + 5..].chars().next())
        });
        for (at, token) in numbers(line) {
            // An operand (`1.0 / rate`) is arithmetic, not a value stated.
            let operand = line[at + token.len()..]
                .trim_start()
                .starts_with(['/', '*', '+', '-'])
                || line[..at].trim_end().ends_with(['/', '*', '+', '-']);
            let plain = token.replace('_', "");
            let what = if plain == spec::SECOND_FACTOR_ERROR_CODE.to_string() {
                Some("the second-factor error code")
            } else if plain == spec::SIGNATURE_WINDOW_MS.to_string() {
                Some("the signature window")
            } else if count_numbers.contains(&plain) && mentions_count {
                Some("a bound or default of `count`")
            } else if plain == spec::MEMBER_NAME_MAX.to_string()
                && line.to_lowercase().contains("name")
            {
                Some("the member name's length")
            } else if plain.parse::<f64>().ok() == Some(spec::PACED_PER_SECOND)
                && plain.contains('.')
                && !operand
                && near.contains("per_second")
            {
                Some("the paced rate")
            } else {
                None
            };
            if let Some(what) = what {
                found.insert(format!("{what}: {token} (line \"{}\")", line.trim()));
            }
        }
    }
    found.into_iter().collect()
}

#[test]
fn spec_facts_are_stated_only_in_the_spec_module() {
    let mut offending = BTreeMap::new();
    for source in sources() {
        let describes = DESCRIBES_ONLY.iter().any(|(path, _)| *path == source.path);
        if source.path.starts_with("protocol/src/spec/") || describes {
            continue;
        }
        let found = restatements(source);
        if !found.is_empty() {
            offending.insert(source.path.clone(), found);
        }
    }
    let new: Vec<String> = offending
        .iter()
        .filter(|(path, _)| !STILL_RESTATING.contains(&path.as_str()))
        .map(|(path, found)| format!("{path}:\n  {}", found.join("\n  ")))
        .collect();
    assert!(
        new.is_empty(),
        "SPEC.md facts stated outside protocol/src/spec/ (read them from `spec::`):\n{}",
        new.join("\n")
    );
    let gone: Vec<&&str> = STILL_RESTATING
        .iter()
        .filter(|path| !offending.contains_key(**path))
        .collect();
    assert!(
        gone.is_empty(),
        "no longer restating, remove from the list: {gone:?}"
    );
}

/// The scan finds each kind of restatement, and not the spec lookups, clause ids and other
/// numbers around them.
#[test]
fn the_restatement_scan_finds_each_kind() {
    let source = |code: &str| {
        Source::text_only(
            "server/src/judge/example.rs",
            "harness-server",
            "judge",
            code,
        )
    };
    let found = |code: &str| restatements(&source(code));
    for code in [
        "if call.is(\"private/get_transaction_log\") {}",
        "if name == \"private/logout\" && http {}",
        "ctx.require(\"mainaccount\")?;",
        "ctx.require(\"account:read_write\")?;",
        "Error::new(13668, \"x\")",
        "Error::new(13_668, \"x\")",
        "let window = 60_000;",
        "let window_ms = 60000;",
        "param(\"count\").unwrap_or_else(|| \"100\".to_owned())",
        "let logs = page();\n(logs.len() > 100).then(|| fail(\"count_default\"))",
        "fn default_per_second() -> f64 {\n    1.0\n}",
        "transaction_log_per_second: 1.0,",
        "if name.len() > 64 {}",
        "message(\"security_key_authorization_error\")",
        "spec::method(\"private/get_transacton_log\")",
    ] {
        assert!(!found(code).is_empty(), "not caught: {code}");
    }
    for code in [
        "spec::method(\"private/get_transaction_log\")",
        "tally.pass(\"auth.two_factor.13668\", transport);",
        "let name = \"BTC-27JUN25-60000-P\";",
        "let seconds = elapsed_ms / 1_000.0;",
        "let interval = 1.0 / self.rate.per_second().max(0.01);",
        "transaction_log_counted_per: CountedPer::Token,\ntransaction_log_burst: 100,",
        "max_body_bytes: 64 * 1024,",
        "let escaped = \"a \\\"private/logout\\\" b\";",
    ] {
        assert!(found(code).is_empty(), "caught: {code}: {:?}", found(code));
    }
}
