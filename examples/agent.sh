#!/usr/bin/env bash
# The reference agent script for `pickup`: one Run's work on one issue, in a worktree of its own,
# on its Issue branch, recorded in the Claim so a Run killed outright has its work kept.
#
#   cd /srv/widgets && thirdshift-reconciler pickup --harness claude -- \
#     /path/to/examples/agent.sh /path/to/your-harness-wrapper
#
# `pickup` starts `run --issue N -- agent.sh HARNESS...` in its own folder: that folder is the
# launch clone (a git clone of the repository, with `origin`), unless AGENT_CLONE names another.
# For each Run this script
#   1. makes (or, on a Continuation, takes over) a worktree for the issue from the launch clone,
#      under AGENT_WORKTREES (default: <clone>.worktrees/issue-N), on the Issue branch
#      (THIRDSHIFT_BRANCH on a Continuation, else issue-N), from origin's copy of that branch when
#      it has one, else from origin's default branch;
#   2. picks the agent session id: the dead Run's (THIRDSHIFT_RESUME_SESSION) on a Continuation,
#      else a new UUID;
#   3. records both in the Claim (`stage working --worktree W --session S`), before any work, so
#      a dead Run's worktree is salvaged (committed and pushed to its Issue branch) by its host;
#   4. runs the Harness (this script's arguments) in the worktree with THIRDSHIFT_SESSION (the
#      session id) and THIRDSHIFT_RESUMING (1 when the session is to be resumed, else 0) set;
#   5. when the Harness exits 0, pushes the Issue branch (the Harness opens the pull request);
#      its exit status is the Run's.
# The Harness is any program: a wrapper around your coding agent's CLI, for example
#   #!/bin/sh
#   if [ "$THIRDSHIFT_RESUMING" = 1 ]; then exec claude --resume "$THIRDSHIFT_SESSION" -p "Carry on"
#   else exec claude --session-id "$THIRDSHIFT_SESSION" -p "Resolve issue #$THIRDSHIFT_ISSUE"; fi
# Issue text never reaches a shell here: the script reads only numbers, ids and paths.
set -euo pipefail

say() { echo "agent.sh: $*" >&2; }
fail() {
  say "$*"
  exit 2
}

[[ $# -ge 1 ]] || fail "usage: agent.sh HARNESS [ARGS...] (inside a Run: pickup -- agent.sh ...)"
issue="${THIRDSHIFT_ISSUE:?agent.sh runs inside a Run: THIRDSHIFT_ISSUE is set by run and pickup}"
[[ "$issue" =~ ^[0-9]+$ ]] || fail "THIRDSHIFT_ISSUE is not an issue number: $issue"
bin="${THIRDSHIFT_BIN:-thirdshift-reconciler}"

clone="$(git -C "${AGENT_CLONE:-$PWD}" rev-parse --show-toplevel 2>/dev/null)" ||
  fail "${AGENT_CLONE:-$PWD} is not a git clone: run pickup in the launch clone or set AGENT_CLONE"
git -C "$clone" remote get-url origin >/dev/null 2>&1 || fail "$clone has no origin remote"
branch="${THIRDSHIFT_BRANCH:-issue-$issue}"
git check-ref-format --branch "$branch" >/dev/null || fail "not a branch name: $branch"

# 1. The worktree: the dead Run's on a Continuation when it is still here, else this issue's.
worktree="${THIRDSHIFT_RESUME_WORKTREE:-}"
if [[ -z "$worktree" || ! -d "$worktree" ]]; then
  worktree="${AGENT_WORKTREES:-$clone.worktrees}/issue-$issue"
fi
if [[ ! -d "$worktree" ]]; then
  git -C "$clone" fetch --quiet origin || say "fetching origin failed; starting from what the clone has"
  if git -C "$clone" rev-parse --verify --quiet "refs/remotes/origin/$branch" >/dev/null; then
    start="origin/$branch"
  else
    start="$(git -C "$clone" symbolic-ref --quiet --short refs/remotes/origin/HEAD || echo HEAD)"
  fi
  mkdir -p "$(dirname "$worktree")"
  git -C "$clone" worktree add --quiet -B "$branch" "$worktree" "$start"
fi

# 2. The agent session.
if [[ -n "${THIRDSHIFT_RESUME_SESSION:-}" ]]; then
  session="$THIRDSHIFT_RESUME_SESSION" resuming=1
else
  session="$(cat /proc/sys/kernel/random/uuid)" resuming=0
fi

# 3. Into the Claim before any work.
"$bin" stage working --worktree "$worktree" --session "$session"

# 4. The Harness.
cd "$worktree"
status=0
THIRDSHIFT_SESSION="$session" THIRDSHIFT_RESUMING="$resuming" "$@" || status=$?

# 5. Deliver.
if [[ $status -eq 0 ]]; then
  git push --quiet origin "HEAD:refs/heads/$branch" || {
    say "pushing $branch failed"
    exit 1
  }
fi
exit "$status"
