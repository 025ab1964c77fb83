//! What a step's answer is held to and what it leaves behind: its matchers with every
//! template resolved (a matcher on a field whose name SPEC.md does not show, and the target
//! file does not give in `[field_names]`, is skipped with a note), and the captures kept
//! for later steps (a path through `[*]` captures the list it finds).

use serde_json::Value;

use super::exec::{Execution, Stop};
use super::template;
use crate::case::Step;
use crate::check::Matcher;

impl Execution<'_> {
    /// The step's matchers with their templates resolved; those on a field the target file
    /// does not name are left out with a note.
    pub(super) fn resolved_matchers(&mut self, step: &Step) -> Result<Vec<Matcher>, Stop> {
        let expect = &step.expect;
        let mut matchers = Vec::with_capacity(expect.matchers.len());
        for matcher in &expect.matchers {
            match self.field_name_missing(&matcher.path) {
                Some(name) => self.notes.push(format!(
                    "{} not checked: SPEC.md does not show the field name and the target file does not give {name} in [field_names]",
                    matcher.path
                )),
                None => matchers.push(self.resolve_matcher(matcher)?),
            }
        }
        Ok(matchers)
    }

    fn resolve_matcher(&self, matcher: &Matcher) -> Result<Matcher, Stop> {
        let mut resolved = matcher.clone();
        resolved.path = self.resolved(&matcher.path)?;
        let resolve = |value: &Option<Value>| {
            value
                .as_ref()
                .map(|value| template::resolve(value, self))
                .transpose()
        };
        resolved.equals = resolve(&matcher.equals).map_err(Stop::Error)?;
        resolved.not_equals = resolve(&matcher.not_equals).map_err(Stop::Error)?;
        resolved.holds = resolve(&matcher.holds).map_err(Stop::Error)?;
        resolved.among = resolve(&matcher.among).map_err(Stop::Error)?;
        if let Some(options) = &matcher.one_of {
            resolved.one_of = Some(
                options
                    .iter()
                    .map(|value| template::resolve(value, self))
                    .collect::<Result<_, _>>()
                    .map_err(Stop::Error)?,
            );
        }
        if let Some(needle) = &matcher.contains {
            resolved.contains = Some(template::resolve_string(needle, self).map_err(Stop::Error)?);
        }
        Ok(resolved)
    }

    /// The first `{{field_names.<record>.<field>}}` of a matcher path the target file does
    /// not give: a field SPEC.md describes without showing its name.
    fn field_name_missing(&self, path: &str) -> Option<String> {
        let mut rest = path;
        while let Some(start) = rest.find("{{field_names.") {
            let after = &rest[start + 2..];
            let end = after.find("}}")?;
            let name = after[..end].trim();
            if template::Bindings::value_of(self, name).is_none() {
                return Some(name.trim_start_matches("field_names.").to_owned());
            }
            rest = &after[end..];
        }
        None
    }

    pub(super) fn capture(
        &mut self,
        step: &Step,
        response: &Value,
        clauses: &[String],
    ) -> Result<(), Stop> {
        for (name, path) in &step.capture {
            let found = crate::check::lookup(response, path);
            // A path through `[*]` captures the list of what it finds, empty or not.
            if path.contains("[*]") {
                let list = found.iter().filter_map(|(_, value)| (*value).cloned());
                self.captures
                    .insert(name.clone(), Value::Array(list.collect()));
                continue;
            }
            match found.first() {
                Some((_, Some(value))) => {
                    self.captures.insert(name.clone(), (*value).clone());
                }
                _ => {
                    self.record(clauses, format!("cannot capture {name}: {path} is absent"));
                    return Err(Stop::Failed);
                }
            }
        }
        Ok(())
    }
}
