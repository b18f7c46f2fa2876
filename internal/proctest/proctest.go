//go:build linux

// Package proctest reads process state from /proc for tests that stop and
// kill the processes they started, and for the tests and benchmarks that
// find the processes local.process started: every pid, a process's argv,
// and the directory a local.process helper names in its argv, which is how
// a test tells its own node processes from a user's or another run's.
package proctest

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/grovehq/grove/plugins/builtin/process"
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

// WaitStopped waits until every thread of process pid, sent SIGSTOP, has
// stopped (AllThreadsStopped), and fails the test after ten seconds.
func WaitStopped(t testing.TB, pid int) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); !AllThreadsStopped(pid); {
		if time.Now().After(deadline) {
			t.Fatalf("process %d has not stopped 10s after SIGSTOP", pid)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// PPID returns a process's parent's pid, or 0 when it is gone.
func PPID(pid int) int {
	f := Stat(pid)
	if len(f) < 2 {
		return 0
	}
	ppid, _ := strconv.Atoi(f[1])
	return ppid
}

// PIDs lists the processes in /proc.
func PIDs() []int {
	var out []int
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		if pid, err := strconv.Atoi(e.Name()); err == nil {
			out = append(out, pid)
		}
	}
	return out
}

// Cmdline returns a process's argv, or nil when it is gone.
func Cmdline(pid int) []string {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
	if err != nil || len(b) == 0 {
		return nil
	}
	return strings.Split(strings.TrimSuffix(string(b), "\x00"), "\x00")
}

// HelperDir returns the directory that argv names when it is a
// local.process helper's (`grove __process-supervisor DIR` or
// `grove __process-wrap DIR -- ...`), and "" for any other process.
func HelperDir(argv []string) string {
	if len(argv) > 2 && (argv[1] == process.SupervisorCommand || argv[1] == process.WrapCommand) {
		return argv[2]
	}
	return ""
}
