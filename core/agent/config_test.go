package agent

import (
	"strings"
	"testing"
)

// TestConfigBounds: each size and interval of the agent config is held to
// its bound, the error naming the field, the rule and the value; the
// bounds themselves and the values meaning "the default" or "off" pass.
func TestConfigBounds(t *testing.T) {
	for _, c := range []struct {
		name string
		cfg  Config
		want string // "" for valid
	}{
		{"defaults", Config{}, ""},
		{"the most of everything", Config{Workers: &WorkersConfig{Cluster: 1024, Node: 1024, NodeBatch: 10000, MaxNodesPerCluster: 1000000, LeaseSeconds: 86400}}, ""},
		{"negative cluster workers", Config{Workers: &WorkersConfig{Cluster: -1}},
			"workers.cluster must be from 1 to 1024 (0, or leaving it out, takes the default), got -1"},
		{"a hundred million cluster workers", Config{Workers: &WorkersConfig{Cluster: 100000000}}, "workers.cluster must be from 1 to 1024"},
		{"node workers", Config{Workers: &WorkersConfig{Node: 1025}}, "workers.node must be from 1 to 1024"},
		{"node batch", Config{Workers: &WorkersConfig{NodeBatch: -5}}, "workers.node_batch must be from 1 to 10000"},
		{"negative max nodes", Config{Workers: &WorkersConfig{MaxNodesPerCluster: -1}}, "workers.max_nodes_per_cluster must be from 1 to 1000000"},
		{"lease", Config{Workers: &WorkersConfig{LeaseSeconds: -3}}, "workers.lease_seconds must be from 1 to 86400"},
		{"keep everything", Config{Orchestrator: &OrchestratorConfig{Retention: -1}}, ""},
		{"retention", Config{Orchestrator: &OrchestratorConfig{Retention: -2}}, "orchestrator.retention must be -1 (keep everything) or 0 or more, got -2"},
		{"checks off", Config{Orchestrator: &OrchestratorConfig{CheckInterval: "0s"}}, ""},
		{"checks at the least", Config{Orchestrator: &OrchestratorConfig{CheckInterval: "100ms"}}, ""},
		{"checks every nanosecond", Config{Orchestrator: &OrchestratorConfig{CheckInterval: "1ns"}},
			`orchestrator.check_interval must be a duration of at least 100ms such as "5s", or "0s" to turn health checks off, got "1ns"`},
		{"negative checks", Config{Orchestrator: &OrchestratorConfig{CheckInterval: "-1s"}}, "orchestrator.check_interval must be a duration"},
		{"reaping every nanosecond", Config{Orchestrator: &OrchestratorConfig{ReapInterval: "1ns"}},
			`orchestrator.reap_interval must be a duration of at least 100ms such as "1m", got "1ns"`},
		{"heartbeat every nanosecond", Config{HostHeartbeatInterval: "1ns"},
			`host_heartbeat_interval must be at least 100ms: each heartbeat writes the store, got "1ns"`},
		{"log level", Config{LogLevel: "loud"}, `log_level must be trace, debug, info, warn or error, got "loud"`},
		{"log level in capitals", Config{LogLevel: "DEBUG"}, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			c.cfg.DataDir = t.TempDir()
			err := c.cfg.Validate()
			switch {
			case c.want == "" && err != nil:
				t.Fatalf("want valid, got %v", err)
			case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
				t.Fatalf("got %v, want an error containing %q", err, c.want)
			}
		})
	}
}
