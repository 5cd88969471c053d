#!/usr/bin/env bash
# Step 3 of the Action: builds the binary into $THIRDSHIFT_BIN_DIR unless the cache restored a
# working one. Needs cargo on the runner (GitHub's hosted images have it; self-hosted hosts
# install rustup once, see docs/operations.md). It reads no event data.
set -euo pipefail
bin="$THIRDSHIFT_BIN_DIR/thirdshift-reconciler"
if [[ -x "$bin" ]] && "$bin" --version >/dev/null 2>&1; then
  echo "using the cached $("$bin" --version)"
  exit 0
fi
command -v cargo >/dev/null || {
  echo "::error::cargo is needed to build thirdshift-reconciler (install rustup on this runner)"
  exit 1
}
target="${RUNNER_TEMP:-/tmp}/thirdshift-reconciler-target"
cargo build --release --locked --manifest-path "$GITHUB_ACTION_PATH/Cargo.toml" --target-dir "$target"
mkdir -p "$THIRDSHIFT_BIN_DIR"
cp "$target/release/thirdshift-reconciler" "$bin"
echo "built $("$bin" --version)"
