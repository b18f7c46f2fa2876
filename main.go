// Command grove is Grove's CLI, agent and built-in plugin server.
package main

import (
	"os"

	"github.com/grovehq/grove/cli"
)

func main() {
	os.Exit(cli.Main(os.Args[1:]))
}
