#!/usr/bin/env bash
# The release workflow's last step: commits the assets' sums (sums.sh) on top of the commit the
# binaries were built from, tags that commit v<version>, and publishes the release with the
# assets. Through GitHub's API alone (`gh api`: a tree, a commit, a tag ref; `gh release
# create`), so no git credential is ever written; GitHub signs the commit. Nothing is replaced:
# a version whose tag already exists is refused (creating the ref fails), and so is one whose
# release exists. The tag is the only ref that holds the sums commit; the branch is untouched.
# Needs GH_TOKEN (contents: write), REPO (owner/name) and GITHUB_SHA (the commit built).
# Usage: publish.sh <version> <dist dir>
set -euo pipefail
[[ $# -eq 2 ]] || { echo "usage: publish.sh <version> <dist dir>" >&2; exit 2; }
version="$1" dist="$2"
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
tag="v$version"
: "${REPO:?owner/name of the repository}" "${GITHUB_SHA:?the commit the binaries were built from}"
grep -q "^version = \"$version\"$" "$root/Cargo.toml" ||
  { echo "::error::$version is not Cargo.toml's version"; exit 1; }
# Cargo.toml's `repository` is where `cargo binstall` and the docs look for the release.
named="$(sed -n 's#^repository = "https://github.com/\(.*\)"$#\1#p' "$root/Cargo.toml")"
if [[ "$named" != "$REPO" ]]; then
  echo "::error::Cargo.toml's repository names '$named', not $REPO: set it (and the docs that name it) before releasing"
  exit 1
fi
if gh release view "$tag" --repo "$REPO" >/dev/null 2>&1; then
  echo "::error::$tag has a release already: a release is never replaced; release a new version"
  exit 1
fi
sums="$(bash "$root/scripts/release/sums.sh" "$version" "$dist")"
base_tree="$(gh api "repos/$REPO/git/commits/$GITHUB_SHA" --jq .tree.sha)"
tree="$(jq -n --arg base "$base_tree" --rawfile content "$sums" \
  '{base_tree: $base, tree: [{path: "scripts/action/SHA256SUMS", mode: "100644", type: "blob", content: $content}]}' |
  gh api "repos/$REPO/git/trees" --input - --jq .sha)"
commit="$(jq -n --arg tree "$tree" --arg parent "$GITHUB_SHA" --arg msg "Release $tag: the sums of its assets" \
  '{message: $msg, tree: $tree, parents: [$parent]}' |
  gh api "repos/$REPO/git/commits" --input - --jq .sha)"
# Fails (422) when the tag exists: a tag is never moved.
gh api "repos/$REPO/git/refs" -f ref="refs/tags/$tag" -f sha="$commit" >/dev/null ||
  { echo "::error::$tag could not be created (it exists already?): a tag is never moved"; exit 1; }
gh release create "$tag" --repo "$REPO" --verify-tag --title "$tag" \
  --notes "Static Linux binaries. Their sha256 sums are committed in the tag (scripts/action/SHA256SUMS); the Action installs nothing else." \
  "$dist"/thirdshift-reconciler-v"$version"-*
echo "released $tag at $commit"
