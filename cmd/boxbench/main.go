// Command boxbench measures what running a database in a box costs.
package main

import (
	"os"

	"github.com/boxbench/boxbench/cli"
)

func main() {
	os.Exit(cli.Run(os.Args[1:], os.Stdout, os.Stderr))
}
