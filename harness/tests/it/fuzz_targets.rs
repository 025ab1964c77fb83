//! Replays every committed fuzz input: the seed corpus (`fuzz/corpus/seed/<target>/`) and
//! the crashes found and fixed (`fuzz/regressions/<target>/`). Each regression file's bug is
//! described in `fuzz/regressions/README.md`. The targets are two tables: the parsers' and
//! signers' of `harness_model::fuzz_targets`, and the reference server's of
//! `harness_server::serve::fuzz_targets`.

use std::path::{Path, PathBuf};

use harness_model::fuzz_targets::{TARGETS as PARSE_AND_SIGN, target_parse_roundtrip};
use harness_server::serve::fuzz_targets::TARGETS as SERVER;

/// Every target's name, with the crate path its `fuzz_targets/<name>.rs` calls.
fn targets() -> impl Iterator<Item = (&'static str, &'static str)> {
    let parse = PARSE_AND_SIGN
        .iter()
        .map(|(name, _)| (*name, "harness_model::fuzz_targets"));
    let server = SERVER
        .iter()
        .map(|(name, _)| (*name, "harness_server::serve::fuzz_targets"));
    parse.chain(server)
}

/// Runs the named target's property, its broken rule as text; `None` for an unknown name.
fn run(name: &str, data: &[u8]) -> Option<Result<(), String>> {
    let parse = PARSE_AND_SIGN
        .iter()
        .find(|(target_name, _)| *target_name == name)
        .map(|(_, property)| property(data).map_err(|error| error.to_string()));
    parse.or_else(|| {
        SERVER
            .iter()
            .find(|(target_name, _)| *target_name == name)
            .map(|(_, property)| property(data).map_err(|error| error.to_string()))
    })
}

fn fuzz_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../fuzz")
}

/// Every file under `<root>/<target>/`, by target.
fn inputs(root: &Path) -> Vec<(String, PathBuf)> {
    let mut found = Vec::new();
    let Ok(targets) = std::fs::read_dir(root) else {
        return found;
    };
    for target in targets {
        let target = target.unwrap().path();
        if !target.is_dir() {
            continue;
        }
        let name = target.file_name().unwrap().to_string_lossy().into_owned();
        for input in std::fs::read_dir(&target).unwrap() {
            found.push((name.clone(), input.unwrap().path()));
        }
    }
    found.sort();
    found
}

fn replay(root: &Path) -> usize {
    let found = inputs(root);
    for (name, path) in &found {
        let data = std::fs::read(path).unwrap();
        let outcome = run(name, &data);
        assert!(
            outcome.is_some(),
            "{}: no fuzz target named {name}",
            path.display()
        );
        assert_eq!(outcome, Some(Ok(())), "{}", path.display());
    }
    found.len()
}

#[test]
fn committed_regressions_hold() {
    replay(&fuzz_dir().join("regressions"));
}

#[test]
fn seed_corpus_holds_and_covers_every_target() {
    let seeds = fuzz_dir().join("corpus/seed");
    assert!(replay(&seeds) > 0, "no seeds under {}", seeds.display());
    for (name, _) in targets() {
        assert!(
            seeds.join(name).is_dir(),
            "target {name} has no seed directory"
        );
    }
}

#[test]
fn every_target_has_a_fuzz_target_file() {
    let mut files = 0;
    for (name, path) in targets() {
        let file = fuzz_dir().join(format!("fuzz_targets/{name}.rs"));
        let text = std::fs::read_to_string(&file).unwrap();
        files += 1;
        assert!(
            text.contains(&format!("{path}::{name}(data)")),
            "{}",
            file.display()
        );
    }
    let on_disk = std::fs::read_dir(fuzz_dir().join("fuzz_targets"))
        .unwrap()
        .count();
    assert_eq!(
        files, on_disk,
        "a file of fuzz/fuzz_targets/ has no property"
    );
}

#[test]
fn fixed_crash_holds_and_unknown_target_is_none() {
    // Not UTF-8 and not a target file: refused, which the property accepts.
    target_parse_roundtrip(b"\xff");
    let crash = std::fs::read(
        fuzz_dir().join("regressions/target_parse_roundtrip/base-url-only-slashes.toml"),
    )
    .unwrap();
    assert_eq!(run("target_parse_roundtrip", &crash), Some(Ok(())));
    assert_eq!(run("no_such_target", b""), None);
}

/// `fuzz/options/<target>.options` is what `.clusterfuzzlite/build.sh` copies beside each
/// binary: a `[libfuzzer]` section of `flag = value` lines; a dictionary it names must be in
/// `fuzz/dict/`.
#[test]
fn every_options_file_names_a_target_and_its_dictionary_exists() {
    let options = fuzz_dir().join("options");
    let mut seen = 0;
    for entry in std::fs::read_dir(&options).unwrap() {
        let path = entry.unwrap().path();
        let name = path.file_stem().unwrap().to_string_lossy().into_owned();
        assert!(
            targets().any(|(target, _)| target == name),
            "{}: no fuzz target named {name}",
            path.display()
        );
        let text = std::fs::read_to_string(&path).unwrap();
        assert_eq!(
            text.lines().next(),
            Some("[libfuzzer]"),
            "{}",
            path.display()
        );
        for line in text.lines().skip(1) {
            let (key, value) = line.split_once(" = ").expect("key = value");
            assert!(
                !key.is_empty() && key.chars().all(|c| c.is_ascii_lowercase() || c == '_'),
                "{}: {line} is not a libFuzzer flag",
                path.display()
            );
            if key == "dict" {
                assert!(fuzz_dir().join("dict").join(value).is_file(), "{line}");
            }
        }
        seen += 1;
    }
    assert!(seen > 0, "no options file under {}", options.display());
}
