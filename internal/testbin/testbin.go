// Package testbin builds the binaries that tests and benchmarks run as
// separate processes: the grove binary, plugins, the Terraform provider.
package testbin

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// CoverDirVar names the environment variable that turns on coverage of the
// binaries tests run (`make cover` sets it): Build then compiles them with
// -cover, and the processes started from them write their counters to that
// directory, so statement coverage counts what end-to-end tests exercise.
const CoverDirVar = "GROVE_COVER_DIR"

// Build compiles the Go package pkg (as `go build` takes it: relative to
// the caller's directory, or absolute) into the file out, with env added to
// the environment. A failed build's error carries go's output.
//
// With GROVE_COVER_DIR set, the binary is built with -cover and GOCOVERDIR
// is set to that directory in this process's environment, so the binary's
// processes (and theirs: agents, plugins, node processes inherit it) record
// their coverage there when they exit. It overrides the GOCOVERDIR that
// `go test -cover` sets, which points into a directory go removes.
func Build(out, pkg string, env ...string) error {
	args := []string{"build", "-o", out}
	if dir := os.Getenv(CoverDirVar); dir != "" {
		abs, err := filepath.Abs(dir)
		if err != nil {
			return fmt.Errorf("%s: %w", CoverDirVar, err)
		}
		if err := os.MkdirAll(abs, 0o755); err != nil {
			return fmt.Errorf("create the coverage directory %s: %w", abs, err)
		}
		os.Setenv("GOCOVERDIR", abs)
		args = append(args, "-cover")
	}
	cmd := exec.Command("go", append(args, pkg)...)
	cmd.Env = append(os.Environ(), env...)
	if b, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("build %s: %w\n%s", pkg, err, strings.TrimSpace(string(b)))
	}
	return nil
}
