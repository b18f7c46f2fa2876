package e2e

import (
	"fmt"
	"net/http"
	"os"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/grovehq/grove/api"
)

func TestClusterLifecycle(t *testing.T) {
	a := startAgent(t, t.TempDir())
	t.Cleanup(func() { killProcessesOf("web") })
	a.webProfile("web-profile")

	// Five nodes, each answering HTTP on its own port.
	a.waitAction(a.createCluster("web", "web-profile", 5, map[string]any{"config": map[string]any{"node.name.format": "web-$2I"}}))
	cl := a.cluster("web")
	if cl.Status != "ACTIVE" || len(cl.Nodes) != 5 || cl.CreatedAt == nil {
		t.Fatalf("cluster after create: %s %q nodes=%d", cl.Status, cl.StatusReason, len(cl.Nodes))
	}
	nodes := a.nodes(cl.ID)
	ports := map[any]bool{}
	for i, n := range nodes {
		if n.Name != fmt.Sprintf("web-%02d", i+1) || n.Index != i+1 || n.Status != "ACTIVE" {
			t.Errorf("node %d: name %s index %d status %s", i, n.Name, n.Index, n.Status)
		}
		ports[n.Data["port"]] = true
		nodeAnswers(t, n)
	}
	if len(ports) != 5 {
		t.Errorf("nodes must have distinct ports: %v", ports)
	}
	if got := len(processesOf("web")); got != 5 {
		t.Errorf("5 node processes expected, found %d", got)
	}

	// Resize with each adjustment type.
	resize := func(params map[string]any, want int) {
		t.Helper()
		a.waitAction(a.clusterAction("web", "resize", params))
		cl := a.cluster("web")
		if len(cl.Nodes) != want || cl.DesiredCapacity != want || cl.Status != "ACTIVE" {
			t.Fatalf("resize %v: nodes=%d desired=%d status=%s (%s); want %d", params, len(cl.Nodes), cl.DesiredCapacity, cl.Status, cl.StatusReason, want)
		}
		eventually(t, 15*time.Second, "node processes to match the cluster", func() (bool, string) {
			n := len(processesOf("web"))
			return n == want, strconv.Itoa(n)
		})
	}
	resize(map[string]any{"adjustment_type": "EXACT_CAPACITY", "number": 3}, 3)
	// Without a deletion policy the highest indexes go (all on one host).
	for i, n := range a.nodes(a.cluster("web").ID) {
		if n.Index != i+1 {
			t.Errorf("scale-down without a policy kept index %d at position %d", n.Index, i)
		}
	}
	resize(map[string]any{"adjustment_type": "CHANGE_IN_CAPACITY", "number": 3}, 6)
	resize(map[string]any{"adjustment_type": "CHANGE_IN_PERCENTAGE", "number": -40}, 4) // 6 × 40% = 2.4 → 2
	resize(map[string]any{"adjustment_type": "CHANGE_IN_PERCENTAGE", "number": 10, "min_step": 2}, 6)
	resize(map[string]any{"adjustment_type": "CHANGE_IN_CAPACITY", "number": 10, "max_size": 7, "strict": false}, 7)
	if a.cluster("web").MaxSize != 7 {
		t.Errorf("resize must store the new max_size")
	}
	for _, n := range a.nodes(a.cluster("web").ID) {
		nodeAnswers(t, n)
	}

	// A deletion policy chooses the victims: the oldest nodes go first.
	a.mustDo(http.MethodPost, "/v1/policies", map[string]any{"policy": map[string]any{"name": "oldest",
		"spec": map[string]any{"type": "senlin.policy.deletion", "version": "1.1", "properties": map[string]any{"criteria": "OLDEST_FIRST"}}}}, nil)
	a.waitAction(a.clusterAction("web", "policy_attach", map[string]any{"policy_id": "oldest"}))
	before := a.nodes(a.cluster("web").ID)
	slices.SortFunc(before, func(x, y api.Node) int { return strings.Compare(*x.CreatedAt+x.ID, *y.CreatedAt+y.ID) })
	act := a.waitAction(a.clusterAction("web", "scale_in", map[string]any{"count": 2}))
	removed := act.Outputs["nodes_removed"].([]any)
	deletion := act.Data["deletion"].(map[string]any)
	if len(removed) != 2 || deletion["count"].(float64) != 2 {
		t.Fatalf("scale_in with the deletion policy: removed %v, data %v", removed, act.Data)
	}
	oldestTime := *before[0].CreatedAt
	for _, id := range removed {
		idx := slices.IndexFunc(before, func(n api.Node) bool { return n.ID == id })
		if idx < 0 || *before[idx].CreatedAt > *before[2].CreatedAt {
			t.Errorf("victim %v is not among the oldest (oldest created %s)", id, oldestTime)
		}
	}
	if cl := a.cluster("web"); len(cl.Nodes) != 5 || cl.DesiredCapacity != 5 {
		t.Fatalf("after scale_in: %d nodes, desired %d", len(cl.Nodes), cl.DesiredCapacity)
	}
	var bindings struct {
		ClusterPolicies []api.ClusterPolicy `json:"cluster_policies"`
	}
	a.mustDo(http.MethodGet, "/v1/clusters/web/policies", nil, &bindings)
	if len(bindings.ClusterPolicies) != 1 || bindings.ClusterPolicies[0].PolicyName != "oldest" || !bindings.ClusterPolicies[0].Enabled ||
		bindings.ClusterPolicies[0].Priority != 400 {
		t.Errorf("bindings: %+v", bindings.ClusterPolicies)
	}
	a.waitAction(a.clusterAction("web", "policy_update", map[string]any{"policy_id": "oldest", "enabled": false}))
	a.waitAction(a.clusterAction("web", "policy_detach", map[string]any{"policy_id": "oldest"}))

	// A scaling policy decides the count, and its cooldown refuses a second
	// scaling too soon.
	a.mustDo(http.MethodPost, "/v1/policies", map[string]any{"policy": map[string]any{"name": "grow2",
		"spec": map[string]any{"type": "senlin.policy.scaling", "version": "1.0", "properties": map[string]any{
			"event": "CLUSTER_SCALE_OUT", "adjustment": map[string]any{"type": "CHANGE_IN_CAPACITY", "number": 2, "cooldown": 300}}}}}, nil)
	a.waitAction(a.clusterAction("web", "policy_attach", map[string]any{"policy_id": "grow2"}))
	a.waitAction(a.clusterAction("web", "scale_out", nil))
	if cl := a.cluster("web"); len(cl.Nodes) != 7 {
		t.Fatalf("scale_out sized by the scaling policy: %d nodes, want 7", len(cl.Nodes))
	}
	refused, err := a.client.WaitAction(t.Context(), a.clusterAction("web", "scale_out", nil), nil)
	if err == nil || refused.Status != "FAILED" || !strings.Contains(refused.StatusReason, "cooldown is still in progress") {
		t.Fatalf("a scale_out inside the cooldown must be refused: %v", err)
	}
	if cl := a.cluster("web"); len(cl.Nodes) != 7 || cl.Status != "ACTIVE" {
		t.Fatalf("a refused scale_out changes nothing: %d nodes, %s", len(cl.Nodes), cl.Status)
	}
	a.waitAction(a.clusterAction("web", "policy_detach", map[string]any{"policy_id": "grow2"}))
	a.waitAction(a.clusterAction("web", "resize", map[string]any{"adjustment_type": "EXACT_CAPACITY", "number": 5}))

	// Orphan nodes: create, add to the cluster, replace, remove.
	var created struct {
		Node api.Node `json:"node"`
	}
	r := a.mustDo(http.MethodPost, "/v1/nodes", map[string]any{"node": map[string]any{"name": "spare1", "profile_id": "web-profile"}}, &created)
	a.waitAction(r.ActionID())
	r = a.mustDo(http.MethodPost, "/v1/nodes", map[string]any{"node": map[string]any{"name": "spare2", "profile_id": "web-profile"}}, nil)
	a.waitAction(r.ActionID())
	spare, err := a.client.GetNode(t.Context(), "spare1")
	if err != nil || spare.ClusterID != "" || spare.Index != -1 || spare.Status != "ACTIVE" {
		t.Fatalf("orphan node: %+v %v", spare, err)
	}
	a.waitAction(a.clusterAction("web", "add_nodes", map[string]any{"nodes": []any{"spare1"}}))
	spare, _ = a.client.GetNode(t.Context(), "spare1")
	if cl := a.cluster("web"); spare.ClusterID != cl.ID || len(cl.Nodes) != 6 || cl.DesiredCapacity != 6 {
		t.Fatalf("add_nodes: node cluster %q, cluster nodes %d desired %d", spare.ClusterID, len(cl.Nodes), cl.DesiredCapacity)
	}
	a.waitAction(a.clusterAction("web", "replace_nodes", map[string]any{"nodes": map[string]any{"spare1": "spare2"}}))
	s1, _ := a.client.GetNode(t.Context(), "spare1")
	s2, _ := a.client.GetNode(t.Context(), "spare2")
	if s1.ClusterID != "" || s2.ClusterID != a.cluster("web").ID {
		t.Fatalf("replace_nodes: spare1 in %q, spare2 in %q", s1.ClusterID, s2.ClusterID)
	}
	a.waitAction(a.clusterAction("web", "del_nodes", map[string]any{"nodes": []any{"spare2"}, "destroy_after_deletion": false}))
	s2, _ = a.client.GetNode(t.Context(), "spare2")
	if s2.ClusterID != "" || s2.Status != "ACTIVE" {
		t.Fatalf("del_nodes without destroy keeps an orphan: %+v", s2)
	}
	nodeAnswers(t, *s2)
	if cl := a.cluster("web"); len(cl.Nodes) != 5 || cl.DesiredCapacity != 5 {
		t.Fatalf("after del_nodes: %d nodes, desired %d", len(cl.Nodes), cl.DesiredCapacity)
	}
	victim := a.nodes(a.cluster("web").ID)[0]
	a.waitAction(a.clusterAction("web", "del_nodes", map[string]any{"nodes": []any{victim.ID}, "destroy_after_deletion": true}))
	if _, err := a.client.GetNode(t.Context(), victim.ID); !api.IsNotFound(err) {
		t.Fatalf("del_nodes with destroy must delete the node: %v", err)
	}
	for _, name := range []string{"spare1", "spare2"} {
		r, err := a.do(http.MethodDelete, "/v1/nodes/"+name, nil)
		if err != nil {
			t.Fatal(err)
		}
		a.waitAction(r.ActionID())
	}

	// A node process killed outside Grove is found dead and recovered.
	n := a.nodes(a.cluster("web").ID)[0]
	// The recorded pid is the node's process itself (its supervisor's
	// child), which its supervisor reaps and records.
	pid := int(n.Data["pid"].(float64))
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	eventually(t, 10*time.Second, "the supervisor to reap the process", func() (bool, string) {
		_, err := os.Stat(fmt.Sprintf("/proc/%d", pid))
		return os.IsNotExist(err) || isZombie(pid), ""
	})
	resp, err := a.do(http.MethodPost, "/v1/nodes/"+n.ID+"/actions", map[string]any{"check": map[string]any{}})
	if err != nil {
		t.Fatal(err)
	}
	ctx := t.Context()
	checked, err := a.client.WaitAction(ctx, resp.ActionID(), nil)
	if err == nil || checked.Status != "FAILED" {
		t.Fatalf("check of a dead node must fail: %v %+v", err, checked)
	}
	dead, _ := a.client.GetNode(ctx, n.ID)
	if dead.Status != "ERROR" || !strings.Contains(dead.StatusReason, "killed by signal") {
		t.Fatalf("dead node: %s %q", dead.Status, dead.StatusReason)
	}
	resp, err = a.do(http.MethodPost, "/v1/nodes/"+n.ID+"/actions", map[string]any{"recover": map[string]any{"operation": "RECREATE"}})
	if err != nil {
		t.Fatal(err)
	}
	a.waitAction(resp.ActionID())
	back, _ := a.client.GetNode(ctx, n.ID)
	if back.Status != "ACTIVE" || back.Data["port"] != n.Data["port"] || back.Name != n.Name {
		t.Fatalf("recovered node keeps its identity: %+v", back)
	}
	nodeAnswers(t, *back)

	// A cluster check and recover across all nodes.
	a.waitAction(a.clusterAction("web", "check", nil))
	a.waitAction(a.clusterAction("web", "recover", map[string]any{"check": true}))

	// Events and actions are listed.
	var evs struct {
		Events []api.Event `json:"events"`
	}
	a.mustDo(http.MethodGet, "/v1/events?cluster_id="+a.cluster("web").ID+"&limit=5&sort=timestamp:desc", nil, &evs)
	if len(evs.Events) != 5 {
		t.Errorf("event list with limit 5: %d", len(evs.Events))
	}

	// Deleting the cluster leaves no process behind.
	r, err = a.do(http.MethodDelete, "/v1/clusters/web", nil)
	if err != nil {
		t.Fatal(err)
	}
	a.waitAction(r.ActionID())
	if _, err := a.client.GetCluster(ctx, "web"); !api.IsNotFound(err) {
		t.Fatalf("cluster still there: %v", err)
	}
	eventually(t, 15*time.Second, "node processes to go", func() (bool, string) {
		n := len(processesOf("web"))
		return n == 0, strconv.Itoa(n)
	})
}
