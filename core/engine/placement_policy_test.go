package engine_test

import (
	"reflect"
	"testing"

	"github.com/grovehq/grove/core/model"
)

// TestRegionPlacementPolicy: senlin.policy.region_placement on grove.noop
// nodes. A scale-out's nodes keep the region the plan gave each in their
// data.placement (one in r1, two in the heavier r2); a scale-in removes
// the node of the region over its share, r1's (the engine alone would
// take the highest index, in r2).
func TestRegionPlacementPolicy(t *testing.T) {
	h := newHarness(t, nil)
	h.profileOf("noop", "grove.noop", map[string]any{})
	cl := h.noopCluster("c", 0, 0, -1)
	pol := h.policy("regions", "senlin.policy.region_placement", "1.0",
		`{"regions": [{"name": "r1", "weight": 100}, {"name": "r2", "weight": 200}]}`)
	h.attach(cl, pol.ID)
	out := h.wait(h.act(cl, `{"scale_out": {"count": 3}}`))
	if out.Status != model.ActionSucceeded {
		t.Fatalf("scale-out: %s %s", out.Status, out.StatusReason)
	}
	if got := out.Data["creation"]; !reflect.DeepEqual(got, map[string]any{"count": float64(3), "regions": map[string]any{"r1": float64(1), "r2": float64(2)}}) {
		t.Errorf("the scale-out's data.creation = %v", got)
	}
	region := map[string]string{}
	var got []string
	for _, n := range h.nodes(cl.ID) {
		pl, _ := n.Data["placement"].(map[string]any)
		r, _ := pl["region_name"].(string)
		region[n.ID] = r
		got = append(got, r)
	}
	if !reflect.DeepEqual(got, []string{"r1", "r2", "r2"}) {
		t.Fatalf("the nodes' regions by index are %v, want [r1 r2 r2]", got)
	}
	in := h.wait(h.act(cl, `{"scale_in": {"count": 1}}`))
	if in.Status != model.ActionSucceeded {
		t.Fatalf("scale-in: %s %s", in.Status, in.StatusReason)
	}
	del, _ := in.Data["deletion"].(map[string]any)
	if !reflect.DeepEqual(del["regions"], map[string]any{"r1": float64(1)}) {
		t.Errorf("the scale-in's data.deletion = %v, want one from r1", del)
	}
	left := map[string]int{}
	for _, n := range h.nodes(cl.ID) {
		left[region[n.ID]]++
	}
	if !reflect.DeepEqual(left, map[string]int{"r2": 2}) {
		t.Errorf("left after the scale-in: %v, want the two r2 nodes", left)
	}
}
