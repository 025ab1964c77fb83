//! The sections of SPEC.md, each with its title as SPEC.md writes it: the rows of the
//! report's coverage table, so a reader sees per section how many rules the catalog holds
//! and how many the run checked, sections without any rule included.

/// One section of SPEC.md.
#[derive(Clone, Copy, Debug)]
pub struct Section {
    /// Its number, as clauses cite it (`4.8`, `5.5`).
    pub id: &'static str,
    /// Its title, or the words that open it where SPEC.md gives none.
    pub title: &'static str,
}

const fn section(id: &'static str, title: &'static str) -> Section {
    Section { id, title }
}

/// Every section, in SPEC.md's order.
pub const SECTIONS: &[Section] = &[
    section("1", "What the service does"),
    section("2.1", "Token set (result of `public/auth`)"),
    section("2.2", "Trigger order history entry"),
    section("2.3", "Transaction log entry"),
    section("2.4", "MMP status entry (market maker protection)"),
    section("2.5", "Currency entry"),
    section("2.6", "Member (Direct Access)"),
    section(
        "2.7",
        "Order and trade (result of `private/close_position`)",
    ),
    section("2.8", "Instrument book summary entry"),
    section("2.9", "Historical volatility point"),
    section("3", "States and transitions"),
    section("4", "Endpoints"),
    section("4.1", "`public/auth`"),
    section("4.2", "`public/exchange_token`"),
    section("4.3", "`public/fork_token`"),
    section("4.4", "`private/logout`"),
    section("4.5", "`private/toggle_subaccount_login`"),
    section("4.6", "`private/get_mmp_status`"),
    section("4.7", "`private/get_trigger_order_history`"),
    section("4.8", "`private/get_transaction_log`"),
    section("4.9", "`public/get_currencies`"),
    section("4.10", "`public/get_historical_volatility`"),
    section("4.11", "`private/delete_member`"),
    section("4.12", "`private/close_position`"),
    section("4.13", "`lock_portfolio` (Direct Access REST)"),
    section("4.14", "`public/get_book_summary_by_instrument`"),
    section("5", "Authentication"),
    section("5.1", "Public methods need no credentials."),
    section("5.2", "Sending the token:"),
    section("5.3", "Ways to obtain a token (`public/auth`):"),
    section("5.4", "Scope values:"),
    section("5.5", "Client signature (WebSocket and `public/auth`):"),
    section("5.6", "HTTP alternatives (any private method):"),
    section("5.7", "Two-factor confirmation:"),
    section("5.8", "Direct Access REST interface:"),
    section("6", "Events"),
    section("7", "Errors"),
    section("8", "Limits"),
    section("9", "Versioning"),
];

#[cfg(test)]
mod tests {
    use super::SECTIONS;

    #[test]
    fn every_section_opens_a_line_of_spec_md_in_order() {
        let spec =
            std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../cases/SPEC.md"))
                .expect("cases/SPEC.md");
        let mut from = 0;
        for section in SECTIONS {
            let line = spec[from..]
                .lines()
                .position(|line| {
                    let line = line.trim_start_matches('#').trim_start();
                    let dotted = format!("{}. {}", section.id, section.title);
                    let spaced = format!("{} {}", section.id, section.title);
                    line.starts_with(&dotted) || line.starts_with(&spaced)
                })
                .unwrap_or_else(|| panic!("section {} not found after the previous", section.id));
            from += spec[from..]
                .lines()
                .take(line + 1)
                .map(|line| line.len() + 1)
                .sum::<usize>();
        }
    }

    #[test]
    fn every_clause_cites_a_known_section() {
        let catalog = std::fs::read_to_string(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../cases/clauses.toml"
        ))
        .expect("cases/clauses.toml");
        for line in catalog.lines() {
            if let Some(section) = line.strip_prefix("section = \"") {
                let section = section.trim_end_matches('"');
                assert!(
                    SECTIONS.iter().any(|known| known.id == section),
                    "clause section {section} is not a section of SPEC.md"
                );
            }
        }
    }
}
