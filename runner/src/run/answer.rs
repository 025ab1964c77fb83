//! What a step's answer is held to and what it leaves behind: its matchers with every
//! template resolved (a matcher on a field whose name SPEC.md does not show, and the target
//! file does not give in `[field_names]`, or that names a fixture the target file does not
//! give, is skipped with a note), and the captures kept
//! for later steps (a path through `[*]` captures the list it finds; a login step with
//! `lacks` whose granted scope grants it after all skips the case).

use serde_json::Value;

use super::exec::{Execution, Stop};
use super::template::{self, Bindings};
use harness_model::case::{Auth, Step};
use harness_model::check::Matcher;
use harness_protocol::auth::scope::Scope;

impl Execution<'_> {
    /// The step's matchers with their templates resolved; those on a field the target file
    /// does not name are left out with a note, and their clauses counted as unchecked.
    pub(super) fn resolved_matchers(&mut self, step: &Step) -> Result<Vec<Matcher>, Stop> {
        let expect = &step.expect;
        let mut matchers = Vec::with_capacity(expect.matchers.len());
        let case = self.case;
        for matcher in &expect.matchers {
            if !self.left_out(matcher, case.step_clauses(step)) {
                matchers.push(self.resolve_matcher(matcher)?);
            }
        }
        Ok(matchers)
    }

    /// Whether `matcher` names a field SPEC.md does not name and the target file does not
    /// give, or a fixture it does not give: then it is left out with a note, and its clauses
    /// (or `step_clauses`) are not covered by this execution.
    pub(super) fn left_out(&mut self, matcher: &Matcher, step_clauses: &[String]) -> bool {
        let missing = match self.shared.target.missing_field_name(&matcher.path) {
            Some(name) => Some(format!(
                "SPEC.md does not show the field name and the target file does not give {name} in [field_names]"
            )),
            None => self
                .missing_fixture(matcher)
                .map(|name| format!("the target file has no {name}")),
        };
        let Some(why) = missing else {
            return false;
        };
        self.notes
            .push(format!("{} not checked: {why}", matcher.path));
        let clauses = matcher.clauses.as_deref().unwrap_or(step_clauses);
        self.unchecked.extend(clauses.iter().cloned());
        true
    }

    /// A call step whose parameters name a fixture the target file does not give is left
    /// out with a note, and its clauses counted as unchecked: it checks what only some
    /// targets can name (a second member to delete), and the case's other steps still run.
    /// Returns whether the step is left out.
    pub(super) fn leave_out_without_fixture(&mut self, step: &Step) -> bool {
        let Some(name) = self.missing_fixture(&step.params) else {
            return false;
        };
        self.notes.push(format!(
            "the step at line {} is not run: the target file has no {name}",
            step.line
        ));
        let clauses = self.case.step_clauses(step);
        self.unchecked.extend(clauses.iter().cloned());
        for matcher in &step.expect.matchers {
            self.unchecked
                .extend(matcher.clauses.iter().flatten().cloned());
        }
        true
    }

    /// The first fixture the templates of a matcher or of parameters name that the target
    /// file does not give: such a matcher checks what only some targets can name (a member
    /// kept, a second triggered status) and is left out, not the case.
    fn missing_fixture(&self, templated: &impl serde::Serialize) -> Option<String> {
        let text = serde_json::to_string(templated).ok()?;
        text.match_indices("{{fixtures.").find_map(|(start, _)| {
            let name = &text[start + 2..];
            let name = name[..name.find("}}")?].trim();
            self.value_of(name).is_none().then(|| name.to_owned())
        })
    }

    pub(super) fn resolve_matcher(&self, matcher: &Matcher) -> Result<Matcher, Stop> {
        let mut resolved = matcher.clone();
        resolved.path = self.resolved(&matcher.path)?;
        let resolve = |value: &Option<Value>| {
            value
                .as_ref()
                .map(|value| template::resolve(value, self))
                .transpose()
        };
        resolved.equals = resolve(&matcher.equals).map_err(Stop::from)?;
        resolved.not_equals = resolve(&matcher.not_equals).map_err(Stop::from)?;
        resolved.holds = resolve(&matcher.holds).map_err(Stop::from)?;
        resolved.among = resolve(&matcher.among).map_err(Stop::from)?;
        resolved.not_among = resolve(&matcher.not_among).map_err(Stop::from)?;
        resolved.within_gap_of = resolve(&matcher.within_gap_of).map_err(Stop::from)?;
        if resolved.unless_elapsed.is_some() {
            resolved.now_ms = Some(self.session.timestamp(0));
        }
        if let Some(options) = &matcher.one_of {
            resolved.one_of = Some(
                options
                    .iter()
                    .map(|value| template::resolve(value, self))
                    .collect::<Result<_, _>>()
                    .map_err(Stop::from)?,
            );
        }
        if let Some(needle) = &matcher.contains {
            resolved.contains = Some(template::resolve_string(needle, self).map_err(Stop::from)?);
        }
        if let Some(word) = &matcher.word {
            resolved.word = Some(template::resolve_string(word, self).map_err(Stop::from)?);
        }
        Ok(resolved)
    }

    /// A login step (`client_credentials`, `client_signature`) with `lacks`: skips the case
    /// when the granted scope of the answer grants the requirement after all, as a `bearer`
    /// login with `lacks` does (SPEC.md does not say what a requested scope grants beyond
    /// what it names).
    fn skip_if_granted(&self, step: &Step, response: &Value) -> Result<(), Stop> {
        if matches!(step.auth, Auth::Bearer(_)) {
            return Ok(());
        }
        let Some(requirement) = step.auth.lacks() else {
            return Ok(());
        };
        let granted = response
            .pointer("/result/scope")
            .and_then(Value::as_str)
            .unwrap_or_default();
        if Scope::parse(granted).grants(requirement) {
            return Err(Stop::Skip(format!(
                "the login asked for scope \"{}\" was granted \"{granted}\", which grants {requirement}: its refusal cannot be checked",
                step.params
                    .get("scope")
                    .and_then(Value::as_str)
                    .unwrap_or_default()
            )));
        }
        Ok(())
    }

    pub(super) fn capture(
        &mut self,
        step: &Step,
        response: &Value,
        clauses: &[String],
    ) -> Result<(), Stop> {
        self.skip_if_granted(step, response)?;
        for (name, path) in &step.capture {
            if let Some(field) = self.shared.target.missing_field_name(path) {
                return Err(Stop::Skip(format!(
                    "SPEC.md does not show the field name {path} captures, and the target file does not give {field} in [field_names]"
                )));
            }
            let path = &self.resolved(path)?;
            let found = harness_model::check::lookup(response, path);
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
