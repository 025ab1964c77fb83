//! Errors in user-written files (case files, target files, the clause catalog), reported
//! as `path:line: message`, with a did-you-mean where an unknown name is close to a known one.

use std::fmt;
use std::path::{Path, PathBuf};

/// A defect at a place in a file the user wrote.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileError {
    /// The file.
    pub path: PathBuf,
    /// 1-based line, 0 when the defect concerns the whole file.
    pub line: usize,
    /// What is wrong, as a lowercase fragment.
    pub message: String,
}

impl FileError {
    /// An error at a line of a file.
    pub fn new(path: &Path, line: usize, message: impl Into<String>) -> FileError {
        FileError {
            path: path.to_owned(),
            line,
            message: message.into(),
        }
    }

    /// Converts a `toml` deserialization error, locating it by its span and adding a
    /// did-you-mean to unknown-field and unknown-variant messages.
    pub fn from_toml(path: &Path, text: &str, error: &toml::de::Error) -> FileError {
        let line = error.span().map_or(0, |span| line_of(text, span.start));
        FileError::new(path, line, with_suggestion(error.message()))
    }
}

impl fmt::Display for FileError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.line == 0 {
            write!(f, "{}: {}", self.path.display(), self.message)
        } else {
            write!(f, "{}:{}: {}", self.path.display(), self.line, self.message)
        }
    }
}

impl std::error::Error for FileError {}

/// The 1-based line of a byte offset.
pub fn line_of(text: &str, offset: usize) -> usize {
    let offset = offset.min(text.len());
    text.as_bytes()[..offset]
        .iter()
        .filter(|&&byte| byte == b'\n')
        .count()
        + 1
}

/// The closest of `known` to `unknown`, if close enough to be a likely typo.
pub fn did_you_mean<'a>(
    unknown: &str,
    known: impl IntoIterator<Item = &'a str>,
) -> Option<&'a str> {
    known
        .into_iter()
        .map(|candidate| (strsim::jaro_winkler(unknown, candidate), candidate))
        .filter(|(similarity, _)| *similarity > 0.8)
        .max_by(|a, b| a.0.total_cmp(&b.0))
        .map(|(_, candidate)| candidate)
}

/// Rewrites serde's "unknown field `x`, expected one of `a`, `b`" (and the same for
/// variants) into a shorter message with a suggestion.
fn with_suggestion(message: &str) -> String {
    let message = message.trim_end();
    for kind in ["field", "variant"] {
        let prefix = format!("unknown {kind} `");
        let Some(rest) = message.strip_prefix(&prefix) else {
            continue;
        };
        let Some((unknown, expected)) = rest.split_once('`') else {
            continue;
        };
        let known: Vec<&str> = expected.split('`').skip(1).step_by(2).collect();
        return match did_you_mean(unknown, known.iter().copied()) {
            Some(suggestion) => {
                format!("unknown {kind} \"{unknown}\" (did you mean \"{suggestion}\"?)")
            }
            None if known.is_empty() => format!("unknown {kind} \"{unknown}\""),
            None => format!(
                "unknown {kind} \"{unknown}\" (expected one of {})",
                known.join(", ")
            ),
        };
    }
    message.to_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unknown_field_gets_a_suggestion() {
        assert_eq!(
            with_suggestion("unknown field `expct`, expected one of `call`, `expect`, `auth`"),
            "unknown field \"expct\" (did you mean \"expect\"?)"
        );
    }

    #[test]
    fn unknown_field_far_from_all_lists_them() {
        assert_eq!(
            with_suggestion("unknown field `zzz`, expected `call` or `expect`"),
            "unknown field \"zzz\" (expected one of call, expect)"
        );
    }

    #[test]
    fn line_of_counts_from_one() {
        assert_eq!(line_of("a\nb\nc", 0), 1);
        assert_eq!(line_of("a\nb\nc", 2), 2);
        assert_eq!(line_of("a\nb\nc", 99), 3);
    }
}
