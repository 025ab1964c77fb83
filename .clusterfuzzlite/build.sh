#!/bin/bash -eu
# Builds every cargo-fuzz target of fuzz/ into $OUT, with what the fuzzing engine reads beside
# each binary:
#   <target>_seed_corpus.zip  fuzz/corpus/seed/<target>/ and fuzz/regressions/<target>/
#   <target>.options          fuzz/options/<target>.options ([libfuzzer] flags), where there is one
#   <target>.dict             the dictionary of fuzz/dict/ its options file names
#
# ClusterFuzzLite and OSS-Fuzz run it in gcr.io/oss-fuzz-base/base-builder-rust with the
# repository as the working directory (oss-fuzz/build.sh calls this file).
# .clusterfuzzlite/check-build runs it outside Docker, which is how CI proves it works.
#
# Environment:
#   OUT                 where the fuzzers go (set by the builder image)
#   WORK                scratch space (set by the builder image; default: a temporary directory)
#   SANITIZER           address (the image's default), coverage (the image's cargo wrapper turns
#                       `cargo fuzz build` into an instrumented `cargo build`), or none: no
#                       sanitizer, which builds on the stable toolchain outside Docker
#   FUZZ_CODEGEN_UNITS  cargo fuzz build --codegen-units (CI: 16, half the build time)
#   CARGO_TARGET_DIR    where cargo builds (default: fuzz/target)
set -euo pipefail

if [[ ! -f fuzz/Cargo.toml ]]; then
  echo "build.sh: run from the repository root (no fuzz/Cargo.toml in $PWD)" >&2
  exit 1
fi
cd fuzz

# `-O` as OSS-Fuzz's Rust guide builds; `--debug-assertions` keeps the overflow checks and
# debug assertions a plain `cargo fuzz build` has, so integer overflows are crashes too.
flags=(-O --debug-assertions --features server)
sanitizer=${SANITIZER:-address}
case "$sanitizer" in
  address | none) flags+=(--sanitizer "$sanitizer") ;;
  coverage) ;;
  *)
    echo "build.sh: sanitizer \"$sanitizer\" is not built for Rust (address, coverage or none)" >&2
    exit 1
    ;;
esac
if [[ -n "${FUZZ_CODEGEN_UNITS:-}" ]]; then
  flags+=(--codegen-units "$FUZZ_CODEGEN_UNITS")
fi
cargo fuzz build "${flags[@]}"

triple=$(rustc -vV | sed -n 's/^host: //p')
binaries="${CARGO_TARGET_DIR:-target}/$triple/release"
work=${WORK:-$(mktemp -d)}
targets=$(cargo fuzz list)
if [[ -z "$targets" ]]; then
  echo "build.sh: cargo fuzz list names no target" >&2
  exit 1
fi

for target in $targets; do
  cp "$binaries/$target" "$OUT/$target"

  # The seed corpus: the committed seeds and every fixed crash, flat, as the engine unzips it.
  seeds="$work/seed_corpus/$target"
  rm -rf "$seeds"
  mkdir -p "$seeds"
  cp corpus/seed/"$target"/* "$seeds/"
  if [[ -d "regressions/$target" ]]; then
    for input in regressions/"$target"/*; do
      cp "$input" "$seeds/regression-$(basename "$input")"
    done
  fi
  rm -f "$OUT/${target}_seed_corpus.zip"
  (cd "$seeds" && zip -q -r "$OUT/${target}_seed_corpus.zip" .)

  # The options file, its dictionary copied as <target>.dict (the name the engine also looks
  # for on its own) and named so in the copy.
  options="options/$target.options"
  if [[ -f "$options" ]]; then
    dict=$(sed -n 's/^dict *= *//p' "$options")
    if [[ -n "$dict" ]]; then
      cp "dict/$dict" "$OUT/$target.dict"
    fi
    sed "s/^dict *= *.*/dict = $target.dict/" "$options" >"$OUT/$target.options"
  fi
done
echo "build.sh: $(wc -w <<<"$targets") fuzz targets in $OUT"
