//! Micro-benchmarks of the harness's own per-request work: signing (both schemes),
//! envelope parsing and validation, schema validation of a transaction-log page, and
//! case-file loading. Run with `cargo bench --features bench --bench core`; figures go in BENCHMARKS.md.

use std::hint::black_box;
use std::path::Path;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use harness::auth::sign;
use harness::check::{Catalog, SchemaSet};
use harness::jsonrpc;
mod fixture;

use fixture::transaction_log_page;
use serde_json::Value;

fn cases_dir() -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../cases")
}

fn signing(c: &mut Criterion) {
    let mut group = c.benchmark_group("sign");
    group.throughput(Throughput::Elements(1));
    group.bench_function("client_signature", |b| {
        b.iter(|| {
            sign::client_signature(
                black_box("AMANDASECRECT"),
                black_box(1_576_074_319_000),
                black_box("1iqt2wls"),
                black_box(""),
            )
        });
    });
    group.bench_function("client_signature_prepared_key", |b| {
        let signer = sign::Signer::new("AMANDASECRECT");
        b.iter(|| {
            signer.client_signature(
                black_box(1_576_074_319_000),
                black_box("1iqt2wls"),
                black_box(""),
            )
        });
    });
    group.bench_function("http_signature", |b| {
        b.iter(|| {
            sign::http_signature(
                black_box("AMANDASECRECT"),
                &sign::HttpSignedFields {
                    timestamp: black_box(1_576_074_319_000),
                    nonce: black_box("1iqt2wls"),
                    method: "GET",
                    uri: black_box("/api/v2/private/get_account_summary?currency=BTC"),
                    body: b"",
                },
            )
        });
    });
    group.bench_function("signed_header_parse", |b| {
        let header = "svc-hmac-sha256 id=client,ts=1576074319000,nonce=1iqt2wls,sig=9bfbc51a2bc372d72cc396cf1a213dc78d42eb74cb7dc272351833ad0de276ab";
        b.iter(|| sign::SignedHeader::parse(black_box(header), sign::DEFAULT_SCHEME));
    });
    group.finish();
}

fn envelope_and_schema(c: &mut Criterion) {
    let schemas = SchemaSet::load(&cases_dir().join("schemas")).expect("schemas load");
    let page = transaction_log_page(100);
    let response = jsonrpc::success(Value::from(7), page.clone()).to_string();
    let mut group = c.benchmark_group("check");
    group.throughput(Throughput::Elements(1));
    group.bench_function("parse_request", |b| {
        let request = br#"{"jsonrpc":"2.0","id":7,"method":"private/get_transaction_log","params":{"currency":"BTC","count":100}}"#;
        b.iter(|| jsonrpc::parse_request(black_box(request)).is_ok());
    });
    group.bench_function("parse_and_validate_response_100_entries", |b| {
        b.iter(|| {
            let value: Value = serde_json::from_str(black_box(&response)).expect("json");
            jsonrpc::validate_response(&value, Some(7))
        });
    });
    group.bench_function("schema_transaction_log_page_100_entries", |b| {
        b.iter(|| schemas.validate("method.private.get_transaction_log", black_box(&page)));
    });
    group.finish();
}

fn case_loading(c: &mut Criterion) {
    let dir = cases_dir();
    let catalog = Catalog::load(&dir.join("clauses.toml")).expect("catalog loads");
    let schemas = SchemaSet::load(&dir.join("schemas")).expect("schemas load");
    let mut group = c.benchmark_group("load");
    group.sample_size(20);
    group.bench_function("discover_corpus", |b| {
        b.iter(|| {
            harness::case::discover(black_box(&dir), &catalog, &schemas).expect("corpus loads")
        });
    });
    group.bench_function("compile_schemas", |b| {
        b.iter(|| SchemaSet::load(black_box(&dir.join("schemas"))).expect("schemas load"));
    });
    group.finish();
}

criterion_group!(benches, signing, envelope_and_schema, case_loading);
criterion_main!(benches);
