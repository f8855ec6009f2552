#!/usr/bin/env bash
# Several experiments taking turns round by round: one round of each, in an order that
# rotates every round, then the next round, so that every experiment sees the same load and
# their figures can be compared side by side even on a shared, noisy host (docs/precision.md).
# Each experiment keeps its own results directory OUTDIR/<spec name> and its report
# OUTDIR/<spec name>.report.{txt,json}; OUTDIR/load.log has the load average at each turn.
#
#   scripts/take-turns.sh OUTDIR ROUNDS SPEC...
#
# ROUNDS is at most each spec's repetitions (boxbench run --until-round; the rounds beyond a
# spec's repetitions add nothing to it).
set -euo pipefail
cd "$(dirname "$0")/.."
if (($# < 3)); then
	echo "usage: $0 OUTDIR ROUNDS SPEC..." >&2
	exit 64
fi
bin=${BOXBENCH_BIN:-./bin/boxbench}
out=$1 rounds=$2
shift 2
specs=("$@")
mkdir -p "$out"
for ((r = 1; r <= rounds; r++)); do
	for ((i = 0; i < ${#specs[@]}; i++)); do
		spec=${specs[(i + r) % ${#specs[@]}]}
		name=$(basename "$spec" .yaml)
		echo "$(date -u +%FT%TZ) round $r $name load $(cut -d' ' -f1-3 /proc/loadavg)" | tee -a "$out/load.log"
		# A failed run is stored with its reason and makes run exit non-zero; the turns go
		# on, and the report says what failed.
		"$bin" run "$spec" --out "$out/$name" --resume --until-round "$r" >>"$out/$name.log" 2>&1 ||
			echo "$(date -u +%FT%TZ) round $r $name: exit $?" | tee -a "$out/load.log"
	done
done
echo "$(date -u +%FT%TZ) done load $(cut -d' ' -f1-3 /proc/loadavg)" | tee -a "$out/load.log"
for spec in "${specs[@]}"; do
	name=$(basename "$spec" .yaml)
	"$bin" report "$out/$name" >"$out/$name.report.txt"
	"$bin" report "$out/$name" --format json >"$out/$name.report.json"
	echo "$out/$name.report.txt"
done
