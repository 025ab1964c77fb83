//! The conformance corpus, embedded: every file of this crate's directory that a run reads
//! (`clauses.toml`, `schemas/*.json`, the case files `*/**.toml`, `SPEC.md`), as text
//! compiled into the binary by `build.rs`, with a digest of the whole.
//!
//! The corpus travels with the code: an installed `harness`, a release binary, a container
//! image or a crate built against this one reads these texts and never a path of the source
//! tree. `harness::corpus` parses them; this crate only holds them. The crate's own files
//! (`Cargo.toml`, `build.rs`, `src/`) are not part of the corpus.

/// One file of the corpus.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct File {
    /// Its path relative to the corpus root, with `/` separators (`auth/login.toml`).
    pub path: &'static str,
    /// Its text.
    pub text: &'static str,
}

include!(concat!(env!("OUT_DIR"), "/corpus.rs"));

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_corpus_holds_its_catalog_schemas_cases_and_spec_sorted() {
        let paths: Vec<&str> = FILES.iter().map(|file| file.path).collect();
        assert!(paths.contains(&"clauses.toml"));
        assert!(paths.contains(&"SPEC.md"));
        assert!(paths.iter().any(|path| path.starts_with("schemas/")));
        assert!(paths.iter().any(|path| path.starts_with("auth/")));
        assert!(!paths.contains(&"Cargo.toml"));
        assert!(!paths.iter().any(|path| path.starts_with("src/")));
        let mut sorted = paths.clone();
        sorted.sort_unstable();
        assert_eq!(paths, sorted);
        assert_eq!(DIGEST.len(), 64);
        assert!(DIGEST.bytes().all(|byte| byte.is_ascii_hexdigit()));
    }
}
