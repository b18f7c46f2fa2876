package e2e

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/gophercloud/gophercloud"
	"github.com/gophercloud/gophercloud/openstack/clustering/v1/clusters"
)

// TestDeletionLifecycleHook runs a deletion policy's webhook lifecycle hook
// through the API with a real agent: a scale-in tells the hook (a server
// of the test's own on loopback) of the node it removes, the node's
// deletion waits in WAITING_LIFECYCLE_COMPLETION, and gophercloud's
// unmodified Senlin client completes it with complete_lifecycle, after
// which the scale-in succeeds without the node; then the CLI's
// grove cluster complete-lifecycle does the same for the last node.
func TestDeletionLifecycleHook(t *testing.T) {
	msgs := make(chan map[string]any, 4)
	hook := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var m map[string]any
		_ = json.NewDecoder(r.Body).Decode(&m)
		msgs <- m
	}))
	defer hook.Close()
	a := startAgent(t, t.TempDir())
	noopProfileWith(a, "hooked-prof", map[string]any{})
	a.waitAction(a.createCluster("hooked", "hooked-prof", 2, nil))
	a.mustDo(http.MethodPost, "/v1/policies", map[string]any{"policy": map[string]any{"name": "hook",
		"spec": map[string]any{"type": "senlin.policy.deletion", "version": "1.1", "properties": map[string]any{"criteria": "OLDEST_FIRST",
			"hooks": map[string]any{"type": "webhook", "params": map[string]any{"url": hook.URL}, "timeout": 300}}}}}, nil)
	a.waitAction(a.clusterAction("hooked", "policy_attach", map[string]any{"policy_id": "hook"}))
	oldest := a.nodes(a.cluster("hooked").ID)[0]
	scaleIn := a.clusterAction("hooked", "scale_in", map[string]any{"count": 1})
	var m map[string]any
	select {
	case m = <-msgs:
	case <-time.After(time.Minute):
		t.Fatal("the hook was not told within a minute")
	}
	token, _ := m["lifecycle_action_token"].(string)
	if m["node_id"] != oldest.ID || m["lifecycle_transition_type"] != "termination" {
		t.Errorf("the hook's message %v, want the oldest node %s", m, oldest.ID)
	}
	held, err := a.client.GetAction(t.Context(), token)
	if err != nil || held.Status != "WAITING_LIFECYCLE_COMPLETION" || held.Action != "NODE_DELETE" {
		t.Fatalf("the held action: %+v, %v", held, err)
	}
	sc := &gophercloud.ServiceClient{
		ProviderClient: &gophercloud.ProviderClient{HTTPClient: http.Client{Timeout: time.Minute}},
		Endpoint:       a.addr + "/",
		Type:           "clustering",
		Microversion:   "1.9",
	}
	id, err := clusters.CompleteLifecycle(sc, "hooked", clusters.CompleteLifecycleOpts{LifecycleActionTokenID: token}).Extract()
	if err != nil || id != token {
		t.Fatalf("complete_lifecycle: %q, %v", id, err)
	}
	if act := a.waitAction(scaleIn); act.Status != "SUCCEEDED" {
		t.Fatalf("the scale-in: %s %s", act.Status, act.StatusReason)
	}
	for _, n := range a.nodes(a.cluster("hooked").ID) {
		if n.ID == oldest.ID {
			t.Errorf("the completed node %s is still in the cluster", n.Name)
		}
	}

	// The same with the CLI.
	scaleIn = a.clusterAction("hooked", "scale_in", map[string]any{"count": 1})
	select {
	case m = <-msgs:
	case <-time.After(time.Minute):
		t.Fatal("the hook was not told of the second removal within a minute")
	}
	token, _ = m["lifecycle_action_token"].(string)
	if out, errOut, code := a.grove("cluster", "complete-lifecycle", "-wait", "hooked", token); code != 0 {
		t.Fatalf("grove cluster complete-lifecycle: %d\n%s\n%s", code, out, errOut)
	}
	if act := a.waitAction(scaleIn); act.Status != "SUCCEEDED" || len(a.nodes(a.cluster("hooked").ID)) != 0 {
		t.Errorf("the second scale-in: %s %s", act.Status, act.StatusReason)
	}
}
