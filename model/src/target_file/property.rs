//! The fuzz property of the target-file loader, shared by the cargo-fuzz target
//! `target_parse_roundtrip` and the proptest test below.

use std::path::Path;

use harness_protocol::file_error::FileError;

use super::Target;

/// The path the property's texts are reported under.
const FUZZ_PATH: &str = "fuzz-target.toml";

/// The rule of [`target_parse_roundtrip`] that does not hold.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum TargetPropertyError {
    /// An accepted target, written back, loads as another target or not at all.
    #[error("{text:?} loaded, was written as {written:?} and loaded again as {again:?}")]
    NotRoundtrip {
        /// The text loaded.
        text: String,
        /// The target written back.
        written: String,
        /// What that loaded as.
        again: Box<Result<Target, FileError>>,
    },
    /// A refusal names another file or a line past its end.
    #[error("refusal {0:?} does not point into the file")]
    RefusalOutside(FileError),
}

/// Fuzz and proptest property `target_parse_roundtrip`: [`Target::parse`] never panics; a
/// target it accepts, written back with [`Target::to_toml`], parses to the same target; a
/// refusal names the file and a line no further than its end.
///
/// Every `*_env` variable resolves to a fixed value, so secrets from the environment are
/// exercised without reading it.
pub fn target_parse_roundtrip(bytes: &[u8]) -> Result<(), TargetPropertyError> {
    let Ok(text) = std::str::from_utf8(bytes) else {
        return Ok(());
    };
    let path = Path::new(FUZZ_PATH);
    let lookup_env = |_: &str| Some("env-secret".to_owned());
    let last_line = text.lines().count().max(1) + 1;
    match Target::parse(path, text, &lookup_env) {
        Ok(target) => {
            let written = target.to_toml();
            match Target::parse(path, &written, &lookup_env) {
                Ok(again) if again == target => Ok(()),
                again => Err(TargetPropertyError::NotRoundtrip {
                    text: text.to_owned(),
                    written,
                    again: Box::new(again),
                }),
            }
        }
        Err(error) if error.path == path && error.line <= last_line => Ok(()),
        Err(error) => Err(TargetPropertyError::RefusalOutside(error)),
    }
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;

    /// Target files with odd but legal account names, URLs and values.
    fn target_text() -> impl Strategy<Value = String> {
        let role = prop_oneof![
            4 => prop::sample::select(&["main", "\"two factor\"", "\"a.b\"", "'x\"y'"][..])
                .prop_map(str::to_owned),
            1 => "[a-z_-]{1,5}".prop_map(|role| role),
        ];
        let value = "[a-z\"\\\\ ./:]{0,8}".prop_map(|text| format!("{text:?}"));
        let tls = prop::sample::select(
            &[
                "",
                "ca_file = \"certs/ca.pem\"\n",
                "ca_file = \"/etc/ssl/ca.pem\"\naccept_invalid_certs = true\n",
                "accept_invalid_certs = false\n",
            ][..],
        );
        (role, value.clone(), value, any::<bool>(), tls).prop_map(
            |(role, client_id, secret, env, tls)| {
                let secret_line = if env {
                    "client_secret_env = \"SECRET\"".to_owned()
                } else {
                    format!("client_secret = {secret}")
                };
                format!(
                    "name = \"t\"\nbase_url = \"https://127.0.0.1:1/api/v2/\"\n{tls}\n[accounts.{role}]\nclient_id = {client_id}\n{secret_line}\n"
                )
            },
        )
    }

    proptest! {
        #[test]
        fn written_target_loads_the_same(text in target_text()) {
            prop_assert_eq!(target_parse_roundtrip(text.as_bytes()), Ok(()));
        }
    }
}
