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
# shellcheck source=lib/service.sh
. "$root/scripts/lib/service.sh"
packages=(python3-nova python3-placement python3-oslotest python3-wsgi-intercept python3-requests-mock python3-ddt)
case "${1:-up}" in
up)
  need_packages Nova "${packages[@]}"
  mkdir -p "$dir"
  if ready "$dir/nova.pid" "$dir/stdout" GROVE_NOVA_READY; then
    grep -v GROVE_NOVA_READY "$dir/stdout"
    grep -hv GROVE_NEUTRON_READY "$dir/neutron/stdout" 2>/dev/null || true
    exit 0
  fi
  rm -f "$dir/stdout" "$dir/env"
  neutron=()
  if [ "${GROVE_NOVA_NEUTRON:-1}" != 0 ] && installed python3-neutron; then
    mkdir -p "$dir/neutron"
    rm -f "$dir/neutron/stdout"
    PYTHONDONTWRITEBYTECODE=1 nohup /usr/bin/python3 "$root/internal/novatest/neutron_harness.py" --state-dir "$dir/neutron" \
      >"$dir/neutron/stdout" 2>"$dir/neutron/harness.log" </dev/null &
    echo "$!" > "$dir/neutron.pid"
    wait_ready Neutron "$!" "$dir/neutron/stdout" GROVE_NEUTRON_READY "$dir/neutron/harness.log" 120 "$dir/neutron/neutron.log"
    neutron=(--neutron-endpoint "$(sed -n 's/^GROVE_NEUTRON_ENDPOINT=//p' "$dir/neutron/stdout")")
  fi
  PYTHONDONTWRITEBYTECODE=1 nohup /usr/bin/python3 "$root/internal/novatest/nova_harness.py" --state-dir "$dir" \
    --listen "${GROVE_NOVA_LISTEN:-127.0.0.1:0}" "${neutron[@]}" >"$dir/stdout" 2>"$dir/harness.log" </dev/null &
  echo "$!" > "$dir/nova.pid"
  # Nova takes about 15 seconds to start; more on a busy machine.
  wait_ready Nova "$!" "$dir/stdout" GROVE_NOVA_READY "$dir/harness.log" 180 "$dir/harness.log and $dir/nova.log"
  grep -v GROVE_NOVA_READY "$dir/stdout"
  grep -hv GROVE_NEUTRON_READY "$dir/neutron/stdout" 2>/dev/null || true
  ;;
down)
  # Only the processes this script started, by their recorded pids.
  stop_recorded "$dir/nova.pid" "$dir/stdout" "$dir/env"
  stop_recorded "$dir/neutron.pid" "$dir/neutron/stdout"
  ;;
*)
  echo "usage: $0 up|down" >&2
  exit 2
  ;;
esac
