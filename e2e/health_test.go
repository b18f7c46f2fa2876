package e2e

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/grovehq/grove/api"
)

// TestHealthPolicy runs senlin.policy.health through the API with a real
// agent: grove.noop nodes, whose driver always finds them running, are
// watched through NODE_STATUS_POLL_URL against a server of the test's own
// on loopback; the node whose URL answers "sick" is found dead by the
// agent's health loop and recovered with the policy's RECREATE, the other
// is left alone.
func TestHealthPolicy(t *testing.T) {
	var mu sync.Mutex
	sick := map[string]bool{}
	polled := map[string]int{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		name := strings.TrimPrefix(r.URL.Path, "/health/")
		mu.Lock()
		defer mu.Unlock()
		polled[name]++
		if sick[name] {
			_, _ = w.Write([]byte("sick"))
			return
		}
		_, _ = w.Write([]byte("all good"))
	}))
	defer srv.Close()
	a := startAgent(t, t.TempDir())
	noopProfileWith(a, "hp-prof", map[string]any{})
	a.waitAction(a.createCluster("watched", "hp-prof", 2, map[string]any{"config": map[string]any{"grove.restart": map[string]any{"delay": "0s"}}}))
	nodes := a.nodes(a.cluster("watched").ID)
	mu.Lock()
	sick[nodes[0].Name] = true
	mu.Unlock()
	a.mustDo(http.MethodPost, "/v1/policies", map[string]any{"policy": map[string]any{"name": "watch",
		"spec": map[string]any{"type": "senlin.policy.health", "version": "1.1", "properties": map[string]any{
			"detection": map[string]any{"node_update_timeout": 0, "detection_modes": []any{map[string]any{"type": "NODE_STATUS_POLL_URL",
				"options": map[string]any{"poll_url": srv.URL + "/health/{nodename}", "poll_url_healthy_response": "good", "poll_url_retry_limit": 1}}}},
			"recovery": map[string]any{"actions": []any{map[string]any{"name": "RECREATE"}}}}}}}, nil)
	a.waitAction(a.clusterAction("watched", "policy_attach", map[string]any{"policy_id": "watch"}))
	if b := a.binding("watched", "watch"); b.Priority != 600 || b.Data["health"] == nil {
		t.Fatalf("binding %+v, want priority 600 with the health registry", b)
	}
	var acts struct {
		Actions []api.Action `json:"actions"`
	}
	eventually(t, time.Minute, "the sick node's recovery", func() (bool, string) {
		a.mustDo(http.MethodGet, "/v1/actions?action=NODE_RECOVER&target="+nodes[0].ID, nil, &acts)
		if len(acts.Actions) == 0 {
			return false, "no NODE_RECOVER yet"
		}
		return acts.Actions[0].Status == "SUCCEEDED", acts.Actions[0].Status
	})
	if op := acts.Actions[0].Inputs["operation"]; op != "RECREATE" {
		t.Errorf("the recovery's operation %v, want the policy's RECREATE", op)
	}
	a.mustDo(http.MethodGet, "/v1/actions?action=NODE_RECOVER&target="+nodes[1].ID, nil, &acts)
	mu.Lock()
	defer mu.Unlock()
	if len(acts.Actions) != 0 || polled[nodes[1].Name] == 0 {
		t.Errorf("the healthy node: %d recoveries, polled %d times", len(acts.Actions), polled[nodes[1].Name])
	}
}
