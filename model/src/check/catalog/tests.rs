//! Unit tests of the clause catalog: quotes, and the problems a `must` clause without a SPEC.md quote raises.

use std::path::Path;

use super::*;

const SPEC: &str = "5.5 Client signature:\n- The timestamp is valid for 60 seconds from generation; older timestamps are rejected. The nonce is single use.\n\n| sid | integer | required; user id of the subaccount |\n";

fn parse(text: &str) -> Result<Catalog, FileError> {
    Catalog::parse(Path::new("clauses.toml"), text)
}

#[test]
fn a_quote_is_one_string_or_several() {
    let catalog = parse(
        r#"# header

[[clause]]
id = "a"
section = "5.5"
level = "must"
side = "server"
text = "t"
quote = "The nonce is single use."

[[clause]]
id = "b"
section = "4.5"
level = "must"
side = "server"
text = "t"
quote = ["sid | integer | required", "older timestamps are rejected."]

[[clause]]
id = "c"
section = "7"
level = "warn"
side = "server"
text = "t"
note = "left open"
"#,
    )
    .unwrap();
    let a = catalog.get("a").unwrap();
    assert_eq!(a.quote, ["The nonce is single use."]);
    assert_eq!(a.line, 3);
    assert_eq!(catalog.get("b").unwrap().quote.len(), 2);
    assert_eq!(catalog.get("b").unwrap().line, 11);
    let c = catalog.get("c").unwrap();
    assert!(c.quote.is_empty());
    assert_eq!(c.note.as_deref(), Some("left open"));
    assert_eq!(c.level, Level::Warn);
    assert_eq!(catalog.quote_problems(SPEC), Vec::<String>::new());
}

#[test]
fn a_must_clause_without_a_quote_or_with_a_quote_not_in_the_spec_is_a_problem() {
    let catalog = parse(
        r#"[[clause]]
id = "bare"
section = "1"
level = "must"
side = "client"
text = "t"

[[clause]]
id = "invented"
section = "5.5"
level = "info"
side = "server"
text = "t"
quote = ["The nonce is single use.", "The nonce is used twice."]
"#,
    )
    .unwrap();
    let problems = catalog.quote_problems(SPEC);
    assert_eq!(problems.len(), 2, "{problems:?}");
    assert!(problems[0].starts_with("1: must clause \"bare\" has no quote"));
    assert!(problems[1].starts_with("8: a quote of clause \"invented\" is not in SPEC.md"));
    assert!(problems[1].contains("The nonce is used twice."));
}

#[test]
fn a_malformed_or_empty_quote_is_a_file_error_with_its_line() {
    let wrong_type = parse(
        "[[clause]]\nid = \"a\"\nsection = \"1\"\nlevel = \"must\"\nside = \"server\"\ntext = \"t\"\nquote = 42\n",
    )
    .unwrap_err();
    assert_eq!(wrong_type.line, 7, "{wrong_type}");
    assert!(
        wrong_type
            .message
            .contains("a string or an array of strings"),
        "{wrong_type}"
    );
    let empty = parse(
        "[[clause]]\nid = \"a\"\nsection = \"1\"\nlevel = \"must\"\nside = \"server\"\ntext = \"t\"\nquote = [\"ok words\", \" `` \"]\n",
    )
    .unwrap_err();
    assert_eq!(
        empty.to_string(),
        "clauses.toml:1: clause \"a\" has an empty quote"
    );
}

#[test]
fn duplicate_ids_and_unknown_levels_are_file_errors() {
    let clause = "[[clause]]\nid = \"a\"\nsection = \"1\"\nlevel = \"must\"\nside = \"server\"\ntext = \"t\"\nquote = \"x\"\n";
    let duplicate = parse(&format!("{clause}\n{clause}")).unwrap_err();
    assert_eq!(
        duplicate.to_string(),
        "clauses.toml:9: duplicate clause id \"a\""
    );
    let unknown = parse(&clause.replace("\"must\"", "\"mustt\"")).unwrap_err();
    assert_eq!(unknown.line, 4);
    assert!(unknown.message.contains("must"), "{unknown}");
}

#[test]
fn a_finding_takes_the_most_severe_level_of_its_clauses() {
    let catalog = parse(
        "[[clause]]\nid = \"m\"\nsection = \"1\"\nlevel = \"must\"\nside = \"server\"\ntext = \"t\"\nquote = \"x\"\n\
         [[clause]]\nid = \"w\"\nsection = \"1\"\nlevel = \"warn\"\nside = \"server\"\ntext = \"t\"\n\
         [[clause]]\nid = \"i\"\nsection = \"1\"\nlevel = \"info\"\nside = \"server\"\ntext = \"t\"\n",
    )
    .unwrap();
    let verdict = |ids: &[&str]| {
        catalog.finding_verdict(&ids.iter().map(|id| (*id).to_owned()).collect::<Vec<_>>())
    };
    assert_eq!(verdict(&["i"]), Verdict::Info);
    assert_eq!(verdict(&["i", "w"]), Verdict::Warn);
    assert_eq!(verdict(&["w", "m", "i"]), Verdict::Fail);
    assert_eq!(
        verdict(&["no.such.clause"]),
        Verdict::Fail,
        "unknown ids count as must"
    );
    assert_eq!(verdict(&[]), Verdict::Info);
    let ids = [
        "w".to_owned(),
        "i".to_owned(),
        "w".to_owned(),
        "zz".to_owned(),
    ];
    let clauses: Vec<&str> = catalog
        .clauses_of(&ids)
        .iter()
        .map(|clause| clause.id.as_str())
        .collect();
    assert_eq!(clauses, ["w", "i"]);
}
