package runner

import "time"

// SmallSpec is a three-run native Redis experiment for the runner's tests in both test packages.
const SmallSpec = `apiVersion: boxbench/v1alpha1
kind: Experiment
name: runner-panic
dbms: redis
workload: {type: ycsb, mix: read-heavy, threads: 1, duration: 1s, warmup: 0s}
dataset: {records: 500, fieldCount: 2, fieldLength: 20}
limits: {cpus: 1, memory: 256MiB}
matrix:
  platform: [native]
repetitions: 3
order: sequential
`

// SetGraces shortens the workload's grace times for a test; the returned function restores them.
func SetGraces(measure, abandon time.Duration) (restore func()) {
	m, a := measureGrace, abandonGrace
	measureGrace, abandonGrace = measure, abandon
	return func() { measureGrace, abandonGrace = m, a }
}
