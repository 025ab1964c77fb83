//! SIGINT and SIGTERM for commands that keep what they learned when stopped (`run`, `proxy`,
//! `judge`, `fuzz`): the first signal asks the command to stop and write its reports, a
//! second one ends the process at once with 128 + the signal's number (130, 143).

use harness_runner::run::{Interrupt, Interruption};

/// The process's SIGINT and SIGTERM, registered when created (inside a tokio runtime):
/// from then on neither ends the process by default.
pub(crate) struct Signals {
    #[cfg(unix)]
    streams: Option<(tokio::signal::unix::Signal, tokio::signal::unix::Signal)>,
}

impl Signals {
    /// Registers the handlers. Must be called inside a tokio runtime, before the work the
    /// signals should stop begins.
    pub(crate) fn new() -> Signals {
        #[cfg(unix)]
        {
            use tokio::signal::unix::{SignalKind, signal};
            let streams = match (
                signal(SignalKind::interrupt()),
                signal(SignalKind::terminate()),
            ) {
                (Ok(interrupt), Ok(terminate)) => Some((interrupt, terminate)),
                _ => None,
            };
            Signals { streams }
        }
        #[cfg(not(unix))]
        {
            Signals {}
        }
    }

    /// The next signal's name (`SIGINT`, `SIGTERM`); never resolves when the handlers
    /// could not be registered.
    pub(crate) async fn next(&mut self) -> &'static str {
        #[cfg(unix)]
        {
            match &mut self.streams {
                Some((interrupt, terminate)) => tokio::select! {
                    _ = interrupt.recv() => "SIGINT",
                    _ = terminate.recv() => "SIGTERM",
                },
                None => std::future::pending().await,
            }
        }
        #[cfg(not(unix))]
        {
            let _ = tokio::signal::ctrl_c().await;
            "SIGINT"
        }
    }

    /// Watches in the background: the first signal fires `interrupt` (`interrupted by
    /// SIGINT`) and says what happens next (`then`), the second ends the process at once.
    pub(crate) fn fire_then_exit(mut self, interrupt: Interrupt, then: &'static str) {
        tokio::spawn(async move {
            let first = self.next().await;
            interrupt.fire(Interruption::Signal(first));
            eprintln!("{first}: {then}; a second signal stops at once");
            self.exit_on_next().await;
        });
    }

    /// How a serving session (`judge`, `proxy`) ends: when `enough` resolves (the requests
    /// asked for were answered), after `for_seconds`, or at the first signal, whichever
    /// comes first; from then on the next signal ends the process at once.
    pub(crate) async fn until_enough_or_stopped(
        mut self,
        enough: impl std::future::Future<Output = ()>,
        for_seconds: Option<u64>,
    ) {
        let deadline = async {
            match for_seconds {
                Some(seconds) => tokio::time::sleep(std::time::Duration::from_secs(seconds)).await,
                None => std::future::pending().await,
            }
        };
        tokio::select! {
            () = enough => {}
            () = deadline => {}
            _ = self.next() => {}
        }
        tokio::spawn(self.exit_on_next());
    }

    /// Ends the process at the next signal, with 128 + its number.
    pub(crate) async fn exit_on_next(mut self) {
        let signal = self.next().await;
        eprintln!("{signal} again: stopping at once; reports may be missing");
        std::process::exit(match signal {
            "SIGTERM" => 143,
            _ => 130,
        });
    }
}
