package fio

import (
	"strings"
	"testing"
)

// TestHostileJobs feeds job maps that would make fio (running as root, on the host for the
// native platform) run a program, load code, read or write a file by name, or smuggle an
// option through a value. Each must be refused, naming the option.
func TestHostileJobs(t *testing.T) {
	for _, tc := range []struct {
		name string
		job  map[string]any
		want string
	}{
		{"exec engine", map[string]any{"rw": "write", "ioengine": "exec", "program": "/usr/bin/id"}, `Job.ioengine: "exec" is invalid: one of psync, sync, libaio, io_uring, posixaio`},
		{"exec program", map[string]any{"rw": "write", "program": "/usr/bin/id"}, "Job.program: is not an allowed fio option"},
		{"external engine", map[string]any{"rw": "write", "ioengine": "external:/tmp/x.so"}, `Job.ioengine: "external:/tmp/x.so" is invalid`},
		{"write_iolog", map[string]any{"rw": "write", "write_iolog": "/etc/cron.d/x"}, "Job.write_iolog: is not an allowed fio option"},
		{"read_iolog", map[string]any{"rw": "write", "read_iolog": "/etc/shadow"}, "Job.read_iolog: is not an allowed fio option"},
		{"replay_redirect", map[string]any{"rw": "write", "replay_redirect": "/dev/sda"}, "Job.replay_redirect: is not an allowed fio option"},
		{"filename", map[string]any{"rw": "write", "filename": "/dev/sda"}, "Job.filename: is set by the box's data directory"},
		{"directory", map[string]any{"rw": "write", "directory": "/etc"}, "Job.directory: is set by the box's data directory"},
		{"opendir", map[string]any{"rw": "write", "opendir": "/"}, "Job.opendir: is set by"},
		{"exec_prerun", map[string]any{"rw": "write", "exec_prerun": "rm -rf /"}, "Job.exec_prerun: is not an allowed fio option"},
		{"exec_postrun", map[string]any{"rw": "write", "exec_postrun": "id"}, "Job.exec_postrun: is not an allowed fio option"},
		{"trigger", map[string]any{"rw": "write", "trigger": "reboot"}, "Job.trigger: is not an allowed fio option"},
		{"trigger_cmd", map[string]any{"rw": "write", "trigger_cmd": "id"}, "Job.trigger_cmd: is not an allowed fio option"},
		{"verify_state_save", map[string]any{"rw": "write", "verify_state_save": 1}, "Job.verify_state_save: is not an allowed fio option"},
		{"ioscheduler", map[string]any{"rw": "write", "ioscheduler": "none"}, "Job.ioscheduler: is not an allowed fio option"},
		{"cgroup", map[string]any{"rw": "write", "cgroup": "x"}, "Job.cgroup: is not an allowed fio option"},
		{"path in a value", map[string]any{"rw": "write", "bs": "../../etc/passwd"}, `Job.bs: "../../etc/passwd" is invalid`},
		{"option in a value", map[string]any{"rw": "write", "bs": "4k --exec_prerun=id"}, `Job.bs: "4k --exec_prerun=id" is invalid`},
		{"equals in a value", map[string]any{"rw": "write", "bs": "4k=x"}, `Job.bs: "4k=x" is invalid`},
		{"dash value", map[string]any{"rw": "-write"}, `Job.rw: "-write" is invalid`},
		{"newline in a value", map[string]any{"rw": "write\nexec_prerun=id"}, `Job.rw: "write\nexec_prerun=id" is invalid`},
		{"env in a value", map[string]any{"rw": "write", "bs": "${HOME}"}, `Job.bs: "${HOME}" is invalid`},
		{"escape in a name", map[string]any{"rw": "write", "\x1b[31mred": 1}, `Job."\x1b[31mred": is not an allowed fio option`},
		{"unknown preset", map[string]any{"preset": "\x1b]0;x\a"}, `Job.preset: "\x1b]0;x\a" is invalid`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := CheckJob(tc.job)
			if err == nil {
				t.Fatalf("accepted %v", tc.job)
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %q does not contain %q", err, tc.want)
			}
			if strings.ContainsAny(err.Error(), "\x1b\a") {
				t.Errorf("error carries a raw control character: %q", err)
			}
		})
	}
}

// TestAllowedJobs: the allowlist still takes what the presets and common jobs use.
func TestAllowedJobs(t *testing.T) {
	for _, job := range []any{
		"fsync-high",
		map[string]any{"preset": "wal", "bs": "16k"},
		map[string]any{"rw": "randrw", "rwmixread": 70, "bs": "4k", "ioengine": "libaio", "iodepth": 16},
		map[string]any{"rw": "randwrite", "bssplit": "4k/50:64k/50", "random_distribution": "zipf:1.2", "fsync": 10},
		map[string]any{"rw": "write", "bsrange": "4k-64k", "end_fsync": true, "randrepeat": false, "norandommap": 1},
	} {
		if err := CheckJob(job); err != nil {
			t.Errorf("%v refused: %v", job, err)
		}
	}
}
