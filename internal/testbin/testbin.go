// Package testbin builds the binaries that tests and benchmarks run as
// separate processes: the grove binary, plugins, the Terraform provider.
package testbin

import (
	"fmt"
	"os"
	"os/exec"
	"strings"
)

// Build compiles the Go package pkg (as `go build` takes it: relative to
// the caller's directory, or absolute) into the file out, with env added to
// the environment. A failed build's error carries go's output.
func Build(out, pkg string, env ...string) error {
	cmd := exec.Command("go", "build", "-o", out, pkg)
	cmd.Env = append(os.Environ(), env...)
	if b, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("build %s: %w\n%s", pkg, err, strings.TrimSpace(string(b)))
	}
	return nil
}
