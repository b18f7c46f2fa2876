package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestAgentRefusesExposedBind: `grove agent` exits with the sentence that
// says how to fix an exposed agent, before it opens anything.
func TestAgentRefusesExposedBind(t *testing.T) {
	dir := t.TempDir()
	cfg := filepath.Join(dir, "agent.hcl")
	if err := os.WriteFile(cfg, []byte("bind = \"0.0.0.0:7470\"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name string
		args []string
		want []string
	}{
		{"-dev off loopback", []string{"agent", "-dev", "-bind", "0.0.0.0:0", "-data-dir", filepath.Join(dir, "a")},
			[]string{"Error: bind \"0.0.0.0:0\" is not a loopback address, and -dev trusts callers without a token", "bind 127.0.0.1"}},
		{"a config without tls off loopback", []string{"agent", "-config", cfg, "-data-dir", filepath.Join(dir, "b")},
			[]string{"Error: bind \"0.0.0.0:7470\" is not a loopback address", "add a block tls { cert_file = ", "or bind 127.0.0.1"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			out, errOut, code := grove(t, tc.args...)
			if code != 1 {
				t.Fatalf("exit %d, stdout %q, stderr %q; want 1", code, out, errOut)
			}
			for _, w := range tc.want {
				if !strings.Contains(errOut, w) {
					t.Errorf("stderr %q does not say %q", errOut, w)
				}
			}
			if _, err := os.Stat(tc.args[len(tc.args)-1]); !os.IsNotExist(err) {
				t.Errorf("the refused agent created its data dir: %v", err)
			}
		})
	}
}

// TestAgentRefusesUnknownLogLevel: -log-level names a level hclog knows; a
// misspelt one is a usage error rather than a logger at no level.
func TestAgentRefusesUnknownLogLevel(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "d")
	out, errOut, code := grove(t, "agent", "-dev", "-log-level", "loud", "-data-dir", dir)
	if code != 2 || !strings.Contains(errOut, `-log-level must be trace, debug, info, warn or error, got "loud"`) {
		t.Fatalf("exit %d, stdout %q, stderr %q; want 2 and the rule", code, out, errOut)
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Errorf("the refused agent created its data dir: %v", err)
	}
}
