//! Spec-open variants: each one makes the reference server take another legal choice at
//! one point SPEC.md leaves open ([`harness_protocol::spec::OPEN_POINTS`]), so that the harness can
//! prove it accepts every server the spec allows, as faults prove it catches every server
//! the spec forbids.
//!
//! A variant's name, its description and the SPEC.md passage that makes it legal come from
//! the open point it belongs to; this file only maps names to switches. Variants combine:
//! `harness serve --variant all` switches every one on at once, and the two [`Extreme`]s,
//! `narrowest` and `widest`, switch on the choice each open point names for that edge.

use harness_protocol::spec::{OPEN_POINTS, OpenPoint};

/// Declares [`Variant`] with its name; everything else is read from the spec table.
macro_rules! variants {
    ($($variant:ident => $name:literal;)+) => {
        switches! {
            /// A legal choice at one open point of SPEC.md that the reference server does
            /// not make by default.
            pub enum Variant ("--variant") in VariantSet {
                $($variant => $name, concat!("`", $name, "`: see [`harness_protocol::spec::OPEN_POINTS`].");)+
            }
        }
    };
}

variants! {
    LenientEnvelope => "lenient-envelope";
    IdOmitted => "id-omitted";
    BareUrlPlain => "bare-url-plain";
    UnknownParamsIgnored => "unknown-params-ignored";
    CoerceTypes => "coerce-types";
    RequireUnflagged => "require-unflagged";
    OtherErrorCodes => "other-error-codes";
    ErrorsStatus200 => "errors-status-200";
    ExtraMembers => "extra-members";
    OptionalMembersOmitted => "optional-members-omitted";
    TriggerEndNull => "trigger-end-null";
    ShortPages => "short-pages";
    OldestFirst => "oldest-first";
    CountsClamped => "counts-clamped";
    TimestampsUnbounded => "timestamps-unbounded";
    RatePerUserBurst1 => "rate-per-user-burst-1";
    FutureTimestamps => "future-timestamps";
    WsRemembersAnyToken => "ws-remembers-any-token";
    WsRemembersAuthOnly => "ws-remembers-auth-only";
    ScopeUnnamedKept => "scope-unnamed-kept";
    RefusesUnlisted => "refuses-unlisted";
    ExchangeScopeCapped => "exchange-scope-capped";
    DisableKeepsExchanged => "disable-keeps-exchanged";
    ForkTokenNames => "fork-token-names";
    LogoutCloses => "logout-closes";
    SessionRefreshRevokes => "session-refresh-revokes";
    PublicRefusesBadToken => "public-refuses-bad-token";
    MemberFieldNames => "member-field-names";
    MmpNoneTriggered => "mmp-none-triggered";
    NullsAndStrings => "nulls-and-strings";
    UnknownIsEmpty => "unknown-is-empty";
    PositionsCloseOnce => "positions-close-once";
    LimitPriceRounded => "limit-price-rounded";
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

/// One of the two extreme servers SPEC.md allows: at every open point, the choice the
/// point names for that edge ([`OpenPoint::narrowest`], [`OpenPoint::widest`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Extreme {
    /// Does what the quoted `must` words require and nothing more: refuses what it may,
    /// sends and remembers no more than it must.
    Narrowest,
    /// Does everything SPEC.md does not forbid: accepts what it need not refuse, sends
    /// every member it may, remembers what it may.
    Widest,
}

impl Extreme {
    /// Both, narrowest first.
    pub const ALL: [Extreme; 2] = [Extreme::Narrowest, Extreme::Widest];

    /// The name `--variant` takes: `narrowest` or `widest`.
    pub fn name(self) -> &'static str {
        match self {
            Extreme::Narrowest => "narrowest",
            Extreme::Widest => "widest",
        }
    }

    /// The extreme of this name, if any.
    pub fn from_name(name: &str) -> Option<Extreme> {
        Extreme::ALL
            .into_iter()
            .find(|extreme| extreme.name() == name)
    }

    /// This edge's choice at `point`: [`harness_protocol::spec::REFERENCE`] or a variant's name.
    pub fn choice(self, point: &OpenPoint) -> &'static str {
        match self {
            Extreme::Narrowest => point.narrowest,
            Extreme::Widest => point.widest,
        }
    }

    /// The variants this server switches on, in declaration order.
    pub fn variants(self) -> Vec<Variant> {
        let mut variants: Vec<Variant> = OPEN_POINTS
            .iter()
            .filter_map(|point| Variant::from_name(self.choice(point)))
            .collect();
        variants.sort_unstable();
        variants
    }

    /// The extreme whose variants are exactly `variants` (in any order), if any.
    pub fn of(variants: &[Variant]) -> Option<Extreme> {
        let mut sorted = variants.to_vec();
        sorted.sort_unstable();
        sorted.dedup();
        Extreme::ALL
            .into_iter()
            .find(|extreme| extreme.variants() == sorted)
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

    /// Every open point is taken one way by the narrowest server and the other way by the
    /// widest: the reference's choice by one and a variant by the other, or two variants.
    #[test]
    fn every_open_point_is_taken_one_way_by_each_extreme() {
        let narrowest = Extreme::Narrowest.variants();
        let widest = Extreme::Widest.variants();
        for point in OPEN_POINTS {
            let on = |variants: &[Variant]| -> Vec<&str> {
                point
                    .alternatives
                    .iter()
                    .map(|(name, _)| *name)
                    .filter(|name| variants.iter().any(|variant| variant.name() == *name))
                    .collect()
            };
            let (narrow, wide) = (on(&narrowest), on(&widest));
            assert!(narrow.len() <= 1 && wide.len() <= 1, "{}", point.id);
            assert_ne!(narrow, wide, "{}: both extremes choose alike", point.id);
            let chosen = |on: &[&'static str]| -> &'static str {
                on.first()
                    .copied()
                    .unwrap_or(harness_protocol::spec::REFERENCE)
            };
            assert_eq!(chosen(&narrow), point.narrowest, "{}", point.id);
            assert_eq!(chosen(&wide), point.widest, "{}", point.id);
        }
        assert!(narrowest.iter().all(|variant| !widest.contains(variant)));
        assert_eq!(Extreme::of(&narrowest), Some(Extreme::Narrowest));
        assert_eq!(Extreme::of(&widest), Some(Extreme::Widest));
        assert_eq!(Extreme::of(&[Variant::ShortPages]), None);
        assert_eq!(Extreme::from_name("widest"), Some(Extreme::Widest));
    }
}
