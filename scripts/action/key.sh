#!/usr/bin/env bash
# Step 1 of the Action: names the cache of this version of the binary. The key hashes the
# sources the binary is built from (an Action is downloaded without .git, so there is no commit
# to name), the runner's OS and architecture, and where the job runs: GitHub-hosted runners share
# one key; each self-hosted runner has its own (RUNNER_ENVIRONMENT, RUNNER_NAME), so a binary an
# agent on one host rewrites before the post-step saves it never reaches a hosted job or another
# host (install.sh checks a restored release binary against the committed sums besides). Writes
# `key` and `dir` to $GITHUB_OUTPUT.
# The binary lives in the job's RUNNER_TEMP, which the runner empties before every job: a binary
# there was restored or built by this job, never planted between jobs by an agent on a
# self-hosted host (as one under $HOME could be). It builds nothing and reads no event data.
set -euo pipefail
src="$GITHUB_ACTION_PATH"
hash=$(cd "$src" && find Cargo.toml Cargo.lock src -type f -print0 | LC_ALL=C sort -z |
  xargs -0 sha256sum | sha256sum | cut -c1-16)
dir="${RUNNER_TEMP:?RUNNER_TEMP is set by every GitHub runner}/thirdshift-reconciler/$hash"
where="${RUNNER_ENVIRONMENT:-unknown}"
if [[ "$where" != github-hosted ]]; then
  # A runner name may hold any character: only its hash goes into the key.
  where="$where-$(printf '%s' "${RUNNER_NAME:-}" | sha256sum | cut -c1-16)"
fi
{
  echo "key=thirdshift-reconciler-$where-${RUNNER_OS:-Linux}-${RUNNER_ARCH:-X64}-$hash"
  echo "dir=$dir"
} >>"$GITHUB_OUTPUT"
echo "binary cache: $dir"
