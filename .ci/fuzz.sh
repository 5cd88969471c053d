#!/usr/bin/env bash
# Builds the cargo-fuzz targets (fuzz/) and runs each briefly: the record decoder with the
# ownership rule, and the command parser, from the committed seeds and dictionaries.
# FUZZ_SECONDS (default 20) is each target's run; docs/reliability.md describes the longer run.
# Built with `--sanitizer none`, which needs no nightly flag, so stable rustc builds it as it is
# (the targets are safe Rust; docs/reliability.md says how to add AddressSanitizer). A crash
# fails the script and leaves its input in fuzz/artifacts/.
set -euo pipefail
cd "$(dirname "$0")/.."

if ! command -v cargo-fuzz >/dev/null 2>&1; then
  cargo install cargo-fuzz --locked
fi
seconds="${FUZZ_SECONDS:-20}"
# Its own target folder beside the project's, so instrumented builds never evict the tests'.
export CARGO_TARGET_DIR="${FUZZ_TARGET_DIR:-${CARGO_TARGET_DIR:-target}/fuzz}"
for target in record command; do
  corpus="fuzz/corpus/$target"
  mkdir -p "$corpus"
  cargo fuzz run --fuzz-dir fuzz --sanitizer none "$target" "$corpus" "fuzz/seeds/$target" -- \
    -dict="fuzz/$target.dict" -max_total_time="$seconds" -max_len=8192 -timeout=10 \
    -print_final_stats=1
done
