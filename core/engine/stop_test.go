package engine_test

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/grovehq/grove/core/engine"
	"github.com/grovehq/grove/core/model"
)

// stopCase is a cluster action held at a closed gate while it works.
type stopCase struct {
	name string
	gate string // the plugin call the action is held at
	// run starts the action on cluster "c" (desired 2, timeout given), made
	// beforehand unless the case creates it.
	run func(h *harness, cl *model.Cluster) (*model.Action, error)
}

var stopCases = []stopCase{
	{"create", "create", nil},
	{"delete", "delete", func(h *harness, cl *model.Cluster) (*model.Action, error) {
		return h.eng.DeleteCluster(h.ctx(), caller, cl.ID, false)
	}},
	{"resize", "create", func(h *harness, cl *model.Cluster) (*model.Action, error) {
		return h.eng.ClusterAction(h.ctx(), caller, cl.ID, map[string]any{"resize": map[string]any{"adjustment_type": "EXACT_CAPACITY", "number": 4}})
	}},
	{"scale-out", "create", func(h *harness, cl *model.Cluster) (*model.Action, error) {
		return h.eng.ClusterAction(h.ctx(), caller, cl.ID, map[string]any{"scale_out": map[string]any{"count": 1}})
	}},
	{"scale-in", "delete", func(h *harness, cl *model.Cluster) (*model.Action, error) {
		return h.eng.ClusterAction(h.ctx(), caller, cl.ID, map[string]any{"scale_in": map[string]any{"count": 1}})
	}},
	{"add-nodes", "policy", func(h *harness, cl *model.Cluster) (*model.Action, error) {
		n := h.orphan("spare")
		h.attachHold(cl)
		return h.eng.ClusterAction(h.ctx(), caller, cl.ID, map[string]any{"add_nodes": map[string]any{"nodes": []any{n.ID}}})
	}},
	{"del-nodes", "delete", func(h *harness, cl *model.Cluster) (*model.Action, error) {
		victim := h.nodes(cl.ID)[0]
		return h.eng.ClusterAction(h.ctx(), caller, cl.ID, map[string]any{"del_nodes": map[string]any{"nodes": []any{victim.ID}, "destroy_after_deletion": true}})
	}},
	{"replace-nodes", "policy", func(h *harness, cl *model.Cluster) (*model.Action, error) {
		n := h.orphan("spare")
		old := h.nodes(cl.ID)[0]
		h.attachHold(cl)
		return h.eng.ClusterAction(h.ctx(), caller, cl.ID, map[string]any{"replace_nodes": map[string]any{"nodes": map[string]any{old.ID: n.ID}}})
	}},
	{"check", "check", func(h *harness, cl *model.Cluster) (*model.Action, error) {
		return h.eng.ClusterAction(h.ctx(), caller, cl.ID, map[string]any{"check": map[string]any{}})
	}},
	{"recover", "recover", func(h *harness, cl *model.Cluster) (*model.Action, error) {
		if err := h.store.SetNodeStatus(h.ctx(), []string{h.nodes(cl.ID)[0].ID}, model.NodeError, "Broken by the test."); err != nil {
			h.t.Fatal(err)
		}
		return h.eng.ClusterAction(h.ctx(), caller, cl.ID, map[string]any{"recover": map[string]any{}})
	}},
	{"operation", "operate", func(h *harness, cl *model.Cluster) (*model.Action, error) {
		return h.eng.ClusterOperation(h.ctx(), caller, cl.ID, map[string]any{"stop": map[string]any{}})
	}},
	{"update", "update", func(h *harness, cl *model.Cluster) (*model.Action, error) {
		h.profile("p2")
		p2 := "p2"
		_, a, err := h.eng.UpdateCluster(h.ctx(), caller, cl.ID, engine.ClusterUpdate{Profile: &p2})
		return a, err
	}},
}

func (h *harness) attachHold(cl *model.Cluster) {
	h.t.Helper()
	spec := map[string]any{"type": "test.hold", "version": "1.0", "properties": map[string]any{}}
	if _, err := h.eng.CreatePolicy(h.ctx(), caller, "hold", spec); err != nil {
		h.t.Fatal(err)
	}
	h.ok(h.eng.ClusterAction(h.ctx(), caller, cl.ID, map[string]any{"policy_attach": map[string]any{"policy_id": "hold"}}))
}

// TestClusterActionsEndCancelledOrTimedOut cancels, and runs out of time,
// each cluster action while it waits on a plugin call: it ends CANCELLED, or
// FAILED with a TIMEOUT reason as Senlin's TIMEOUT result does, never FAILED
// with "context canceled"; its cluster is left in no transitional status
// (a timed-out delete leaves it ERROR, not DELETING), and its children end.
func TestClusterActionsEndCancelledOrTimedOut(t *testing.T) {
	for _, c := range stopCases {
		for _, how := range []string{"cancel", "timeout"} {
			t.Run(c.name+"/"+how, func(t *testing.T) {
				t.Parallel()
				h := newHarness(t, nil)
				h.profile("p")
				timeout := 60
				if how == "timeout" {
					timeout = 1
				}
				var a *model.Action
				var err error
				var cl *model.Cluster
				if c.run == nil {
					h.gate.close(c.gate)
					desired := 2
					cl, a, err = h.eng.CreateCluster(h.ctx(), caller, engine.ClusterCreate{Name: "c", Profile: "p", DesiredCapacity: &desired, Timeout: &timeout})
				} else {
					cl = h.cluster("c", 2, timeout)
					h.gate.close(c.gate)
					a, err = c.run(h, cl)
				}
				if err != nil {
					t.Fatalf("submit: %v", err)
				}
				if how == "cancel" {
					h.entered(c.gate)
					if _, err := h.eng.CancelAction(h.ctx(), caller, a.ID, false); err != nil {
						t.Fatalf("cancel: %v", err)
					}
				}
				end := h.wait(a, nil)
				switch how {
				case "cancel":
					if end.Status != model.ActionCancelled || end.StatusReason != "The action was cancelled." {
						t.Errorf("cancelled %s ended %s %q, want CANCELLED", end.Action, end.Status, end.StatusReason)
					}
				case "timeout":
					if end.Status != model.ActionFailed || !strings.HasPrefix(end.StatusReason, "TIMEOUT: ") {
						t.Errorf("timed-out %s ended %s %q, want FAILED with a TIMEOUT reason", end.Action, end.Status, end.StatusReason)
					}
				}
				got := h.getCluster(cl.ID)
				stuck := []string{model.ClusterInit, model.ClusterCreating, model.ClusterUpdating, model.ClusterResizing, model.ClusterDeleting,
					model.ClusterChecking, model.ClusterRecovering, model.ClusterOperating}
				if slices.Contains(stuck, got.Status) {
					t.Errorf("after the %s ended, the cluster is %s (%s)", end.Action, got.Status, got.StatusReason)
				}
				if c.name == "delete" && got.Status != model.ClusterError {
					t.Errorf("after the delete ended, the cluster is %s (%s), want ERROR", got.Status, got.StatusReason)
				}
				if u, _ := got.Data["update"].(map[string]any); c.name == "update" && u["status"] != "stopped" {
					t.Errorf("after the update ended, its progress reads %v, want stopped", u["status"])
				}
				h.childrenEnd(a.ID)
			})
		}
	}
}

// childrenEnd waits until every child of an action has ended.
func (h *harness) childrenEnd(parentID string) {
	h.t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		kids, err := h.store.Children(h.ctx(), parentID)
		if err != nil {
			h.t.Fatal(err)
		}
		pending := 0
		for _, k := range kids {
			if !k.Terminal() {
				pending++
			}
		}
		if pending == 0 {
			return
		}
		if time.Now().After(deadline) {
			h.t.Fatalf("%d children of action %s have not ended", pending, parentID)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestCancelledBeforeItRanLeavesNoTransitionalCluster cancels a cluster
// creation that no worker has taken yet: the action ends CANCELLED at once
// and its cluster is ERROR with the reason, not INIT for ever.
func TestCancelledBeforeItRanLeavesNoTransitionalCluster(t *testing.T) {
	h := newIdleHarness(t, nil)
	h.profile("p")
	desired := 1
	cl, a, err := h.eng.CreateCluster(h.ctx(), caller, engine.ClusterCreate{Name: "c", Profile: "p", DesiredCapacity: &desired})
	if err != nil {
		t.Fatalf("submit: %v", err)
	}
	end, err := h.eng.CancelAction(h.ctx(), caller, a.ID, false)
	if err != nil {
		t.Fatalf("cancel: %v", err)
	}
	if end.Status != model.ActionCancelled {
		t.Fatalf("the READY creation ended %s %q, want CANCELLED", end.Status, end.StatusReason)
	}
	got := h.getCluster(cl.ID)
	if got.Status != model.ClusterError || !strings.Contains(got.StatusReason, "cancelled") {
		t.Errorf("after its creation was cancelled, the cluster is %s (%s), want ERROR saying it was cancelled", got.Status, got.StatusReason)
	}
}
