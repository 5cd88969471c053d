#!/usr/bin/env bash
# Packages one built binary as a release asset: `thirdshift-reconciler-v<version>-<target>.tar.gz`
# (the binary alone, at the archive's top) and its `.sha256` ("<hex>  <file name>", as sha256sum
# writes it), into <out dir>. Used by .github/workflows/release.yml and by the Action's tests,
# which serve assets made from the binary they built. It uploads nothing.
# Usage: package.sh <binary> <version> <target triple> <out dir>
set -euo pipefail
[[ $# -eq 4 ]] || { echo "usage: package.sh <binary> <version> <target> <out dir>" >&2; exit 2; }
binary="$1" version="$2" target="$3" out="$4"
[[ -x "$binary" ]] || { echo "package.sh: $binary is not an executable" >&2; exit 1; }
name="thirdshift-reconciler-v${version}-${target}.tar.gz"
stage="$(mktemp -d)"
trap 'rm -rf "$stage"' EXIT
install -m 0755 "$binary" "$stage/thirdshift-reconciler"
mkdir -p "$out"
tar -C "$stage" --owner=0 --group=0 --numeric-owner -czf "$out/$name" thirdshift-reconciler
(cd "$out" && sha256sum "$name" >"$name.sha256")
echo "$out/$name"
