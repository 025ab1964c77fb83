//! The rule that finds the normative statements of SPEC.md, so the traceability table can
//! be compared with the document itself rather than with our reading of it.
//!
//! A statement is every body row of a table whose last cell (Rule, Notes, Meaning,
//! Placement, Error, Value) is not empty, written as its cells trimmed and joined by
//! `" | "`; and every sentence of prose (each line is a paragraph or list item, split after
//! every `". "`), its leading section number (`5.5 `) and list marker (`- `, `1. `)
//! dropped, except a line ending in a colon, which only introduces what follows. A
//! statement belongs to the last section number seen: a heading's (`### 4.1 ...`) or a
//! numbered paragraph's (`5.5 Client signature ...`); text before the first is section `0`.

/// Whether a statement was a table row or a sentence of prose.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StatementKind {
    /// A table body row with a non-empty last cell.
    Row,
    /// A sentence of prose.
    Sentence,
}

/// One statement of SPEC.md as the rule finds it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SpecStatement {
    /// The section it belongs to, e.g. `5.5`.
    pub section: String,
    /// Its 1-based place among the statements of its section.
    pub(crate) ordinal: usize,
    /// Row or sentence.
    pub kind: StatementKind,
    /// Its text: the trimmed cells joined by `" | "`, or the sentence.
    pub text: String,
    /// 1-based line of SPEC.md it is on.
    pub line: usize,
}

/// Every statement of SPEC.md, in document order.
pub fn spec_statements(spec: &str) -> Vec<SpecStatement> {
    let lines: Vec<&str> = spec.lines().collect();
    let mut section = "0".to_owned();
    let mut ordinals: Vec<(String, usize)> = Vec::new();
    let mut found = Vec::new();
    let mut push = |section: &str, kind, text: String, line| {
        let ordinal = match ordinals.iter_mut().find(|(known, _)| known == section) {
            Some((_, count)) => {
                *count += 1;
                *count
            }
            None => {
                ordinals.push((section.to_owned(), 1));
                1
            }
        };
        found.push(SpecStatement {
            section: section.to_owned(),
            ordinal,
            kind,
            text,
            line,
        });
    };
    for (index, raw) in lines.iter().enumerate() {
        let line = index + 1;
        if raw.starts_with('#') {
            if let Some(number) = heading_number(raw) {
                section = number.to_owned();
            }
            continue;
        }
        if raw.starts_with('|') {
            let header = lines.get(index + 1).is_some_and(|next| is_separator(next));
            if is_separator(raw) || header {
                continue;
            }
            let cells: Vec<&str> = raw
                .trim()
                .trim_matches('|')
                .split('|')
                .map(str::trim)
                .collect();
            if cells.last().is_some_and(|last| !last.is_empty()) {
                push(&section, StatementKind::Row, cells.join(" | "), line);
            }
            continue;
        }
        let mut text = raw.trim();
        if text.is_empty() {
            continue;
        }
        if let Some((number, rest)) = paragraph_number(text) {
            section = number.to_owned();
            text = rest;
        }
        text = strip_list_marker(text);
        if text.ends_with(':') {
            continue;
        }
        for sentence in sentences(text) {
            push(&section, StatementKind::Sentence, sentence.to_owned(), line);
        }
    }
    found
}

/// The section number of a heading `#+ N(.M)*[.] title`.
fn heading_number(line: &str) -> Option<&str> {
    let rest = line.trim_start_matches('#').strip_prefix(' ')?;
    let (number, _) = rest.split_once(' ')?;
    let number = number.strip_suffix('.').unwrap_or(number);
    is_section_number(number).then_some(number)
}

/// A numbered paragraph's `N.M` and the text after it.
fn paragraph_number(text: &str) -> Option<(&str, &str)> {
    let (number, rest) = text.split_once(' ')?;
    (is_section_number(number) && number.split('.').count() == 2).then_some((number, rest))
}

/// Whether `text` is dot-separated runs of digits (`4`, `4.1`, `2.1.1`).
fn is_section_number(text: &str) -> bool {
    text.split('.')
        .all(|piece| !piece.is_empty() && piece.bytes().all(|b| b.is_ascii_digit()))
}

/// Drops a leading `- ` or `N. ` list marker.
fn strip_list_marker(text: &str) -> &str {
    if let Some(rest) = text.strip_prefix("- ") {
        return rest;
    }
    match text.split_once(". ") {
        Some((number, rest))
            if !number.is_empty() && number.bytes().all(|b| b.is_ascii_digit()) =>
        {
            rest
        }
        _ => text,
    }
}

/// Whether a table line is the `|---|---|` separator under a header.
fn is_separator(line: &str) -> bool {
    let line = line.trim();
    line.starts_with('|')
        && line.ends_with('|')
        && line.contains('-')
        && line.chars().all(|c| matches!(c, '|' | '-' | ' ' | ':'))
}

/// The sentences of a line: split after every `.` followed by whitespace.
fn sentences(text: &str) -> Vec<&str> {
    let mut found = Vec::new();
    let mut start = 0;
    let bytes = text.as_bytes();
    for (index, byte) in bytes.iter().enumerate() {
        let ends = *byte == b'.'
            && bytes
                .get(index + 1)
                .is_some_and(|next| next.is_ascii_whitespace());
        if ends {
            found.push(text[start..=index].trim());
            start = index + 1;
        }
    }
    let rest = text[start..].trim();
    if !rest.is_empty() {
        found.push(rest);
    }
    found.retain(|sentence| !sentence.is_empty());
    found
}
