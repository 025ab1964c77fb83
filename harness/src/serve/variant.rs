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
        /// A legal choice at one open point of SPEC.md that the reference server does not
        /// make by default.
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
        pub enum Variant {
            $(
                #[doc = concat!("`", $name, "`: see [`crate::spec::OPEN_POINTS`].")]
                $variant,
            )+
        }

        impl Variant {
            /// Every variant, in declaration order.
            pub const ALL: &'static [Variant] = &[$(Variant::$variant),+];

            /// The kebab-case name used by `--variant NAME`.
            pub fn name(self) -> &'static str {
                match self {
                    $(Variant::$variant => $name,)+
                }
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
    /// The variant of this name.
    pub fn from_name(name: &str) -> Option<Variant> {
        Variant::ALL
            .iter()
            .copied()
            .find(|variant| variant.name() == name)
    }

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

    fn bit(self) -> u64 {
        1 << (self as u32)
    }
}

/// A set of variants as a bitset.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct VariantSet(u64);

impl VariantSet {
    pub(crate) fn new(variants: &[Variant]) -> VariantSet {
        VariantSet(
            variants
                .iter()
                .fold(0, |bits, variant| bits | variant.bit()),
        )
    }

    pub(crate) fn has(self, variant: Variant) -> bool {
        self.0 & variant.bit() != 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_open_alternative_is_a_variant_and_back() {
        assert!(Variant::ALL.len() < 64);
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

    #[test]
    fn set_holds_exactly_its_members() {
        let set = VariantSet::new(&[Variant::ShortPages, Variant::UnknownIsEmpty]);
        assert!(set.has(Variant::ShortPages));
        assert!(set.has(Variant::UnknownIsEmpty));
        assert!(!set.has(Variant::CoerceTypes));
    }
}
