// Command busy is the load the telemetry tests and testdata/capture.sh run inside a cgroup or a
// container: it spins on the CPU and, when asked, holds memory and writes and reads back a file,
// so that every counter the collectors read moves. It is built statically (CGO_ENABLED=0) and
// imported as the only file of a container image, so no registry is needed.
package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"time"
)

func main() {
	spinners := flag.Int("spin", 1, "goroutines spinning on the CPU")
	memMiB := flag.Int("mem", 0, "MiB of memory to allocate and touch")
	ioMiB := flag.Int("io", 0, "MiB to write (with fsync) and read back from -dir, once")
	dir := flag.String("dir", os.TempDir(), "directory for the -io file")
	dur := flag.Duration("for", 0, "exit after this long (0: run until killed)")
	flag.Parse()

	if *memMiB > 0 {
		hold(*memMiB)
	}
	if *ioMiB > 0 {
		if err := writeRead(*dir, *ioMiB); err != nil {
			fmt.Fprintln(os.Stderr, "busy:", err)
			os.Exit(1)
		}
	}
	for i := 0; i < *spinners; i++ {
		go spin()
	}
	if *dur > 0 {
		time.Sleep(*dur)
		return
	}
	select {}
}

var held [][]byte

// hold allocates n MiB and writes every page so it becomes resident.
func hold(n int) {
	for i := 0; i < n; i++ {
		b := make([]byte, 1<<20)
		for j := 0; j < len(b); j += 4096 {
			b[j] = 1
		}
		held = append(held, b)
	}
}

func writeRead(dir string, n int) error {
	name := filepath.Join(dir, "busy.dat")
	f, err := os.Create(name)
	if err != nil {
		return err
	}
	defer os.Remove(name)
	buf := make([]byte, 1<<20)
	for i := range buf {
		buf[i] = byte(i)
	}
	for i := 0; i < n; i++ {
		if _, err := f.Write(buf); err != nil {
			f.Close()
			return err
		}
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	_, err = os.ReadFile(name)
	return err
}

func spin() {
	x := 0
	for {
		x++
	}
}
