#!/usr/bin/env bash
# Benchmarks boxbench's YCSB generator (see docs/performance.md, "Load generator"):
#  1. its hot path against the no-op driver (go test -bench, -benchmem, one core), and the
#     drivers' operations against real servers (allocations per operation);
#  2. side by side with go-ycsb v1.0.1 against the same native Redis and PostgreSQL.
# Needs root (the native platform makes cgroups), redis-server and postgresql-15, and the Go
# module proxy for go-ycsb, which is built in a throwaway module outside the repository.
# Environment: LOADGEN_REPS (5), LOADGEN_SECONDS (10), LOADGEN_THREADS (8),
# LOADGEN_RECORDS (50000), LOADGEN_DBMS ("redis postgresql"), LOADGEN_WORKLOADS ("a c"),
# LOADGEN_POLICIES ("normal idle": the clients' scheduling policy, the same for both),, LOADGEN_OUT (a file for the
# table), LOADGEN_CLIENTS ("boxbench go-ycsb"; "boxbench" alone measures its CPU per operation
# only), SKIP_MICRO=1 / SKIP_SIDEBYSIDE=1.
set -euo pipefail
repo=$(cd "$(dirname "$0")/../.." && pwd)
cd "$repo"

if [[ -z "${SKIP_MICRO:-}" ]]; then
	go test -run '^$' -bench 'BenchmarkGeneratorNoop' -benchmem -cpu 1 -benchtime 3000000x ./bench/loadgen/
	go test -run '^$' -bench 'BenchmarkRecord|BenchmarkWorkerNoop' -benchmem -cpu 1 -benchtime 3000000x ./workload/ycsb/
	go test -run '^$' -bench 'BenchmarkOps' -benchmem -benchtime 3000x ./driver/redis/ ./driver/postgres/ ./driver/etcd/ ./driver/mongodb/ ./driver/cassandra/
fi
[[ -n "${SKIP_SIDEBYSIDE:-}" ]] && exit 0

work=$(mktemp -d /tmp/loadgen.XXXXXX)
trap 'rm -rf "$work"' EXIT
# go-ycsb v1.0.1: `go install pkg@version` is refused for it, so
# require the tagged version from a throwaway module and build its command there.
mkdir -p "$work/goycsb"
(
	cd "$work/goycsb"
	printf 'module throwaway/goycsb\n\ngo 1.21\n' >go.mod
	GOFLAGS=-mod=mod go get github.com/pingcap/go-ycsb@v1.0.1
	GOFLAGS=-mod=mod go build -o "$work/go-ycsb" github.com/pingcap/go-ycsb/cmd/go-ycsb
)
workloads=$(cd "$work/goycsb" && GOFLAGS=-mod=mod go list -m -f '{{.Dir}}' github.com/pingcap/go-ycsb)/workloads
go build -o "$work/ycsbrun" ./bench/loadgen/ycsbrun

LOADGEN_SIDEBYSIDE=1 GOYCSB="$work/go-ycsb" YCSBRUN="$work/ycsbrun" GOYCSB_WORKLOADS="$workloads" \
	go test -count=1 -timeout 60m -run TestSideBySide -v ./bench/loadgen/
