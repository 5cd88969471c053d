#!/usr/bin/env bash
# Step 4 of the Action: runs the chosen command. Inputs arrive as environment variables only;
# the comment command reads the event from the file at $GITHUB_EVENT_PATH, never its text from
# here. The command's output is added to the step summary (reconcile and status also write their
# Markdown view there themselves; reconcile writes the Action's outputs to $GITHUB_OUTPUT and
# its errors as annotations). Empty inputs are unset so the binary's defaults apply.
# RUNNER_DEBUG (a re-run with debug logging) logs everything; `verbose` logs each step.
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
out="$(mktemp)"
status=0
"$bin" "${args[@]}" | tee "$out" || status=$?
if [[ -n "${GITHUB_STEP_SUMMARY:-}" ]]; then
  {
    echo "#### thirdshift-reconciler ${args[*]}"
    echo
    echo '````text'
    cat "$out"
    echo '````'
  } >>"$GITHUB_STEP_SUMMARY"
fi
rm -f "$out"
exit "$status"
