#!/usr/bin/env bash
# The Action's last resort (install.sh calls it when no release asset exists for its version):
# builds the binary from the Action's own sources into $THIRDSHIFT_BIN_DIR. Needs cargo on the
# runner (GitHub's hosted images have it; self-hosted hosts install rustup once, see
# docs/operations.md). It reads no event data.
set -euo pipefail
bin="$THIRDSHIFT_BIN_DIR/thirdshift-reconciler"
command -v cargo >/dev/null || {
  echo "::error::cargo is needed to build thirdshift-reconciler (install rustup on this runner)"
  exit 1
}
target="${RUNNER_TEMP:-/tmp}/thirdshift-reconciler-target"
# A production build: no GitHub emulator (the `sim`/`demo` commands), so no axum, and minutes less.
cargo build --release --locked --no-default-features --manifest-path "$GITHUB_ACTION_PATH/Cargo.toml" --target-dir "$target"
mkdir -p "$THIRDSHIFT_BIN_DIR"
cp "$target/release/thirdshift-reconciler" "$bin"
echo "built $("$bin" --version)"
