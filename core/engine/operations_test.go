package engine_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/grovehq/grove/core/engine"
	"github.com/grovehq/grove/core/model"
	"github.com/grovehq/grove/core/store"
	"github.com/grovehq/grove/plugins/sdk"
)

// TestOperations runs test.gate's operations on one node and on a
// cluster's nodes: a stopped node is WARNING (left alone by the restart
// supervisor), a started one ACTIVE, and each driver call reaches exactly
// the nodes the request named or its filters matched.
func TestOperations(t *testing.T) {
	h := newHarness(t, nil)
	h.profile("p")
	cl := h.cluster("c", 3, 60)
	nodes := h.nodes(cl.ID)

	a, err := h.eng.NodeOperation(h.ctx(), caller, nodes[0].Name, map[string]any{"stop": map[string]any{"mode": "hard"}})
	end := h.wait(a, err)
	if end.Action != model.NodeOperationAction || end.Status != model.ActionSucceeded {
		t.Fatalf("node stop: %s %s %s", end.Action, end.Status, end.StatusReason)
	}
	n, _ := h.store.GetNode(h.ctx(), nodes[0].ID)
	if n.Status != model.NodeWarning || !strings.Contains(n.StatusReason, "Operation 'stop' succeeded") {
		t.Errorf("stopped node is %s %q, want WARNING after stop", n.Status, n.StatusReason)
	}
	if in := h.getAction(a.ID).Inputs; in["operation"] != "stop" || in["params"].(map[string]any)["mode"] != "hard" {
		t.Errorf("NODE_OPERATION inputs = %v", in)
	}

	// Only the WARNING node matches; it is started again.
	a, err = h.eng.ClusterOperation(h.ctx(), caller, cl.Name, map[string]any{"start": map[string]any{"filters": map[string]any{"status": "WARNING"}}})
	end = h.wait(a, err)
	if end.Action != model.ClusterOperationAction || end.Status != model.ActionSucceeded {
		t.Fatalf("cluster start: %s %s %s", end.Action, end.Status, end.StatusReason)
	}
	kids, err := h.store.Children(h.ctx(), a.ID)
	if err != nil {
		t.Fatal(err)
	}
	if len(kids) != 1 || kids[0].Target != nodes[0].ID || kids[0].Action != model.NodeOperationAction {
		t.Errorf("cluster start forked %d children, want one NODE_OPERATION for %s", len(kids), nodes[0].Name)
	}
	h.assertSize(cl.ID, size{3, 3, 0, -1})

	// Every node, no filters.
	h.ok(h.eng.ClusterOperation(h.ctx(), caller, cl.ID, map[string]any{"stop": nil}))
	for _, n := range h.nodes(cl.ID) {
		if n.Status != model.NodeWarning {
			t.Errorf("after a cluster stop, node %s is %s", n.Name, n.Status)
		}
	}
	if got := h.gate.calls("operate"); got[nodes[0].ID] != 3 || got[nodes[1].ID] != 1 || got[nodes[2].ID] != 1 {
		t.Errorf("operate calls per node = %v, want 3, 1, 1", got)
	}
}

// TestOperationRequestErrors: an unknown operation, a bad parameter, an
// unknown filter and filters matching no node are 400s naming what is
// wrong, and no action is queued.
func TestOperationRequestErrors(t *testing.T) {
	h := newHarness(t, nil)
	h.profile("p")
	cl := h.cluster("c", 1, 60)
	node := h.nodes(cl.ID)[0]
	cases := []struct {
		name string
		call func() (*model.Action, error)
		want string
	}{
		{"unknown node operation", func() (*model.Action, error) {
			return h.eng.NodeOperation(h.ctx(), caller, node.ID, map[string]any{"reboot": map[string]any{}})
		}, "'reboot' is not supported by the profile type 'test.gate'; it has start, stop"},
		{"bad parameter", func() (*model.Action, error) {
			return h.eng.NodeOperation(h.ctx(), caller, node.ID, map[string]any{"stop": map[string]any{"mode": "gentle"}})
		}, "params.mode"},
		{"unknown parameter", func() (*model.Action, error) {
			return h.eng.NodeOperation(h.ctx(), caller, node.ID, map[string]any{"stop": map[string]any{"force": true}})
		}, "params.force"},
		{"two operations", func() (*model.Action, error) {
			return h.eng.NodeOperation(h.ctx(), caller, node.ID, map[string]any{"stop": nil, "start": nil})
		}, "exactly one operation"},
		{"unknown cluster operation", func() (*model.Action, error) {
			return h.eng.ClusterOperation(h.ctx(), caller, cl.ID, map[string]any{"reboot": map[string]any{}})
		}, "'reboot' is not supported"},
		{"unknown filter", func() (*model.Action, error) {
			return h.eng.ClusterOperation(h.ctx(), caller, cl.ID, map[string]any{"stop": map[string]any{"filters": map[string]any{"index": 1}}})
		}, "unrecognized filter 'index'"},
		{"no match", func() (*model.Action, error) {
			return h.eng.ClusterOperation(h.ctx(), caller, cl.ID, map[string]any{"stop": map[string]any{"filters": map[string]any{"status": "ERROR"}}})
		}, "No node (from cluster 'c') matches"},
		{"bad cluster param", func() (*model.Action, error) {
			return h.eng.ClusterOperation(h.ctx(), caller, cl.ID, map[string]any{"stop": map[string]any{"params": map[string]any{"mode": 3}}})
		}, "params.mode"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			a, err := c.call()
			var e *engine.Error
			if !errors.As(err, &e) || e.Status != 400 || !strings.Contains(e.Message, c.want) {
				t.Fatalf("got action %v, error %v; want a 400 containing %q", a, err, c.want)
			}
		})
	}
	if got := h.gate.calls("operate"); len(got) != 0 {
		t.Errorf("a refused request reached the driver: %v", got)
	}
}

// TestNodeOperationCancelledOrTimedOut: a node operation held in its
// driver call ends CANCELLED or with a TIMEOUT reason, and its node is not
// left OPERATING.
func TestNodeOperationCancelledOrTimedOut(t *testing.T) {
	for _, how := range []string{"cancel", "timeout"} {
		t.Run(how, func(t *testing.T) {
			t.Parallel()
			h := newHarness(t, nil)
			h.profile("p")
			n := h.orphan("n")
			if how == "timeout" {
				h.eng.Stop()
				h.restart("", func(c *engine.Config) { c.DefaultTimeout = 1 })
			}
			h.gate.close("operate")
			a, err := h.eng.NodeOperation(h.ctx(), caller, n.ID, map[string]any{"stop": nil})
			if err != nil {
				t.Fatal(err)
			}
			if how == "cancel" {
				h.entered("operate")
				if _, err := h.eng.CancelAction(h.ctx(), caller, a.ID, false); err != nil {
					t.Fatal(err)
				}
			}
			end := h.wait(a, nil)
			if how == "cancel" && end.Status != model.ActionCancelled {
				t.Errorf("cancelled node operation ended %s %q", end.Status, end.StatusReason)
			}
			if how == "timeout" && (end.Status != model.ActionFailed || !strings.HasPrefix(end.StatusReason, "TIMEOUT: ")) {
				t.Errorf("timed-out node operation ended %s %q", end.Status, end.StatusReason)
			}
			got, _ := h.store.GetNode(h.ctx(), n.ID)
			if got.Status == model.NodeOperating {
				t.Errorf("node left %s (%s)", got.Status, got.StatusReason)
			}
		})
	}
}

// TestCheckRefreshesNodeData: the data a driver's check returns joins the
// node's, through a CLUSTER_CHECK and through the health loop, keeping the
// engine's own keys; a check that changes nothing writes nothing.
func TestCheckRefreshesNodeData(t *testing.T) {
	h := newHarness(t, nil)
	h.profile("p")
	cl := h.cluster("c", 2, 60)
	nodes := h.nodes(cl.ID)

	h.gate.setCheckData(nodes[0].ID, map[string]any{"address": "10.0.0.7", "host": "esx-1"})
	h.ok(h.act(cl, `{"check": {}}`))
	n, _ := h.store.GetNode(h.ctx(), nodes[0].ID)
	if n.Data["address"] != "10.0.0.7" || n.Data["host"] != "esx-1" || n.Status != model.NodeActive {
		t.Errorf("after a cluster check: %s %v", n.Status, n.Data)
	}

	// The VM moved and took another address: the health loop records it,
	// without an event, and keeps what else the data held.
	h.gate.setCheckData(nodes[0].ID, map[string]any{"address": "10.0.0.8", "host": "esx-2"})
	if err := h.eng.CheckHealth(h.ctx()); err != nil {
		t.Fatal(err)
	}
	n, _ = h.store.GetNode(h.ctx(), nodes[0].ID)
	if n.Data["address"] != "10.0.0.8" || n.Data["host"] != "esx-2" || n.Status != model.NodeActive {
		t.Errorf("after a health check: %s %v", n.Status, n.Data)
	}
	before := n.UpdatedAt
	h.clock.advance(time.Minute)
	if err := h.eng.CheckHealth(h.ctx()); err != nil {
		t.Fatal(err)
	}
	n, _ = h.store.GetNode(h.ctx(), nodes[0].ID)
	if n.UpdatedAt == nil || before == nil || !n.UpdatedAt.Equal(*before) {
		t.Errorf("a check that changed nothing wrote the node: updated %v, then %v", before, n.UpdatedAt)
	}
	if other, _ := h.store.GetNode(h.ctx(), nodes[1].ID); other.Data["address"] != nil {
		t.Errorf("the other node got data: %v", other.Data)
	}
}

// TestHealthCheckInBatches: the health loop checks a cluster's nodes in
// calls of bounded size, and a call that fails costs only its nodes. Here
// the first node's data is over the 4 MiB a plugin's gRPC server accepts
// in one message. It is over a call's byte bound too, so it travels alone
// (then two nodes a call, the node bound here) and fails only its own call:
// the nodes of the other calls still have their data refreshed, the big
// node is left as it was, and the cluster's events name the failed call.
// Checked as one call, as before, no node would have been refreshed.
func TestHealthCheckInBatches(t *testing.T) {
	h := newHarness(t, nil)
	h.eng.Stop()
	h.restart("batches", func(c *engine.Config) { c.CheckBatchNodes = 2 })
	h.profile("p")
	cl := h.cluster("c", 6, 60)
	nodes := h.nodes(cl.ID)
	if len(nodes) != 6 {
		t.Fatalf("%d nodes, want 6", len(nodes))
	}
	big := nodes[0]
	big.Data["blob"] = strings.Repeat("x", 5<<20)
	if err := h.store.UpdateNodes(h.ctx(), []*model.Node{big}); err != nil {
		t.Fatal(err)
	}
	for _, n := range nodes {
		h.gate.setCheckData(n.ID, map[string]any{"seen": "yes"})
	}
	if err := h.eng.CheckHealth(h.ctx()); err != nil {
		t.Fatal(err)
	}
	for i, n := range h.nodes(cl.ID) {
		seen := n.Data["seen"] == "yes"
		if want := i >= 1; seen != want || n.Status != model.NodeActive {
			t.Errorf("node %d after the check: %s, data refreshed %v (want %v)", i, n.Status, seen, want)
		}
	}
	events, err := h.store.ListEvents(h.ctx(), store.ListOpts{Filters: map[string][]string{"cluster_id": {cl.ID}}})
	if err != nil {
		t.Fatal(err)
	}
	var reasons []string
	for _, ev := range events {
		if ev.Action == "HEALTH_CHECK" && ev.OType == "CLUSTER" {
			reasons = append(reasons, ev.StatusReason)
		}
	}
	if len(reasons) != 1 || !strings.HasPrefix(reasons[0], "Check of 1 node (batch 1 of 4) failed: ") {
		t.Errorf("the cluster's check events: %q", reasons)
	}
}

// TestHealthCheckBatchDeadline: a cluster larger than one call is checked
// in several calls of the node bound, and a call that hangs past the
// per-call timeout fails only its own nodes. Seven nodes, three a call,
// one call at a time so the order is known: the first two calls answer,
// the third is held by the driver until its deadline. The nodes of the
// first two have their data refreshed; the last node keeps its data and
// its status; the cluster's event names the third batch and the deadline.
func TestHealthCheckBatchDeadline(t *testing.T) {
	h := newHarness(t, nil)
	h.eng.Stop()
	h.restart("deadline", func(c *engine.Config) {
		c.CheckBatchNodes, c.CheckCalls, c.CheckCallTimeout = 3, 1, 300*time.Millisecond
	})
	h.profile("p")
	cl := h.cluster("c", 7, 60)
	nodes := h.nodes(cl.ID)
	for _, n := range nodes {
		h.gate.setCheckData(n.ID, map[string]any{"seen": "yes"})
	}
	h.gate.mu.Lock()
	h.gate.checkSizes = nil
	h.gate.mu.Unlock()
	h.gate.closeAfter("check", 2)
	if err := h.eng.CheckHealth(h.ctx()); err != nil {
		t.Fatal(err)
	}
	h.gate.open("check")
	h.gate.mu.Lock()
	sizes := fmt.Sprint(h.gate.checkSizes)
	h.gate.mu.Unlock()
	if sizes != "[3 3 1]" {
		t.Errorf("check calls of %s nodes, want [3 3 1]", sizes)
	}
	for i, n := range h.nodes(cl.ID) {
		seen := n.Data["seen"] == "yes"
		if want := i < 6; seen != want || n.Status != model.NodeActive {
			t.Errorf("node %d after the check: %s, data refreshed %v (want %v)", i, n.Status, seen, want)
		}
	}
	events, err := h.store.ListEvents(h.ctx(), store.ListOpts{Filters: map[string][]string{"cluster_id": {cl.ID}}})
	if err != nil {
		t.Fatal(err)
	}
	var reasons []string
	for _, ev := range events {
		if ev.Action == "HEALTH_CHECK" && ev.OType == "CLUSTER" {
			reasons = append(reasons, ev.StatusReason)
		}
	}
	if len(reasons) != 1 || !strings.HasPrefix(reasons[0], "Check of 1 node (batch 3 of 3) failed: ") || !strings.Contains(strings.ToLower(reasons[0]), "deadline") {
		t.Errorf("the cluster's check events: %q", reasons)
	}

	// With the default four calls at once every node is checked, in
	// calls of the bound.
	h.gate.mu.Lock()
	h.gate.checkSizes = nil
	h.gate.mu.Unlock()
	h.eng.Stop()
	h.restart("concurrent", func(c *engine.Config) { c.CheckBatchNodes = 2 })
	if err := h.eng.CheckHealth(h.ctx()); err != nil {
		t.Fatal(err)
	}
	h.gate.mu.Lock()
	calls := len(h.gate.checkSizes)
	sizes = fmt.Sprint(h.gate.checkSizes)
	h.gate.mu.Unlock()
	if calls != 4 {
		t.Errorf("check calls of %s nodes, want four calls (2, 2, 2, 1 in some order)", sizes)
	}
	if n := h.nodes(cl.ID)[6]; n.Data["seen"] != "yes" {
		t.Errorf("the last node after a check of every batch: %v", n.Data)
	}
}

// TestHealthRoundSeesEveryNodeWrite: a health round keeps what it read of a
// cluster's nodes while they do not change, and the driver's check is given
// the nodes as the store holds them after any write, including writes made
// outside this engine (another agent sharing the store): a new physical id
// and data, a node added, one deleted, the cluster renamed, a node moved to
// another cluster.
func TestHealthRoundSeesEveryNodeWrite(t *testing.T) {
	h := newHarness(t, nil)
	h.profile("p")
	cl := h.cluster("c", 3, 60)
	other := h.cluster("other", 0, 60)
	round := func() map[string]sdk.Node {
		t.Helper()
		h.gate.mu.Lock()
		h.gate.checked = nil
		h.gate.mu.Unlock()
		if err := h.eng.CheckHealth(h.ctx()); err != nil {
			t.Fatal(err)
		}
		h.gate.mu.Lock()
		defer h.gate.mu.Unlock()
		return h.gate.checked
	}
	nodes := h.nodes(cl.ID)
	for i := range 2 {
		if seen := round(); len(seen) != 3 {
			t.Fatalf("round %d checked %d nodes, want 3", i+1, len(seen))
		}
	}

	n0 := nodes[0]
	n0.PhysicalID, n0.Data = "moved-elsewhere", map[string]any{"k": "v"}
	if err := h.store.UpdateNodes(h.ctx(), []*model.Node{n0}); err != nil {
		t.Fatal(err)
	}
	if got := round()[n0.ID]; got.PhysicalID != "moved-elsewhere" || got.Data["k"] != "v" {
		t.Errorf("after another writer changed node 0, the check got physical id %q, data %v", got.PhysicalID, got.Data)
	}

	added := &model.Node{ID: uuid.NewString(), Name: "added", ClusterID: cl.ID, ProfileID: nodes[0].ProfileID, Index: 9,
		InitAt: h.clock.Now(), PhysicalID: "added-phys", Status: model.NodeActive, User: cl.User, Project: cl.Project}
	if err := h.store.CreateNodes(h.ctx(), []*model.Node{added}); err != nil {
		t.Fatal(err)
	}
	if seen := round(); len(seen) != 4 || seen[added.ID].PhysicalID != "added-phys" {
		t.Errorf("after a node was added, the check got %d nodes (want 4) and the new one as %+v", len(seen), seen[added.ID])
	}

	if err := h.store.DeleteNodes(h.ctx(), []string{nodes[1].ID}); err != nil {
		t.Fatal(err)
	}
	if seen := round(); len(seen) != 3 || seen[nodes[1].ID].ID != "" {
		t.Errorf("after node 1 was deleted, the check got %d nodes (want 3), node 1 among them: %v", len(seen), seen[nodes[1].ID].ID != "")
	}

	n2 := nodes[2]
	n2.ClusterID = other.ID
	if err := h.store.UpdateNodes(h.ctx(), []*model.Node{n2}); err != nil {
		t.Fatal(err)
	}
	// Settle: rounds that write nothing leave the generation where it is
	// and are checked from what was read.
	settled := false
	for range 5 {
		round()
		g1, err := h.store.NodeChanges(h.ctx(), cl.ID)
		if err != nil {
			t.Fatal(err)
		}
		round()
		g2, err := h.store.NodeChanges(h.ctx(), cl.ID)
		if err != nil {
			t.Fatal(err)
		}
		if settled = g1 == g2; settled {
			break
		}
	}
	if !settled {
		t.Fatal("every health round writes the cluster's nodes")
	}
	now, err := h.store.GetCluster(h.ctx(), cl.ID)
	if err != nil {
		t.Fatal(err)
	}
	now.Name = "renamed"
	if err := h.store.UpdateCluster(h.ctx(), now); err != nil {
		t.Fatal(err)
	}
	if got := round()[nodes[0].ID]; got.ClusterName != "renamed" {
		t.Errorf("after the cluster was renamed, its nodes were checked as nodes of %q", got.ClusterName)
	}

	seen := round()
	if len(seen) != 3 {
		t.Errorf("after node 2 moved to another cluster, the checks got %d nodes, want 3 (two in c, one in other)", len(seen))
	}
	if got := seen[n2.ID]; got.ClusterID != other.ID {
		t.Errorf("node 2 was checked as a node of cluster %q, want %q", got.ClusterID, other.ID)
	}
}
