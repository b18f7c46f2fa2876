package cli

import (
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/grovehq/grove/hcl"
)

// Limits of the files a user names to the CLI. maxInputBytes is the cap
// HCL definition files have, and the agent's default request body limit,
// which a spec or a dependency file is sent within. maxLargeInputBytes is
// for what one evaluation or a whole fleet produces (a saved plan, a
// placement snapshot): the cap of everything one HCL evaluation makes.
const (
	maxInputBytes      = hcl.MaxSourceBytes
	maxLargeInputBytes = hcl.MaxEvalBytes
)

// readInput reads the file a user gave to a flag or argument (what, such
// as "-spec-file"), "-" being stdin, refusing one over limit bytes without
// reading more of it than that.
func readInput(stdin io.Reader, what, path string, limit int) ([]byte, error) {
	r, name := stdin, "standard input"
	if path != "-" {
		f, err := os.Open(path)
		if err != nil {
			return nil, fmt.Errorf("Cannot read %s: %w", what, err) // err names the path
		}
		defer f.Close()
		r, name = f, path
	}
	b, err := hcl.ReadLimited(r, limit)
	if errors.Is(err, hcl.ErrTooLarge) {
		return nil, fmt.Errorf("%s %s holds more than %s; grove reads at most that from one file.", what, name, sizeText(limit))
	}
	if err != nil {
		return nil, fmt.Errorf("Cannot read %s %s: %w", what, name, err)
	}
	return b, nil
}

// sizeText writes a limit in MiB when it is whole MiB, else in bytes.
func sizeText(n int) string {
	if n >= 1<<20 && n%(1<<20) == 0 {
		return fmt.Sprintf("%d MiB", n>>20)
	}
	return fmt.Sprintf("%d bytes", n)
}
