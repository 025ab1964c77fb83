//! Spec-open variants: each one makes the reference server take another legal choice at
//! one point SPEC.md leaves open ([`crate::spec::OPEN_POINTS`]), so that the harness can
//! prove it accepts every server the spec allows, as faults prove it catches every server
//! the spec forbids.
//!
//! A variant's name, its description and the SPEC.md passage that makes it legal come from
//! the open point it belongs to; this file only maps names to switches. Variants combine:
//! `harness serve --variant all` switches every one on at once.

use crate::spec::{OPEN_POINTS, OpenPoint};

/// Declares [`Variant`] with its name; everything else is read from the spec table.
macro_rules! variants {
    ($($variant:ident => $name:literal;)+) => {
        switches! {
            /// A legal choice at one open point of SPEC.md that the reference server does
            /// not make by default.
            pub enum Variant ("--variant") in VariantSet {
                $($variant => $name, concat!("`", $name, "`: see [`crate::spec::OPEN_POINTS`].");)+
            }
        }
    };
}

variants! {
    LenientEnvelope => "lenient-envelope";
    UnknownParamsIgnored => "unknown-params-ignored";
    CoerceTypes => "coerce-types";
    RequireUnflagged => "require-unflagged";
    OtherErrorCodes => "other-error-codes";
    ErrorsStatus200 => "errors-status-200";
    ExtraMembers => "extra-members";
    TriggerEndNull => "trigger-end-null";
    ShortPages => "short-pages";
    OldestFirst => "oldest-first";
    RatePerUserBurst1 => "rate-per-user-burst-1";
    FutureTimestamps => "future-timestamps";
    WsRemembersAnyToken => "ws-remembers-any-token";
    ScopeUnnamedKept => "scope-unnamed-kept";
    ExchangeScopeCapped => "exchange-scope-capped";
    ForkTokenNames => "fork-token-names";
    LogoutCloses => "logout-closes";
    SessionRefreshRevokes => "session-refresh-revokes";
    PublicRefusesBadToken => "public-refuses-bad-token";
    MemberFieldNames => "member-field-names";
    MmpNoneTriggered => "mmp-none-triggered";
    NullsAndStrings => "nulls-and-strings";
    UnknownIsEmpty => "unknown-is-empty";
    PositionsCloseOnce => "positions-close-once";
}

impl Variant {
    /// The open point this variant makes another choice at.
    pub fn open_point(self) -> &'static OpenPoint {
        OPEN_POINTS
            .iter()
            .find(|point| {
                point
                    .alternatives
                    .iter()
                    .any(|(name, _)| *name == self.name())
            })
            .unwrap_or(&OPEN_POINTS[0])
    }

    /// What the server does under this variant.
    pub fn description(self) -> &'static str {
        self.open_point()
            .alternatives
            .iter()
            .find(|(name, _)| *name == self.name())
            .map_or("", |(_, description)| description)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_open_alternative_is_a_variant_and_back() {
        assert!(Variant::ALL.len() < 128);
        let alternatives: Vec<&str> = OPEN_POINTS
            .iter()
            .flat_map(|point| point.alternatives.iter().map(|(name, _)| *name))
            .collect();
        for name in &alternatives {
            assert!(
                Variant::from_name(name).is_some(),
                "open alternative {name} has no variant"
            );
        }
        for variant in Variant::ALL {
            assert!(alternatives.contains(&variant.name()), "{variant:?}");
            assert!(!variant.description().is_empty());
            assert_eq!(Variant::from_name(variant.name()), Some(*variant));
        }
    }
}
