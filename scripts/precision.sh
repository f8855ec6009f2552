#!/usr/bin/env bash
# The precision table (docs/precision.md, "The precision table"): its three experiments take
# turns round by round (scripts/take-turns.sh), so that the unpaired, paired-by-round and duet
# figures are measured under the same load rather than one after the other. Each report's
# calibration section holds its rows of the table.
#
#   scripts/precision.sh [OUTDIR]     (default out/precision-<time>; about 20 minutes on a quiet
#                                      2-vCPU host; needs redis-server, PostgreSQL and sysbench,
#                                      as make setup installs)
set -euo pipefail
cd "$(dirname "$0")/.."
exec scripts/take-turns.sh "${1:-out/precision-$(date +%Y%m%d-%H%M%S)}" 10 \
	examples/precision-redis.yaml examples/precision-redis-duet.yaml examples/precision-postgresql.yaml
