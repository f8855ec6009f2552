package flock

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// Holders returns the processes that hold a flock on path, from the kernel's /proc/locks, each
// as "pid N (command line)": what a bounded wait names when it gives up. Empty when nobody
// holds it or the table cannot be read (the caller's message is then without the pid).
func Holders(path string) []string {
	var st unix.Stat_t
	if err := unix.Stat(path, &st); err != nil {
		return nil
	}
	return HoldersOf(st)
}

// HoldersOf is Holders of the file whose status is st (from fstat of a descriptor already
// open: no path is looked up again).
func HoldersOf(st unix.Stat_t) []string {
	f, err := os.Open("/proc/locks")
	if err != nil {
		return nil
	}
	defer f.Close()
	var out []string
	for _, pid := range parseLocks(f, unix.Major(st.Dev), unix.Minor(st.Dev), st.Ino) {
		out = append(out, fmt.Sprintf("pid %d (%s)", pid, commandLine(pid)))
	}
	return out
}

// parseLocks returns the pids of the granted FLOCK entries of /proc/locks on the inode ino of
// device major:minor. Waiters ("->" lines) are not holders.
func parseLocks(r io.Reader, major, minor uint32, ino uint64) []int {
	want := fmt.Sprintf("%02x:%02x:%d", major, minor, ino)
	var pids []int
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		// "N: FLOCK ADVISORY WRITE PID MAJ:MIN:INODE START END"
		if len(f) < 6 || f[1] != "FLOCK" || f[5] != want {
			continue
		}
		if pid, err := strconv.Atoi(f[4]); err == nil && pid > 0 {
			pids = append(pids, pid)
		}
	}
	return pids
}

// commandLine is pid's command line for a message: printable ASCII only, at most 120 bytes
// (it is another process's, so not trusted for a terminal).
func commandLine(pid int) string {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
	if err != nil || len(b) == 0 {
		return "command line unknown"
	}
	s := []byte(strings.TrimRight(string(b), "\x00"))
	for i, c := range s {
		if c == 0 {
			s[i] = ' '
		} else if c < 0x20 || c > 0x7e {
			s[i] = '?'
		}
	}
	if len(s) > 120 {
		s = append(s[:117], "..."...)
	}
	return string(s)
}
