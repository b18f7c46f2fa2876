package engine_test

import (
	"reflect"
	"slices"
	"testing"

	"github.com/grovehq/grove/api"
	"github.com/grovehq/grove/core/model"
)

// TestBatchPolicyDrivesUpdate: with senlin.policy.batch bound, a cluster
// update moves the nodes in the policy's batches (two then one for three
// nodes and min_in_service 1, the node in error first), not in the
// cluster's grove.update parallelism (one at a time here); the plan stays
// in the action's data and the progress reads two batches.
func TestBatchPolicyDrivesUpdate(t *testing.T) {
	h := newHarness(t, nil)
	h.profile("p")
	cl := updatable("stop-first")(h)
	nodes := h.nodes(cl.ID)
	bad := nodes[2]
	bad.Status, bad.StatusReason = model.NodeError, "broken for the test"
	if err := h.store.UpdateNodes(h.ctx(), []*model.Node{bad}); err != nil {
		t.Fatal(err)
	}
	pol := h.policy("batches", "senlin.policy.batch", "1.0", `{"min_in_service": 1, "pause_time": 0}`)
	h.attach(cl, pol.ID)
	_, a, err := updateToP2(h, cl)
	end := h.wait(a, err)
	if end.Status != model.ActionSucceeded {
		t.Fatalf("the update ended %s: %s", end.Status, end.StatusReason)
	}
	wantPlan := []any{[]any{bad.ID, nodes[0].ID}, []any{nodes[1].ID}}
	plan, _ := end.Data[model.DataBatchPlan].(map[string]any)
	if !reflect.DeepEqual(plan["plan"], wantPlan) || plan["pause_time"] != float64(0) {
		t.Errorf("data.batch_plan = %v, want the plan %v with pause_time 0", plan, wantPlan)
	}
	u := h.progress(end.Data["update"])
	if u.Status != api.UpdateCompleted || u.Batches != 2 || u.Batch != 2 || u.Updated != 3 {
		t.Errorf("progress %s, batch %d of %d, %d updated; want completed, batch 2 of 2, 3 updated", u.Status, u.Batch, u.Batches, u.Updated)
	}
	first, _ := end.Data["update.batch1"].(map[string]any)
	var got []string
	for _, id := range first["nodes"].([]any) {
		got = append(got, id.(string))
	}
	slices.Sort(got)
	want := []string{bad.ID, nodes[0].ID}
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Errorf("the first batch updated %v, want the node in error and the first node %v", got, want)
	}
	p2 := h.profileID("p2")
	for _, n := range h.nodes(cl.ID) {
		if n.ProfileID != p2 {
			t.Errorf("node %d is on profile %s, want p2", n.Index, n.ProfileID)
		}
	}
}
