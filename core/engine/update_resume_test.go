package engine_test

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/grovehq/grove/api"
	"github.com/grovehq/grove/core/engine"
	"github.com/grovehq/grove/core/model"
)

// updatable makes a cluster of three test.gate nodes on profile "p" that
// updates one node per batch in the order given, unwatched, and a profile
// "p2" to update it to.
func updatable(order string) func(h *harness) *model.Cluster {
	return func(h *harness) *model.Cluster {
		h.profile("p2")
		three, timeout := 3, 60
		return h.create(engine.ClusterCreate{Name: "c", Profile: "p", DesiredCapacity: &three, Timeout: &timeout,
			Config: map[string]any{"grove.update": map[string]any{"parallelism": float64(1), "monitor": "0s", "order": order}}})
	}
}

func updateToP2(h *harness, cl *model.Cluster) (*model.Cluster, *model.Action, error) {
	p2 := "p2"
	_, a, err := h.eng.UpdateCluster(h.ctx(), caller, cl.ID, engine.ClusterUpdate{Profile: &p2})
	return cl, a, err
}

// profileID returns the id of a profile.
func (h *harness) profileID(name string) string {
	h.t.Helper()
	p, err := h.store.FindProfile(h.ctx(), caller.Project, name)
	if err != nil {
		h.t.Fatal(err)
	}
	return p.ID
}

// progress reads a rolling update's progress from a document in a cluster's
// or an action's data.
func (h *harness) progress(doc any) api.UpdateProgress {
	h.t.Helper()
	var u api.UpdateProgress
	b, err := json.Marshal(doc)
	if err == nil {
		err = json.Unmarshal(b, &u)
	}
	if err != nil || doc == nil {
		h.t.Fatalf("no update progress in %v: %v", doc, err)
	}
	return u
}

// rolledOut checks that the three-node cluster of updatable went to p2 in
// three batches, each counted once, with every node updated (stop-first)
// or replaced (start-first) once.
func rolledOut(order string) func(h *harness, cl *model.Cluster, a *model.Action, before []*model.Node) {
	return func(h *harness, cl *model.Cluster, a *model.Action, before []*model.Node) {
		h.t.Helper()
		h.assertSize(cl.ID, size{3, 3, 0, -1})
		p2 := h.profileID("p2")
		got := h.getCluster(cl.ID)
		if got.ProfileID != p2 {
			h.t.Errorf("the cluster's profile is %s, want p2 (%s)", got.ProfileID, p2)
		}
		u := h.progress(got.Data["update"])
		if u.Status != api.UpdateCompleted || u.Batch != 3 || u.Batches != 3 || u.Total != 3 || u.Updated != 3 || u.Failures != 0 {
			h.t.Errorf("the update's progress reads %s, batch %d of %d, %d of %d updated, %d failed; want completed, batch 3 of 3, 3 of 3 updated, 0 failed",
				u.Status, u.Batch, u.Batches, u.Updated, u.Total, u.Failures)
		}
		updated := h.gate.calls("update")
		nodes := h.nodes(cl.ID)
		for _, n := range nodes {
			if n.ProfileID != p2 {
				h.t.Errorf("node %d is on profile %s, want p2", n.Index, n.ProfileID)
			}
		}
		switch order {
		case "stop-first":
			for _, n := range nodes {
				if updated[n.ID] != 1 {
					h.t.Errorf("node %d was updated %d times, want once", n.Index, updated[n.ID])
				}
			}
			if !slices.Equal(ids(nodes), ids(before)) {
				h.t.Errorf("the update changed the nodes from %v to %v", ids(before), ids(nodes))
			}
		case "start-first":
			deleted := h.gate.calls("delete")
			for _, n := range before {
				if deleted[n.ID] != 1 {
					h.t.Errorf("the old node %d was deleted %d times, want once", n.Index, deleted[n.ID])
				}
			}
			if len(updated) > 0 {
				h.t.Errorf("a start-first update updated nodes in place: %v", updated)
			}
			if got := h.children(a.ID, model.NodeCreateAction); got != 3 {
				h.t.Errorf("the update forked %d node creations, want 3", got)
			}
			h.driverHoldsClusterNodes(cl.ID)
		}
	}
}

// TestRollbackResumes: an update that failed over its max_failure_ratio
// and is rolling back resumes the rollback after a crash, or after its
// agent stopped (which records the update as stopped); it neither goes on
// with the update it was rolling back nor starts the rollback's batch
// again.
func TestRollbackResumes(t *testing.T) {
	stopped := struct {
		name   string
		resume func(h *harness, a *model.Action)
	}{"agent stopped", func(h *harness, _ *model.Action) { h.restart(h.eng.ID(), nil) }}
	for _, r := range append(resumes[:len(resumes):len(resumes)], stopped) {
		t.Run(r.name, func(t *testing.T) {
			t.Parallel()
			h := newHarness(t, nil)
			h.profile("p")
			h.profile("p2")
			three, timeout := 3, 60
			cl := h.create(engine.ClusterCreate{Name: "c", Profile: "p", DesiredCapacity: &three, Timeout: &timeout,
				Config: map[string]any{"grove.update": map[string]any{"parallelism": float64(1), "monitor": "0s",
					"failure_action": "rollback", "max_failure_ratio": float64(0)}}})
			nodes := h.nodes(cl.ID)
			slices.SortFunc(nodes, func(x, y *model.Node) int { return x.Index - y.Index })
			h.gate.closeAfter("update", 1)
			_, a, err := updateToP2(h, cl)
			if err != nil {
				t.Fatalf("submit: %v", err)
			}
			// The first batch passes; the second node's update is held,
			// and fails: the test cancels it.
			h.entered("update")
			kid := h.heldChild(a.ID, nodes[1].ID)
			if _, err := h.eng.CancelAction(h.ctx(), caller, kid.ID, false); err != nil {
				t.Fatalf("cancel the second node's update: %v", err)
			}
			// The rollback's update of the first node is held: the engine
			// dies there.
			h.entered("update")
			if r.name == stopped.name {
				h.eng.Stop()
			} else {
				h.crash()
			}
			h.gate.open("update")
			r.resume(h, a)
			end := h.wait(a, nil)
			if end.Status != model.ActionFailed || !strings.HasPrefix(end.StatusReason, "Update rolled back") {
				t.Fatalf("the update ended %s %q, want FAILED, rolled back", end.Status, end.StatusReason)
			}
			p := h.profileID("p")
			if got := h.getCluster(cl.ID); got.ProfileID != p {
				t.Errorf("the cluster's profile is %s, want p (%s)", got.ProfileID, p)
			}
			if u := h.progress(h.getCluster(cl.ID).Data["update"]); u.Status != api.UpdateRolledBack || u.Batch != 2 || u.Updated != 1 ||
				u.Failures != 1 || !slices.Equal(u.FailedNodes, []string{nodes[1].ID}) {
				t.Errorf("the update's progress reads %+v; want rolled back after batch 2 with 1 updated and the second node failed", u)
			}
			if u := h.progress(end.Data["rollback"]); u.Status != api.UpdateRolledBack || u.Batch != 1 || u.Batches != 1 || u.Updated != 1 {
				t.Errorf("the rollback's progress reads %+v; want rolled back, batch 1 of 1, 1 updated", u)
			}
			updated := h.gate.calls("update")
			for i, want := range []int{2, 0, 0} { // there and back; failed; never reached
				n := nodes[i]
				if updated[n.ID] != want {
					t.Errorf("node %d was updated %d times, want %d", n.Index, updated[n.ID], want)
				}
			}
			for _, n := range h.nodes(cl.ID) {
				if n.ProfileID != p {
					t.Errorf("node %d is on profile %s, want p", n.Index, n.ProfileID)
				}
			}
		})
	}
}

// heldChild returns the unfinished child of an action working on a node.
func (h *harness) heldChild(parentID, nodeID string) *model.Action {
	h.t.Helper()
	kids, err := h.store.Children(h.ctx(), parentID)
	if err != nil {
		h.t.Fatal(err)
	}
	for _, k := range kids {
		if k.Target == nodeID && !k.Terminal() {
			return k
		}
	}
	h.t.Fatalf("the action %s has no unfinished child on the node %s", parentID, nodeID)
	return nil
}
