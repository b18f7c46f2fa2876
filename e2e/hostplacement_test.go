package e2e

import (
	"net/http"
	"strings"
	"testing"

	"github.com/grovehq/grove/internal/novatest"
	"github.com/grovehq/grove/plugins/builtin/noop"
)

// TestPlacementPolicyEndToEnd: an agent whose grove.noop driver reports
// three hosts (the variable reaches the plugin process through the agent),
// a grove.policy.placement policy that keeps a cluster in zone a, a
// scale-out whose nodes record the hosts the policy chose, and `grove
// cluster placement` showing the ranking with each host's flags and reason.
func TestPlacementPolicyEndToEnd(t *testing.T) {
	a := startAgentWith(t, agentOptions{env: []string{noop.HostsEnv + "=h1:zone=a h2:zone=b h3:zone=a"}}, t.TempDir())
	a.mustDo(http.MethodPost, "/v1/profiles", map[string]any{"profile": map[string]any{"name": "noop",
		"spec": map[string]any{"type": "grove.noop", "version": "1.0", "properties": map[string]any{}}}}, nil)
	a.mustDo(http.MethodPost, "/v1/policies", map[string]any{"policy": map[string]any{"name": "zone-a",
		"spec": map[string]any{"type": "grove.policy.placement", "version": "1.0", "properties": map[string]any{"constraints": `labels.zone == "a"`}}}}, nil)
	if act := a.waitAction(a.createCluster("placed", "noop", 0, nil)); act.Status != "SUCCEEDED" {
		t.Fatalf("create: %s %s", act.Status, act.StatusReason)
	}
	if act := a.waitAction(a.clusterAction("placed", "policy_attach", map[string]any{"policy_id": "zone-a"})); act.Status != "SUCCEEDED" {
		t.Fatalf("attach: %s %s", act.Status, act.StatusReason)
	}
	if act := a.waitAction(a.clusterAction("placed", "scale_out", map[string]any{"count": 3})); act.Status != "SUCCEEDED" {
		t.Fatalf("scale-out: %s %s", act.Status, act.StatusReason)
	}
	on := map[string]int{}
	for _, n := range a.nodes(a.cluster("placed").ID) {
		var full struct {
			Node struct {
				Data map[string]any `json:"data"`
			} `json:"node"`
		}
		a.mustDo(http.MethodGet, "/v1/nodes/"+n.ID, nil, &full)
		h, _ := full.Node.Data["host"].(string)
		on[h]++
	}
	if on["h1"] != 2 || on["h3"] != 1 || len(on) != 2 {
		t.Errorf("the nodes are on %v, want two on h1 and one on h3", on)
	}

	out, errOut, code := a.grove("cluster", "placement", "placed")
	if code != 0 {
		t.Fatalf("grove cluster placement: exit %d: %s", code, errOut)
	}
	for _, want := range []string{`Cluster placed, placement "nodes order": 2 of 3 hosts ranked.`,
		"1     h1    L      2\n", "2     h3    -      1\n", "-     h2    C      0      the constraints are false on it\n",
		"Leader: h1 (natural leader: h1)\n", "New nodes: h3\n"} {
		if !strings.Contains(out, want) {
			t.Errorf("grove cluster placement does not say %q:\n%s", want, out)
		}
	}
}

// TestPlacementPolicyOnNova: grove.policy.placement on os.nova.server
// nodes of a real Nova ranks the hypervisors (never the zones Nova also
// reports), and each server boots on the hypervisor its node was given:
// a policy that names only host-a puts every new server there, which
// Nova's scheduler (which picks host-drs-1 here) would not do.
func TestPlacementPolicyOnNova(t *testing.T) {
	n := novatest.Shared(t)
	a := startAgentWith(t, agentOptions{env: n.Env()}, t.TempDir())
	novaProfile(a, n, "placed-prof", nil)
	a.mustDo(http.MethodPost, "/v1/policies", map[string]any{"policy": map[string]any{"name": "one-host",
		"spec": map[string]any{"type": "grove.policy.placement", "version": "1.0", "properties": map[string]any{"hosts": []any{"host-a", "nova"}}}}}, nil)
	if act := a.waitAction(a.createCluster("placed-nova", "placed-prof", 0, nil)); act.Status != "SUCCEEDED" {
		t.Fatalf("create: %s %s", act.Status, act.StatusReason)
	}
	if act := a.waitAction(a.clusterAction("placed-nova", "policy_attach", map[string]any{"policy_id": "one-host"})); act.Status != "SUCCEEDED" {
		t.Fatalf("attach: %s %s", act.Status, act.StatusReason)
	}
	if act := a.waitAction(a.clusterAction("placed-nova", "scale_out", map[string]any{"count": 3})); act.Status != "SUCCEEDED" {
		t.Fatalf("scale-out: %s %s", act.Status, act.StatusReason)
	}
	// Where Nova put each server, as Nova says it.
	clusterID := a.cluster("placed-nova").ID
	srv := clusterServers(t, n.Compute("2.56"), clusterID)
	for _, nd := range a.nodes(clusterID) {
		if s, ok := srv[nd.ID]; !ok || s.Host != "host-a" || nd.Status != "ACTIVE" {
			t.Errorf("node %s (%s): its server is on %q, want host-a", nd.Name, nd.Status, s.Host)
		}
	}
	a.waitAction(a.mustDo(http.MethodDelete, "/v1/clusters/placed-nova", nil, nil).ActionID())
}
