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

// terminalWidth is f's width in columns, 0 when it cannot be read.
func terminalWidth(f *os.File) int {
	w, _, err := term.GetSize(int(f.Fd()))
	if err != nil {
		return 0
	}
	return w
}
