//! Quotes: the SPEC.md words a clause enforces, and how they are found in SPEC.md.
//!
//! A quote is a contiguous run of SPEC.md text, copied exactly. Finding it forgives only
//! what Markdown does not show a reader: every run of whitespace (line breaks included)
//! counts as one space, and the backticks of code spans and the `|` separators of table
//! cells are dropped, on both sides. So a table row can be quoted as it reads
//! (`sid | integer | required; user id of the subaccount`). A quote starts and ends on word
//! boundaries: `ken set` is not found in `token set`, but `sid | integer | required` is
//! found before its `;`.

use std::fmt;

use serde::Deserializer;
use serde::de::{self, SeqAccess, Visitor};

/// SPEC.md text as quotes are compared: backticks and table pipes dropped, whitespace runs
/// made one space, trimmed.
pub fn normalize_quote(text: &str) -> String {
    text.split(|c: char| c.is_whitespace() || c == '|')
        .map(|word| word.replace('`', ""))
        .filter(|word| !word.is_empty())
        .collect::<Vec<_>>()
        .join(" ")
}

/// SPEC.md normalized once, to look many quotes up in.
#[derive(Clone, Debug)]
pub struct SpecText {
    normalized: String,
}

impl SpecText {
    /// Normalizes the text of SPEC.md.
    pub fn new(spec: &str) -> SpecText {
        SpecText {
            normalized: normalize_quote(spec),
        }
    }

    /// Whether the quote is a run of SPEC.md text (after normalizing both) that starts and
    /// ends on word boundaries.
    pub fn contains(&self, quote: &str) -> bool {
        let quote = normalize_quote(quote);
        if quote.is_empty() {
            return false;
        }
        let text = self.normalized.as_str();
        text.match_indices(&quote).any(|(start, _)| {
            let before = text[..start].chars().next_back();
            let after = text[start + quote.len()..].chars().next();
            !continues_word(before, quote.chars().next())
                && !continues_word(after, quote.chars().next_back())
        })
    }
}

/// Whether `neighbour` would glue onto the quote's `edge` character to form one word.
fn continues_word(neighbour: Option<char>, edge: Option<char>) -> bool {
    let word = |c: char| c.is_alphanumeric() || c == '_';
    matches!((neighbour, edge), (Some(n), Some(e)) if word(n) && word(e))
}

/// Deserializes `quote = "..."` or `quote = ["...", "..."]` into a list, with an error
/// that says what was expected (the loader adds `path:line`).
pub(crate) fn one_or_many<'de, D: Deserializer<'de>>(
    deserializer: D,
) -> Result<Vec<String>, D::Error> {
    struct OneOrMany;

    impl<'de> Visitor<'de> for OneOrMany {
        type Value = Vec<String>;

        fn expecting(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
            formatter.write_str("a string or an array of strings")
        }

        fn visit_str<E: de::Error>(self, value: &str) -> Result<Vec<String>, E> {
            Ok(vec![value.to_owned()])
        }

        fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Vec<String>, A::Error> {
            let mut quotes = Vec::new();
            while let Some(quote) = seq.next_element::<String>()? {
                quotes.push(quote);
            }
            Ok(quotes)
        }
    }

    deserializer.deserialize_any(OneOrMany)
}

#[cfg(test)]
mod tests {
    use super::*;

    const SPEC: &str = "| Parameter | Type | Rule |\n|---|---|---|\n| sid | integer | required; user id of the subaccount |\n\n\
        5.5 Client signature:\n- The timestamp is valid for 60 seconds from generation;\n  older timestamps are rejected.\n\
        Result: string `ok`.";

    #[test]
    fn whitespace_backticks_and_table_pipes_are_forgiven() {
        let spec = SpecText::new(SPEC);
        assert!(spec.contains("sid | integer | required; user id of the subaccount"));
        assert!(spec.contains("| sid | integer | required;"));
        assert!(spec.contains("sid integer required; user id of the subaccount"));
        assert!(spec.contains(
            "The timestamp is valid for 60 seconds from generation; older timestamps are rejected."
        ));
        assert!(spec.contains("Result: string `ok`."));
        assert!(spec.contains("Result: string ok."));
    }

    #[test]
    fn words_must_match_exactly_and_whole() {
        let spec = SpecText::new(SPEC);
        assert!(!spec.contains("valid for 61 seconds"));
        assert!(!spec.contains("the timestamp is valid"), "case matters");
        assert!(
            !spec.contains("ubaccount"),
            "a quote starts on a word boundary"
        );
        assert!(
            spec.contains("sid | integer | required"),
            "punctuation is a boundary"
        );
        assert!(!spec.contains("user id of the sub"), "and ends on one");
        assert!(
            !spec.contains("sid required"),
            "cells in between are not skipped"
        );
        assert!(!spec.contains(""));
        assert!(!spec.contains(" | `` "));
    }

    #[test]
    fn normalizing_drops_only_markup_and_spacing() {
        assert_eq!(
            normalize_quote("  a `b`\n\t| c |  d  "),
            "a b c d".to_owned()
        );
        assert_eq!(normalize_quote("rejected:<reason>"), "rejected:<reason>");
    }
}
