//! The names a target file gives where SPEC.md shows none: `[param_names."<method>"]` for
//! the parameters of a method whose names are not shown (4.3), `[field_names.<record>]`
//! for the fields of a result SPEC.md describes without naming (2.6). A table or key that
//! names nothing SPEC.md leaves unnamed is an error with a did-you-mean.

use std::collections::BTreeMap;
use std::path::Path;

use harness_protocol::file_error::{FileError, did_you_mean};
use harness_protocol::spec::{self, UNNAMED_FIELDS};

/// Names by table and key, as both tables hold them.
pub(super) type Names = BTreeMap<String, BTreeMap<String, String>>;

/// Refuses a `[param_names]` table for a method whose parameter names SPEC.md shows, and a
/// key of one naming a parameter SPEC.md names (4.8 shows every parameter of the transaction
/// log but its filter keywords).
pub(super) fn check_param_names(path: &Path, text: &str, names: &Names) -> Result<(), FileError> {
    for (method, keys) in names {
        let spec_method = spec::method(method);
        let unnamed = spec_method.is_some_and(|method| !method.params_shown);
        let partly =
            spec_method.filter(|method| method.params_shown && !method.unnamed_params.is_empty());
        if let Some(partly) = partly {
            if let Some(key) = keys
                .keys()
                .find(|key| !partly.unnamed_params.contains(&key.as_str()))
            {
                return Err(FileError::new(
                    path,
                    super::key_line(text, "[param_names"),
                    format!(
                        "param_names.\"{method}\".{key}: SPEC.md names this method's parameters but {}{}",
                        partly.unnamed_params.join(", "),
                        hint(key, partly.unnamed_params.iter().copied())
                    ),
                ));
            }
            continue;
        }
        if !unnamed {
            let candidates = spec::METHODS
                .iter()
                .filter(|method| !method.params_shown || !method.unnamed_params.is_empty())
                .map(|method| method.name);
            return Err(FileError::new(
                path,
                super::key_line(text, "[param_names"),
                format!(
                    "param_names.\"{method}\": only methods whose parameter names SPEC.md does not show take names here{}",
                    hint(method, candidates)
                ),
            ));
        }
    }
    Ok(())
}

/// Refuses a `[field_names]` record or field SPEC.md does not describe without a name.
pub(super) fn check_field_names(path: &Path, text: &str, names: &Names) -> Result<(), FileError> {
    for (record, fields) in names {
        let line = super::key_line(text, &format!("[field_names.{record}"));
        if !UNNAMED_FIELDS
            .iter()
            .any(|unnamed| unnamed.record == record)
        {
            let records = UNNAMED_FIELDS.iter().map(|unnamed| unnamed.record);
            return Err(FileError::new(
                path,
                line,
                format!(
                    "field_names.{record}: SPEC.md leaves no field of a \"{record}\" record unnamed{}",
                    hint(record, records)
                ),
            ));
        }
        for field in fields.keys() {
            if spec::unnamed_field(record, field).is_none() {
                let known = UNNAMED_FIELDS
                    .iter()
                    .filter(|unnamed| unnamed.record == record)
                    .map(|unnamed| unnamed.field);
                return Err(FileError::new(
                    path,
                    line,
                    format!(
                        "field_names.{record}.{field}: not a field SPEC.md describes without naming{}",
                        hint(field, known)
                    ),
                ));
            }
        }
    }
    Ok(())
}

fn hint<'a>(name: &str, candidates: impl IntoIterator<Item = &'a str>) -> String {
    did_you_mean(name, candidates)
        .map(|known| format!(" (did you mean \"{known}\"?)"))
        .unwrap_or_default()
}

impl super::Target {
    /// The first `{{field_names.<record>.<field>}}` of `text` (a case file's path or
    /// template) this target file does not give: a field SPEC.md describes without showing
    /// its name.
    pub fn missing_field_name(&self, text: &str) -> Option<String> {
        let mut rest = text;
        while let Some(start) = rest.find("{{field_names.") {
            let after = &rest[start + "{{field_names.".len()..];
            let end = after.find("}}")?;
            let name = after[..end].trim();
            let (record, field) = name.split_once('.').unwrap_or((name, ""));
            let given = self
                .field_names
                .get(record)
                .is_some_and(|fields| fields.contains_key(field));
            if !given {
                return Some(name.to_owned());
            }
            rest = &after[end..];
        }
        None
    }
}
