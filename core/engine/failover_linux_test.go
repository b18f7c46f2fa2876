package engine_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/grovehq/grove/core/engine"
	"github.com/grovehq/grove/core/model"
	"github.com/grovehq/grove/core/orchestrator/monitor"
	"github.com/grovehq/grove/plugins/builtin/process"
)

// activeOn lists the hosts of a cluster's ACTIVE nodes among hosts.
func (h *harness) activeOn(clusterID string, hosts ...string) []string {
	var out []string
	for _, n := range h.nodes(clusterID) {
		for _, x := range hosts {
			if n.Host == x && n.Status == model.NodeActive {
				out = append(out, x)
			}
		}
	}
	return out
}

// TestFailoverClusterMonitor: a failover cluster (orchestrate ha) over
// three agent hosts starts on the placement leader only once its ready
// period has passed, runs one instance only, refuses a manual resize, and
// when the leader's agent dies and its host goes down, the next host
// takes over after its own ready period.
func TestFailoverClusterMonitor(t *testing.T) {
	h := newIdleHarness(t, nil)
	seen := h.killAtEnd()
	a, aStore := h.hostEngine("engine-a", "a")
	h.eng = a
	b, _ := h.hostEngine("engine-b", "b")
	h.hostEngine("engine-c", "c")
	h.profileOf("proc", process.TypeName, map[string]any{"command": []any{"sleep", "600"}, "stop_timeout": 0})
	cl := h.create(engine.ClusterCreate{Name: "pg", Profile: "proc", Config: failoverConfig("ha")})

	// The leader announces its start and waits for the ready period: the
	// clock stands still, so nothing starts yet.
	var leader string
	waitFor(t, 20*time.Second, func() (bool, string) {
		rows := h.instanceRows(cl.ID)
		for host, r := range rows {
			if r.State == monitor.Ready {
				leader = host
				return len(rows) == 3, fmt.Sprintf("%d instance rows, want 3", len(rows))
			}
		}
		return false, fmt.Sprintf("no host is ready: %v", rowStates(rows))
	})
	if leader != "a" {
		t.Errorf("host %s is ready first; want a, the default placement's leader", leader)
	}
	for range 10 {
		if err := a.CheckHealth(h.ctx()); err != nil {
			t.Fatal(err)
		}
	}
	if n := h.nodes(cl.ID); len(n) != 0 {
		t.Fatalf("%d nodes before the ready period passed; want none", len(n))
	}
	if r := h.instanceRows(cl.ID)[leader]; r.State != monitor.Ready {
		t.Fatalf("the leader's instance is %q before the ready period passed; want ready", r.State)
	}

	// Past the ready period, the leader alone starts.
	h.clock.advance(1100 * time.Millisecond)
	waitFor(t, 20*time.Second, func() (bool, string) {
		seen(cl.ID)
		rows := h.instanceRows(cl.ID)
		up := h.activeOn(cl.ID, "a", "b", "c")
		return fmt.Sprint(up) == "[a]" && rows["a"].State == monitor.Idle && h.getCluster(cl.ID).DesiredCapacity == 1,
			fmt.Sprintf("active on %v, states %v, desired %d", up, rowStates(rows), h.getCluster(cl.ID).DesiredCapacity)
	})
	for _, host := range []string{"b", "c"} {
		if r := h.instanceRows(cl.ID)[host]; r.State != monitor.Idle {
			t.Errorf("host %s's instance is %q while a runs; want idle", host, r.State)
		}
	}
	// As the API shows it: a up, the others down and idle; a leads.
	if got := h.instanceView(cl); got["a"] != "up idle L" || got["b"] != "down idle -" || got["c"] != "down idle -" {
		t.Errorf("instances %v; want a up idle L, b and c down idle", got)
	}
	// Its size is the monitors'.
	if _, err := h.act(cl, `{"scale_out": {"count": 1}}`); err == nil || !strings.Contains(err.Error(), "failover cluster") {
		t.Errorf("scale_out on a failover cluster: %v, want a refusal saying it is a failover cluster", err)
	}
	two := 2
	if _, _, err := h.eng.CreateCluster(h.ctx(), caller, engine.ClusterCreate{Name: "sized", Profile: "proc", DesiredCapacity: &two, Config: failoverConfig("ha")}); err == nil ||
		!strings.Contains(err.Error(), "desired_capacity") {
		t.Errorf("a failover cluster created with desired_capacity 2: %v, want a refusal naming the field", err)
	}

	// a's agent dies and its host goes down: b, the next in rank, takes
	// over after its ready period; c stays idle.
	aStore.kill()
	h.eng = b
	h.downAfterHeartbeats(t, "a", "b", "c")
	var next string
	waitFor(t, 20*time.Second, func() (bool, string) {
		rows := h.instanceRows(cl.ID)
		for _, host := range []string{"b", "c"} {
			if rows[host].State == monitor.Ready || rows[host].State == monitor.Starting {
				next = host
				return true, ""
			}
		}
		return false, fmt.Sprintf("no surviving host is ready: %v", rowStates(rows))
	})
	h.clock.advance(1100 * time.Millisecond)
	waitFor(t, 30*time.Second, func() (bool, string) {
		seen(cl.ID)
		rows := h.instanceRows(cl.ID)
		up := h.activeOn(cl.ID, "b", "c")
		return fmt.Sprint(up) == "["+next+"]" && rows[next].State == monitor.Idle,
			fmt.Sprintf("active on %v among b and c, states %v", up, rowStates(rows))
	})
	if got := h.instanceView(cl); got["a"] != "n/a idle L" || got[next] != "up idle -" {
		t.Errorf("instances %v after the takeover; want a n/a (its host is down), %s up idle", got, next)
	}
	if next != "b" {
		t.Errorf("host %s took over; want b, the next host in the default placement's order", next)
	}
	// The node a's dead host left is forgotten with the takeover: the
	// cluster holds the one live instance's node.
	waitFor(t, 20*time.Second, func() (bool, string) {
		seen(cl.ID)
		nodes := h.nodes(cl.ID)
		hosts := make([]string, len(nodes))
		for i, n := range nodes {
			hosts[i] = n.Host
		}
		return len(nodes) == 1 && nodes[0].Host == next && h.getCluster(cl.ID).DesiredCapacity == 1,
			fmt.Sprintf("nodes on %v, desired %d", hosts, h.getCluster(cl.ID).DesiredCapacity)
	})
}

// TestFailoverStartFailed: a start that fails (the command does not
// exist) leaves the leader's instance in start failed, with the outcome
// recorded, and no node of the cluster ACTIVE.
func TestFailoverStartFailed(t *testing.T) {
	h := newIdleHarness(t, nil)
	a, _ := h.hostEngine("engine-a", "a")
	h.eng = a
	h.profileOf("broken", process.TypeName, map[string]any{"command": []any{"/nonexistent/grove-failover-test"}, "stop_timeout": 0})
	cl := h.create(engine.ClusterCreate{Name: "broken", Profile: "broken", Config: failoverConfig("ha")})
	// A lone host has no peer to contest its start: it starts at once.
	waitFor(t, 20*time.Second, func() (bool, string) {
		r := h.instanceRows(cl.ID)["a"]
		return r != nil && r.State == monitor.StartFailed, fmt.Sprintf("a's instance %+v, want start failed", r)
	})
	if up := h.activeOn(cl.ID, "a"); len(up) != 0 {
		t.Errorf("active nodes on %v after a failed start", up)
	}
	// It stays blocked: more rounds start nothing.
	for range 5 {
		if err := a.CheckHealth(h.ctx()); err != nil {
			t.Fatal(err)
		}
	}
	if r := h.instanceRows(cl.ID)["a"]; r.State != monitor.StartFailed {
		t.Errorf("a's instance is %q after more rounds; want start failed until a clear", r.State)
	}
}
