//! Reproduction commands for a result.
//!
//! The first line reruns exactly that case and transport with the harness, which signs
//! afresh, so it reproduces even where a signature or nonce cannot be replayed. The next
//! line shows the deciding exchange as `curl` (HTTP) or `websocat` (WebSocket); secrets in
//! it are redacted like everywhere else, so a user substitutes their own token there.

use super::Context;
use crate::check::Verdict;
use crate::results::CaseResult;
use harness_protocol::wire::Exchange;

/// The reproduction commands of a result, redacted.
pub fn reproduction(context: &Context<'_>, result: &CaseResult) -> Vec<String> {
    let mut lines = vec![format!(
        "{} --filter '{}' --transport {}",
        context.rerun, result.case, result.transport
    )];
    if let Some(exchange) = result.exchanges.last() {
        lines.push(wire_command(exchange));
    }
    lines
        .into_iter()
        .map(|line| context.report.redactor.text(&line))
        .collect()
}

/// The reproduction commands as the reports people read show them, one per line: for a
/// failure, a warning or an error; `None` for any other verdict.
pub(crate) fn shown_reproduction(context: &Context<'_>, result: &CaseResult) -> Option<String> {
    matches!(
        result.verdict,
        Verdict::Fail | Verdict::Warn | Verdict::Error
    )
    .then(|| reproduction(context, result).join("\n"))
}

/// The exchange as a shell command.
pub(crate) fn wire_command(exchange: &Exchange) -> String {
    let request = &exchange.request;
    if request.method == "WS" {
        let body = request.body.clone().unwrap_or_default();
        return format!(
            "echo {} | websocat -n1 {}",
            shell_quote(&body),
            shell_quote(&request.url)
        );
    }
    let mut command = format!("curl -sS -X GET {}", shell_quote(&request.url));
    for (name, value) in &request.headers {
        command.push_str(&format!(" -H {}", shell_quote(&format!("{name}: {value}"))));
    }
    if let Some(body) = &request.body {
        command.push_str(&format!(" --data-binary {}", shell_quote(body)));
    }
    command
}

/// Single-quotes a string for a POSIX shell.
pub(crate) fn shell_quote(text: &str) -> String {
    format!("'{}'", text.replace('\'', r"'\''"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quotes_single_quotes() {
        assert_eq!(shell_quote("it's"), r"'it'\''s'");
    }
}
