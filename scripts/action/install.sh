#!/usr/bin/env bash
# Step 3 of the Action: puts a working binary in place and writes its path as the `bin` output.
# In order: the `binary` input (a host that installed it itself); the binary the cache restored;
# the release asset of the Action's own version for this runner (Linux x86_64 or aarch64, static
# musl); and only when this checkout of the Action commits no sum for that asset, or no such
# asset exists (404), a build from source (build.sh). Every release binary, downloaded or
# restored from the cache, is checked against scripts/action/SHA256SUMS of the Action's own
# checkout (written and committed by the release workflow before it tags): pinning the Action's
# tag or commit pins the binary, and a replaced release asset, or a cached binary an agent
# rewrote, is refused with an `::error` / `::warning` saying what differed. The `.sha256` next to
# each asset is not believed: the release that serves a replaced asset serves its sum too.
# Assets come from the Action repository's GitHub releases, or from `releases-url`. Reads no
# event data.
set -euo pipefail
dir="${THIRDSHIFT_BIN_DIR:?set by the key step}"
bin="$dir/thirdshift-reconciler"
emit() { echo "bin=$1" >>"$GITHUB_OUTPUT"; }

if [[ -n "${THIRDSHIFT_BINARY:-}" ]]; then
  if [[ -x "$THIRDSHIFT_BINARY" ]] && "$THIRDSHIFT_BINARY" --version >/dev/null 2>&1; then
    echo "using the installed $("$THIRDSHIFT_BINARY" --version) at $THIRDSHIFT_BINARY"
    emit "$THIRDSHIFT_BINARY"
    exit 0
  fi
  echo "::error title=thirdshift-reconciler::the binary input '$THIRDSHIFT_BINARY' is not a working thirdshift-reconciler"
  exit 1
fi
version="$(sed -n 's/^version = "\(.*\)"$/\1/p' "$GITHUB_ACTION_PATH/Cargo.toml" | head -n 1)"
case "${RUNNER_OS:-Linux}/${RUNNER_ARCH:-X64}" in
  Linux/X64) target=x86_64-unknown-linux-musl ;;
  Linux/ARM64) target=aarch64-unknown-linux-musl ;;
  *) target="" ;;
esac
stem="thirdshift-reconciler-v$version-$target"
asset="$stem.tar.gz"
sums="$GITHUB_ACTION_PATH/scripts/action/SHA256SUMS"
# The sum this checkout commits for NAME, or nothing.
committed() {
  [[ -n "$version" && -n "$target" && -f "$sums" ]] || return 0
  awk -v n="$1" '$2 == n && length($1) == 64 && $1 ~ /^[0-9a-f]+$/ { print $1; exit }' "$sums"
}
want_asset="$(committed "$asset")"
want_bin="$(committed "$stem/thirdshift-reconciler")"
sha() { sha256sum "$1" | cut -d ' ' -f 1; }

if [[ -x "$bin" ]]; then
  if [[ -n "$want_bin" ]]; then
    got="$(sha "$bin")"
    if [[ "$got" == "$want_bin" ]]; then
      echo "using the cached $("$bin" --version) (sha256 $got, as committed for $stem)"
      emit "$bin"
      exit 0
    fi
    echo "::warning title=thirdshift-reconciler::the cached binary's sha256 is $got, not the $want_bin this checkout of the Action commits for $stem: refused, replaced by a verified download"
    rm -f "$bin"
  elif "$bin" --version >/dev/null 2>&1; then
    # No release of this version in this checkout: the cache holds what this environment's own
    # earlier job built from the same sources (key.sh keeps hosted and each self-hosted runner apart).
    echo "using the cached $("$bin" --version), built from source (no sum committed for $asset)"
    emit "$bin"
    exit 0
  fi
fi
base="${THIRDSHIFT_RELEASES_URL:-}"
if [[ -z "$base" && -n "${THIRDSHIFT_ACTION_REPOSITORY:-}" ]]; then
  base="${GITHUB_SERVER_URL:-https://github.com}/$THIRDSHIFT_ACTION_REPOSITORY/releases/download"
fi
if [[ -z "$want_asset" ]]; then
  echo "::notice title=thirdshift-reconciler::this checkout of the Action commits no sum for ${target:+$asset}${target:-a binary for ${RUNNER_OS:-Linux}/${RUNNER_ARCH:-X64}} (scripts/action/SHA256SUMS): building from source, since a download could not be verified"
elif [[ -n "$base" ]]; then
  url="${base%/}/v$version/$asset"
  tmp="$(mktemp -d)"
  trap 'rm -rf "$tmp"' EXIT
  code="$(curl -sSL --retry 3 --connect-timeout 10 -w '%{http_code}' -o "$tmp/$asset" "$url" || true)"
  if [[ "$code" == 200 ]]; then
    got="$(sha "$tmp/$asset")"
    if [[ "$got" != "$want_asset" ]]; then
      echo "::error title=thirdshift-reconciler::checksum mismatch for $asset: this checkout of the Action commits $want_asset, the download is $got; refusing to install it"
      exit 1
    fi
    mkdir -p "$tmp/x" "$dir"
    tar -xzf "$tmp/$asset" -C "$tmp/x" thirdshift-reconciler
    got_bin="$(sha "$tmp/x/thirdshift-reconciler")"
    if [[ -n "$want_bin" && "$got_bin" != "$want_bin" ]]; then
      echo "::error title=thirdshift-reconciler::checksum mismatch for the binary in $asset: this checkout of the Action commits $want_bin, the archive holds $got_bin; refusing to install it"
      exit 1
    fi
    install -m 0755 "$tmp/x/thirdshift-reconciler" "$bin"
    echo "installed $("$bin" --version) from $asset (sha256 $got verified against the committed sum)"
    emit "$bin"
    exit 0
  fi
  if [[ "$code" != 404 ]]; then
    echo "::error title=thirdshift-reconciler::downloading $url failed (HTTP $code): not building instead, since the release may exist"
    exit 1
  fi
  echo "::notice title=thirdshift-reconciler::no release asset $asset for v$version: building from source"
fi
bash "$GITHUB_ACTION_PATH/scripts/action/build.sh"
emit "$bin"
