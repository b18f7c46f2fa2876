package agent

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hashicorp/go-hclog"

	"github.com/grovehq/grove/core/store"
)

// TestStartFailsCleanlyOnABadStore: a store that cannot be opened is an
// error with its cause. Before, the failed open left a typed nil *store.SQL
// in the Store interface and the cleanup panicked calling Close on it.
func TestStartFailsCleanlyOnABadStore(t *testing.T) {
	cases := []struct {
		name  string
		setup func(t *testing.T, dir string) *StoreConfig
		want  []string
	}{
		{"empty sqlite file", func(t *testing.T, dir string) *StoreConfig {
			if err := os.WriteFile(filepath.Join(dir, "grove.db"), nil, 0o600); err != nil {
				t.Fatal(err)
			}
			return nil
		}, []string{filepath.Join("data", "grove.db"), "is empty (0 bytes)", "backup"}},
		{"postgres not reachable", func(t *testing.T, dir string) *StoreConfig {
			return &StoreConfig{Driver: "postgres", DSN: "host=" + filepath.Join(dir, "no-server") + " port=1 user=grove dbname=grove sslmode=disable connect_timeout=2"}
		}, []string{`connect to PostgreSQL database "grove"`, "no such file or directory"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "data")
			if err := os.Mkdir(dir, 0o700); err != nil {
				t.Fatal(err)
			}
			cfg := &Config{Bind: "127.0.0.1:0", DataDir: dir, Store: tc.setup(t, dir), Builtin: []string{"/nonexistent/grove-builtin"}}
			a, err := Start(context.Background(), cfg, "test", hclog.NewNullLogger())
			if err == nil {
				a.Close()
				t.Fatal("started; want the store refused")
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not say %q", err, w)
				}
			}
			if tc.name == "empty sqlite file" && !errors.Is(err, store.ErrNotGrove) {
				t.Errorf("error does not wrap store.ErrNotGrove: %v", err)
			}
		})
	}
}

// TestDataDirIsPrivate: what the agent creates in its data dir before it
// starts plugins is the agent user's alone. (The start fails afterwards on a
// built-in plugin command that does not exist.)
func TestDataDirIsPrivate(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "a", "data")
	cfg := &Config{Bind: "127.0.0.1:0", DataDir: dir, Builtin: []string{"/nonexistent/grove-builtin"}}
	a, err := Start(context.Background(), cfg, "test", hclog.NewNullLogger())
	if err == nil {
		a.Close()
	}
	for path, want := range map[string]os.FileMode{
		dir: 0o700, filepath.Join(dir, "grove.db"): 0o600, filepath.Join(dir, "agent.lock"): 0o600, filepath.Join(dir, "engine-id"): 0o600,
	} {
		info, err := os.Stat(path)
		if err != nil {
			t.Errorf("%s: %v", path, err)
			continue
		}
		if got := info.Mode().Perm(); got != want {
			t.Errorf("%s has mode %o, want %o", path, got, want)
		}
	}
}

// TestLogFormat: log_format is "text" or "json"; anything else is refused
// naming the field and the values it takes.
func TestLogFormat(t *testing.T) {
	for format, ok := range map[string]bool{"": true, "text": true, "json": true, "JSON": false, "logfmt": false} {
		cfg := &Config{DataDir: t.TempDir(), LogFormat: format}
		err := cfg.Validate()
		if ok != (err == nil) {
			t.Errorf("log_format %q: %v", format, err)
		}
		if err != nil && !strings.Contains(err.Error(), `log_format must be "text" or "json"`) {
			t.Errorf("log_format %q: %v; want the rule named", format, err)
		}
	}
}
