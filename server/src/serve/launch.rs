//! The reference server as a server the conformance suite starts itself:
//! `TargetSource::Launched(Arc::new(serve::ServeConfig::loopback()))` runs the suite against a
//! fresh reference server, and a fresh one again for each `serial` case.

use harness_runner::conformance::{BoxFuture, Launch, LaunchError, Launched};

use super::{ServeConfig, start};

impl Launch for ServeConfig {
    fn launch(&self) -> BoxFuture<'_, Result<Launched, LaunchError>> {
        let config = self.clone();
        Box::pin(async move {
            let running = start(config)
                .await
                .map_err(|error| LaunchError::NotStarted {
                    server: "the reference server".to_owned(),
                    source: error.into(),
                })?;
            Ok(Launched {
                target: running.target(),
                stop: Box::pin(running.shutdown()),
            })
        })
    }
}
