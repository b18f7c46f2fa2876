#!/usr/bin/env bash
# Starts (up) or stops (down) govmomi's vSphere simulator with the inventory
# Grove's tests use (internal/vcsimtest: 2 clusters x 3 ESXi hosts, one host
# named drs-esx-0, the template grove-template with snapshot "base"), on
# 127.0.0.1 in the background. `up` prints the variables an agent needs,
# KEY=VALUE a line: eval "$(scripts/vcsim.sh up)"; export GOVC_URL ...
set -euo pipefail
dir=${GROVE_VCSIM_DIR:-/tmp/grove-vcsim}
root=$(cd "$(dirname "$0")/.." && pwd)
case "${1:-up}" in
up)
  mkdir -p "$dir"
  if [ -f "$dir/vcsim.pid" ] && kill -0 "$(cat "$dir/vcsim.pid")" 2>/dev/null && grep -q GROVE_VCSIM_READY "$dir/env"; then
    grep -v GROVE_VCSIM_READY "$dir/env"
    exit 0
  fi
  (cd "$root" && go build -o "$dir/grove-vcsim" ./internal/vcsimtest/grove-vcsim)
  rm -f "$dir/env"
  nohup "$dir/grove-vcsim" -listen "${GROVE_VCSIM_LISTEN:-127.0.0.1:0}" >"$dir/env" 2>"$dir/vcsim.log" &
  echo $! > "$dir/vcsim.pid"
  for _ in $(seq 1 300); do
    if grep -q GROVE_VCSIM_READY "$dir/env" 2>/dev/null; then
      grep -v GROVE_VCSIM_READY "$dir/env"
      exit 0
    fi
    sleep 0.1
  done
  echo "the simulator did not start; see $dir/vcsim.log" >&2
  exit 1
  ;;
down)
  # Only the process this script started, by its recorded pid.
  if [ -f "$dir/vcsim.pid" ]; then
    kill "$(cat "$dir/vcsim.pid")" 2>/dev/null || true
    rm -f "$dir/vcsim.pid" "$dir/env"
  fi
  ;;
*)
  echo "usage: $0 up|down" >&2
  exit 2
  ;;
esac
