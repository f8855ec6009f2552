// Command timing says where the time of `make setup test` went (package internal/timing).
//
//	timing stream -raw FILE       go test -json on stdin → plain go test output on stdout,
//	                              every line kept in FILE
//	timing report -log LOG -json FILE [-slow 20s]
//	                              the phases of LOG, then the packages and slow tests of FILE
//
// scripts/test.sh runs both; the report is printed on failure too, with what was recorded.
package main

import (
	"errors"
	"flag"
	"fmt"
	"io/fs"
	"os"
	"time"

	"github.com/boxbench/boxbench/internal/timing"
)

const module = "github.com/boxbench/boxbench"

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: timing stream -raw FILE | timing report -log LOG -json FILE [-slow DURATION]")
		os.Exit(2)
	}
	var err error
	switch os.Args[1] {
	case "stream":
		err = stream(os.Args[2:])
	case "report":
		err = report(os.Args[2:])
	default:
		err = fmt.Errorf("unknown command %q: want stream or report", os.Args[1])
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "timing:", err)
		os.Exit(1)
	}
}

func stream(args []string) error {
	fl := flag.NewFlagSet("stream", flag.ExitOnError)
	raw := fl.String("raw", "", "file that keeps every line of the go test -json stream")
	_ = fl.Parse(args)
	if *raw == "" {
		return errors.New("stream: -raw FILE is required")
	}
	f, err := os.Create(*raw)
	if err != nil {
		return err
	}
	_, err = timing.Stream(os.Stdin, os.Stdout, f)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

func report(args []string) error {
	fl := flag.NewFlagSet("report", flag.ExitOnError)
	logPath := fl.String("log", "", "the timing log the scripts appended phases to")
	jsonPath := fl.String("json", "", "the recorded go test -json stream (absent: the run ended before the tests)")
	slow := fl.Duration("slow", 20*time.Second, "list each test at least this long")
	_ = fl.Parse(args)
	rep := timing.Report{Slow: *slow, Module: module}
	if *logPath != "" {
		f, err := os.Open(*logPath)
		switch {
		case errors.Is(err, fs.ErrNotExist):
		case err != nil:
			return err
		default:
			var skipped int
			rep.Phases, skipped, err = timing.ParsePhases(f)
			f.Close()
			if err != nil {
				return err
			}
			if skipped > 0 {
				fmt.Printf("(%d unreadable lines of %s skipped)\n", skipped, *logPath)
			}
		}
	}
	if *jsonPath != "" {
		f, err := os.Open(*jsonPath)
		switch {
		case errors.Is(err, fs.ErrNotExist):
		case err != nil:
			return err
		default:
			rep.Results, err = timing.ReadResults(f)
			f.Close()
			if err != nil {
				return err
			}
		}
	}
	rep.Write(os.Stdout)
	return nil
}
