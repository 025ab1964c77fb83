//! The passes of an execution's steps over the options that expired out of the money.
//!
//! A case on such an option (`needs.fixtures = ["expired_otm_option"]`) runs its steps once
//! per option of the target file's pool (`[fixtures] expired_otm_option` and
//! `expired_otm_options`), each pass a walk of a day either side of that option's expiry:
//! the rule is checked on every option the target file names, at a few pages each. An
//! option the steps cannot check (no `expired_at`) is skipped with the reason in a note and
//! the others are still checked; the execution is a skip when none was. Every other case
//! runs one pass. The step loop itself is `exec.rs`'s ([`Execution::run_steps`]).

use super::exec::{Ended, Execution, PassEnd};
use harness_model::case::Case;
use harness_model::target_file::{ExpiredOption, Target};

/// The passes of `case`'s steps: one per option of the target's pool of options that
/// expired out of the money for a case that needs one, else one pass with none.
fn option_passes(target: &Target, case: &Case) -> Vec<Option<ExpiredOption>> {
    if case
        .needs
        .fixtures
        .iter()
        .any(|name| name == "expired_otm_option")
    {
        let pool = target.fixtures.expired_option_pool();
        if !pool.is_empty() {
            return pool.into_iter().cloned().map(Some).collect();
        }
    }
    vec![None]
}

/// How many passes of its steps `case` makes against `target` (the paced plan counts
/// each pass's calls).
pub(super) fn pass_count(target: &Target, case: &Case) -> usize {
    option_passes(target, case).len()
}

impl Execution<'_> {
    /// Runs the steps once per pass; a pass that stops ends the execution, a pass that
    /// skips leaves a note when another pass was checked.
    pub(super) async fn run_passes(&mut self) -> Ended {
        let passes = option_passes(&self.shared.target, self.case);
        if passes.len() > 1 {
            let names: Vec<&str> = passes
                .iter()
                .flatten()
                .map(|option| option.instrument_name.as_str())
                .collect();
            self.notes.push(format!(
                "checked on each of the {} options the target file names as expired out of the money, in turn: {}",
                names.len(),
                names.join(", ")
            ));
        }
        let mut checked = 0;
        let mut option_skips = Vec::new();
        let mut error = None;
        for option in passes {
            let name = option.as_ref().map(|option| option.instrument_name.clone());
            self.expired_option = option;
            match self.run_steps().await {
                PassEnd::Completed => checked += 1,
                PassEnd::Skipped(reason) => option_skips.push((name, reason)),
                PassEnd::Stopped(stopped_by) => {
                    checked += 1;
                    error = stopped_by;
                    break;
                }
            }
        }
        if checked == 0 {
            return Ended {
                error,
                skipped: option_skips.into_iter().next().map(|(_, reason)| reason),
            };
        }
        for (name, reason) in option_skips {
            self.notes.push(format!(
                "{} is not checked: {reason}",
                name.unwrap_or_default()
            ));
        }
        Ended {
            error,
            skipped: None,
        }
    }
}
