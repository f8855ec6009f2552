#!/usr/bin/env bash
# timed.sh NAME CMD...: runs CMD as one phase of the timing log (scripts/timing.sh) and exits
# with its status. For commands started in the background; a script times its own stretches
# with phase_begin/phase_end. Killed (TERM, INT, HUP), it still records the phase as failed.
set -uo pipefail
source "$(dirname "$0")/timing.sh"
name=$1
shift
phase_begin "$name"
child=
trap 'kill "$child" 2>/dev/null; phase_end "$name" 143; exit 143' TERM INT HUP
# In the background and waited for, so that a signal is handled at once, not when CMD ends.
"$@" &
child=$!
wait "$child"
rc=$?
phase_end "$name" "$rc"
exit "$rc"
