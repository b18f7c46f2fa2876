#!/usr/bin/env bash
# Starts (up) or stops (down) a real OpenStack Octavia (Debian bookworm's
# Octavia 11, Antelope) in one process on 127.0.0.1, in the background: the
# v2 API with noauth, a SQLite database, and the amphora provider run by an
# in-process controller worker on Octavia's no-op drivers, so load balancers
# go PENDING_CREATE -> ACTIVE (internal/octaviatest/octavia_harness.py).
# `up` prints the variables a client needs, KEY=VALUE a line:
#   eval "$(scripts/octavia.sh up)"
# GROVE_OCTAVIA_ENDPOINT (gophercloud's Endpoint; resources are under v2/),
# GROVE_OCTAVIA_PROJECT_ID (sent as X-Project-Id, or as the project of a
# USER:PROJECT X-Auth-Token), GROVE_OCTAVIA_SUBNET_ID (a VIP and member
# subnet), GROVE_OCTAVIA_CLOUDS_YAML. When the local Nova (scripts/nova.sh)
# runs, its clouds.yaml gains a cloud grove-openstack with both.
# Everything it writes is under $GROVE_OCTAVIA_DIR (default
# /tmp/grove-octavia): env, clouds.yaml, octavia.log, access.log, harness.log.
set -euo pipefail
dir=${GROVE_OCTAVIA_DIR:-/tmp/grove-octavia}
nova_dir=${GROVE_NOVA_DIR:-/tmp/grove-nova}
root=$(cd "$(dirname "$0")/.." && pwd)
packages=(python3-octavia python3-oslotest python3-wsgi-intercept python3-requests-mock python3-ddt)
case "${1:-up}" in
up)
  missing=()
  for p in "${packages[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
  done
  if [ ${#missing[@]} -gt 0 ] || [ ! -x /usr/bin/python3 ]; then
    echo "the local Octavia needs Debian bookworm's packages; install them with:" >&2
    echo "  apt-get install -y --no-install-recommends ${packages[*]}" >&2
    exit 1
  fi
  mkdir -p "$dir"
  if [ -f "$dir/octavia.pid" ] && kill -0 "$(cat "$dir/octavia.pid")" 2>/dev/null && grep -q GROVE_OCTAVIA_READY "$dir/stdout" 2>/dev/null; then
    grep -v GROVE_OCTAVIA_READY "$dir/stdout"
    exit 0
  fi
  rm -f "$dir/stdout" "$dir/env"
  nova=()
  # The Nova of scripts/nova.sh, when it runs.
  if [ -f "$nova_dir/nova.pid" ] && kill -0 "$(cat "$nova_dir/nova.pid")" 2>/dev/null && [ -f "$nova_dir/clouds.yaml" ]; then
    nova=(--nova-clouds-yaml "$nova_dir/clouds.yaml")
  fi
  nohup /usr/bin/python3 "$root/internal/octaviatest/octavia_harness.py" --state-dir "$dir" \
    --listen "${GROVE_OCTAVIA_LISTEN:-127.0.0.1:0}" "${nova[@]}" >"$dir/stdout" 2>"$dir/harness.log" </dev/null &
  pid=$!
  echo "$pid" > "$dir/octavia.pid"
  # Octavia takes about 6 seconds to start; more on a busy machine.
  for _ in $(seq 1 1800); do
    if grep -q GROVE_OCTAVIA_READY "$dir/stdout" 2>/dev/null; then
      grep -v GROVE_OCTAVIA_READY "$dir/stdout"
      exit 0
    fi
    if ! kill -0 "$pid" 2>/dev/null; then
      echo "Octavia exited before it was ready; see $dir/harness.log:" >&2
      tail -n 5 "$dir/harness.log" >&2
      exit 1
    fi
    sleep 0.1
  done
  echo "Octavia did not start within 180 seconds; see $dir/harness.log and $dir/octavia.log" >&2
  exit 1
  ;;
down)
  # Only the process this script started, by its recorded pid.
  if [ -f "$dir/octavia.pid" ]; then
    pid=$(cat "$dir/octavia.pid")
    kill "$pid" 2>/dev/null || true
    # Wait for it to be gone, so that its port is free for the next `up`.
    for _ in $(seq 1 100); do
      kill -0 "$pid" 2>/dev/null || break
      sleep 0.1
    done
    rm -f "$dir/octavia.pid" "$dir/stdout" "$dir/env"
  fi
  ;;
*)
  echo "usage: $0 up|down" >&2
  exit 2
  ;;
esac
