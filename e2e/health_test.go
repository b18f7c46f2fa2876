package e2e

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gophercloud/gophercloud/v2/openstack/compute/v2/servergroups"
	"github.com/gophercloud/gophercloud/v2/openstack/compute/v2/services"

	"github.com/grovehq/grove/api"
	"github.com/grovehq/grove/internal/novatest"
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

// TestNovaHypervisorStatusPolling runs the health policy's
// HYPERVISOR_STATUS_POLLING on a real Nova of the test's own: with the
// compute service of one server's host disabled, the agent's health loop
// finds that server's node unhealthy from the hypervisor's status and
// recreates it, and Nova's scheduler boots the new server on another host;
// the node on an enabled host is left alone.
func TestNovaHypervisorStatusPolling(t *testing.T) {
	novatest.Need(t)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	n, err := novatest.Start(ctx, t.TempDir(), novatest.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(n.Stop)
	a := startAgentWith(t, agentOptions{env: n.Env()}, t.TempDir())
	// An anti-affinity group spreads the servers over the hosts, so
	// one host's server is recovered and the other's is not.
	g, err := servergroups.Create(ctx, n.Compute("2.56"), servergroups.CreateOpts{Name: "hv-spread", Policies: []string{"anti-affinity"}}).Extract()
	if err != nil {
		t.Fatal(err)
	}
	novaProfile(a, n, "hv-prof", map[string]any{"scheduler_hints": map[string]any{"group": g.ID}})
	a.waitAction(a.createCluster("hv", "hv-prof", 0, map[string]any{"config": map[string]any{"grove.restart": map[string]any{"delay": "0s"}}}))
	a.waitAction(a.clusterAction("hv", "scale_out", map[string]any{"count": 2}))
	nodes := a.nodes(a.cluster("hv").ID)
	bad, _ := nodes[0].Data["host"].(string)
	if bad == "" {
		t.Fatalf("node %s has no host: %v", nodes[0].Name, nodes[0].Data)
	}
	was := map[string]string{}
	for _, nd := range nodes {
		was[nd.ID], _ = nd.Data["host"].(string)
	}
	if was[nodes[1].ID] == bad {
		t.Fatalf("both servers on %s despite the anti-affinity group", bad)
	}
	compute := n.Compute("2.56")
	pages, err := services.List(compute, services.ListOpts{Binary: "nova-compute", Host: bad}).AllPages(ctx)
	if err != nil {
		t.Fatal(err)
	}
	svcs, err := services.ExtractServices(pages)
	if err != nil || len(svcs) != 1 {
		t.Fatalf("the compute service of %s: %v %v", bad, svcs, err)
	}
	if _, err := services.Update(ctx, compute, svcs[0].ID, services.UpdateOpts{Status: services.ServiceDisabled}).Extract(); err != nil {
		t.Fatal(err)
	}
	a.mustDo(http.MethodPost, "/v1/policies", map[string]any{"policy": map[string]any{"name": "hv-watch",
		"spec": map[string]any{"type": "senlin.policy.health", "version": "1.2", "properties": map[string]any{
			"detection": map[string]any{"node_update_timeout": 0, "detection_modes": []any{map[string]any{"type": "HYPERVISOR_STATUS_POLLING"}}},
			"recovery":  map[string]any{"actions": []any{map[string]any{"name": "RECREATE"}}}}}}}, nil)
	a.waitAction(a.clusterAction("hv", "policy_attach", map[string]any{"policy_id": "hv-watch"}))
	var acts struct {
		Actions []api.Action `json:"actions"`
	}
	eventually(t, 2*time.Minute, "the recovery of the node on the disabled host", func() (bool, string) {
		a.mustDo(http.MethodGet, "/v1/actions?action=NODE_RECOVER&target="+nodes[0].ID, nil, &acts)
		if len(acts.Actions) == 0 {
			return false, "no NODE_RECOVER yet"
		}
		return acts.Actions[0].Status == "SUCCEEDED", acts.Actions[0].Status + " " + acts.Actions[0].StatusReason
	})
	for _, nd := range a.nodes(a.cluster("hv").ID) {
		host, _ := nd.Data["host"].(string)
		a.mustDo(http.MethodGet, "/v1/actions?action=NODE_RECOVER&target="+nd.ID, nil, &acts)
		if was[nd.ID] == bad {
			if host == bad || nd.Status != "ACTIVE" || len(acts.Actions) != 1 {
				t.Errorf("node %s was on the disabled %s: now %s on %s after %d recoveries, want ACTIVE elsewhere after one", nd.Name, bad, nd.Status, host, len(acts.Actions))
			}
		} else if len(acts.Actions) != 0 {
			t.Errorf("node %s on the enabled host %s was recovered: %+v", nd.Name, was[nd.ID], acts.Actions[0])
		}
	}
}

// TestHealthPolicyLifecycleEvents: under a health policy with
// LIFECYCLE_EVENTS and a 60 s interval, a local.process node whose process
// is killed is recovered at once, from the driver's event, not at the next
// interval; twice in a row.
func TestHealthPolicyLifecycleEvents(t *testing.T) {
	dir := t.TempDir()
	a := startAgent(t, dir, "-config", fastConfig(t, dir, ""))
	t.Cleanup(func() { killProcessesOf("lc") })
	a.webProfile("lc-web")
	a.waitAction(a.createCluster("lc", "lc-web", 2, map[string]any{"config": map[string]any{"grove.restart": map[string]any{"delay": "0s"}}}))
	a.mustDo(http.MethodPost, "/v1/policies", map[string]any{"policy": map[string]any{"name": "lc-watch",
		"spec": map[string]any{"type": "senlin.policy.health", "version": "1.1", "properties": map[string]any{
			"detection": map[string]any{"interval": 60, "node_update_timeout": 0, "detection_modes": []any{map[string]any{"type": "LIFECYCLE_EVENTS"}}},
			"recovery":  map[string]any{"actions": []any{map[string]any{"name": "RECREATE"}}}}}}}, nil)
	a.waitAction(a.clusterAction("lc", "policy_attach", map[string]any{"policy_id": "lc-watch"}))
	for _, victim := range a.nodes(a.cluster("lc").ID) {
		killNodeProcess(t, victim)
		eventually(t, 20*time.Second, "node "+victim.Name+" back", func() (bool, string) {
			n, err := a.client.GetNode(t.Context(), victim.ID)
			if err != nil {
				return false, err.Error()
			}
			return n.Status == "ACTIVE" && n.Data["pid"] != victim.Data["pid"], n.Status + " " + n.StatusReason
		})
	}
}
