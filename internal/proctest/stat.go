package proctest

import (
	"fmt"
	"os"
	"strings"
)

// Stat and Live build on every system, so that packages built everywhere
// (internal/pyharness) can call them; without /proc a process reads as
// gone.

// Stat returns the fields of /proc/PID/stat that follow the command name,
// or nil when the process is gone: the state first, then the parent's pid;
// field N of proc(5)'s numbering is at index N-3. The command name is in
// parentheses and may itself hold spaces and ')', so the fields start
// after the last one.
func Stat(pid int) []string {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return nil
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return nil
	}
	return strings.Fields(s[i+1:])
}

// Live reports whether pid is a process that has not ended: it exists and
// is neither a zombie (state Z) nor being reaped (X).
func Live(pid int) bool {
	f := Stat(pid)
	return len(f) > 0 && f[0] != "Z" && f[0] != "X" && f[0] != "x"
}
