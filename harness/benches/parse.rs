//! The JSON parsers the runner could read answers with, on the answer that dominates a
//! run (a 100-entry transaction-log page, about 55 KB) and on a small one
//! (`public/get_currencies`): serde_json as the harness builds it, `simd-json`'s serde
//! bridge and its own value, `sonic-rs`'s serde bridge and its own value. Every candidate
//! must also read large and awkward floats to the same `f64` as Rust's own `str::parse`
//! (the harness's `float_roundtrip` requirement); the bench checks that before timing and
//! prints which candidates keep it. Run with `cargo bench --features bench --bench parse`; the comparison is
//! in BENCHMARKS.md.

use std::hint::black_box;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
mod fixture;

use fixture::transaction_log_page;
use serde_json::{Value, json};

/// A 100-entry transaction-log page as the reference server answers it, in its envelope.
fn transaction_log_answer(entries: usize) -> String {
    json!({"jsonrpc": "2.0", "id": 7, "result": transaction_log_page(entries), "usIn": 1, "usOut": 2, "usDiff": 1, "testnet": false})
        .to_string()
}

const CURRENCIES_ANSWER: &str = r#"{"jsonrpc":"2.0","id":3,"result":[{"currency":"BTC","currency_long":"Bitcoin","min_confirmations":1,"min_withdrawal_fee":0.0001,"withdrawal_fee":0.0001,"withdrawal_priorities":[],"coin_type":"BITCOIN","fee_precision":4},{"currency":"ETH","currency_long":"Ethereum","min_confirmations":1,"min_withdrawal_fee":0.0001,"withdrawal_fee":0.0006,"withdrawal_priorities":[],"coin_type":"ETHER","fee_precision":4}],"usIn":1,"usOut":2,"usDiff":1,"testnet":false}"#;

/// Floats a parser without exact rounding gets wrong by an ulp: long mantissas, values
/// near the subnormal range and near `f64::MAX`, halfway cases.
const AWKWARD_FLOATS: &[&str] = &[
    "0.1",
    "42000.50000000001",
    "1.7976931348623157e308",
    "2.2250738585072011e-308",
    "4.9406564584124654e-324",
    "9007199254740993.0",
    "0.30000000000000004",
    "1.00000000000000011102230246251565404236316680908203125",
    "7.038531e-26",
    "123456789012345678901234567890.123456789",
    "2.4703282292062328e-324",
    "1e23",
    "8.98846567431158e307",
];

/// Each candidate: name, and a function from answer bytes to the parsed answer's `f64`
/// of member `x` (for the float check) after a full parse.
type Float = fn(&[u8]) -> Option<f64>;

fn float_serde_json(bytes: &[u8]) -> Option<f64> {
    serde_json::from_slice::<Value>(bytes).ok()?["x"].as_f64()
}

fn float_simd_json_serde(bytes: &[u8]) -> Option<f64> {
    let mut owned = bytes.to_vec();
    simd_json::serde::from_slice::<Value>(&mut owned).ok()?["x"].as_f64()
}

fn float_simd_json_value(bytes: &[u8]) -> Option<f64> {
    use simd_json::prelude::*;
    let mut owned = bytes.to_vec();
    simd_json::to_owned_value(&mut owned)
        .ok()?
        .get("x")?
        .as_f64()
}

fn float_sonic_serde(bytes: &[u8]) -> Option<f64> {
    sonic_rs::from_slice::<Value>(bytes).ok()?["x"].as_f64()
}

fn float_sonic_value(bytes: &[u8]) -> Option<f64> {
    use sonic_rs::JsonValueTrait;
    sonic_rs::from_slice::<sonic_rs::Value>(bytes)
        .ok()?
        .get("x")?
        .as_f64()
}

const CANDIDATES: &[(&str, Float)] = &[
    ("serde_json", float_serde_json),
    ("simd_json_serde", float_simd_json_serde),
    ("simd_json_value", float_simd_json_value),
    ("sonic_rs_serde", float_sonic_serde),
    ("sonic_rs_value", float_sonic_value),
];

/// Prints, per candidate, the awkward floats it reads to another `f64` than `str::parse`.
fn float_roundtrip_report() {
    for (name, parse) in CANDIDATES {
        let wrong: Vec<String> = AWKWARD_FLOATS
            .iter()
            .filter_map(|text| {
                let exact: f64 = text.parse().ok()?;
                let read = parse(format!("{{\"x\":{text}}}").as_bytes());
                (read.map(f64::to_bits) != Some(exact.to_bits()))
                    .then(|| format!("{text} -> {read:?}"))
            })
            .collect();
        if wrong.is_empty() {
            eprintln!(
                "float round-trip: {name}: all {} exact",
                AWKWARD_FLOATS.len()
            );
        } else {
            eprintln!("float round-trip: {name}: WRONG {}", wrong.join("; "));
        }
    }
}

fn parsers(c: &mut Criterion) {
    float_roundtrip_report();
    for (label, answer) in [
        ("transaction_log_100", transaction_log_answer(100)),
        ("get_currencies", CURRENCIES_ANSWER.to_owned()),
    ] {
        let bytes = answer.as_bytes();
        let mut group = c.benchmark_group(format!("parse/{label}"));
        group.throughput(Throughput::Bytes(bytes.len() as u64));
        group.bench_function("serde_json", |b| {
            b.iter(|| serde_json::from_slice::<Value>(black_box(bytes)).expect("json"));
        });
        // simd-json parses in place: the copy of the bytes is part of its cost, since the
        // runner keeps the received bytes for the report.
        group.bench_function("simd_json_serde", |b| {
            b.iter(|| {
                let mut owned = black_box(bytes).to_vec();
                simd_json::serde::from_slice::<Value>(&mut owned).expect("json")
            });
        });
        group.bench_function("simd_json_value", |b| {
            b.iter(|| {
                let mut owned = black_box(bytes).to_vec();
                simd_json::to_owned_value(&mut owned).expect("json")
            });
        });
        group.bench_function("sonic_rs_serde", |b| {
            b.iter(|| sonic_rs::from_slice::<Value>(black_box(bytes)).expect("json"));
        });
        group.bench_function("sonic_rs_value", |b| {
            b.iter(|| sonic_rs::from_slice::<sonic_rs::Value>(black_box(bytes)).expect("json"));
        });
        group.finish();
    }
}

criterion_group!(benches, parsers);
criterion_main!(benches);
