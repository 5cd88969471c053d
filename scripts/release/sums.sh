#!/usr/bin/env bash
# Writes the release's sums into the Action's folder, for the release workflow to commit before
# it tags: scripts/action/SHA256SUMS (there, every checkout of the Action has it), a `sha256sum`
# line ("<hex>  <name>") per asset of <version> found in <dist dir>
# (`thirdshift-reconciler-v<version>-<target>.tar.gz`) and one per binary inside it
# (`thirdshift-reconciler-v<version>-<target>/thirdshift-reconciler`), after a comment header.
# The Action's install step (scripts/action/install.sh) checks every download and every cached
# binary against this file of its own checkout, so pinning the Action's tag or commit pins the
# binary; the `.sha256` next to each asset only proves a download is whole. It uploads nothing.
# Usage: sums.sh <version> <dist dir>   (run from anywhere; writes into this checkout)
set -euo pipefail
[[ $# -eq 2 ]] || { echo "usage: sums.sh <version> <dist dir>" >&2; exit 2; }
version="$1" dist="$2"
out="$(cd "$(dirname "${BASH_SOURCE[0]}")/../action" && pwd)/SHA256SUMS"
shopt -s nullglob
assets=("$dist"/thirdshift-reconciler-v"$version"-*.tar.gz)
[[ ${#assets[@]} -gt 0 ]] || { echo "sums.sh: no asset of v$version in $dist" >&2; exit 1; }
stage="$(mktemp -d)"
trap 'rm -rf "$stage"' EXIT
{
  echo "# The sha256 of each release asset of v$version and of the binary inside it, as"
  echo "# scripts/release/sums.sh wrote them; the release workflow committed them before it tagged."
  echo "# The Action's install step believes no other sum."
} >"$stage/sums"
for asset in "${assets[@]}"; do
  name="$(basename "$asset")"
  stem="${name%.tar.gz}"
  mkdir -p "$stage/$stem"
  tar -xzf "$asset" -C "$stage/$stem" thirdshift-reconciler
  (cd "$(dirname "$asset")" && sha256sum "$name") >>"$stage/sums"
  (cd "$stage" && sha256sum "$stem/thirdshift-reconciler") >>"$stage/sums"
done
mv "$stage/sums" "$out"
echo "$out"
