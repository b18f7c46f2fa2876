package cli

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// TestClusterStatusInstances: a failover cluster's status shows each
// host's instance as <host> <status> <monitor state> <flags>, and a
// cluster without instances shows no such section.
func TestClusterStatusInstances(t *testing.T) {
	instances := []map[string]any{
		{"host": "a", "status": "n/a", "state": "idle", "flags": "L", "frozen": false, "reason": "its agent is gone"},
		{"host": "b", "status": "up", "state": "idle", "flags": "", "frozen": false},
		{"host": "c", "status": "down", "state": "start failed", "flags": "F", "frozen": true},
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		switch r.URL.Path {
		case "/v1/clusters/pg":
			cl := map[string]any{"id": "c1", "name": "pg", "status": "ACTIVE", "desired_capacity": 1, "data": map[string]any{}}
			if instances != nil {
				cl["instances"] = instances
			}
			_ = json.NewEncoder(w).Encode(map[string]any{"cluster": cl})
		case "/v1/nodes":
			_ = json.NewEncoder(w).Encode(map[string]any{"nodes": []any{}})
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(srv.Close)
	t.Setenv("GROVE_ADDR", srv.URL)
	t.Setenv("GROVE_TOKEN", "grove_test")
	out, errOut, code := grove(t, "cluster", "status", "pg")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	for _, want := range []string{"Instances:\n", "  a     n/a     idle          L      its agent is gone\n", "  b     up      idle          -\n",
		"  c     down    start failed  F\n"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	instances = nil
	out, errOut, code = grove(t, "cluster", "status", "pg")
	if code != 0 || strings.Contains(out, "Instances:") {
		t.Errorf("a cluster without instances: exit %d, output:\n%s%s", code, out, errOut)
	}
}
