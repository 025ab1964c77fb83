//! The commands' standard output, as a Unix tool writes it: a reader that stops reading
//! (`harness variants | head -1`) ends the output quietly, with no panic and no message,
//! as in ripgrep. The command carries on to its natural end and exit code, so a run whose
//! terminal lines nobody reads still writes its reports and says by its exit code whether
//! it passed. Every line of standard output goes through [`outln!`] and [`out!`].

use std::fmt;
use std::io::Write;
use std::sync::atomic::{AtomicBool, Ordering};

/// Set once standard output refused a write: nothing more is written to it.
static CLOSED: AtomicBool = AtomicBool::new(false);

/// Writes formatted text to standard output, unless it is closed.
pub(crate) fn write(args: fmt::Arguments<'_>, newline: bool) {
    if CLOSED.load(Ordering::Relaxed) {
        return;
    }
    let mut stdout = std::io::stdout().lock();
    let written = stdout.write_fmt(args).and_then(|()| {
        if newline {
            stdout.write_all(b"\n")
        } else {
            Ok(())
        }
    });
    // A closed pipe is the reader saying it has read enough; any other failure leaves
    // standard output just as unusable, and a panic would help neither.
    if written.is_err() {
        CLOSED.store(true, Ordering::Relaxed);
    }
}
