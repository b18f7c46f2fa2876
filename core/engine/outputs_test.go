package engine_test

import (
	"encoding/json"
	"slices"
	"testing"

	"github.com/grovehq/grove/api"
	"github.com/grovehq/grove/core/engine"
	"github.com/grovehq/grove/core/model"
	"github.com/grovehq/grove/core/store"
)

// outputIDs reads a bounded id list and its count from an action's stored
// outputs, as a client decodes them: count is -1 when the outputs have none.
func outputIDs(t *testing.T, a *model.Action, key string) (ids []string, count int) {
	t.Helper()
	b, err := json.Marshal(a.Outputs)
	if err != nil {
		t.Fatal(err)
	}
	var out map[string]json.RawMessage
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(out[key], &ids); err != nil {
		t.Fatalf("outputs.%s: %v: %s", key, err, out[key])
	}
	count = -1
	if raw, ok := out[key+"_count"]; ok {
		if err := json.Unmarshal(raw, &count); err != nil {
			t.Fatalf("outputs.%s_count: %v: %s", key, err, raw)
		}
	}
	return ids, count
}

// TestLargeActionOutputsAreBounded: creating 1,500 nodes records the first
// api.MaxInlineIDs of them (by index) in outputs.nodes_added and counts all
// of them in nodes_added_count; the rest are the cluster's next nodes by
// index and the action's NODE_CREATE children, which is how api.md tells a
// client to page to them. Removing 1,200 records nodes_removed the same way.
// Small lists keep Senlin's shape: whole, with no count.
func TestLargeActionOutputsAreBounded(t *testing.T) {
	h := newHarness(t, nil)
	h.profileOf("noop", "grove.noop", map[string]any{})
	desired, least, most := 1500, 0, -1
	cl, a, err := h.eng.CreateCluster(h.ctx(), caller, engine.ClusterCreate{Name: "big", Profile: "noop", DesiredCapacity: &desired, MinSize: &least, MaxSize: &most})
	h.ok(a, err)
	created := h.getAction(a.ID)
	added, count := outputIDs(t, created, "nodes_added")
	if len(added) != api.MaxInlineIDs || count != 1500 {
		t.Fatalf("CLUSTER_CREATE of 1,500 nodes: %d ids inline, nodes_added_count %d; want %d and 1500", len(added), count, api.MaxInlineIDs)
	}
	nodes := h.nodes(cl.ID)
	slices.SortFunc(nodes, func(x, y *model.Node) int { return x.Index - y.Index })
	byIndex := make([]string, len(nodes))
	for i, n := range nodes {
		byIndex[i] = n.ID
	}
	if len(byIndex) != 1500 || !slices.Equal(added, byIndex[:api.MaxInlineIDs]) {
		t.Errorf("nodes_added is not the cluster's first %d nodes by index (%d nodes)", api.MaxInlineIDs, len(byIndex))
	}
	// The paging api.md gives: the action's NODE_CREATE children, a page of
	// 1,000 at a time with the last id as the marker, name every node.
	targets := map[string]bool{}
	for marker := ""; ; {
		page, err := h.store.ListActions(h.ctx(), store.ListOpts{Project: caller.Project, Limit: api.MaxInlineIDs, Marker: marker,
			Filters: map[string][]string{"parent_id": {created.ID}, "action": {model.NodeCreateAction}}})
		if err != nil {
			t.Fatal(err)
		}
		for _, k := range page {
			targets[k.Target] = true
		}
		if len(page) < api.MaxInlineIDs {
			break
		}
		marker = page[len(page)-1].ID
	}
	for _, id := range byIndex {
		if !targets[id] {
			t.Fatalf("node %s is not the target of one of the action's NODE_CREATE children (%d targets)", id, len(targets))
		}
	}

	// One more node: a small list, as Senlin has it.
	out := h.wait(h.act(cl, `{"scale_out": {"count": 1}}`))
	if added, count := outputIDs(t, out, "nodes_added"); len(added) != 1 || count != -1 {
		t.Errorf("SCALE_OUT by 1: nodes_added %v, nodes_added_count %d; want one id and no count", added, count)
	}

	in := h.wait(h.act(cl, `{"scale_in": {"count": 1200}}`))
	if in.Status != model.ActionSucceeded {
		t.Fatalf("SCALE_IN by 1,200: %s %s", in.Status, in.StatusReason)
	}
	removed, count := outputIDs(t, in, "nodes_removed")
	if len(removed) != api.MaxInlineIDs || count != 1200 {
		t.Errorf("SCALE_IN by 1,200: %d ids inline, nodes_removed_count %d; want %d and 1200", len(removed), count, api.MaxInlineIDs)
	}
	if n := len(h.nodes(cl.ID)); n != 301 {
		t.Errorf("after the scale-in the cluster has %d nodes, want 301", n)
	}
}
