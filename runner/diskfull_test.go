package runner

import (
	"errors"
	"fmt"
	"os"
	"strings"
	"syscall"
	"testing"
)

func TestDiskFull(t *testing.T) {
	root := t.TempDir()
	for _, c := range []struct {
		name string
		err  error
		full bool
	}{
		{"errno", fmt.Errorf("restore seed: %w", &os.PathError{Op: "write", Path: "/x", Err: syscall.ENOSPC}), true},
		{"a database's message", errors.New("redis: MISCONF Errors writing to the AOF file: No space left on device"), true},
		{"another errno", fmt.Errorf("restore seed: %w", &os.PathError{Op: "write", Path: "/x", Err: syscall.EIO}), false},
		{"another message", errors.New("the database stopped answering"), false},
		{"nil", nil, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			got := diskFull(c.err, root)
			if !c.full {
				if got != "" {
					t.Errorf("diskFull = %q, want none", got)
				}
				return
			}
			for _, want := range []string{"disk full", "the work root " + root, "MiB free", "--work-root"} {
				if !strings.Contains(got, want) {
					t.Errorf("diskFull = %q, want it to hold %q", got, want)
				}
			}
		})
	}
}
