//! Named classes of values that parsers choke on, each a strategy drawn from the run's
//! `StdRng` rather than a fixed list: Unicode by general category (non-ASCII digits `Nd`,
//! other numerals `No` and letter numerals `Nl`, unusual spaces `Zs`, combining marks `Mn`,
//! zero-width and format characters `Cf`), numbers written in every notation, integers and
//! floats at the edges of their types, strings at length limits, and, in raw bodies, JSON
//! `\u` escapes, lone surrogates, other number literals, duplicate keys, deep nesting and a
//! byte order mark.
//!
//! A class draws from a space (code point ranges of the category, positions in a valid
//! value, rewrites of a valid number) and says its [`Class::name`], which the request
//! carries (`FuzzRequest::class`) so a finding says what kind of input it was. What the
//! server must answer is the oracle's (`rules.rs`), which judges the value itself, never
//! its class: most of these values are "either", since SPEC.md does not say whether a
//! server reads `٣` or ` 5` as an integer, but an answer that is no JSON-RPC envelope is a
//! finding whatever was sent.

use rand::Rng;
use rand::rngs::StdRng;
use rand::seq::IndexedRandom;
use serde_json::{Value, json};

use harness_protocol::spec::Kind;

pub(super) mod raw_body;

/// A named class of generated values.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Class {
    /// Decimal digits outside ASCII (general category Nd): `٣`, `３`, `७`.
    UnicodeNd,
    /// Other numerals (No): `²`, `½`, `①`.
    UnicodeNo,
    /// Letter numerals (Nl): `Ⅻ`, `〇`.
    UnicodeNl,
    /// Space separators outside ASCII (Zs): U+00A0, U+2003, U+3000.
    UnicodeZs,
    /// Combining marks (Mn): U+0301 after a letter or digit.
    UnicodeMn,
    /// Format characters (Cf): U+200B, U+FEFF, U+202E.
    UnicodeCf,
    /// A number written otherwise: `1e309`, `-0`, `0x10`, `+5`, `5.0`, ` 5`, `NaN`.
    NumericNotation,
    /// Integers at the edges of 32-, 53- and 64-bit types.
    IntEdge,
    /// Floats at the edges of `f64`: `1e308`, subnormals, `-0.0`.
    FloatEdge,
    /// Strings around powers of two in length.
    LengthLimit,
    /// A raw body whose strings are written as JSON `\u` escapes.
    JsonEscape,
    /// A raw body with a lone UTF-16 surrogate escaped in a string.
    LoneSurrogate,
    /// A raw body with a number literal JSON does or does not allow (`1E2`, `-0`, `1e400`, `+5`).
    NumberLiteral,
    /// A raw body with a key given twice.
    DuplicateKeys,
    /// A raw body with deeply nested parameters.
    DeepNesting,
    /// A raw body starting with a byte order mark.
    Bom,
}

/// The classes of a parameter value, and of a raw body.
const VALUE_CLASSES: &[Class] = &[
    Class::UnicodeNd,
    Class::UnicodeNo,
    Class::UnicodeNl,
    Class::UnicodeZs,
    Class::UnicodeMn,
    Class::UnicodeCf,
    Class::NumericNotation,
    Class::IntEdge,
    Class::FloatEdge,
    Class::LengthLimit,
];
const RAW_CLASSES: &[Class] = &[
    Class::JsonEscape,
    Class::LoneSurrogate,
    Class::NumberLiteral,
    Class::DuplicateKeys,
    Class::DeepNesting,
    Class::Bom,
];

/// RFC 8259's words that leave a server's handling of a raw body of the class named
/// `name` unpredictable: what a server does with such a text (answers, refuses, drops the
/// connection, answers with something else than JSON) breaks no rule, so only a JSON-RPC
/// answer to it is judged.
pub(crate) fn handling_left_open(name: &str) -> Option<&'static str> {
    let class = RAW_CLASSES.iter().find(|class| class.name() == name)?;
    match class {
        Class::LoneSurrogate => Some(
            "RFC 8259 8.2: \"The behavior of software that receives JSON texts containing such values is unpredictable; for example, implementations might return different values for the length of a string value or even suffer fatal runtime exceptions.\"",
        ),
        Class::DuplicateKeys => Some(
            "RFC 8259 4: \"When the names within an object are not unique, the behavior of software that receives such an object is unpredictable.\"",
        ),
        _ => None,
    }
}

impl Class {
    /// Every class.
    #[cfg(test)]
    pub(crate) fn all() -> impl Iterator<Item = Class> {
        VALUE_CLASSES.iter().chain(RAW_CLASSES).copied()
    }

    /// The name a finding gives it.
    pub(crate) fn name(self) -> &'static str {
        match self {
            Class::UnicodeNd => "unicode-Nd",
            Class::UnicodeNo => "unicode-No",
            Class::UnicodeNl => "unicode-Nl",
            Class::UnicodeZs => "unicode-Zs",
            Class::UnicodeMn => "unicode-Mn",
            Class::UnicodeCf => "unicode-Cf",
            Class::NumericNotation => "numeric-notation",
            Class::IntEdge => "int-edge",
            Class::FloatEdge => "float-edge",
            Class::LengthLimit => "length-limit",
            Class::JsonEscape => "json-escape",
            Class::LoneSurrogate => "lone-surrogate",
            Class::NumberLiteral => "number-literal",
            Class::DuplicateKeys => "duplicate-keys",
            Class::DeepNesting => "deep-nesting",
            Class::Bom => "bom",
        }
    }

    /// A class for a parameter value.
    pub(crate) fn value_class(rng: &mut StdRng) -> Class {
        *VALUE_CLASSES.choose(rng).unwrap_or(&Class::UnicodeNd)
    }

    /// A class for a raw body.
    pub(crate) fn raw_class(rng: &mut StdRng) -> Class {
        *RAW_CLASSES.choose(rng).unwrap_or(&Class::Bom)
    }
}

/// The zero of each block of decimal digits (Nd) outside ASCII: the block's digits are the
/// zero and the nine code points after it.
const ND_ZEROS: &[u32] = &[
    0x0660, 0x06F0, 0x07C0, 0x0966, 0x09E6, 0x0A66, 0x0AE6, 0x0B66, 0x0BE6, 0x0C66, 0x0CE6, 0x0D66,
    0x0DE6, 0x0E50, 0x0ED0, 0x0F20, 0x1040, 0x1090, 0x17E0, 0x1810, 0x1946, 0x19D0, 0x1A80, 0x1A90,
    0x1B50, 0x1BB0, 0x1C40, 0x1C50, 0xA620, 0xA8D0, 0xA900, 0xA9D0, 0xA9F0, 0xAA50, 0xABF0, 0xFF10,
    0x104A0, 0x11066, 0x1D7CE, 0x1D7D8, 0x1E950,
];
/// Ranges of other numerals (No).
const NO_RANGES: &[(u32, u32)] = &[
    (0x00B2, 0x00B3),
    (0x00B9, 0x00B9),
    (0x00BC, 0x00BE),
    (0x2070, 0x2070),
    (0x2074, 0x2079),
    (0x2080, 0x2089),
    (0x2150, 0x215F),
    (0x2460, 0x249B),
    (0x2776, 0x2793),
    (0x3251, 0x325F),
];
/// Ranges of letter numerals (Nl).
const NL_RANGES: &[(u32, u32)] = &[
    (0x16EE, 0x16F0),
    (0x2160, 0x2182),
    (0x3007, 0x3007),
    (0x3021, 0x3029),
];
/// Ranges of space separators outside ASCII (Zs).
const ZS_RANGES: &[(u32, u32)] = &[
    (0x00A0, 0x00A0),
    (0x1680, 0x1680),
    (0x2000, 0x200A),
    (0x202F, 0x202F),
    (0x205F, 0x205F),
    (0x3000, 0x3000),
];
/// Ranges of combining marks (Mn).
const MN_RANGES: &[(u32, u32)] = &[
    (0x0300, 0x036F),
    (0x0483, 0x0487),
    (0x0591, 0x05BD),
    (0x0610, 0x061A),
    (0x064B, 0x065F),
    (0x20D0, 0x20DC),
    (0xFE20, 0xFE2F),
];
/// Ranges of format characters (Cf): soft hyphen, zero-width characters, bidirectional
/// controls, invisible operators, the byte order mark.
const CF_RANGES: &[(u32, u32)] = &[
    (0x00AD, 0x00AD),
    (0x061C, 0x061C),
    (0x200B, 0x200F),
    (0x202A, 0x202E),
    (0x2060, 0x2064),
    (0x2066, 0x206F),
    (0xFEFF, 0xFEFF),
    (0xFFF9, 0xFFFB),
];

fn from_ranges(rng: &mut StdRng, ranges: &[(u32, u32)]) -> char {
    let &(low, high) = ranges.choose(rng).unwrap_or(&(0x00A0, 0x00A0));
    char::from_u32(rng.random_range(low..=high)).unwrap_or('\u{00A0}')
}

/// One character of a Unicode class.
fn class_char(rng: &mut StdRng, class: Class) -> char {
    match class {
        Class::UnicodeNd => {
            let zero = *ND_ZEROS.choose(rng).unwrap_or(&0x0660);
            char::from_u32(zero + rng.random_range(0..10)).unwrap_or('٣')
        }
        Class::UnicodeNo => from_ranges(rng, NO_RANGES),
        Class::UnicodeNl => from_ranges(rng, NL_RANGES),
        Class::UnicodeZs => from_ranges(rng, ZS_RANGES),
        Class::UnicodeMn => from_ranges(rng, MN_RANGES),
        _ => from_ranges(rng, CF_RANGES),
    }
}

/// `text` with one to three characters of a Unicode class put in: before it, after it, or
/// inside.
fn with_class_chars(rng: &mut StdRng, class: Class, text: &str) -> String {
    let mut chars: Vec<char> = text.chars().collect();
    for _ in 0..rng.random_range(1..=3) {
        let at = match rng.random_range(0..3) {
            0 => 0,
            1 => chars.len(),
            _ => rng.random_range(0..=chars.len()),
        };
        chars.insert(at, class_char(rng, class));
    }
    chars.into_iter().collect()
}

/// `number`'s decimal digits written with the digits of one block of Nd, or now and then
/// with ASCII and such digits mixed.
fn foreign_digits(rng: &mut StdRng, number: i64) -> String {
    let zero = *ND_ZEROS.choose(rng).unwrap_or(&0x0660);
    let mixed = rng.random_bool(0.25);
    number
        .to_string()
        .chars()
        .map(|c| match c.to_digit(10) {
            Some(digit) if !mixed || rng.random_bool(0.5) => {
                char::from_u32(zero + digit).unwrap_or(c)
            }
            _ => c,
        })
        .collect()
}

/// `number` written in another notation than plain decimal.
fn notation(rng: &mut StdRng, number: i64) -> String {
    let n = number;
    match rng.random_range(0..8) {
        0 => match rng.random_range(0..5) {
            0 => format!("{n}e0"),
            1 => format!("{n}E+0"),
            2 => format!("{}e{}", n.saturating_mul(10), -1),
            3 => format!(
                "{}e{}",
                ["", "-"][rng.random_range(0..2)],
                rng.random_range(300..=400)
            ),
            _ => format!("1e-{}", rng.random_range(300..=400)),
        },
        1 => ["-0", "+0", "-0.0", "0.0", "00"][rng.random_range(0..5)].to_owned(),
        2 => match rng.random_range(0..3) {
            0 => format!("0x{n:x}"),
            1 => format!("0o{n:o}"),
            _ => format!("0b{n:b}"),
        },
        3 => format!("+{n}"),
        4 => match rng.random_range(0..4) {
            0 => format!("{n}.0"),
            1 => format!("{n}."),
            2 => format!("{n}.{}", rng.random_range(1..1000)),
            _ => format!(".{}", n.unsigned_abs()),
        },
        5 => {
            let pad = [" ", "  ", "\t", "\n", "0", "00"][rng.random_range(0..6)];
            match rng.random_range(0..3) {
                0 => format!("{pad}{n}"),
                1 => format!("{n}{pad}"),
                _ => format!("{pad}{n}{pad}"),
            }
        }
        6 => {
            let big = n
                .saturating_mul(1000)
                .saturating_add(rng.random_range(0..1000));
            let text = big.to_string();
            let split = text.len().saturating_sub(3);
            let separator = ["_", ",", "'", " "][rng.random_range(0..4)];
            format!("{}{separator}{}", &text[..split], &text[split..])
        }
        _ => [
            "NaN",
            "nan",
            "inf",
            "-inf",
            "Infinity",
            "-Infinity",
            "infinity",
            "1e309",
        ][rng.random_range(0..8)]
        .to_owned(),
    }
}

/// An integer at the edge of a type, as text (any integer) or as a JSON number (what
/// `i64`, `u64` and `f64` hold).
fn int_edge(rng: &mut StdRng) -> (String, Value) {
    let bits = [31u32, 32, 53, 63, 64][rng.random_range(0..5)];
    let delta: i128 = rng.random_range(-1..=1);
    let magnitude = (1i128 << bits) + delta;
    let value = if rng.random_bool(0.3) {
        -magnitude
    } else {
        magnitude
    };
    let number = match (i64::try_from(value), u64::try_from(value)) {
        (Ok(signed), _) => json!(signed),
        (_, Ok(unsigned)) => json!(unsigned),
        // Past both: the nearest float, which is what a JSON number that size becomes.
        _ => json!(value as f64),
    };
    (value.to_string(), number)
}

/// A float at the edge of `f64`.
fn float_edge(rng: &mut StdRng) -> f64 {
    let edges = [
        f64::MAX,
        1e308,
        -1e308,
        f64::MIN_POSITIVE,
        5e-324,
        -0.0,
        0.1 + 0.2,
        9_007_199_254_740_993.0,
        f64::EPSILON,
    ];
    edges[rng.random_range(0..edges.len())]
}

/// A string around a power of two in length: ASCII, or two-byte characters (in characters).
fn length_limit(rng: &mut StdRng, base: &str) -> String {
    let power = rng.random_range(6..=12u32);
    let length = ((1usize << power) + rng.random_range(0..=2)).saturating_sub(1);
    if rng.random_bool(0.2) && length <= 1024 {
        return "é".repeat(length);
    }
    let unit = if base.is_empty() || rng.random_bool(0.5) {
        "x"
    } else {
        base
    };
    unit.repeat(length / unit.len().max(1) + 1)
        .chars()
        .take(length)
        .collect()
}

/// A value of `class` for a parameter of `kind` whose valid value would be `valid`. A
/// number class gives a string where the parameter is a number (its text), or the number
/// itself as JSON when `as_number` (the edges of the types).
pub(crate) fn value(rng: &mut StdRng, class: Class, kind: Kind, valid: Option<&Value>) -> Value {
    let number = valid
        .and_then(Value::as_i64)
        .unwrap_or_else(|| rng.random_range(1..300));
    let text = match valid {
        Some(Value::String(text)) => text.clone(),
        Some(Value::Number(number)) => number.to_string(),
        Some(Value::Bool(flag)) => flag.to_string(),
        _ => "BTC".to_owned(),
    };
    let numeric = matches!(kind, Kind::Int | Kind::Num);
    match class {
        Class::UnicodeNd if numeric => json!(foreign_digits(rng, number)),
        // Around a number, where a trim would take them away.
        Class::UnicodeZs if numeric && rng.random_bool(0.7) => {
            let pad = class_char(rng, class);
            json!(match rng.random_range(0..3) {
                0 => format!("{pad}{number}"),
                1 => format!("{number}{pad}"),
                _ => format!("{pad}{number}{pad}"),
            })
        }
        Class::UnicodeNo | Class::UnicodeNl if numeric && rng.random_bool(0.5) => {
            json!(class_char(rng, class).to_string())
        }
        Class::UnicodeNd
        | Class::UnicodeNo
        | Class::UnicodeNl
        | Class::UnicodeZs
        | Class::UnicodeMn
        | Class::UnicodeCf => json!(with_class_chars(rng, class, &text)),
        Class::NumericNotation => json!(notation(rng, number)),
        Class::IntEdge => {
            let (text, number) = int_edge(rng);
            if rng.random_bool(0.5) {
                number
            } else {
                json!(text)
            }
        }
        Class::FloatEdge => json!(float_edge(rng)),
        Class::LengthLimit => json!(length_limit(rng, &text)),
        _ => json!(text),
    }
}

#[cfg(test)]
mod tests {
    use rand::SeedableRng;
    use serde_json::Map;

    use super::raw_body::raw_body;
    use super::*;

    #[test]
    fn only_the_texts_rfc_8259_calls_unpredictable_leave_their_handling_open() {
        let open: Vec<&str> = Class::all()
            .filter(|class| handling_left_open(class.name()).is_some())
            .map(Class::name)
            .collect();
        assert_eq!(open, ["lone-surrogate", "duplicate-keys"]);
        assert!(handling_left_open("lone-surrogate").is_some_and(|words| words.contains("8.2")));
        assert!(handling_left_open("no-such-class").is_none());
    }

    #[test]
    fn each_unicode_class_draws_from_its_category() {
        let mut rng = StdRng::seed_from_u64(3);
        for _ in 0..500 {
            let nd = class_char(&mut rng, Class::UnicodeNd);
            assert!(nd.is_numeric() && !nd.is_ascii(), "{nd:?}");
            assert!(nd.to_digit(10).is_none(), "{nd:?} is no ASCII digit");
            for class in [Class::UnicodeNo, Class::UnicodeNl] {
                let c = class_char(&mut rng, class);
                assert!(c.is_numeric() && !c.is_ascii(), "{c:?}");
            }
            let zs = class_char(&mut rng, Class::UnicodeZs);
            assert!(zs.is_whitespace() && !zs.is_ascii(), "{zs:?}");
            let mn = class_char(&mut rng, Class::UnicodeMn);
            assert!(!mn.is_ascii() && !mn.is_whitespace(), "{mn:?}");
            let cf = class_char(&mut rng, Class::UnicodeCf);
            assert!(!cf.is_ascii() && !cf.is_numeric(), "{cf:?}");
        }
    }

    #[test]
    fn values_of_every_class_are_drawn_and_raw_bodies_are_json_or_say_why_not() {
        let mut rng = StdRng::seed_from_u64(5);
        let mut params = Map::new();
        params.insert("currency".to_owned(), json!("BTC"));
        params.insert("count".to_owned(), json!(5));
        for class in Class::all() {
            for _ in 0..50 {
                if RAW_CLASSES.contains(&class) {
                    let body = raw_body(&mut rng, class, "public/get_currencies", &params);
                    let parsed = serde_json::from_str::<Value>(&body.replace("%ID%", "1"));
                    if class == Class::JsonEscape {
                        let parsed = parsed.unwrap();
                        assert_eq!(parsed["params"], Value::Object(params.clone()));
                        assert!(body.contains("%ID%"));
                    } else {
                        assert!(!body.contains("%ID%"), "{body}");
                    }
                } else {
                    for kind in [Kind::Int, Kind::Str, Kind::Num] {
                        let _ = value(&mut rng, class, kind, Some(&json!(5)));
                    }
                }
            }
        }
        let digits = foreign_digits(&mut StdRng::seed_from_u64(1), 250);
        assert_eq!(digits.chars().count(), 3);
        assert!(digits.parse::<i64>().is_err() || digits == "250");
    }
}
