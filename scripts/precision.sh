#!/usr/bin/env bash
# The precision table (docs/precision.md): the three experiments of the table take turns
# round by round — one round of each, in a rotating order, then the next round — so that the
# unpaired, paired-by-round and duet figures are measured under the same load rather than one
# after the other. Each experiment keeps its own results directory and report; its
# calibration section holds its rows of the table.
#
#   scripts/precision.sh [OUTDIR]        (default out/precision-<time>; about 20 minutes on a
#                                          quiet 2-vCPU host; needs redis-server, PostgreSQL
#                                          and sysbench, as make setup installs)
#
# The load average is logged beside every round (OUTDIR/load.log): on a shared host the
# figures mean nothing without it.
set -euo pipefail
cd "$(dirname "$0")/.."
bin=${BOXBENCH_BIN:-./bin/boxbench}
out=${1:-out/precision-$(date +%Y%m%d-%H%M%S)}
rounds=10
specs=(examples/precision-redis.yaml examples/precision-redis-duet.yaml examples/precision-postgresql.yaml)
mkdir -p "$out"
for ((r = 1; r <= rounds; r++)); do
	for ((i = 0; i < ${#specs[@]}; i++)); do
		spec=${specs[(i + r) % ${#specs[@]}]}
		name=$(basename "$spec" .yaml)
		echo "$(date -u +%FT%TZ) round $r $name load $(cut -d' ' -f1-3 /proc/loadavg)" | tee -a "$out/load.log"
		# A failed run is stored with its reason and makes run exit non-zero; the turn-taking
		# goes on, and the report says what failed.
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
