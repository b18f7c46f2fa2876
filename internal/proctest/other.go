//go:build !linux

package proctest

import "testing"

// WaitStopped skips the test: whether a stopped process's threads have all
// stopped is read from Linux's /proc, and without it a test that hangs a
// process cannot know when the hang holds.
func WaitStopped(t testing.TB, pid int) {
	t.Helper()
	t.Skipf("waiting for process %d to stop needs Linux's /proc", pid)
}
