// Package loadgen benchmarks boxbench's YCSB generator: its hot path against the no-op driver
// (BenchmarkGenerator*), and side by side with go-ycsb v1.0.1 against the same native Redis
// and PostgreSQL (TestSideBySide, opt-in, driven by run.sh). Results: docs/performance.md,
// "Load generator".
package loadgen
