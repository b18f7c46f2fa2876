//go:build linux

// Package proctest reads process state from /proc for tests that stop and
// kill the processes they started.
package proctest

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// AllThreadsStopped reports whether every thread of process pid is stopped
// (state T). kill(SIGSTOP) returns before every thread has stopped, and a
// thread still running can answer one more call, so a test that hangs a
// process waits for this before relying on it.
func AllThreadsStopped(pid int) bool {
	tasks, err := filepath.Glob(fmt.Sprintf("/proc/%d/task/*/stat", pid))
	if err != nil || len(tasks) == 0 {
		return false
	}
	for _, f := range tasks {
		b, err := os.ReadFile(f)
		if err != nil {
			return false
		}
		// The state follows the command name, which is in parentheses and
		// may itself contain ')'.
		s := string(b)
		i := strings.LastIndexByte(s, ')')
		if i < 0 || i+2 >= len(s) || s[i+2] != 'T' {
			return false
		}
	}
	return true
}
