#!/usr/bin/env bash
# The main job on the bundled sample vault: start the daemon in a throwaway home, register a
# temporary copy of examples/sample-vault, then read, search, write and undo through vaultctl.
set -euo pipefail
cd "$(dirname "$0")/.."
VAULTCTL=".venv/bin/vaultctl"
work=$(mktemp -d /tmp/vaultd-demo.XXXXXX)
export VAULTD_HOME="$work/home" VAULTD_SOCKET="$work/run/vaultd.sock"
unset VAULTD_NO_AUTOSTART VAULTD_VAULT
trap '"$VAULTCTL" daemon stop >/dev/null 2>&1 || true; rm -rf "$work"' EXIT
cp -R examples/sample-vault "$work/sample-vault"
rm -rf "$work/sample-vault/.vaultd"

say() { printf '\n$ %s\n' "${*/#$VAULTCTL/vaultctl}"; "$@"; }
say "$VAULTCTL" vault add sample "$work/sample-vault"
say "$VAULTCTL" status
say "$VAULTCTL" search "alpha plan"
say "$VAULTCTL" search "사업단"
say "$VAULTCTL" links "Alpha Plan"
say "$VAULTCTL" show "Ada Lovelace" --section Notes
say "$VAULTCTL" new inbox/demo-note --title "Demo note" --set '{"type": "insight"}'
say "$VAULTCTL" append demo-note --section Evidence --markdown "Written by the demo; see [[Alpha Plan]]."
say "$VAULTCTL" search "written demo"
op=$("$VAULTCTL" ops --json | python3 -c 'import json,sys; print(json.load(sys.stdin)["ops"][0]["op_id"])')
say "$VAULTCTL" undo "$op"
say "$VAULTCTL" log tail --limit 3
say "$VAULTCTL" stats
say "$VAULTCTL" doctor
