package agent

import (
	"os"
	"path/filepath"
	"testing"
)

// TestUIEnabled: the console is on in dev mode unless turned off, and off
// otherwise unless turned on.
func TestUIEnabled(t *testing.T) {
	on, off := true, false
	for _, c := range []struct {
		dev  bool
		ui   *bool
		want bool
	}{
		{false, nil, false}, {true, nil, true},
		{false, &on, true}, {true, &off, false}, {true, &on, true}, {false, &off, false},
	} {
		if got := (&Config{Dev: c.dev, UI: c.ui}).UIEnabled(); got != c.want {
			t.Errorf("dev=%v ui=%v: UIEnabled %v; want %v", c.dev, c.ui, got, c.want)
		}
	}
	path := filepath.Join(t.TempDir(), "agent.hcl")
	if err := os.WriteFile(path, []byte("ui = true\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg, err := LoadConfig(path)
	if err != nil {
		t.Fatal(err)
	}
	if !cfg.UIEnabled() {
		t.Error("ui = true in the config file does not turn the console on")
	}
}
