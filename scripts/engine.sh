#!/usr/bin/env bash
# Starts (up) or stops (down) a local container engine for Grove: Podman's
# Docker-compatible API on a unix socket, with runc, host networking only and
# no bridge networks. Prints the DOCKER_HOST to use.
set -euo pipefail
dir=${GROVE_ENGINE_DIR:-/tmp/grove-engine}
sock="$dir/podman.sock"
case "${1:-up}" in
up)
  if ! command -v podman >/dev/null || ! command -v runc >/dev/null; then
    echo "podman and runc are needed: apt-get install -y podman runc" >&2
    exit 1
  fi
  mkdir -p "$dir"
  # Test runs started at once may both ask for the engine: one starts it,
  # the others wait here and then find it answering.
  exec 9>"$dir/up.lock"
  flock 9
  # The sandbox's hard nofile limit is below Podman's default; inherit ours.
  printf '[containers]\ndefault_ulimits = []\nnetns = "host"\n\n[engine]\nruntime = "runc"\n' > "$dir/containers.conf"
  if [ -S "$sock" ] && curl -sf --unix-socket "$sock" http://d/_ping >/dev/null 2>&1; then
    echo "DOCKER_HOST=unix://$sock"
    exit 0
  fi
  # The service runs from $dir, not the caller's directory: it outlives the
  # caller, and conmon fails every container ("Failed to get working
  # directory") once that directory is removed, as a CI clone is.
  (cd "$dir" && CONTAINERS_CONF="$dir/containers.conf" exec nohup podman --root "$dir/root" --runroot "$dir/run" --runtime runc \
    system service --time=0 "unix://$sock" >"$dir/podman.log" 2>&1 9>&-) &
  echo $! > "$dir/podman.pid"
  # Podman starts in about a second; on a loaded machine (CI runs two
  # test suites at once) it has taken over ten.
  deadline=$((SECONDS + ${GROVE_ENGINE_START_TIMEOUT:-60}))
  while [ "$SECONDS" -lt "$deadline" ]; do
    if curl -sf --unix-socket "$sock" http://d/_ping >/dev/null 2>&1; then
      echo "DOCKER_HOST=unix://$sock"
      exit 0
    fi
    if ! kill -0 "$(cat "$dir/podman.pid")" 2>/dev/null; then
      break # it exited: waiting longer will not help
    fi
    sleep 0.1
  done
  echo "the engine did not start; see $dir/podman.log:" >&2
  tail -n 20 "$dir/podman.log" >&2 || true
  exit 1
  ;;
down)
  if [ -f "$dir/podman.pid" ]; then
    kill "$(cat "$dir/podman.pid")" 2>/dev/null || true
    rm -f "$dir/podman.pid"
  fi
  echo "engine stopped"
  ;;
*)
  echo "usage: $0 up|down" >&2
  exit 2
  ;;
esac
