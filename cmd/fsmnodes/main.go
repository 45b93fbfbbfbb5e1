// Command fsmnodes is the command line tool of fsmnodes. It mirrors the
// ros2 CLI (topic, service, node, param, action, interface, launch) and
// works without a ROS 2 installation; see docs/cli.md.
package main

import (
	"os"

	"github.com/fsmnodes/fsmnodes/internal/cli"
	"github.com/fsmnodes/fsmnodes/msgs"
)

func main() {
	os.Exit(cli.Main(msgs.Registry(), os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}
