package cli

import (
	"os"

	"golang.org/x/term"
)

// isTerminal reports whether f is a terminal (not merely a character device
// such as /dev/null), on every platform the CLI builds for.
func isTerminal(f *os.File) bool {
	return term.IsTerminal(int(f.Fd()))
}
