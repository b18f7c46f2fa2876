#!/usr/bin/env bash
# Proves that tests touch only what they started: runs the e2e package twice
# at once while a user's `grove quickstart` runs beside them, then checks that
# both runs passed and that the quickstart's nodes are the same processes,
# still ACTIVE and answering, and stops the quickstart cleanly.
#
# Needs bin/grove (make build) and, for the container tests, DOCKER_HOST.
# E2E_RUN narrows both runs to the tests matching it (go test -run).
set -euo pipefail
cd "$(dirname "$0")/.."

tmp="$PWD/.ci/tmp/parallel"
rm -rf "$tmp"
mkdir -p "$tmp"
qs_pid=""
cleanup() {
  # Only the quickstart this script started, by its pid.
  if [ -n "$qs_pid" ] && kill -0 "$qs_pid" 2>/dev/null; then
    kill -INT "$qs_pid" 2>/dev/null || true
    wait "$qs_pid" 2>/dev/null || true
  fi
}
trap cleanup EXIT
# alive: the process exists and is not a zombie waiting to be reaped.
alive() { [ -r "/proc/$1/stat" ] && [ "$(sed 's/.*) //' "/proc/$1/stat" | cut -d' ' -f1)" != Z ]; }

bin/grove quickstart -data-dir "$tmp/quickstart" >"$tmp/quickstart.out" 2>&1 &
qs_pid=$!
for _ in $(seq 1 600); do
  grep -q 'Press Ctrl-C to stop' "$tmp/quickstart.out" && break
  if ! kill -0 "$qs_pid" 2>/dev/null; then
    echo "grove quickstart exited early:"; cat "$tmp/quickstart.out"; exit 1
  fi
  sleep 0.1
done
if ! grep -q 'Press Ctrl-C to stop' "$tmp/quickstart.out"; then
  echo "grove quickstart did not come up in 60s:"; cat "$tmp/quickstart.out"; exit 1
fi
agent=$(grep -o 'Grove agent running at http://127\.0\.0\.1:[0-9]*' "$tmp/quickstart.out" | grep -o 'http://.*')

# The quickstart's nodes as the agent reports them: name, status, pid.
nodes() {
  curl -sf "$agent/v1/nodes?cluster_id=quickstart&sort=index" |
    grep -o '"name":"[^"]*"\|"status":"[A-Z]*"\|"pid":[0-9]*\|"address":"127\.0\.0\.1:[0-9]*"' | tr '\n' ' '
}
before=$(nodes)
echo "quickstart nodes before: $before"
case "$before" in
*'"pid":'*) ;;
*) echo "no quickstart nodes found at $agent"; exit 1 ;;
esac

start=$(date +%s)
# A failed test's agent logs are kept (GROVE_E2E_KEEP_LOGS): a failure that
# shows only under this load can then be read whole.
GROVE_E2E_KEEP_LOGS="$tmp/agent-logs-1" go test -count=1 -timeout 15m -run "${E2E_RUN:-.}" ./e2e/ >"$tmp/e2e-1.log" 2>&1 &
run1=$!
GROVE_E2E_KEEP_LOGS="$tmp/agent-logs-2" go test -count=1 -timeout 15m -run "${E2E_RUN:-.}" ./e2e/ >"$tmp/e2e-2.log" 2>&1 &
run2=$!
rc1=0; wait "$run1" || rc1=$?
rc2=0; wait "$run2" || rc2=$?
echo "two parallel e2e runs took $(($(date +%s) - start))s"
for i in 1 2; do
  tail -n 3 "$tmp/e2e-$i.log"
done
if [ "$rc1" != 0 ] || [ "$rc2" != 0 ]; then
  for i in 1 2; do
    echo "--- e2e run $i"; grep -E -- '^(---|FAIL|panic)|_test\.go:[0-9]+' "$tmp/e2e-$i.log" | head -n 60 || true
  done
  # The failed tests' agents: what they warned of, last lines last.
  for f in "$tmp"/agent-logs-*/*.log; do
    [ -f "$f" ] || continue
    echo "--- agent log $(basename "$f") (warnings and errors, last 25)"
    grep -E '\[(WARN|ERROR)\]' "$f" | tail -n 25 || true
  done
  echo "an e2e run failed while another ran beside it (logs in $tmp)"; exit 1
fi

# The quickstart's nodes are the processes they were, ACTIVE and serving.
after=$(nodes)
if [ "$after" != "$before" ]; then
  echo "the quickstart's nodes changed while the tests ran:"
  echo "  before: $before"; echo "  after:  $after"; exit 1
fi
for addr in $(echo "$after" | grep -o '127\.0\.0\.1:[0-9]*'); do
  if ! curl -sf "http://$addr/" | grep -q 'hello from '; then
    echo "quickstart node at $addr no longer answers"; exit 1
  fi
done
for pid in $(echo "$after" | grep -o '"pid":[0-9]*' | grep -o '[0-9]*'); do
  alive "$pid" || { echo "quickstart node process $pid is gone"; exit 1; }
done
case "$after" in
*'"status":"ACTIVE"'*) ;;
*) echo "the quickstart's nodes are not ACTIVE: $after"; exit 1 ;;
esac
if echo "$after" | grep -o '"status":"[A-Z]*"' | grep -qv ACTIVE; then
  echo "the quickstart's nodes are not all ACTIVE: $after"; exit 1
fi
echo "the quickstart's nodes are untouched: $after"

# Ctrl-C stops the quickstart cleanly: it destroys its cluster and exits 0.
kill -INT "$qs_pid"
rc=0; wait "$qs_pid" || rc=$?
qs_pid=""
if [ "$rc" != 0 ]; then
  echo "grove quickstart exited with $rc after Ctrl-C:"; cat "$tmp/quickstart.out"; exit 1
fi
for pid in $(echo "$after" | grep -o '"pid":[0-9]*' | grep -o '[0-9]*'); do
  if alive "$pid"; then
    echo "quickstart node process $pid outlived the quickstart"; exit 1
  fi
done
rm -rf "$tmp"
echo "parallel e2e runs beside a quickstart: ok"
