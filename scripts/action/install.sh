#!/usr/bin/env bash
# Step 3 of the Action: puts a working binary in place and writes its path as the `bin` output.
# In order: the `binary` input (a host that installed it itself); the binary the cache restored;
# the release asset of the Action's own version for this runner (Linux x86_64 or aarch64, static
# musl), downloaded and checked against its published sha256 (a mismatch is refused, never
# installed); and only when no such asset exists (404), a build from source (build.sh). Assets
# come from the Action repository's GitHub releases, or from `releases-url`. Reads no event data.
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
if [[ -x "$bin" ]] && "$bin" --version >/dev/null 2>&1; then
  echo "using the cached $("$bin" --version)"
  emit "$bin"
  exit 0
fi

version="$(sed -n 's/^version = "\(.*\)"$/\1/p' "$GITHUB_ACTION_PATH/Cargo.toml" | head -n 1)"
case "${RUNNER_OS:-Linux}/${RUNNER_ARCH:-X64}" in
  Linux/X64) target=x86_64-unknown-linux-musl ;;
  Linux/ARM64) target=aarch64-unknown-linux-musl ;;
  *) target="" ;;
esac
base="${THIRDSHIFT_RELEASES_URL:-}"
if [[ -z "$base" && -n "${THIRDSHIFT_ACTION_REPOSITORY:-}" ]]; then
  base="${GITHUB_SERVER_URL:-https://github.com}/$THIRDSHIFT_ACTION_REPOSITORY/releases/download"
fi
if [[ -n "$version" && -n "$target" && -n "$base" ]]; then
  asset="thirdshift-reconciler-v$version-$target.tar.gz"
  url="${base%/}/v$version/$asset"
  tmp="$(mktemp -d)"
  trap 'rm -rf "$tmp"' EXIT
  code="$(curl -sSL --retry 3 --connect-timeout 10 -w '%{http_code}' -o "$tmp/$asset" "$url" || true)"
  if [[ "$code" == 200 ]]; then
    if ! curl -fsSL --retry 3 --connect-timeout 10 -o "$tmp/$asset.sha256" "$url.sha256"; then
      echo "::error title=thirdshift-reconciler::$asset has no checksum at $url.sha256: not installed"
      exit 1
    fi
    want="$(cut -d ' ' -f 1 <"$tmp/$asset.sha256")"
    got="$(sha256sum "$tmp/$asset" | cut -d ' ' -f 1)"
    if [[ ! "$want" =~ ^[0-9a-f]{64}$ || "$want" != "$got" ]]; then
      echo "::error title=thirdshift-reconciler::checksum mismatch for $asset: the release says $want, the download is $got; refusing to install it"
      exit 1
    fi
    mkdir -p "$tmp/x" "$dir"
    tar -xzf "$tmp/$asset" -C "$tmp/x" thirdshift-reconciler
    install -m 0755 "$tmp/x/thirdshift-reconciler" "$bin"
    echo "installed $("$bin" --version) from $asset (sha256 $got verified)"
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
