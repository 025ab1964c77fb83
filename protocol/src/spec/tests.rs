//! The table against SPEC.md itself: section 4 is read from the repository's copy of the
//! spec and every method, parameter, type, listed value, bound, default and stated scope is
//! compared with [`METHODS`]. A change to either that the other does not follow fails here.

use std::collections::BTreeMap;

use super::*;

fn spec_text() -> String {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../cases/SPEC.md");
    std::fs::read_to_string(path).expect("cases/SPEC.md is in the repository")
}

/// Section 4's subsections by method name: `### 4.N `name``.
fn sections(text: &str) -> BTreeMap<String, (String, String)> {
    let body = text
        .split("\n## 4. Endpoints")
        .nth(1)
        .and_then(|rest| rest.split("\n## 5.").next())
        .expect("SPEC.md has section 4");
    let mut sections = BTreeMap::new();
    for chunk in body.split("\n### ").skip(1) {
        let (heading, rest) = chunk.split_once('\n').unwrap_or((chunk, ""));
        let number = heading.split_whitespace().next().unwrap_or_default();
        let name = heading
            .split('`')
            .nth(1)
            .expect("a heading names its method");
        sections.insert(name.to_owned(), (number.to_owned(), rest.to_owned()));
    }
    sections
}

/// `| name | type | rule |` rows of a section's parameter table.
fn table_rows(section: &str) -> Vec<(String, String, String)> {
    section
        .lines()
        .filter(|line| line.starts_with("| ") && !line.starts_with("| Parameter"))
        .filter_map(|line| {
            let cells: Vec<&str> = line.trim_matches('|').split(" | ").collect();
            (cells.len() == 3).then(|| {
                (
                    cells[0].trim().to_owned(),
                    cells[1].trim().to_owned(),
                    cells[2].trim().to_owned(),
                )
            })
        })
        .collect()
}

fn table_name(method: &Method) -> &'static str {
    if method.interface == Interface::DirectAccess {
        method.name.trim_start_matches("private/")
    } else {
        method.name
    }
}

/// Each method of the table with the text of its SPEC.md subsection.
fn method_sections() -> Vec<(&'static Method, String)> {
    let sections = sections(&spec_text());
    METHODS
        .iter()
        .map(|method| (method, sections[table_name(method)].1.clone()))
        .collect()
}

#[test]
fn every_method_of_section_4_is_in_the_table_and_no_other() {
    let text = spec_text();
    let sections = sections(&text);
    let named: Vec<&str> = METHODS.iter().map(table_name).collect();
    for name in sections.keys() {
        assert!(
            named.contains(&name.as_str()),
            "{name} is missing from the table"
        );
    }
    for method in METHODS {
        let (number, _) = sections
            .get(table_name(method))
            .unwrap_or_else(|| panic!("{} is not a method of section 4", method.name));
        assert_eq!(number, method.section, "{}", method.name);
        assert_eq!(
            method.private,
            method.name.starts_with("private/"),
            "{}",
            method.name
        );
    }
}

#[test]
fn parameter_tables_match_names_types_lists_and_bounds() {
    let mut compared = 0;
    for (method, section) in &method_sections() {
        for (name, kind, rule) in table_rows(section) {
            if name.starts_with('(') {
                // "(filter keywords)": its name is not shown, so the table has no entry.
                assert!(rule.contains("Parameter name: not shown"), "{name}");
                continue;
            }
            let param = method
                .param(&name)
                .unwrap_or_else(|| panic!("{}: {name} is not in the table", method.name));
            assert_eq!(param.kind.name(), kind, "{}.{name}", method.name);
            if let Some(listed) = param.listed() {
                for value in listed {
                    assert!(
                        rule.contains(value),
                        "{}.{name}: {value} is not listed in SPEC.md",
                        method.name
                    );
                }
            }
            if name == "count" {
                let (min, max, default) = method.count_bounds().expect("count has bounds");
                assert!(
                    rule.contains(&format!("{min} to {max}; default {default}")),
                    "{}.count: {rule}",
                    method.name
                );
            }
            let stated_required = rule.starts_with("required;");
            assert_eq!(
                stated_required,
                param.required == Required::Yes,
                "{}.{name}: required flag",
                method.name
            );
            if rule.starts_with("optional") && !rule.starts_with("optional for") {
                assert_eq!(param.required, Required::No, "{}.{name}", method.name);
            }
            compared += 1;
        }
        let rows = table_rows(section).len();
        if rows > 0 {
            let named = table_rows(section)
                .iter()
                .filter(|(name, ..)| !name.starts_with('('))
                .count();
            // An input the section names in its prose ("a copy of the input `state`").
            let in_prose = method
                .params
                .iter()
                .filter(|param| section.contains(&format!("the input `{}`", param.name)))
                .count();
            assert_eq!(
                named + in_prose,
                method.params.len(),
                "{}: the table has parameters SPEC.md does not list",
                method.name
            );
        }
    }
    assert!(compared >= 25, "only {compared} parameters compared");
}

#[test]
fn parameters_given_in_prose_match() {
    for (method, section) in &method_sections() {
        if !table_rows(section).is_empty() {
            continue;
        }
        let prose = section.split("Result").next().unwrap_or_default();
        for param in method.params {
            assert!(
                prose.contains(&format!("`{}`", param.name)),
                "{}: {} is not named in SPEC.md",
                method.name,
                param.name
            );
            if let Some(listed) = param.listed() {
                for value in listed {
                    assert!(prose.contains(value), "{}: {value}", method.name);
                }
            }
        }
        if prose.contains("No parameters") || prose.contains("Parameter names") {
            assert!(method.params.is_empty(), "{}", method.name);
        }
    }
}

#[test]
fn stated_scopes_match() {
    for (method, section) in &method_sections() {
        let first = section.lines().next().unwrap_or_default();
        for scope in method.scope {
            assert!(
                first.starts_with("Scope") && first.contains(&format!("`{scope}`")),
                "{}: scope {scope} is not stated",
                method.name
            );
        }
        if first.starts_with("Scope") {
            assert!(
                !method.scope.is_empty(),
                "{}: scope not in table",
                method.name
            );
        }
    }
}

#[test]
fn paged_paced_and_interfaces_follow_the_spec() {
    for (method, section) in &method_sections() {
        assert_eq!(
            method.paging.is_some(),
            section.contains("continuation"),
            "{}: paging",
            method.name
        );
        if let Some(paging) = method.paging {
            assert!(section.contains(&format!("{{{}: array", paging.items)));
            assert_eq!(
                paging.null_at_end,
                section.contains("null when no further page"),
                "{}",
                method.name
            );
        }
        assert_eq!(
            method.interface == Interface::WsOnly,
            section.starts_with("WebSocket only"),
            "{}",
            method.name
        );
        assert_eq!(
            method.interface == Interface::DirectAccess,
            section.contains("{direct_access_url}"),
            "{}",
            method.name
        );
    }
    let text = spec_text();
    let limits = text.split("## 8. Limits").nth(1).expect("section 8");
    for method in METHODS {
        let paced_in_spec = limits.contains(&format!("| `{}` sustained rate", method.name));
        assert_eq!(method.paced, paced_in_spec, "{}: paced", method.name);
        assert_eq!(
            method.rate_clause.is_some(),
            method.paced,
            "{}: rate clause",
            method.name
        );
    }
    assert!(limits.contains("| 1 request per second |"));
    assert_eq!(PACED_PER_SECOND, 1.0);
}

#[test]
fn every_clause_the_table_names_is_in_the_catalog() {
    let catalog = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../cases/clauses.toml"
    ))
    .expect("cases/clauses.toml");
    let mut clauses: Vec<&str> = Vec::new();
    for method in METHODS {
        clauses.extend([method.clause, method.scope_clause]);
        clauses.extend(method.params.iter().map(|param| param.clause));
        clauses.extend(method.paging.iter().map(|paging| paging.clause));
        clauses.extend(method.paging.iter().map(|paging| paging.default_clause));
        clauses.extend(method.result_clause);
    }
    for clause in clauses {
        assert!(
            catalog.contains(&format!("id = \"{clause}\"")),
            "{clause} is not in cases/clauses.toml"
        );
    }
}

#[test]
fn the_interface_version_is_the_one_spec_md_states() {
    let stated = format!("The interface version is {}", super::INTERFACE_VERSION);
    assert!(spec_text().contains(&stated), "{stated}");
}

#[test]
fn the_websocket_path_is_the_prefix_under_ws() {
    assert_eq!(WS_PATH, format!("/ws{API_PREFIX}"));
}
