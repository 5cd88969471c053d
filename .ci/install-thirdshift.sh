#!/usr/bin/env bash
# Installs thirdshift 0.19.0 (crates.io, `cargo install --locked`) for tests/it/thirdshift_real.rs,
# which runs the real binary. It lands in a cache folder outside the clone, built once per
# machine: $THIRDSHIFT_CI_CACHE (default ${XDG_CACHE_HOME:-$HOME/.cache}/thirdshift-reconciler),
# binary at <cache>/thirdshift-0.19.0/bin/thirdshift. Prints that path. Idempotent: an installed
# binary that reports 0.19.0 is kept. It does not run any test.
set -euo pipefail

VERSION="0.19.0"
cache="${THIRDSHIFT_CI_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/thirdshift-reconciler}"
root="$cache/thirdshift-$VERSION"
bin="$root/bin/thirdshift"

if [[ -x "$bin" ]] && "$bin" --version 2>/dev/null | grep -q "$VERSION"; then
  echo "thirdshift $VERSION already installed: $bin"
  exit 0
fi
mkdir -p "$root"
echo "installing thirdshift $VERSION into $root (a few minutes, once per machine)"
cargo install --locked --quiet thirdshift --version "$VERSION" --root "$root"
"$bin" --version
echo "thirdshift $VERSION installed: $bin"
