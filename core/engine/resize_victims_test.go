package engine_test

import (
	"testing"

	"github.com/grovehq/grove/core/model"
)

// A cluster can be left without nodes while its desired capacity is above
// zero (a deletion policy with reduce_desired_capacity false removed them; the
// test deletes the rows). A resize of a cluster without nodes counts from
// desired_capacity (senlin.md §e.4), so it may ask to remove more nodes than
// there are: it removes what there is instead of crashing the engine.
func TestResizeBelowDesiredWithFewerNodes(t *testing.T) {
	h := newHarness(t, nil)
	h.profile("p")
	cl := h.cluster("web", 3, 60)
	var ids []string
	for _, n := range h.nodes(cl.ID) {
		ids = append(ids, n.ID)
	}
	if err := h.store.DeleteNodes(h.ctx(), ids); err != nil {
		t.Fatal(err)
	}
	a, err := h.eng.ClusterAction(h.ctx(), caller, cl.ID, map[string]any{"resize": map[string]any{"adjustment_type": "EXACT_CAPACITY", "number": 1.0}})
	end := h.wait(a, err)
	if end.Status != model.ActionSucceeded {
		t.Fatalf("resize: %s %s", end.Status, end.StatusReason)
	}
	if got := h.getCluster(cl.ID); got.DesiredCapacity != 1 {
		t.Errorf("desired_capacity %d, want 1", got.DesiredCapacity)
	}
}
