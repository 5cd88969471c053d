#!/usr/bin/env bash
# Installs the pinned GitHub API fixtures the tests read: GitHub's published OpenAPI
# description (@octokit/openapi) and GraphQL schema (@octokit/graphql-schema) for
# tests/it/conformance.rs, and @octokit/fixtures (recorded GitHub replies). They land in .ci/vendor (git-ignored) through npm's configured registry.
# Idempotent: when the pinned versions are already installed it only prints where the spec is.
# It does not run any test and never writes outside .ci/vendor.
set -euo pipefail

OPENAPI_VERSION="23.0.2"
FIXTURES_VERSION="23.1.2"
GRAPHQL_SCHEMA_VERSION="15.26.1"

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
vendor="$root/.ci/vendor"
spec="$vendor/node_modules/@octokit/openapi/generated/api.github.com.json"

installed_version() {
  # Prints the version recorded in an installed package's package.json, or nothing.
  local manifest="$vendor/node_modules/$1/package.json"
  [[ -f "$manifest" ]] || return 0
  sed -n 's/^[[:space:]]*"version":[[:space:]]*"\([^"]*\)".*/\1/p' "$manifest" | head -n 1
}

if [[ "$(installed_version @octokit/openapi)" == "$OPENAPI_VERSION" &&
      "$(installed_version @octokit/fixtures)" == "$FIXTURES_VERSION" &&
      "$(installed_version @octokit/graphql-schema)" == "$GRAPHQL_SCHEMA_VERSION" &&
      -s "$spec" ]]; then
  echo "fixtures already installed (@octokit/openapi $OPENAPI_VERSION, @octokit/fixtures $FIXTURES_VERSION, @octokit/graphql-schema $GRAPHQL_SCHEMA_VERSION)"
else
  command -v npm >/dev/null || { echo "install-fixtures: npm is required but not on PATH" >&2; exit 1; }
  mkdir -p "$vendor"
  # A package.json of its own keeps npm from walking up into the repository.
  [[ -f "$vendor/package.json" ]] || echo '{ "name": "thirdshift-ci-vendor", "private": true }' >"$vendor/package.json"
  npm install --prefix "$vendor" --no-audit --no-fund --save-exact --loglevel=error \
    "@octokit/openapi@$OPENAPI_VERSION" "@octokit/fixtures@$FIXTURES_VERSION" \
    "@octokit/graphql-schema@$GRAPHQL_SCHEMA_VERSION"
  [[ -s "$spec" ]] || { echo "install-fixtures: npm finished but $spec is missing" >&2; exit 1; }
fi

echo "OpenAPI spec: $spec"
echo "(tests read it from there, or from \$THIRDSHIFT_OPENAPI when set)"
