//go:build linux

package process

import "testing"

// TestParseStat: a process's start time is field 22 of /proc/<pid>/stat,
// counted past the command name (which may hold spaces and parentheses),
// and a process in state Z (a zombie) or X (being reaped) has ended.
func TestParseStat(t *testing.T) {
	rest := " 1 1 1 0 -1 4194560 100 0 0 0 0 0 0 0 20 0 1 0 987654 1000 100"
	for _, tc := range []struct {
		state string
		ended bool
	}{{"S", false}, {"R", false}, {"D", false}, {"T", false}, {"Z", true}, {"X", true}, {"x", true}} {
		ticks, ended := parseStat([]byte("4242 (sleep (a) b) " + tc.state + rest))
		if ticks != 987654 || ended != tc.ended {
			t.Errorf("state %s: start %d, ended %v; want 987654, %v", tc.state, ticks, ended, tc.ended)
		}
	}
	if ticks, ended := parseStat([]byte("4242 (cut short")); ticks != 0 || ended {
		t.Errorf("a stat without its fields: %d, %v; want 0, false", ticks, ended)
	}
}
