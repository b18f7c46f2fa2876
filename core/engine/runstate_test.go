package engine_test

import (
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/grovehq/grove/core/engine"
	"github.com/grovehq/grove/core/model"
	"github.com/grovehq/grove/core/store"
)

// TestClusterStopStart: stop runs the profile type's stop operation on
// every node and leaves the cluster offline with its nodes kept; the health
// loop leaves a stopped cluster alone; start runs the start operation and
// the cluster runs again; restart is both in one action; refresh touches no
// node. Each is an action with its events.
func TestClusterStopStart(t *testing.T) {
	h := newHarness(t, nil)
	h.profile("p")
	cl := h.cluster("c", 2, 60)
	nodes := h.nodes(cl.ID)
	if st, _ := model.RunState(h.getCluster(cl.ID)); st != model.RunRunning {
		t.Fatalf("a created cluster is %s, want running", st)
	}

	a, err := h.act(cl, `{"stop": {}}`)
	h.ok(a, err)
	if a.Action != model.ClusterStopAction {
		t.Errorf("stop queued %s, want CLUSTER_STOP", a.Action)
	}
	got := h.getCluster(cl.ID)
	if st, reason := model.RunState(got); st != model.RunOffline || !strings.Contains(reason, "operator") {
		t.Errorf("a stopped cluster is %s (%q), want offline, stopped by the operator", st, reason)
	}
	if len(h.nodes(cl.ID)) != 2 {
		t.Errorf("a stopped cluster has %d nodes, want its 2 kept", len(h.nodes(cl.ID)))
	}
	for _, n := range h.nodes(cl.ID) {
		if n.Status != model.NodeWarning {
			t.Errorf("node %s of a stopped cluster is %s, want WARNING (stopped)", n.Name, n.Status)
		}
	}
	if ops := h.gate.calls("operate"); ops[nodes[0].ID] != 1 || ops[nodes[1].ID] != 1 {
		t.Errorf("operate calls per node after stop = %v, want one each", ops)
	}
	evs, err := h.store.ListEvents(h.ctx(), storeEventsOf(cl.ID))
	if err != nil {
		t.Fatal(err)
	}
	if !hasEvent(evs, model.ClusterStopAction) {
		t.Errorf("no CLUSTER_STOP event among %d events", len(evs))
	}

	// The health loop leaves it alone: a node found failed stays as it is
	// and is not checked, nor restarted.
	n0, _ := h.store.GetNode(h.ctx(), nodes[0].ID)
	n0.Status = model.NodeError
	if err := h.store.UpdateNodes(h.ctx(), []*model.Node{n0}); err != nil {
		t.Fatal(err)
	}
	checks := h.gate.calls("check")
	if err := h.eng.CheckHealth(h.ctx()); err != nil {
		t.Fatal(err)
	}
	if after := h.gate.calls("check"); after[n0.ID] != checks[n0.ID] {
		t.Errorf("the health loop checked a node of a stopped cluster")
	}
	if n, _ := h.store.GetNode(h.ctx(), n0.ID); n.Status != model.NodeError {
		t.Errorf("the health loop changed a node of a stopped cluster to %s", n.Status)
	}

	h.ok(h.act(cl, `{"start": {}}`))
	h.assertSize(cl.ID, size{2, 2, 0, -1})
	if st, _ := model.RunState(h.getCluster(cl.ID)); st != model.RunRunning {
		t.Errorf("a started cluster is %s, want running", st)
	}
	if ops := h.gate.calls("operate"); ops[nodes[0].ID] != 2 || ops[nodes[1].ID] != 2 {
		t.Errorf("operate calls per node after start = %v, want two each", ops)
	}

	h.ok(h.act(cl, `{"restart": {}}`))
	h.assertSize(cl.ID, size{2, 2, 0, -1})
	if ops := h.gate.calls("operate"); ops[nodes[0].ID] != 4 || ops[nodes[1].ID] != 4 {
		t.Errorf("operate calls per node after restart = %v, want four each (stop and start)", ops)
	}

	h.ok(h.act(cl, `{"refresh": {}}`))
	if ops := h.gate.calls("operate"); ops[nodes[0].ID] != 4 {
		t.Errorf("refresh operated on the nodes: %v", ops)
	}
	if st, _ := model.RunState(h.getCluster(cl.ID)); st != model.RunRunning {
		t.Errorf("a refreshed cluster is %s, want running", st)
	}

	if _, err := h.act(cl, `{"stop": {"force": true}}`); err == nil || !strings.Contains(err.Error(), "force") {
		t.Errorf("stop with a parameter: %v, want a 400 naming it", err)
	}
}

// TestLocalProcessClusterStopStart: stopping a local.process cluster ends
// its processes and keeps its nodes; starting it runs them again.
func TestLocalProcessClusterStopStart(t *testing.T) {
	h := newHarness(t, nil)
	h.profileOf("proc", "local.process", map[string]any{"command": []any{"sleep", "60"}, "stop_timeout": 0})
	desired := 2
	cl := h.create(engine.ClusterCreate{Name: "procs", Profile: "proc", DesiredCapacity: &desired})
	first := h.pids(cl.ID)
	started := []int{}
	t.Cleanup(func() { killAll(t, started) })
	for _, pid := range first {
		started = append(started, pid)
	}
	h.ok(h.act(cl, `{"stop": {}}`))
	for _, pid := range first {
		h.gone(pid)
	}
	if len(h.nodes(cl.ID)) != 2 {
		t.Errorf("the stopped cluster has %d nodes, want 2", len(h.nodes(cl.ID)))
	}
	h.ok(h.act(cl, `{"start": {}}`))
	h.assertSize(cl.ID, size{2, 2, 0, -1})
	for id, pid := range h.pids(cl.ID) {
		started = append(started, pid)
		if !alive(pid) {
			t.Errorf("node %s's process %d does not run after start", id, pid)
		}
		if pid == first[id] {
			t.Errorf("node %s kept its process %d through stop and start", id, pid)
		}
	}
}

func storeEventsOf(clusterID string) store.ListOpts {
	return store.ListOpts{Filters: map[string][]string{"cluster_id": {clusterID}}}
}

func hasEvent(evs []*model.Event, action string) bool {
	for _, e := range evs {
		if e.Action == action {
			return true
		}
	}
	return false
}

// killAll kills the process groups of pids this test started that still
// run, and waits until each is reaped. local.process's supervisor outlives
// the test's engines and writes a killed node's exit file into the node's
// directory before it reaps the process: files must not appear in the
// test's TempDir while its clean-up, which runs after this one, removes it.
func killAll(t testing.TB, pids []int) {
	for _, pid := range pids {
		if alive(pid) {
			_ = syscall.Kill(-pid, syscall.SIGKILL)
		}
	}
	deadline := time.Now().Add(10 * time.Second)
	for _, pid := range pids {
		for alive(pid) {
			if time.Now().After(deadline) {
				t.Errorf("process %d was not reaped within 10s of its SIGKILL", pid)
				return
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
}
