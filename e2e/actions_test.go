package e2e

import (
	"context"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/grovehq/grove/api"
)

func noopProfile(a *agentProc, name string, delayMS int) {
	a.t.Helper()
	a.mustDo(http.MethodPost, "/v1/profiles", map[string]any{"profile": map[string]any{"name": name,
		"spec": map[string]any{"type": "grove.noop", "version": "1.0", "properties": map[string]any{"create_delay": delayMS}}}}, nil)
}

func waitEnd(t *testing.T, a *agentProc, id string) *api.Action {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	act, _ := a.client.WaitAction(ctx, id, nil)
	if act == nil || !act.Terminal() {
		t.Fatalf("action %s did not end", id)
	}
	return act
}

// TestCancelTimeoutAndChildFailure covers how actions end other than by
// success: cancelled by the user, out of time, or failed by a child.
func TestCancelTimeoutAndChildFailure(t *testing.T) {
	dir := t.TempDir()
	a := startAgent(t, dir, "-config", slowConfig(t, dir))
	noopProfile(a, "slow", 100)

	// Cancel a running cluster creation: the action and its pending
	// children end CANCELLED, and the cluster settles.
	id := a.createCluster("cancelme", "slow", 40, nil)
	eventually(t, 20*time.Second, "the creation to make progress", func() (bool, string) {
		n := activeNodes(a, "cancelme")
		return n > 0, strconv.Itoa(n)
	})
	a.mustDo(http.MethodPatch, "/v1/actions/"+id, map[string]any{"action": map[string]any{"status": "CANCELLED"}}, nil)
	act := waitEnd(t, a, id)
	if act.Status != "CANCELLED" {
		t.Fatalf("cancelled action: %s %s", act.Status, act.StatusReason)
	}
	var kids struct {
		Actions []api.Action `json:"actions"`
	}
	a.mustDo(http.MethodGet, "/v1/actions?action=NODE_CREATE&limit=1000", nil, &kids)
	eventually(t, 10*time.Second, "every child to end", func() (bool, string) {
		a.mustDo(http.MethodGet, "/v1/actions?action=NODE_CREATE&limit=1000", nil, &kids)
		pending, cancelled := 0, 0
		for _, k := range kids.Actions {
			if !k.Terminal() {
				pending++
			}
			if k.Status == "CANCELLED" {
				cancelled++
			}
		}
		return pending == 0 && cancelled > 0, strconv.Itoa(pending) + " pending, " + strconv.Itoa(cancelled) + " cancelled"
	})
	if cl := a.cluster("cancelme"); cl.Status == "CREATING" {
		t.Errorf("a cancelled creation must not leave the cluster CREATING: %s", cl.StatusReason)
	}

	// A cluster timeout fails the creation with a TIMEOUT reason.
	id = a.createCluster("late", "slow", 40, map[string]any{"timeout": 1})
	act = waitEnd(t, a, id)
	if act.Status != "FAILED" || !strings.Contains(act.StatusReason, "TIMEOUT") {
		t.Fatalf("timed-out action: %s %s", act.Status, act.StatusReason)
	}

	// A failed child fails its parent with the child's reason.
	a.createProfile("broken", map[string]any{"command": []any{"/nonexistent/grove-test-binary"}})
	id = a.createCluster("broken", "broken", 2, nil)
	act = waitEnd(t, a, id)
	if act.Status != "FAILED" || !strings.Contains(act.StatusReason, "Failed in creating node") || !strings.Contains(act.StatusReason, "/nonexistent/grove-test-binary") {
		t.Fatalf("parent of failed children: %s %s", act.Status, act.StatusReason)
	}
	cl := a.cluster("broken")
	if cl.Status != "WARNING" && cl.Status != "ERROR" {
		t.Errorf("cluster with failed nodes: %s %s", cl.Status, cl.StatusReason)
	}
	for _, n := range a.nodes(cl.ID) {
		if n.Status != "ERROR" || !strings.Contains(n.StatusReason, "nonexistent") {
			t.Errorf("failed node: %s %s", n.Status, n.StatusReason)
		}
	}

	// A second action on a busy cluster is refused with 409.
	id = a.createCluster("busy", "slow", 20, nil)
	_, err := a.client.ClusterAction(context.Background(), "busy", "scale_out", map[string]any{"count": 1})
	var ae *api.Error
	if !asAPIError(err, &ae) || ae.Status != http.StatusConflict || !strings.Contains(ae.Message, "busy") {
		t.Fatalf("an action on a busy cluster: %v", err)
	}
	a.waitAction(id)
}

func asAPIError(err error, target **api.Error) bool {
	e, ok := err.(*api.Error)
	if ok {
		*target = e
	}
	return ok
}

// TestProfileUpdateAndTypes updates a cluster's profile (every node, and
// profile_only), a node's profile, and reads the type endpoints.
func TestProfileUpdateAndTypes(t *testing.T) {
	a := startAgent(t, t.TempDir())
	t.Cleanup(func() { killProcessesOf("upd") })
	a.webProfile("v1")
	a.createProfile("v2", map[string]any{"command": []any{groveBin, "demo-http"}, "env": map[string]any{"VERSION": "2"}, "stop_timeout": 5})
	a.createProfile("v3", map[string]any{"command": []any{groveBin, "demo-http"}, "env": map[string]any{"VERSION": "3"}, "stop_timeout": 5})
	a.waitAction(a.createCluster("upd", "v1", 3, nil))
	before := a.nodes(a.cluster("upd").ID)

	r := a.mustDo(http.MethodPatch, "/v1/clusters/upd", map[string]any{"cluster": map[string]any{"profile_id": "v2", "metadata": map[string]any{"team": "web"}}}, nil)
	a.waitAction(r.ActionID())
	cl := a.cluster("upd")
	if cl.ProfileName != "v2" || cl.Metadata["team"] != "web" || cl.Status != "ACTIVE" {
		t.Fatalf("cluster after profile update: %+v", cl)
	}
	after := a.nodes(cl.ID)
	for i, n := range after {
		if n.ProfileName != "v2" || n.Status != "ACTIVE" || n.Data["pid"] == before[i].Data["pid"] || n.Data["port"] != before[i].Data["port"] {
			t.Errorf("node %s after update: profile %s, pid %v (was %v), port %v (was %v)", n.Name, n.ProfileName, n.Data["pid"], before[i].Data["pid"], n.Data["port"], before[i].Data["port"])
		}
		nodeAnswers(t, n)
	}

	r = a.mustDo(http.MethodPatch, "/v1/clusters/upd", map[string]any{"cluster": map[string]any{"profile_id": "v3", "profile_only": true}}, nil)
	a.waitAction(r.ActionID())
	if cl := a.cluster("upd"); cl.ProfileName != "v3" {
		t.Fatalf("profile_only must change the cluster's profile: %s", cl.ProfileName)
	}
	for _, n := range a.nodes(cl.ID) {
		if n.ProfileName != "v2" {
			t.Errorf("profile_only must leave nodes alone: %s has %s", n.Name, n.ProfileName)
		}
	}
	a.waitAction(a.clusterAction("upd", "scale_out", map[string]any{"count": 1}))
	ns := a.nodes(cl.ID)
	if ns[len(ns)-1].ProfileName != "v3" {
		t.Errorf("a new node uses the cluster's new profile: %s", ns[len(ns)-1].ProfileName)
	}

	r = a.mustDo(http.MethodPatch, "/v1/nodes/"+ns[0].ID, map[string]any{"node": map[string]any{"profile_id": "v3", "role": "leader"}}, nil)
	a.waitAction(r.ActionID())
	n, _ := a.client.GetNode(t.Context(), ns[0].ID)
	if n.ProfileName != "v3" || n.Role != "leader" || n.Status != "ACTIVE" {
		t.Fatalf("node update: %+v", n)
	}

	r = a.mustDo(http.MethodPatch, "/v1/clusters/upd", map[string]any{"cluster": map[string]any{"desired_capacity": 2, "min_size": 1, "max_size": 3}}, nil)
	a.waitAction(r.ActionID())
	if cl := a.cluster("upd"); len(cl.Nodes) != 2 || cl.MinSize != 1 || cl.MaxSize != 3 || cl.DesiredCapacity != 2 {
		t.Fatalf("size update: %d nodes, min %d max %d desired %d", len(cl.Nodes), cl.MinSize, cl.MaxSize, cl.DesiredCapacity)
	}

	var types struct {
		ProfileTypes []api.TypeSummary `json:"profile_types"`
	}
	a.mustDo(http.MethodGet, "/v1/profile-types", nil, &types)
	if len(types.ProfileTypes) < 2 {
		t.Fatalf("profile types: %+v", types)
	}
	var pt struct {
		ProfileType api.TypeDetail `json:"profile_type"`
	}
	a.mustDo(http.MethodGet, "/v1/profile-types/local.process-1.0", nil, &pt)
	cmd, _ := pt.ProfileType.Schema["command"].(map[string]any)
	if cmd["type"] != "List" || cmd["required"] != true || cmd["updatable"] != true {
		t.Fatalf("schema of local.process command: %v", pt.ProfileType.Schema)
	}
	var pol struct {
		PolicyType api.TypeDetail `json:"policy_type"`
	}
	a.mustDo(http.MethodGet, "/v1/policy-types/senlin.policy.deletion", nil, &pol)
	crit, _ := pol.PolicyType.Schema["criteria"].(map[string]any)
	if crit["default"] != "RANDOM" || pol.PolicyType.SupportStatus["1.1"] == nil {
		t.Fatalf("deletion policy type: %+v", pol.PolicyType)
	}
	if _, err := a.do(http.MethodGet, "/v1/profile-types/nope", nil); !api.IsNotFound(err) {
		t.Fatalf("unknown type: %v", err)
	}
}
