// Command boxbench measures what running a database in a box costs.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"github.com/boxbench/boxbench/cli"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := cli.Main(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}
