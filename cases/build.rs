//! Embeds the corpus: writes `$OUT_DIR/corpus.rs` with one `include_str!` per corpus file
//! (sorted by path) and the SHA-256 digest of them all, and asks Cargo to run again when
//! anything in the directory changes.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};

/// Files and directories of the crate itself, not of the corpus.
const NOT_CORPUS: &[&str] = &["Cargo.toml", "build.rs", "src", "target"];

fn main() {
    let root = PathBuf::from(std::env::var_os("CARGO_MANIFEST_DIR").expect("set by Cargo"));
    println!("cargo::rerun-if-changed={}", root.display());
    let mut files = Vec::new();
    collect(&root, &root, &mut files);
    files.sort();
    let mut digest = Sha256::new();
    let mut code = String::from(
        "/// Every file of the corpus, sorted by path.\npub static FILES: &[File] = &[\n",
    );
    for (relative, absolute) in &files {
        let text = std::fs::read_to_string(absolute)
            .unwrap_or_else(|error| panic!("{}: {error}", absolute.display()));
        digest.update(relative.as_bytes());
        digest.update([0]);
        digest.update((text.len() as u64).to_le_bytes());
        digest.update(text.as_bytes());
        let _ = writeln!(
            code,
            "    File {{ path: {relative:?}, text: include_str!({:?}) }},",
            absolute.display().to_string()
        );
    }
    let hex: String = digest
        .finalize()
        .iter()
        .map(|byte| format!("{byte:02x}"))
        .collect();
    let _ = writeln!(
        code,
        "];\n\n/// SHA-256 over every file's path, length and text, in order (lower-case hex).\npub const DIGEST: &str = {hex:?};"
    );
    let out = PathBuf::from(std::env::var_os("OUT_DIR").expect("set by Cargo")).join("corpus.rs");
    std::fs::write(&out, code).unwrap_or_else(|error| panic!("{}: {error}", out.display()));
}

/// Collects the corpus files under `dir`: TOML, JSON and `SPEC.md`.
fn collect(root: &Path, dir: &Path, files: &mut Vec<(String, PathBuf)>) {
    let entries =
        std::fs::read_dir(dir).unwrap_or_else(|error| panic!("{}: {error}", dir.display()));
    for entry in entries {
        let path = entry.expect("a directory entry").path();
        let relative = path
            .strip_prefix(root)
            .expect("under the root")
            .components()
            .map(|part| part.as_os_str().to_string_lossy().into_owned())
            .collect::<Vec<_>>()
            .join("/");
        if dir == root && NOT_CORPUS.contains(&relative.as_str()) {
            continue;
        }
        if path.is_dir() {
            collect(root, &path, files);
        } else if relative == "SPEC.md"
            || path
                .extension()
                .is_some_and(|ext| ext == "toml" || ext == "json")
        {
            files.push((relative, path));
        }
    }
}
