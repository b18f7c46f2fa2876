package e2e

import (
	"net/http"
	"strings"
	"testing"

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
