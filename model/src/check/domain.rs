//! The domain of a clause: the points of the space its rule ranges over, as SPEC.md gives
//! them, along seven dimensions (how a request travels, how it is authenticated, whose
//! account it goes as, where in a walk, which entries of a list, how its values are
//! encoded, and when). A rule checked at one point of its domain only (one transport, the
//! first page, the first entry) lets a server that breaks it elsewhere pass; the catalog
//! therefore names, for every `must` clause, each point its cases must reach
//! (`domain = { transports = [...], pages = [...] }` in `cases/clauses.toml`), and says in
//! one line, quoting SPEC.md, why a dimension SPEC.md gives the rule is narrowed
//! (`narrowed = { transports = "..." }`). Where a rule could break at one combination
//! only (the second factor skipped for the token a WebSocket remembers), `pairwise` names
//! dimensions whose every pair of points one request can hold must be reached by one
//! execution ([`Domain::pairs`]). The case side ([`crate::case`]'s `domain`
//! module) says which points an execution reaches; the report sets one beside the other.
//! A catalog domain that breaks these rules is refused with a [`DomainError`].

use std::collections::BTreeMap;
use std::fmt;

use serde::{Deserialize, Serialize};

/// One axis of a rule's domain.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Deserialize, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Dimension {
    /// How the request travels: `http-query`, `http-body`, `ws`, `rest`.
    Transports,
    /// How the request is authenticated: a token given (`bearer`), the one a WebSocket
    /// remembers (`remembered`), a login grant (`client-credentials`, `client-signature`),
    /// the signed header (`signed`), `basic`, the Direct Access key (`api-key`).
    Auth,
    /// Whose account: `main`, `sub`, `two-factor`, a subaccount's exchanged token
    /// (`exchanged`).
    Roles,
    /// The position in a walk: the `first` page, a `later` one, a `full-last` page (exactly
    /// `count` entries, nothing after it).
    Pages,
    /// Which entries of a list are held to the rule: `every` one, not the first alone.
    Entries,
    /// How values are written: `percent`-encoded or `non-ascii` query values, a
    /// `json-body`.
    Encodings,
    /// When: `at-once`, `after-lifetime` (once a lifetime has passed), under a `race`.
    Timing,
}

impl Dimension {
    /// Every dimension, in the order reports show them.
    pub const ALL: [Dimension; 7] = [
        Dimension::Transports,
        Dimension::Auth,
        Dimension::Roles,
        Dimension::Pages,
        Dimension::Entries,
        Dimension::Encodings,
        Dimension::Timing,
    ];

    /// The name used in the catalog and the reports.
    pub fn as_str(self) -> &'static str {
        match self {
            Dimension::Transports => "transports",
            Dimension::Auth => "auth",
            Dimension::Roles => "roles",
            Dimension::Pages => "pages",
            Dimension::Entries => "entries",
            Dimension::Encodings => "encodings",
            Dimension::Timing => "timing",
        }
    }
}

/// One point of a dimension.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Deserialize, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Point {
    /// An HTTP GET with the parameters in the query string.
    HttpQuery,
    /// An HTTP GET with a JSON-RPC body.
    HttpBody,
    /// A WebSocket message.
    Ws,
    /// The Direct Access REST interface.
    Rest,
    /// A token given with the request (HTTP `Authorization: Bearer`, WebSocket
    /// `access_token`).
    Bearer,
    /// No token sent: the one the WebSocket connection remembers.
    Remembered,
    /// A `client_credentials` login.
    ClientCredentials,
    /// A `client_signature` login.
    ClientSignature,
    /// The signed `Authorization` header.
    Signed,
    /// `Authorization: Basic`.
    Basic,
    /// The Direct Access API key.
    ApiKey,
    /// The main account.
    Main,
    /// A subaccount.
    Sub,
    /// An account with a second factor.
    TwoFactor,
    /// A subaccount's token from `public/exchange_token`.
    Exchanged,
    /// A walk's first page.
    First,
    /// A page reached by a continuation.
    Later,
    /// A last page holding exactly `count` entries.
    FullLast,
    /// Every entry of a list.
    Every,
    /// A query value that needs percent-encoding.
    Percent,
    /// A non-ASCII value.
    NonAscii,
    /// A JSON body (HTTP body or WebSocket message).
    JsonBody,
    /// At once.
    AtOnce,
    /// Once a lifetime the target stated has passed.
    AfterLifetime,
    /// Requests released together.
    Race,
}

impl Point {
    /// Whether one request can lie at both points: the remembered token is a WebSocket's,
    /// the signed header and Basic are HTTP headers, the Direct Access key goes to the REST
    /// interface, a percent-encoded value is a query string's and a JSON body is not one.
    /// Points of one dimension are never together (a request has one transport).
    pub fn compatible(self, other: Point) -> bool {
        if self.dimension() == other.dimension() {
            return self == other;
        }
        let needs = |point: Point| -> Option<&'static [Point]> {
            Some(match point {
                Point::Remembered => &[Point::Ws],
                Point::Signed | Point::Basic => &[Point::HttpQuery, Point::HttpBody],
                Point::ApiKey => &[Point::Rest],
                Point::Percent => &[Point::HttpQuery],
                Point::JsonBody => &[Point::HttpBody, Point::Ws],
                _ => return None,
            })
        };
        let allows = |point: Point, transport: Point| {
            needs(point).is_none_or(|transports| transports.contains(&transport))
        };
        match (self.dimension(), other.dimension()) {
            (Dimension::Transports, _) => allows(other, self),
            (_, Dimension::Transports) => allows(self, other),
            _ => match (needs(self), needs(other)) {
                (Some(one), Some(two)) => one.iter().any(|transport| two.contains(transport)),
                _ => true,
            },
        }
    }

    /// Every point, in the order reports show them.
    pub const ALL: [Point; 25] = [
        Point::HttpQuery,
        Point::HttpBody,
        Point::Ws,
        Point::Rest,
        Point::Bearer,
        Point::Remembered,
        Point::ClientCredentials,
        Point::ClientSignature,
        Point::Signed,
        Point::Basic,
        Point::ApiKey,
        Point::Main,
        Point::Sub,
        Point::TwoFactor,
        Point::Exchanged,
        Point::First,
        Point::Later,
        Point::FullLast,
        Point::Every,
        Point::Percent,
        Point::NonAscii,
        Point::JsonBody,
        Point::AtOnce,
        Point::AfterLifetime,
        Point::Race,
    ];

    /// The dimension the point lies on.
    pub fn dimension(self) -> Dimension {
        match self {
            Point::HttpQuery | Point::HttpBody | Point::Ws | Point::Rest => Dimension::Transports,
            Point::Bearer
            | Point::Remembered
            | Point::ClientCredentials
            | Point::ClientSignature
            | Point::Signed
            | Point::Basic
            | Point::ApiKey => Dimension::Auth,
            Point::Main | Point::Sub | Point::TwoFactor | Point::Exchanged => Dimension::Roles,
            Point::First | Point::Later | Point::FullLast => Dimension::Pages,
            Point::Every => Dimension::Entries,
            Point::Percent | Point::NonAscii | Point::JsonBody => Dimension::Encodings,
            Point::AtOnce | Point::AfterLifetime | Point::Race => Dimension::Timing,
        }
    }

    /// The name used in the catalog and the reports (`http-query`, `full-last`).
    pub fn as_str(self) -> &'static str {
        match self {
            Point::HttpQuery => "http-query",
            Point::HttpBody => "http-body",
            Point::Ws => "ws",
            Point::Rest => "rest",
            Point::Bearer => "bearer",
            Point::Remembered => "remembered",
            Point::ClientCredentials => "client-credentials",
            Point::ClientSignature => "client-signature",
            Point::Signed => "signed",
            Point::Basic => "basic",
            Point::ApiKey => "api-key",
            Point::Main => "main",
            Point::Sub => "sub",
            Point::TwoFactor => "two-factor",
            Point::Exchanged => "exchanged",
            Point::First => "first",
            Point::Later => "later",
            Point::FullLast => "full-last",
            Point::Every => "every",
            Point::Percent => "percent",
            Point::NonAscii => "non-ascii",
            Point::JsonBody => "json-body",
            Point::AtOnce => "at-once",
            Point::AfterLifetime => "after-lifetime",
            Point::Race => "race",
        }
    }
}

impl fmt::Display for Point {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            formatter,
            "{}: {}",
            self.dimension().as_str(),
            self.as_str()
        )
    }
}

/// A clause's domain as the catalog declares it: the points per dimension its cases must
/// reach, and, per dimension SPEC.md gives the rule but the domain narrows, why.
#[derive(Clone, Debug, Default, PartialEq, Deserialize)]
#[serde(try_from = "DomainTable")]
pub struct Domain {
    points: BTreeMap<Dimension, Vec<Point>>,
    narrowed: BTreeMap<Dimension, String>,
    pairwise: Vec<Dimension>,
}

/// What serde reads: one list per dimension, and `narrowed`.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct DomainTable {
    #[serde(default)]
    transports: Vec<Point>,
    #[serde(default)]
    auth: Vec<Point>,
    #[serde(default)]
    roles: Vec<Point>,
    #[serde(default)]
    pages: Vec<Point>,
    #[serde(default)]
    entries: Vec<Point>,
    #[serde(default)]
    encodings: Vec<Point>,
    #[serde(default)]
    timing: Vec<Point>,
    #[serde(default)]
    narrowed: BTreeMap<Dimension, String>,
    #[serde(default)]
    pairwise: Vec<Dimension>,
}

/// Why a catalog `domain` table makes no [`Domain`].
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub(crate) enum DomainError {
    /// A point listed under a dimension it is not of.
    #[error(
        "\"{}\" is a point of {}, not of {}",
        .point.as_str(),
        .point.dimension().as_str(),
        .listed_under.as_str()
    )]
    StrayPoint {
        /// The point.
        point: Point,
        /// The dimension whose list names it.
        listed_under: Dimension,
    },
    /// A dimension's list names a point twice.
    #[error("{} names a point twice", .dimension.as_str())]
    PointTwice {
        /// The dimension.
        dimension: Dimension,
    },
    /// The domain names no transports.
    #[error("a domain names its transports (the rule's transports as SPEC.md gives them)")]
    NoTransports,
    /// A narrowing reason that is empty or more than one line.
    #[error("narrowed.{} needs a one-line reason quoting SPEC.md", .dimension.as_str())]
    NarrowedWithoutReason {
        /// The dimension narrowed.
        dimension: Dimension,
    },
    /// `pairwise` names a dimension the domain gives no points.
    #[error("pairwise names {}, which the domain gives no points", .dimension.as_str())]
    PairwiseWithoutPoints {
        /// The dimension.
        dimension: Dimension,
    },
    /// `pairwise` names a single dimension.
    #[error("pairwise names two dimensions or more")]
    PairwiseOfOne,
}

impl TryFrom<DomainTable> for Domain {
    type Error = DomainError;

    fn try_from(table: DomainTable) -> Result<Domain, DomainError> {
        let lists = [
            (Dimension::Transports, table.transports),
            (Dimension::Auth, table.auth),
            (Dimension::Roles, table.roles),
            (Dimension::Pages, table.pages),
            (Dimension::Entries, table.entries),
            (Dimension::Encodings, table.encodings),
            (Dimension::Timing, table.timing),
        ];
        let mut points = BTreeMap::new();
        for (dimension, list) in lists {
            if let Some(stray) = list.iter().find(|point| point.dimension() != dimension) {
                return Err(DomainError::StrayPoint {
                    point: *stray,
                    listed_under: dimension,
                });
            }
            let mut list = list;
            list.sort();
            if list.windows(2).any(|pair| pair[0] == pair[1]) {
                return Err(DomainError::PointTwice { dimension });
            }
            if !list.is_empty() {
                points.insert(dimension, list);
            }
        }
        if !points.contains_key(&Dimension::Transports) {
            return Err(DomainError::NoTransports);
        }
        if let Some((dimension, _)) = table
            .narrowed
            .iter()
            .find(|(_, why)| why.trim().is_empty() || why.contains('\n'))
        {
            return Err(DomainError::NarrowedWithoutReason {
                dimension: *dimension,
            });
        }
        if let Some(dimension) = table
            .pairwise
            .iter()
            .find(|dimension| !points.contains_key(dimension))
        {
            return Err(DomainError::PairwiseWithoutPoints {
                dimension: *dimension,
            });
        }
        if table.pairwise.len() == 1 {
            return Err(DomainError::PairwiseOfOne);
        }
        Ok(Domain {
            points,
            narrowed: table.narrowed,
            pairwise: table.pairwise,
        })
    }
}

impl Domain {
    /// A domain of these points, narrowed with these reasons (for tests and generators).
    pub fn of(points: &[Point], narrowed: &[(Dimension, &str)]) -> Domain {
        let mut by_dimension: BTreeMap<Dimension, Vec<Point>> = BTreeMap::new();
        for point in points {
            by_dimension
                .entry(point.dimension())
                .or_default()
                .push(*point);
        }
        for list in by_dimension.values_mut() {
            list.sort();
            list.dedup();
        }
        Domain {
            points: by_dimension,
            narrowed: narrowed
                .iter()
                .map(|(dimension, why)| (*dimension, (*why).to_owned()))
                .collect(),
            pairwise: Vec::new(),
        }
    }

    /// Every pair of points, one from each of two dimensions named `pairwise`, that one
    /// request can hold ([`Point::compatible`]): each must be reached by one execution, not
    /// only each point by some execution.
    pub fn pairs(&self) -> Vec<(Point, Point)> {
        let mut pairs = Vec::new();
        for (position, first) in self.pairwise.iter().enumerate() {
            for second in &self.pairwise[position + 1..] {
                for one in self.on(*first) {
                    for two in self.on(*second) {
                        if one.compatible(*two) {
                            pairs.push((*one, *two));
                        }
                    }
                }
            }
        }
        pairs
    }

    /// Every point the domain names, dimension by dimension.
    pub fn points(&self) -> impl Iterator<Item = Point> + '_ {
        self.points.values().flatten().copied()
    }

    /// The points the domain names on one dimension (none: the rule does not range over
    /// it, or the catalog has not said).
    pub fn on(&self, dimension: Dimension) -> &[Point] {
        self.points.get(&dimension).map_or(&[], Vec::as_slice)
    }

    /// Why the domain narrows `dimension` from what SPEC.md gives the rule, if it does.
    pub fn narrowed(&self, dimension: Dimension) -> Option<&str> {
        self.narrowed.get(&dimension).map(String::as_str)
    }

    /// Every reason the domain gives for narrowing, by dimension.
    pub fn reasons(&self) -> impl Iterator<Item = (Dimension, &str)> {
        self.narrowed
            .iter()
            .map(|(dimension, why)| (*dimension, why.as_str()))
    }
}

/// The SPEC.md words a reason quotes: every run of text between double quotes.
pub fn reason_quotes(reason: &str) -> Vec<&str> {
    reason
        .split('"')
        .skip(1)
        .step_by(2)
        .filter(|text| !text.trim().is_empty())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> Result<Domain, String> {
        #[derive(Deserialize)]
        struct Holder {
            domain: Domain,
        }
        toml::from_str::<Holder>(text)
            .map(|holder| holder.domain)
            .map_err(|error| error.message().to_owned())
    }

    #[test]
    fn a_domain_lists_points_per_dimension_and_reasons() {
        let domain = parse(
            r#"domain = { transports = ["ws", "http-query"], pages = ["later", "first"], narrowed = { transports = "x \"y\"" } }"#,
        )
        .unwrap();
        assert_eq!(
            domain.on(Dimension::Transports),
            &[Point::HttpQuery, Point::Ws]
        );
        assert_eq!(domain.on(Dimension::Pages), &[Point::First, Point::Later]);
        assert_eq!(domain.on(Dimension::Auth), &[] as &[Point]);
        assert_eq!(domain.narrowed(Dimension::Transports), Some("x \"y\""));
        assert_eq!(domain.points().count(), 4);
    }

    #[test]
    fn a_point_on_another_dimension_a_repeat_or_no_transports_is_refused() {
        let stray = parse(r#"domain = { transports = ["ws"], pages = ["bearer"] }"#);
        assert_eq!(
            stray.unwrap_err(),
            "\"bearer\" is a point of auth, not of pages"
        );
        let twice = parse(r#"domain = { transports = ["ws", "ws"] }"#);
        assert!(twice.unwrap_err().contains("twice"));
        let none = parse(r#"domain = { pages = ["first"] }"#);
        assert!(none.unwrap_err().contains("names its transports"));
        let empty = parse(r#"domain = { transports = ["ws"], narrowed = { pages = " " } }"#);
        assert!(empty.unwrap_err().contains("one-line reason"));
    }

    #[test]
    fn a_misspelt_point_or_dimension_is_named() {
        let point = parse(r#"domain = { transports = ["http-qurey"] }"#).unwrap_err();
        assert!(point.contains("http-qurey"), "{point}");
        let dimension = parse(r#"domain = { transport = ["ws"] }"#).unwrap_err();
        assert!(dimension.contains("transport"), "{dimension}");
    }

    #[test]
    fn every_point_is_listed_once_and_named_as_the_catalog_writes_it() {
        for point in Point::ALL {
            let written = format!(
                "domain = {{ {} = [\"{}\"], transports = [\"ws\"] }}",
                point.dimension().as_str(),
                point.as_str()
            );
            if point.dimension() == Dimension::Transports {
                continue;
            }
            assert_eq!(parse(&written).unwrap().on(point.dimension()), &[point]);
        }
        for dimension in Dimension::ALL {
            assert!(
                Point::ALL
                    .iter()
                    .any(|point| point.dimension() == dimension)
            );
        }
    }

    #[test]
    fn pairwise_pairs_only_what_one_request_can_hold() {
        let domain = parse(
            r#"domain = { transports = ["http-query", "ws"], auth = ["bearer", "remembered", "signed"], pairwise = ["transports", "auth"] }"#,
        )
        .unwrap();
        assert_eq!(
            domain.pairs(),
            vec![
                (Point::HttpQuery, Point::Bearer),
                (Point::HttpQuery, Point::Signed),
                (Point::Ws, Point::Bearer),
                (Point::Ws, Point::Remembered),
            ]
        );
        let one = parse(r#"domain = { transports = ["ws"], pairwise = ["transports"] }"#);
        assert!(one.unwrap_err().contains("two dimensions"));
        let empty =
            parse(r#"domain = { transports = ["ws"], pairwise = ["transports", "pages"] }"#);
        assert!(empty.unwrap_err().contains("gives no points"));
        assert!(!Point::Percent.compatible(Point::JsonBody));
        assert!(Point::Signed.compatible(Point::Percent));
        assert!(!Point::ApiKey.compatible(Point::Remembered));
        assert!(Point::Sub.compatible(Point::Later));
    }

    #[test]
    fn a_reason_quotes_what_is_between_double_quotes() {
        assert_eq!(
            reason_quotes("4.3: \"over WebSocket only\" and \"b\"; \"\" not"),
            vec!["over WebSocket only", "b"]
        );
    }
}
