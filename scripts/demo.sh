#!/usr/bin/env bash
# The main job on the bundled sample vault: start the daemon in a throwaway home, register a
# temporary copy of examples/sample-vault, show its status and a search, then stop.
set -euo pipefail
cd "$(dirname "$0")/.."
VAULTCTL=".venv/bin/vaultctl"
work=$(mktemp -d /tmp/vaultd-demo.XXXXXX)
export VAULTD_HOME="$work/home" VAULTD_SOCKET="$work/run/vaultd.sock"
unset VAULTD_NO_AUTOSTART
trap '"$VAULTCTL" daemon stop >/dev/null 2>&1 || true; rm -rf "$work"' EXIT
cp -R examples/sample-vault "$work/sample-vault"

say() { printf '\n$ %s\n' "$*"; "$@"; }
say "$VAULTCTL" vault add sample "$work/sample-vault"
say "$VAULTCTL" status
if "$VAULTCTL" --help | grep -q ' search '; then
  say "$VAULTCTL" search "project"
  say "$VAULTCTL" list --limit 10
fi
say "$VAULTCTL" doctor
