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
# shellcheck source=lib/service.sh
. "$root/scripts/lib/service.sh"
packages=(python3-octavia python3-oslotest python3-wsgi-intercept python3-requests-mock python3-ddt)
case "${1:-up}" in
up)
  need_packages Octavia "${packages[@]}"
  mkdir -p "$dir"
  if ready "$dir/octavia.pid" "$dir/stdout" GROVE_OCTAVIA_READY; then
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
  echo "$!" > "$dir/octavia.pid"
  # Octavia takes about 6 seconds to start; more on a busy machine.
  wait_ready Octavia "$!" "$dir/stdout" GROVE_OCTAVIA_READY "$dir/harness.log" 180 "$dir/harness.log and $dir/octavia.log"
  grep -v GROVE_OCTAVIA_READY "$dir/stdout"
  ;;
down)
  # Only the process this script started, by its recorded pid.
  stop_recorded "$dir/octavia.pid" "$dir/stdout" "$dir/env"
  ;;
*)
  echo "usage: $0 up|down" >&2
  exit 2
  ;;
esac
