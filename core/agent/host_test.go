package agent

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestHostConfig: host_name defaults to the machine's hostname, and each
// host key is checked with an error naming it and its rule.
func TestHostConfig(t *testing.T) {
	c := Config{DataDir: t.TempDir()}
	if err := c.Validate(); err != nil {
		t.Fatal(err)
	}
	if hn, _ := os.Hostname(); c.HostName != hn || c.HostHeartbeatInterval != "5s" || c.HostDownTimeout != "30s" {
		t.Errorf("defaults: host_name %q (hostname %q), heartbeat %q, timeout %q", c.HostName, hn, c.HostHeartbeatInterval, c.HostDownTimeout)
	}
	path := filepath.Join(t.TempDir(), "agent.hcl")
	src := "host_name = \"node-1.example\"\nhost_labels = { rack = \"r1\", \"disk.type\" = \"ssd\" }\nhost_heartbeat_interval = \"1s\"\nhost_down_timeout = \"3s\"\n"
	if err := os.WriteFile(path, []byte(src), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg, err := LoadConfig(path)
	if err != nil {
		t.Fatal(err)
	}
	cfg.DataDir = t.TempDir()
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	if cfg.HostName != "node-1.example" || cfg.HostLabels["rack"] != "r1" || cfg.HostLabels["disk.type"] != "ssd" {
		t.Errorf("loaded %+v", cfg)
	}
	for _, tc := range []struct {
		c    Config
		want string
	}{
		{Config{HostName: "has space"}, `host_name "has space" is not a valid host name`},
		{Config{HostName: "-lead"}, `host_name "-lead" is not a valid host name`},
		{Config{HostLabels: map[string]string{"": "x"}}, `host_labels key "" is not valid`},
		{Config{HostLabels: map[string]string{"k": strings.Repeat("v", 256)}}, `host_labels value of "k" is 256 characters long`},
		{Config{HostHeartbeatInterval: "0s"}, `host_heartbeat_interval must be a positive duration`},
		{Config{HostDownTimeout: "soon"}, `host_down_timeout must be a positive duration`},
		{Config{HostHeartbeatInterval: "10s", HostDownTimeout: "15s"}, `host_down_timeout (15s) must be at least twice host_heartbeat_interval (10s)`},
	} {
		tc.c.DataDir = t.TempDir()
		if err := tc.c.Validate(); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: got %v, want an error containing %q", tc.c, err, tc.want)
		}
	}
}
