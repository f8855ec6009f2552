# shellcheck shell=bash
# The timing log of a set-up and test run (docs/ci.md), sourced by setup.sh, test.sh and
# timed.sh. Each phase appends one line when it ends:
#
#   START_UNIX_SECONDS<TAB>WALL_SECONDS<TAB>EXIT_STATUS<TAB>NAME<TAB>CPU_SECONDS
#
# CPU_SECONDS is the user + system time of the processes the phase waited for (the calling
# shell's reaped children between phase_begin and phase_end: a build's compilers, a test binary
# and the QEMU it ran), not of what runs outside its tree (a daemon it asked, dockerd's
# containers). On 2 cpus a cold run is bound by the cpu time its phases need (docs/ci.md).
#
# to $BOXBENCH_TIMING_LOG (default: out/timing.log of this checkout). `.ci/run` and `make setup`
# begin a new log; `make test` adds to the one setup began (or begins one) and ends by printing
# it, with every package's and every slow test's time (scripts/timing), on failure too.
BOXBENCH_TIMING_LOG=${BOXBENCH_TIMING_LOG:-$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)/out/timing.log}
export BOXBENCH_TIMING_LOG
declare -A _timing_start=() _timing_cpu=()

# timing_new WHO: begin a new log, with the host it ran on.
timing_new() {
  mkdir -p "$(dirname "$BOXBENCH_TIMING_LOG")"
  printf '# timing log begun by %s at %s; %s vCPUs, %s\n' "$1" "$(date -u '+%F %T UTC')" "$(nproc)" \
    "$(awk -F': ' '/^model name/ {print $2; exit}' /proc/cpuinfo)" >"$BOXBENCH_TIMING_LOG"
}

# _children_cpu: the user + system seconds of this shell's reaped children so far (fields 16
# and 17 of /proc/$$/stat, in clock ticks; $$ is this shell in a command substitution too).
_children_cpu() {
  awk -v hz="$(getconf CLK_TCK)" '{ sub(/^.*\) /, ""); printf "%.2f", ($14 + $15) / hz }' "/proc/$$/stat"
}

# phase_begin NAME / phase_end NAME [EXIT_STATUS]: time a stretch of the calling script.
phase_begin() { _timing_start[$1]=$EPOCHREALTIME; _timing_cpu[$1]=$(_children_cpu); }
phase_end() {
  local start=${_timing_start[$1]:-} end=$EPOCHREALTIME cpu
  [ -n "$start" ] || return 0
  cpu=$(_children_cpu)
  cpu=$(awk -v a="${_timing_cpu[$1]:-0}" -v b="$cpu" 'BEGIN { printf "%.1f", b - a }')
  unset "_timing_start[$1]" "_timing_cpu[$1]"
  mkdir -p "$(dirname "$BOXBENCH_TIMING_LOG")"
  awk -v s="$start" -v e="$end" -v rc="${2:-0}" -v n="$1" -v c="$cpu" \
    'BEGIN { printf "%.3f\t%.1f\t%d\t%s\t%s\n", s, e - s, rc, n, c }' >>"$BOXBENCH_TIMING_LOG"
}

# phase_end_all EXIT_STATUS: end every phase still open (from an EXIT trap: the script failed
# inside them).
phase_end_all() {
  local n
  for n in "${!_timing_start[@]}"; do phase_end "$n" "$1"; done
}
