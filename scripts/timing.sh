# shellcheck shell=bash
# The timing log of a set-up and test run (docs/ci.md), sourced by setup.sh, test.sh and
# timed.sh. Each phase appends one line when it ends:
#
#   START_UNIX_SECONDS<TAB>WALL_SECONDS<TAB>EXIT_STATUS<TAB>NAME
#
# to $BOXBENCH_TIMING_LOG (default: out/timing.log of this checkout). `.ci/run` and `make setup`
# begin a new log; `make test` adds to the one setup began (or begins one) and ends by printing
# it, with every package's and every slow test's time (scripts/timing), on failure too.
BOXBENCH_TIMING_LOG=${BOXBENCH_TIMING_LOG:-$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)/out/timing.log}
export BOXBENCH_TIMING_LOG
declare -A _timing_start=()

# timing_new WHO: begin a new log, with the host it ran on.
timing_new() {
  mkdir -p "$(dirname "$BOXBENCH_TIMING_LOG")"
  printf '# timing log begun by %s at %s; %s vCPUs, %s\n' "$1" "$(date -u '+%F %T UTC')" "$(nproc)" \
    "$(awk -F': ' '/^model name/ {print $2; exit}' /proc/cpuinfo)" >"$BOXBENCH_TIMING_LOG"
}

# phase_begin NAME / phase_end NAME [EXIT_STATUS]: time a stretch of the calling script.
phase_begin() { _timing_start[$1]=$EPOCHREALTIME; }
phase_end() {
  local start=${_timing_start[$1]:-}
  [ -n "$start" ] || return 0
  unset "_timing_start[$1]"
  mkdir -p "$(dirname "$BOXBENCH_TIMING_LOG")"
  awk -v s="$start" -v e="$EPOCHREALTIME" -v rc="${2:-0}" -v n="$1" \
    'BEGIN { printf "%.3f\t%.1f\t%d\t%s\n", s, e - s, rc, n }' >>"$BOXBENCH_TIMING_LOG"
}

# phase_end_all EXIT_STATUS: end every phase still open (from an EXIT trap: the script failed
# inside them).
phase_end_all() {
  local n
  for n in "${!_timing_start[@]}"; do phase_end "$n" "$1"; done
}
