//! Matchers on JSON paths, as case files write them: `result.logs[*].type`,
//! `result.token_type`, `error.code`. A path with `[*]` applies the matcher to every
//! element; a path that leads nowhere yields `None`, which only `exists = false` accepts.

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// One expectation on the value(s) at a path of the response envelope.
#[derive(Clone, Debug, Default, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct Matcher {
    /// Dotted path from the envelope root, with `[n]` and `[*]` for arrays.
    pub path: String,
    /// The value equals this.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub equals: Option<Value>,
    /// The value differs from this.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub not_equals: Option<Value>,
    /// The value is one of these.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub one_of: Option<Vec<Value>>,
    /// The JSON type: string, integer, number, boolean, null, array or object.
    #[serde(rename = "type", skip_serializing_if = "Option::is_none")]
    pub json_type: Option<String>,
    /// Whether the path leads to a value (`false`: it must not).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub exists: Option<bool>,
    /// Only a value that is there is checked: an absent one passes (for a step whose
    /// outcome is open, whose result, when there is one, must still hold).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub optional: bool,
    /// Exact length of an array or string.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub len: Option<usize>,
    /// Minimum length of an array or string.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub len_min: Option<usize>,
    /// Maximum length of an array or string.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub len_max: Option<usize>,
    /// Minimum of a number.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub min: Option<f64>,
    /// Maximum of a number.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max: Option<f64>,
    /// A substring of a string value, or a word of a space-separated one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub contains: Option<String>,
    /// A word of a space-separated string value (a granted scope) is exactly this: where
    /// `contains` would also take a longer word that starts with it (`session:a-2` for
    /// `session:a`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub word: Option<String>,
    /// The value, or a value nested anywhere inside it, equals this: for what SPEC.md says
    /// a response returns without showing under which name.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub holds: Option<Value>,
    /// The value is an object holding each of these members: for the entries of a list a
    /// record may leave out (`optional`), where a path through the member would not tell
    /// an absent list from an entry without it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub keys: Option<Vec<String>>,
    /// The value equals an element of this array (in case files, a template naming a list
    /// captured by an earlier step).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub among: Option<Value>,
    /// The value equals no element of this array (in case files, a template naming a list
    /// the target file gives: the order states it names open).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub not_among: Option<Value>,
    /// With `equals`: two numbers (templates, in case files) whose distance is a tolerance,
    /// strictly within which a number counts as equal: a price a server may round to a tick
    /// SPEC.md does not give, within a book's spread, which no tick exceeds. Without two
    /// numbers the comparison is exact.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub within_gap_of: Option<Value>,
    /// Judge only the values whose object holds this member with this value (in case files,
    /// `only_where = { type = "delivery" }`): a rule of the entries of one type.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub only_where: Option<serde_json::Map<String, Value>>,
    /// The name of a timestamp (ms) beside each value found: a value whose object holds it
    /// positive and not later than now is not judged (a time that has passed: an MMP status
    /// `frozen_until` a moment gone is no longer triggered, SPEC.md 2.4, 4.6).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub unless_elapsed: Option<String>,
    /// The time `unless_elapsed` compares with (ms), set by the runner when it resolves the
    /// matcher; without it nothing counts as elapsed.
    #[serde(skip)]
    pub now_ms: Option<u64>,
    /// The clauses this matcher checks, when they differ from the step's.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub clauses: Option<Vec<String>>,
}

/// The values at a path: each concrete path with the value found there (`None` if absent).
pub fn lookup<'a>(root: &'a Value, path: &str) -> Vec<(String, Option<&'a Value>)> {
    let mut current: Vec<(String, Option<&Value>)> = vec![(String::new(), Some(root))];
    for segment in segments(path) {
        let mut next = Vec::new();
        for (at, value) in current {
            match (&segment, value) {
                (Segment::Key(key), Some(Value::Object(object))) => {
                    next.push((join(&at, key), object.get(key.as_str())));
                }
                (Segment::Index(index), Some(Value::Array(items))) => {
                    next.push((format!("{at}[{index}]"), items.get(*index)));
                }
                (Segment::All, Some(Value::Array(items))) => {
                    next.extend(
                        items
                            .iter()
                            .enumerate()
                            .map(|(index, item)| (format!("{at}[{index}]"), Some(item))),
                    );
                }
                (Segment::Key(key), _) => next.push((join(&at, key), None)),
                (Segment::Index(index), _) => next.push((format!("{at}[{index}]"), None)),
                (Segment::All, _) => next.push((format!("{at}[*]"), None)),
            }
        }
        current = next;
    }
    current
}

enum Segment {
    Key(String),
    Index(usize),
    All,
}

fn segments(path: &str) -> Vec<Segment> {
    let mut out = Vec::new();
    for part in path.split('.').filter(|part| !part.is_empty()) {
        let (name, mut brackets) = part
            .split_once('[')
            .map_or((part, ""), |(name, rest)| (name, rest));
        if !name.is_empty() {
            out.push(Segment::Key(name.to_owned()));
        }
        while let Some((inside, rest)) = brackets.split_once(']') {
            out.push(match inside {
                "*" => Segment::All,
                number => number
                    .parse()
                    .map_or_else(|_| Segment::Key(number.to_owned()), Segment::Index),
            });
            brackets = rest.strip_prefix('[').unwrap_or(rest);
        }
    }
    out
}

fn join(at: &str, key: &str) -> String {
    if at.is_empty() {
        key.to_owned()
    } else {
        format!("{at}.{key}")
    }
}

/// The JSON type name of a value, distinguishing integers from other numbers.
pub(crate) fn type_name(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(number) if number.is_i64() || number.is_u64() => "integer",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

impl Matcher {
    /// Checks the matcher against a response; each returned string is one mismatch.
    pub fn check(&self, root: &Value) -> Vec<String> {
        let found = lookup(root, &self.path);
        let mut mismatches = Vec::new();
        for (at, value) in &found {
            if self.elapsed_beside(root, at) || !self.selected(root, at) {
                continue;
            }
            match (value, self.exists) {
                (None, Some(false)) => continue,
                (None, _) if self.optional => continue,
                (Some(value), Some(false)) => {
                    mismatches.push(format!("{at} is {} but must be absent", short(value)));
                    continue;
                }
                (None, _) => {
                    mismatches.push(format!("{at} is absent"));
                    continue;
                }
                (Some(_), _) => {}
            }
            let Some(value) = value else { continue };
            if let Some(problem) = self.check_value(value) {
                mismatches.push(format!("{at} {problem}"));
            }
        }
        mismatches
    }

    /// Whether the object holding the value at `at` holds every member of `only_where`
    /// with its value (always, without `only_where`).
    fn selected(&self, root: &Value, at: &str) -> bool {
        let Some(wanted) = &self.only_where else {
            return true;
        };
        let parent = at.rsplit_once('.').map_or("", |(parent, _)| parent);
        wanted.iter().all(|(member, expected)| {
            lookup(root, &join(parent, member))
                .first()
                .and_then(|(_, value)| *value)
                .is_some_and(|value| loosely_equal(value, expected))
        })
    }

    /// Whether the object holding the value at `at` has the `unless_elapsed` timestamp,
    /// positive and not later than now.
    fn elapsed_beside(&self, root: &Value, at: &str) -> bool {
        let Some(field) = &self.unless_elapsed else {
            return false;
        };
        let parent = at.rsplit_once('.').map_or("", |(parent, _)| parent);
        let Some(now) = self.now_ms else {
            return false;
        };
        lookup(root, &join(parent, field))
            .first()
            .and_then(|(_, value)| value.and_then(Value::as_u64))
            .is_some_and(|timestamp| timestamp > 0 && timestamp <= now)
    }

    /// Whether two numbers lie strictly closer than the distance between the two numbers of
    /// `within_gap_of`.
    fn within_gap(&self, value: &Value, expected: &Value) -> bool {
        let Some(Value::Array(ends)) = &self.within_gap_of else {
            return false;
        };
        let numbers: Vec<f64> = ends.iter().filter_map(Value::as_f64).collect();
        match (value.as_f64(), expected.as_f64(), numbers.as_slice()) {
            (Some(value), Some(expected), [low, high]) => {
                (value - expected).abs() < (high - low).abs()
            }
            _ => false,
        }
    }

    /// The first way `value` misses the matcher, checked in a fixed order: what it is,
    /// its size, what it holds or is among, its text.
    fn check_value(&self, value: &Value) -> Option<String> {
        self.identity_mismatch(value)
            .or_else(|| self.size_mismatch(value))
            .or_else(|| self.membership_mismatch(value))
            .or_else(|| self.text_mismatch(value))
    }

    /// `equals`, `not_equals`, `one_of`, `type`.
    fn identity_mismatch(&self, value: &Value) -> Option<String> {
        if let Some(expected) = &self.equals
            && !loosely_equal(value, expected)
            && !self.within_gap(value, expected)
        {
            return value_is(value, format!("expected {}", short(expected)));
        }
        if let Some(unexpected) = &self.not_equals
            && loosely_equal(value, unexpected)
        {
            return value_is(value, "expected anything else".to_owned());
        }
        if let Some(allowed) = &self.one_of
            && !allowed
                .iter()
                .any(|candidate| loosely_equal(value, candidate))
        {
            let list: Vec<String> = allowed.iter().map(short).collect();
            return value_is(value, format!("expected one of {}", list.join(", ")));
        }
        if let Some(expected) = &self.json_type {
            let actual = type_name(value);
            let fits = actual == expected || (expected == "number" && actual == "integer");
            if !fits {
                return Some(format!("is of type {actual}, expected {expected}"));
            }
        }
        None
    }

    /// `len`, `len_min`, `len_max`, `min`, `max`.
    fn size_mismatch(&self, value: &Value) -> Option<String> {
        let length = match value {
            Value::Array(items) => Some(items.len()),
            Value::String(text) => Some(text.chars().count()),
            _ => None,
        };
        if self.len.is_some() || self.len_min.is_some() || self.len_max.is_some() {
            let Some(length) = length else {
                return value_is(value, "which has no length".to_owned());
            };
            if let Some(expected) = self.len.filter(|expected| length != *expected) {
                return Some(format!("has length {length}, expected {expected}"));
            }
            if let Some(minimum) = self.len_min.filter(|minimum| length < *minimum) {
                return Some(format!("has length {length}, expected at least {minimum}"));
            }
            if let Some(maximum) = self.len_max.filter(|maximum| length > *maximum) {
                return Some(format!("has length {length}, expected at most {maximum}"));
            }
        }
        if self.min.is_some() || self.max.is_some() {
            let Some(number) = value.as_f64() else {
                return value_is(value, "expected a number".to_owned());
            };
            if let Some(minimum) = self.min.filter(|minimum| number < *minimum) {
                return Some(format!("is {number}, expected at least {minimum}"));
            }
            if let Some(maximum) = self.max.filter(|maximum| number > *maximum) {
                return Some(format!("is {number}, expected at most {maximum}"));
            }
        }
        None
    }

    /// `holds`, `keys`, `among`, `not_among`.
    fn membership_mismatch(&self, value: &Value) -> Option<String> {
        if let Some(needle) = &self.holds
            && !holds(value, needle)
        {
            return value_is(value, format!("which holds no {} anywhere", short(needle)));
        }
        if let Some(keys) = &self.keys {
            let Some(object) = value.as_object() else {
                return value_is(value, "expected an object".to_owned());
            };
            if let Some(missing) = keys.iter().find(|key| !object.contains_key(key.as_str())) {
                return value_is(value, format!("which has no member {missing}"));
            }
        }
        if let Some(list) = &self.among {
            let Some(items) = list.as_array() else {
                return Some(format!(
                    "cannot be looked up in {}, not a list",
                    short(list)
                ));
            };
            if !items.iter().any(|item| loosely_equal(value, item)) {
                return value_is(value, format!("which is not among {}", short(list)));
            }
        }
        if let Some(list) = &self.not_among {
            let Some(items) = list.as_array() else {
                return Some(format!(
                    "cannot be looked up in {}, not a list",
                    short(list)
                ));
            };
            if items.iter().any(|item| loosely_equal(value, item)) {
                return value_is(value, format!("which is among {}", short(list)));
            }
        }
        None
    }

    /// `word`, `contains`.
    fn text_mismatch(&self, value: &Value) -> Option<String> {
        if let Some(word) = &self.word {
            let Some(text) = value.as_str() else {
                return value_is(value, format!("expected a string with the word \"{word}\""));
            };
            if !text.split_whitespace().any(|found| found == word) {
                return Some(format!(
                    "is \"{text}\", expected the word \"{word}\" among its words"
                ));
            }
        }
        if let Some(needle) = &self.contains {
            let Some(text) = value.as_str() else {
                return value_is(value, format!("expected a string containing \"{needle}\""));
            };
            if !text.contains(needle.as_str()) {
                return Some(format!(
                    "is \"{text}\", expected it to contain \"{needle}\""
                ));
            }
        }
        None
    }
}

/// A mismatch of `value`: `is <value>, <expectation>`.
fn value_is(value: &Value, expectation: String) -> Option<String> {
    Some(format!("is {}, {expectation}", short(value)))
}

/// Whether `value` is `needle` or holds it at any depth.
pub fn holds(value: &Value, needle: &Value) -> bool {
    loosely_equal(value, needle)
        || match value {
            Value::Array(items) => items.iter().any(|item| holds(item, needle)),
            Value::Object(object) => object.values().any(|member| holds(member, needle)),
            _ => false,
        }
}

/// Equality where integers and floats of the same value are equal.
fn loosely_equal(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => x == y || x.as_f64() == y.as_f64(),
        _ => a == b,
    }
}

/// A value shortened for a message.
pub fn short(value: &Value) -> String {
    let text = value.to_string();
    if text.len() > 80 {
        let cut = (0..=77)
            .rev()
            .find(|&index| text.is_char_boundary(index))
            .unwrap_or(0);
        format!("{}...", &text[..cut])
    } else {
        text
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn unless_elapsed_leaves_out_only_a_time_that_has_passed() {
        let check = Matcher {
            path: "result[*].index_name".to_owned(),
            among: Some(json!([])),
            unless_elapsed: Some("frozen_until".to_owned()),
            now_ms: Some(1_000),
            ..Matcher::default()
        };
        let entry = |frozen_until: u64| json!({"result": [{"index_name": "btc_usd", "frozen_until": frozen_until}]});
        assert!(check.check(&entry(1)).is_empty());
        assert!(check.check(&entry(1_000)).is_empty());
        assert_eq!(check.check(&entry(0)).len(), 1);
        assert_eq!(check.check(&entry(1_001)).len(), 1);
    }

    #[test]
    fn keys_need_every_member_of_each_object_found_and_optional_leaves_out_an_absent_list() {
        let check = Matcher {
            path: "result[*].networks[*]".to_owned(),
            keys: Some(vec!["resource_name".to_owned()]),
            optional: true,
            ..Matcher::default()
        };
        let named = json!({"result": [{"networks": [{"resource_name": "eth"}]}, {"code": "BTC"}]});
        assert!(check.check(&named).is_empty());
        let unnamed =
            json!({"result": [{"networks": [{"resource_name": "eth"}, {"name": "sol"}]}]});
        assert_eq!(check.check(&unnamed).len(), 1);
        assert_eq!(
            check
                .check(&json!({"result": [{"networks": ["eth"]}]}))
                .len(),
            1
        );
    }

    #[test]
    fn a_word_matches_one_whole_word_not_a_longer_one_starting_with_it() {
        let check = Matcher {
            path: "result.scope".to_owned(),
            word: Some("session:a".to_owned()),
            ..Matcher::default()
        };
        let scope = |scope: &str| json!({"result": {"scope": scope}});
        assert!(check.check(&scope("trade:read session:a")).is_empty());
        assert_eq!(check.check(&scope("session:a-r2 trade:read")).len(), 1);
        assert_eq!(check.check(&json!({"result": {"scope": 1}})).len(), 1);
    }

    fn matcher(path: &str) -> Matcher {
        Matcher {
            path: path.to_owned(),
            ..Matcher::default()
        }
    }

    #[test]
    fn wildcard_applies_to_every_element() {
        let root = json!({"result": {"logs": [{"type": "trade"}, {"type": 5}]}});
        let check = Matcher {
            json_type: Some("string".to_owned()),
            ..matcher("result.logs[*].type")
        };
        assert_eq!(
            check.check(&root),
            vec!["result.logs[1].type is of type integer, expected string"]
        );
    }

    #[test]
    fn absent_path_fails_unless_absence_expected() {
        let root = json!({"result": {}});
        assert_eq!(matcher("result.x").check(&root), vec!["result.x is absent"]);
        assert!(
            Matcher {
                exists: Some(false),
                ..matcher("result.x")
            }
            .check(&root)
            .is_empty()
        );
    }

    #[test]
    fn within_gap_of_tolerates_less_than_the_gap_and_nothing_without_two_numbers() {
        let near = |gap: Value| Matcher {
            path: "result".to_owned(),
            equals: Some(json!(100.0)),
            within_gap_of: Some(gap),
            ..Matcher::default()
        };
        let root = json!({ "result": 100.3 });
        assert!(near(json!([99.9, 100.1])).check(&root).len() == 1);
        assert!(near(json!([99.5, 100.5])).check(&root).is_empty());
        assert!(near(json!([99.5, null])).check(&root).len() == 1);
        assert!(near(json!([])).check(&root).len() == 1);
        assert!(
            near(json!([99.5, 100.5]))
                .check(&json!({ "result": "100.3" }))
                .len()
                == 1
        );
    }

    #[test]
    fn only_where_judges_the_entries_of_one_type_only() {
        let matcher = Matcher {
            path: "result.logs[*].index_price".to_owned(),
            exists: Some(true),
            only_where: serde_json::from_value(json!({ "type": "delivery" })).ok(),
            ..Matcher::default()
        };
        let root = json!({ "result": { "logs": [
            { "type": "trade" },
            { "type": "delivery", "index_price": 1.0 },
            { "type": "delivery" },
        ] } });
        let mismatches = matcher.check(&root);
        assert_eq!(mismatches.len(), 1, "{mismatches:?}");
        assert!(mismatches[0].contains("logs[2]"), "{mismatches:?}");
    }

    #[test]
    fn equals_treats_1_and_1_0_alike() {
        let root = json!({"a": 1.0});
        assert!(
            Matcher {
                equals: Some(json!(1)),
                ..matcher("a")
            }
            .check(&root)
            .is_empty()
        );
    }

    #[test]
    fn holds_finds_a_value_at_any_depth() {
        let root = json!({"result": {"access_token": "t", "extra": {"echo": ["x", "data 42"]}}});
        let holding = |needle: Value| Matcher {
            holds: Some(needle),
            ..matcher("result")
        };
        assert!(holding(json!("data 42")).check(&root).is_empty());
        let missing = holding(json!("data 43")).check(&root);
        assert_eq!(missing.len(), 1);
        assert!(missing[0].contains("holds no \"data 43\""), "{missing:?}");
    }

    #[test]
    fn not_among_refuses_each_value_in_the_list_and_an_empty_list_refuses_none() {
        let not_among = |list: Value| Matcher {
            path: "result.order_state".to_owned(),
            not_among: Some(list),
            ..Matcher::default()
        };
        let root = json!({"result": {"order_state": "open"}});
        assert!(not_among(json!(["cancelled"])).check(&root).is_empty());
        assert!(not_among(json!([])).check(&root).is_empty());
        assert_eq!(
            not_among(json!(["untriggered", "open"])).check(&root),
            vec!["result.order_state is \"open\", which is among [\"untriggered\",\"open\"]"]
        );
        assert_eq!(not_among(json!("open")).check(&root).len(), 1);
    }

    #[test]
    fn among_requires_each_value_in_the_list() {
        let root = json!({"result": [{"i": "btc_usd"}, {"i": "eth_usdc"}]});
        let among = |list: Value| Matcher {
            among: Some(list),
            ..matcher("result[*].i")
        };
        assert!(
            among(json!(["eth_usdc", "btc_usd", "x"]))
                .check(&root)
                .is_empty()
        );
        assert_eq!(
            among(json!(["btc_usd"])).check(&root),
            vec!["result[1].i is \"eth_usdc\", which is not among [\"btc_usd\"]"]
        );
        assert_eq!(among(json!("btc_usd")).check(&root).len(), 2);
    }

    #[test]
    fn length_and_bounds() {
        let root = json!({"a": [1, 2, 3], "n": 7});
        assert_eq!(
            Matcher {
                len_max: Some(2),
                ..matcher("a")
            }
            .check(&root),
            vec!["a has length 3, expected at most 2"]
        );
        assert_eq!(
            Matcher {
                max: Some(5.0),
                ..matcher("n")
            }
            .check(&root),
            vec!["n is 7, expected at most 5"]
        );
        assert!(
            Matcher {
                len: Some(3),
                ..matcher("a")
            }
            .check(&root)
            .is_empty()
        );
    }

    #[test]
    fn index_segments() {
        let root = json!({"a": [[1, 2], [3]]});
        assert_eq!(
            lookup(&root, "a[0][1]"),
            vec![("a[0][1]".to_owned(), Some(&json!(2)))]
        );
    }
}
