// Package placement decides where and how the client (boxbench's load generator, the boxbench
// process itself) runs on the host: Pin fixes its cpus for the whole experiment, SetPolicy
// gives its threads a Linux scheduling policy for the measured window.
//
// Both act on every thread of the calling process. Threads created later and child processes
// (sysbench) inherit the mask and the policy from the thread that creates them; the native
// platform's boxes reset the policy for their own processes (platform/hostproc InGroup).
//
// Layer (docs/architecture.md): a leaf — it imports no other package of boxbench, so any
// package may import it.
package placement
