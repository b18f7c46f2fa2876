#!/usr/bin/env bash
# Starts (up) or stops (down) a real OpenStack Nova (Debian bookworm's Nova 26,
# Zed) in one process on 127.0.0.1, in the background: Nova's own functional-
# test base with three fake compute hosts (host-a, host-b, host-drs-1), the
# noauth2 API and a read-only image API (internal/novatest/nova_harness.py).
# When python3-neutron is installed (and GROVE_NOVA_NEUTRON is not 0), a real
# Neutron runs beside it (internal/novatest/neutron_harness.py) and Nova uses
# it instead of its Neutron fixture: its endpoint is GROVE_NOVA_NETWORK_ENDPOINT
# (and network_endpoint_override in the clouds.yaml), and the networks, subnets
# and security group it starts with are the GROVE_NEUTRON_* lines.
# `up` prints the variables an agent needs, KEY=VALUE a line:
#   eval "$(scripts/nova.sh up)"; export OS_AUTH_TYPE OS_TOKEN OS_ENDPOINT OS_PROJECT_ID
# Everything it writes is under $GROVE_NOVA_DIR (default /tmp/grove-nova):
# env, clouds.yaml, nova.log, access.log, harness.log, and neutron/.
set -euo pipefail
dir=${GROVE_NOVA_DIR:-/tmp/grove-nova}
root=$(cd "$(dirname "$0")/.." && pwd)
packages=(python3-nova python3-placement python3-oslotest python3-wsgi-intercept python3-requests-mock python3-ddt)
case "${1:-up}" in
up)
  missing=()
  for p in "${packages[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
  done
  if [ ${#missing[@]} -gt 0 ] || [ ! -x /usr/bin/python3 ]; then
    echo "the local Nova needs Debian bookworm's packages; install them with:" >&2
    echo "  apt-get install -y --no-install-recommends ${packages[*]}" >&2
    exit 1
  fi
  mkdir -p "$dir"
  if [ -f "$dir/nova.pid" ] && kill -0 "$(cat "$dir/nova.pid")" 2>/dev/null && grep -q GROVE_NOVA_READY "$dir/stdout" 2>/dev/null; then
    grep -v GROVE_NOVA_READY "$dir/stdout"
    grep -hv GROVE_NEUTRON_READY "$dir/neutron/stdout" 2>/dev/null || true
    exit 0
  fi
  rm -f "$dir/stdout" "$dir/env"
  neutron=()
  if [ "${GROVE_NOVA_NEUTRON:-1}" != 0 ] && dpkg-query -W -f='${Status}' python3-neutron 2>/dev/null | grep -q 'install ok installed'; then
    mkdir -p "$dir/neutron"
    rm -f "$dir/neutron/stdout"
    PYTHONDONTWRITEBYTECODE=1 nohup /usr/bin/python3 "$root/internal/novatest/neutron_harness.py" --state-dir "$dir/neutron" \
      >"$dir/neutron/stdout" 2>"$dir/neutron/harness.log" </dev/null &
    npid=$!
    echo "$npid" > "$dir/neutron.pid"
    for _ in $(seq 1 1200); do
      grep -q GROVE_NEUTRON_READY "$dir/neutron/stdout" 2>/dev/null && break
      if ! kill -0 "$npid" 2>/dev/null; then
        echo "Neutron exited before it was ready; see $dir/neutron/harness.log:" >&2
        tail -n 5 "$dir/neutron/harness.log" >&2
        exit 1
      fi
      sleep 0.1
    done
    if ! grep -q GROVE_NEUTRON_READY "$dir/neutron/stdout" 2>/dev/null; then
      echo "Neutron did not start within 120 seconds; see $dir/neutron/neutron.log" >&2
      exit 1
    fi
    neutron=(--neutron-endpoint "$(sed -n 's/^GROVE_NEUTRON_ENDPOINT=//p' "$dir/neutron/stdout")")
  fi
  PYTHONDONTWRITEBYTECODE=1 nohup /usr/bin/python3 "$root/internal/novatest/nova_harness.py" --state-dir "$dir" \
    --listen "${GROVE_NOVA_LISTEN:-127.0.0.1:0}" "${neutron[@]}" >"$dir/stdout" 2>"$dir/harness.log" </dev/null &
  pid=$!
  echo "$pid" > "$dir/nova.pid"
  # Nova takes about 15 seconds to start; more on a busy machine.
  for _ in $(seq 1 1800); do
    if grep -q GROVE_NOVA_READY "$dir/stdout" 2>/dev/null; then
      grep -v GROVE_NOVA_READY "$dir/stdout"
      grep -hv GROVE_NEUTRON_READY "$dir/neutron/stdout" 2>/dev/null || true
      exit 0
    fi
    if ! kill -0 "$pid" 2>/dev/null; then
      echo "Nova exited before it was ready; see $dir/harness.log:" >&2
      tail -n 5 "$dir/harness.log" >&2
      exit 1
    fi
    sleep 0.1
  done
  echo "Nova did not start within 180 seconds; see $dir/harness.log and $dir/nova.log" >&2
  exit 1
  ;;
down)
  # Only the process this script started, by its recorded pid.
  if [ -f "$dir/nova.pid" ]; then
    pid=$(cat "$dir/nova.pid")
    kill "$pid" 2>/dev/null || true
    # Wait for it to be gone, so that its port is free for the next `up`.
    for _ in $(seq 1 100); do
      kill -0 "$pid" 2>/dev/null || break
      sleep 0.1
    done
    rm -f "$dir/nova.pid" "$dir/stdout" "$dir/env"
  fi
  if [ -f "$dir/neutron.pid" ]; then
    pid=$(cat "$dir/neutron.pid")
    kill "$pid" 2>/dev/null || true
    for _ in $(seq 1 100); do
      kill -0 "$pid" 2>/dev/null || break
      sleep 0.1
    done
    rm -f "$dir/neutron.pid" "$dir/neutron/stdout"
  fi
  ;;
*)
  echo "usage: $0 up|down" >&2
  exit 2
  ;;
esac
