#!/usr/bin/env bash
# Step 4 of the Action: runs the chosen command. Inputs arrive as environment variables only;
# the comment command reads the event from the file at $GITHUB_EVENT_PATH, never its text from
# here. Empty inputs are unset so the binary's defaults apply.
# RUNNER_DEBUG (a re-run with debug logging) logs everything; `verbose` logs each step.
#
# The credentials go to the binary alone: the step `exec`s this script and this script `exec`s
# the binary, starting no other process, so no process of the step but this one (this bash,
# then the binary, which takes them out of its environment first thing) ever holds them. The
# binary copies its own output into the step summary (THIRDSHIFT_SUMMARY_OUTPUT); reconcile and
# status also write their Markdown view there, reconcile its outputs to $GITHUB_OUTPUT and its
# errors as annotations.
set -euo pipefail
bin="${THIRDSHIFT_BIN:?set by the install step}"
if [[ "${RUNNER_DEBUG:-}" == 1 ]]; then
  export RUST_LOG="thirdshift_reconciler=debug,warn"
elif [[ "${THIRDSHIFT_VERBOSE:-false}" == "true" ]]; then
  export RUST_LOG="thirdshift_reconciler=info,warn"
fi
for name in THIRDSHIFT_CONFIG THIRDSHIFT_HOST GITHUB_TOKEN THIRDSHIFT_APP_ID THIRDSHIFT_APP_KEY \
  THIRDSHIFT_INSTALLATION_ID; do
  [[ -n "${!name:-}" ]] || unset "$name"
done
case "${THIRDSHIFT_COMMAND:-}" in
  reconcile)
    args=(reconcile)
    [[ "${THIRDSHIFT_DRY_RUN:-false}" == "true" ]] && args+=(--dry-run)
    ;;
  observe)
    args=(observe)
    [[ "${THIRDSHIFT_ALSO_RECONCILE:-false}" == "true" ]] && args+=(--reconcile)
    ;;
  command)
    [[ -n "${GITHUB_EVENT_PATH:-}" && -f "$GITHUB_EVENT_PATH" ]] || {
      echo "::error::command needs the event payload file (GITHUB_EVENT_PATH)"
      exit 2
    }
    args=(command --event "$GITHUB_EVENT_PATH")
    ;;
  status) args=(status) ;;
  *)
    echo "::error::unknown command '${THIRDSHIFT_COMMAND:-}': use reconcile, observe, command or status"
    exit 2
    ;;
esac
export THIRDSHIFT_SUMMARY_OUTPUT=1
exec "$bin" "${args[@]}"
