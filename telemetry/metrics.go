package telemetry

// Metric defines one sample metric: its name, unit and what it measures.
type Metric struct {
	Name string `json:"name"`
	Unit string `json:"unit"`
	// From says which target field produces it: "cgroup", "pid", "host", "interfaces" (or
	// host), "datadir", "guest", "stats".
	From string `json:"from"`
	Help string `json:"help"`
}

// Metrics lists every metric a Sampler emits. Rates ("_per_second") are a counter's increase
// over the interval divided by its length; "_per_interval" values are increases over the
// interval; the rest are gauges read at the sample time.
var Metrics = []Metric{
	// Control group (db, neighbours). v1: cpu, cpuacct, memory, blkio controllers; v2: cpu.stat,
	// memory.*, io.stat. PSI: v2 files, or on a hybrid v1 host the unified mirror of the group.
	{"cpu_usage_seconds_per_second", "cores", "cgroup", "CPU time used by the group (v1 cpuacct.usage, v2 usage_usec)"},
	{"cpu_user_seconds_per_second", "cores", "cgroup", "user-mode CPU time (v1 cpuacct.stat is in 10 ms ticks)"},
	{"cpu_system_seconds_per_second", "cores", "cgroup", "kernel-mode CPU time"},
	{"cpu_periods_per_interval", "periods", "cgroup", "CFS enforcement periods in which the group was runnable; counts only with a CPU quota"},
	{"cpu_throttled_periods_per_interval", "periods", "cgroup", "of those, periods in which the group hit its quota and was throttled"},
	{"cpu_throttled_seconds_per_second", "seconds/second", "cgroup", "time the group's runnable tasks spent throttled, summed over CPUs"},
	{"memory_usage_bytes", "bytes", "cgroup", "memory charged to the group, page cache included (v1 memory.usage_in_bytes, v2 memory.current)"},
	{"memory_working_set_bytes", "bytes", "cgroup", "usage minus inactive page cache (what the kernel cannot easily reclaim)"},
	{"memory_cache_bytes", "bytes", "cgroup", "page cache (v1 total_cache, v2 file)"},
	{"memory_rss_bytes", "bytes", "cgroup", "anonymous memory (v1 total_rss, v2 anon)"},
	{"memory_swap_bytes", "bytes", "cgroup", "swap used by the group; absent without swap accounting, 0 on a host with no swap device (v1 derives it from two reads a moment apart)"},
	{"memory_major_faults_per_second", "faults/second", "cgroup", "page faults that read from disk (v1 total_pgmajfault, v2 pgmajfault)"},
	{"memory_minor_faults_per_second", "faults/second", "cgroup", "page faults served without disk I/O (v1 total_pgfault - total_pgmajfault, v2 pgfault - pgmajfault)"},
	{"context_switches_voluntary_per_second", "switches/second", "cgroup", "the group's threads gave up the CPU (summed over /proc/<pid>/task/*/status of its processes; absent above 512 threads)"},
	{"context_switches_involuntary_per_second", "switches/second", "cgroup", "the group's threads were preempted"},
	{"memory_limit_hits_per_interval", "events", "cgroup", "times usage hit the limit (v1 memory.failcnt, v2 memory.events max)"},
	{"memory_oom_kills_per_interval", "events", "cgroup", "processes killed by the OOM killer in the group"},
	{"io_read_bytes_per_second", "bytes/second", "cgroup", "bytes read from block devices by the group (v1 blkio.throttle.io_service_bytes, v2 io.stat rbytes); absent on v1 until blk-throttle is active on the device"},
	{"io_write_bytes_per_second", "bytes/second", "cgroup", "bytes written to block devices by the group"},
	{"io_read_ops_per_second", "ops/second", "cgroup", "read requests issued to block devices by the group"},
	{"io_write_ops_per_second", "ops/second", "cgroup", "write requests issued to block devices by the group"},
	{"pressure_cpu_some_seconds_per_second", "ratio", "cgroup,host", "share of time some task waited for a CPU (PSI)"},
	{"pressure_cpu_full_seconds_per_second", "ratio", "cgroup,host", "share of time all non-idle tasks waited for a CPU (PSI)"},
	{"pressure_memory_some_seconds_per_second", "ratio", "cgroup,host", "share of time some task stalled on memory (PSI)"},
	{"pressure_memory_full_seconds_per_second", "ratio", "cgroup,host", "share of time all non-idle tasks stalled on memory (PSI)"},
	{"pressure_io_some_seconds_per_second", "ratio", "cgroup,host", "share of time some task stalled on I/O (PSI)"},
	{"pressure_io_full_seconds_per_second", "ratio", "cgroup,host", "share of time all non-idle tasks stalled on I/O (PSI)"},

	// A box's parts (Target.Parts; Label: the component, e.g. docker-proxy, runsc-sentry).
	{"part_cpu_user_seconds_per_second", "cores", "parts", "user-mode CPU time of the component's processes or threads (/proc/<pid>/stat or task/<tid>/stat, 10 ms ticks)"},
	{"part_cpu_system_seconds_per_second", "cores", "parts", "kernel-mode CPU time of the component's processes or threads"},

	// Process (client).
	{"cpu_user_seconds_per_second", "cores", "pid", "user-mode CPU time of the process, all threads (/proc/<pid>/stat, 10 ms ticks)"},
	{"cpu_system_seconds_per_second", "cores", "pid", "kernel-mode CPU time of the process"},
	{"context_switches_voluntary_per_second", "switches/second", "pid", "the process gave up the CPU (blocked, slept)"},
	{"context_switches_involuntary_per_second", "switches/second", "pid", "the process was preempted"},
	{"sched_run_seconds_per_second", "cores", "pid", "time the process's threads ran on a CPU, summed over threads (/proc/<pid>/task/*/schedstat, ns)"},
	{"sched_wait_seconds_per_second", "seconds/second", "pid", "time the process's threads were runnable but waited for a CPU, summed over threads"},
	{"memory_rss_bytes", "bytes", "pid", "resident set size of the process"},
	{"threads", "threads", "pid", "threads of the process"},

	// Host.
	{"cpu_user_seconds_per_second", "cores", "host", "host CPU time in user mode (guest time included), summed over CPUs"},
	{"cpu_nice_seconds_per_second", "cores", "host", "host CPU time in user mode at positive nice"},
	{"cpu_system_seconds_per_second", "cores", "host", "host CPU time in kernel mode, interrupts excluded"},
	{"cpu_idle_seconds_per_second", "cores", "host", "host CPU time idle"},
	{"cpu_iowait_seconds_per_second", "cores", "host", "host CPU time idle with I/O outstanding"},
	{"cpu_irq_seconds_per_second", "cores", "host", "host CPU time in hard interrupts"},
	{"cpu_softirq_seconds_per_second", "cores", "host", "host CPU time in soft interrupts (network stacks, virtual networks)"},
	{"cpu_steal_seconds_per_second", "cores", "host", "time the hypervisor ran something else on this VM's CPUs"},
	{"cpus", "cpus", "host", "CPUs listed in /proc/stat"},
	{"softirq_events_per_second", "events/second", "host", "soft interrupts raised, by kind (Label: net_rx, net_tx, block, timer, sched, rcu, …; the softirq line of /proc/stat)"},
	{"tasks_cpu_seconds_per_second", "cores", "host", "CPU time charged to any task on the host: the root group's cpuacct.usage (every task, exited ones included), or without cgroup v1's cpuacct the sum over /proc/*/stat; busy CPU beyond it is time no task was charged for"},
	{"kernel_threads_cpu_seconds_per_second", "cores", "host", "CPU time of kernel threads by kind (Label: ksoftirqd, kworker, jbd2/<device>, kthreads)"},
	{"memory_total_bytes", "bytes", "host", "MemTotal"},
	{"memory_available_bytes", "bytes", "host", "MemAvailable"},
	{"memory_used_bytes", "bytes", "host", "MemTotal - MemAvailable"},
	{"memory_cached_bytes", "bytes", "host", "page cache (Cached)"},
	{"memory_buffers_bytes", "bytes", "host", "Buffers"},
	{"memory_dirty_bytes", "bytes", "host", "dirty page cache waiting for writeback"},
	{"memory_major_faults_per_second", "faults/second", "host", "host-wide page faults that read from disk (/proc/vmstat pgmajfault)"},
	{"swap_total_bytes", "bytes", "host", "SwapTotal"},
	{"swap_used_bytes", "bytes", "host", "SwapTotal - SwapFree"},
	{"swap_in_bytes_per_second", "bytes/second", "host", "pages swapped in (/proc/vmstat pswpin × page size)"},
	{"swap_out_bytes_per_second", "bytes/second", "host", "pages swapped out (pswpout × page size)"},
	{"load1", "tasks", "host", "1-minute load average"},
	{"load5", "tasks", "host", "5-minute load average"},
	{"load15", "tasks", "host", "15-minute load average"},
	{"net_receive_bytes_per_second", "bytes/second", "interfaces", "bytes received; Label is the interface"},
	{"net_transmit_bytes_per_second", "bytes/second", "interfaces", "bytes sent; Label is the interface"},
	{"net_receive_packets_per_second", "packets/second", "interfaces", "packets received"},
	{"net_transmit_packets_per_second", "packets/second", "interfaces", "packets sent"},
	{"net_receive_drops_per_second", "packets/second", "interfaces", "received packets dropped"},
	{"net_transmit_drops_per_second", "packets/second", "interfaces", "packets dropped while sending"},

	// Block device under a data directory (Label: device name); disk_backing_* is the device
	// under a loop device's backing file.
	{"disk_read_bytes_per_second", "bytes/second", "datadir", "bytes read from the device (/proc/diskstats sectors × 512)"},
	{"disk_write_bytes_per_second", "bytes/second", "datadir", "bytes written to the device"},
	{"disk_read_ops_per_second", "ops/second", "datadir", "reads completed (IOPS)"},
	{"disk_write_ops_per_second", "ops/second", "datadir", "writes completed (IOPS)"},
	{"disk_io_time_seconds_per_second", "ratio", "datadir", "utilisation: share of time with requests in flight (io_ticks)"},
	{"disk_flush_ops_per_second", "ops/second", "datadir", "cache flushes completed (fsync reaching the device); Linux 5.5+"},
	{"journal_commits_per_second", "commits/second", "datadir", "transactions the ext4 journal (jbd2) of the device's file system committed (/proc/fs/jbd2/<device>-*/info); absent without a jbd2 journal"},
	{"disk_backing_read_bytes_per_second", "bytes/second", "datadir", "as disk_*, for the device under a loop device's backing file"},
	{"disk_backing_write_bytes_per_second", "bytes/second", "datadir", "as disk_*, backing device"},
	{"disk_backing_read_ops_per_second", "ops/second", "datadir", "as disk_*, backing device"},
	{"disk_backing_write_ops_per_second", "ops/second", "datadir", "as disk_*, backing device"},
	{"disk_backing_io_time_seconds_per_second", "ratio", "datadir", "as disk_*, backing device"},
	{"disk_backing_flush_ops_per_second", "ops/second", "datadir", "as disk_*, backing device"},
	// A VM guest's own view (source "<box>-guest": the server's cgroup v2 group in the guest,
	// with the cgroup metrics above; "<box>-guest-system": the whole guest, with the host
	// metrics above and disk_* for each virtio disk, labelled vda, vdb, …).
	{"guest_read_seconds", "seconds", "guest", "how long the read through the guest agent took"},
	{"guest_read_age_seconds", "seconds", "guest", "how old the guest read was when the tick used it: the stamp's lag"},
	// A box reported by something other than this host (Target.Stats: a pod on another node,
	// through its kubelet's summary API): cpu_usage_seconds_per_second, memory_usage_bytes,
	// memory_working_set_bytes, memory_rss_bytes, memory_major_faults_per_second as above, over
	// the source's own refresh intervals.
	{"stats_age_seconds", "seconds", "stats", "how old the source's values were when read (the kubelet refreshes them every 10-15 s)"},
}
