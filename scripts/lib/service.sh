# shellcheck shell=bash
# service.sh: what scripts/nova.sh and scripts/octavia.sh share to run a
# Python harness in the background: the Debian packages it needs, a process
# recorded by its pid (never found by name), waiting until it says it is
# ready, and stopping it. Source it; each function exits the script on
# failure with a message on stderr.

# need_packages WHAT PACKAGE... exits unless every package is installed,
# naming the apt-get command that installs them.
need_packages() {
  local what=$1 p missing=()
  shift
  for p in "$@"; do
    installed "$p" || missing+=("$p")
  done
  if [ ${#missing[@]} -gt 0 ] || [ ! -x /usr/bin/python3 ]; then
    echo "the local $what needs Debian bookworm's packages; install them with:" >&2
    echo "  apt-get install -y --no-install-recommends $*" >&2
    exit 1
  fi
}

# installed PACKAGE says whether a Debian package is installed.
installed() {
  dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q 'install ok installed'
}

# ready PIDFILE STDOUT MARKER says whether the process recorded in PIDFILE
# runs and has printed MARKER.
ready() {
  [ -f "$1" ] && kill -0 "$(cat "$1")" 2>/dev/null && grep -q "$3" "$2" 2>/dev/null
}

# wait_ready WHAT PID STDOUT MARKER HARNESS_LOG SECONDS HINT waits until
# STDOUT holds MARKER. It exits when the process ends first (with the end
# of HARNESS_LOG) or after SECONDS (pointing at HINT).
wait_ready() {
  local what=$1 pid=$2 out=$3 marker=$4 log=$5 secs=$6 hint=$7 _
  for _ in $(seq 1 $((secs * 10))); do
    grep -q "$marker" "$out" 2>/dev/null && return 0
    if ! kill -0 "$pid" 2>/dev/null; then
      echo "$what exited before it was ready; see $log:" >&2
      tail -n 5 "$log" >&2
      exit 1
    fi
    sleep 0.1
  done
  echo "$what did not start within $secs seconds; see $hint" >&2
  exit 1
}

# stop_recorded PIDFILE FILE... stops the process recorded in PIDFILE, if
# any, waits until it is gone (so that its port is free for the next
# start), and removes PIDFILE and the FILEs.
stop_recorded() {
  local pidfile=$1 pid _
  shift
  [ -f "$pidfile" ] || return 0
  pid=$(cat "$pidfile")
  kill "$pid" 2>/dev/null || true
  for _ in $(seq 1 100); do
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.1
  done
  rm -f "$pidfile" "$@"
}
