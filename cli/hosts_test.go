package cli

import (
	"strings"
	"testing"
)

// TestHostUpdateUsage: grove host update checks its flags before calling
// the agent, naming the flag and the rule.
func TestHostUpdateUsage(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"host", "update", "h1"}, "usage: grove host update"},
		{[]string{"host", "update", "-availability", "sleep", "h1"}, `-availability must be one of active, pause, drain, got "sleep"`},
		{[]string{"host", "update", "-label", "novalue", "h1"}, `-label "novalue" is not KEY=VALUE`},
		{[]string{"host", "update", "-label", "a=b", "-clear-labels", "h1"}, "-label and -clear-labels cannot be used together"},
		{[]string{"host", "show"}, "usage: grove host show HOST"},
		{[]string{"host", "list", "extra"}, "usage: grove host list"},
	} {
		_, stderr, code := runCLI(t, append(c.args, "-address", "http://127.0.0.1:1")...)
		if code == 0 || !strings.Contains(stderr, c.want) {
			t.Errorf("grove %s: exit %d, stderr %q; want a usage error with %q", strings.Join(c.args, " "), code, stderr, c.want)
		}
	}
}
