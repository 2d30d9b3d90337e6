#!/usr/bin/env bash
# `make test` on a loaded machine: two CPU hogs (stress-ng --cpu 2) run beside README's test
# command, RUNS times in a row (default 1), stopping at the first failure. The suite must pass
# like this on a 2-core machine: no test may depend on having the CPU to itself.
# stress-ng comes from Debian; it is installed with apt-get when missing (as root, or say how).
set -euo pipefail
cd "$(dirname "$0")/.."
runs="${1:-1}"

if ! command -v stress-ng >/dev/null 2>&1; then
  if [ "$(id -u)" -eq 0 ] && command -v apt-get >/dev/null 2>&1; then
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq
    apt-get install -y -qq stress-ng
  else
    echo "test-loaded needs stress-ng: sudo apt-get install stress-ng" >&2
    exit 2
  fi
fi

stress-ng --cpu 2 --quiet &
hog=$!
trap 'kill "$hog" 2>/dev/null; wait "$hog" 2>/dev/null || true' EXIT

for run in $(seq 1 "$runs"); do
  echo "test-loaded: run $run of $runs, beside stress-ng --cpu 2 (pid $hog)"
  make test
done
echo "test-loaded: $runs run(s) passed with 2 CPU hogs"
