package engine

import (
	"fmt"
	"strings"
	"testing"

	"github.com/grovehq/grove/api"
	"github.com/grovehq/grove/core/model"
)

// idsN returns n distinct ids starting at from.
func idsN(from, n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("n%d", from+i)
	}
	return out
}

// TestAddOutputBounds: the calls of one action (a create in batches, an
// update's start-first batches) append to its outputs list until the list
// holds api.MaxInlineIDs ids; past that only the count grows, and a count
// appears only once the list is cut. Outputs read back from the store
// (numbers as float64, lists as []any) append the same way, and outputs no
// Grove wrote are refused with the field named.
func TestAddOutputBounds(t *testing.T) {
	bound := api.MaxInlineIDs
	cases := []struct {
		name      string
		before    map[string]any
		add       []int // sizes of successive calls
		wantLen   int
		wantCount int // -1: no count
		wantErr   string
	}{
		{name: "small", add: []int{3}, wantLen: 3, wantCount: -1},
		{name: "exactly the bound", add: []int{bound}, wantLen: bound, wantCount: -1},
		{name: "one past", add: []int{bound + 1}, wantLen: bound, wantCount: bound + 1},
		{name: "batches under", add: []int{400, 600}, wantLen: bound, wantCount: -1},
		{name: "batches across", add: []int{600, 600, 600}, wantLen: bound, wantCount: 1800},
		{name: "stored outputs", before: map[string]any{"nodes_added": []any{"a", "b"}}, add: []int{bound}, wantLen: bound, wantCount: bound + 2},
		{name: "stored count", before: map[string]any{"nodes_added": toAny(idsN(0, bound)), "nodes_added_count": float64(5000)}, add: []int{7}, wantLen: bound, wantCount: 5007},
		{name: "not a list", before: map[string]any{"nodes_added": "a"}, add: []int{1}, wantErr: "outputs.nodes_added"},
		{name: "bad count", before: map[string]any{"nodes_added": []any{"a", "b"}, "nodes_added_count": "many"}, add: []int{1}, wantErr: "outputs.nodes_added_count must be a whole number"},
		{name: "count below the list", before: map[string]any{"nodes_added": []any{"a", "b"}, "nodes_added_count": float64(1)}, add: []int{1}, wantErr: "outputs.nodes_added_count"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			a := &model.Action{ID: "a1", Action: model.ClusterCreateAction, Outputs: map[string]any{}}
			for k, v := range c.before {
				a.Outputs[k] = v
			}
			next := 0
			var err error
			for _, n := range c.add {
				if err = addOutput(a, "nodes_added", idsN(next, n)); err != nil {
					break
				}
				next += n
			}
			if c.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), c.wantErr) {
					t.Fatalf("err = %v, want one naming %q", err, c.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			got, _ := a.Outputs["nodes_added"].([]string)
			count, has := a.Outputs["nodes_added_count"].(int)
			if !has {
				count = -1
			}
			if len(got) != c.wantLen || count != c.wantCount {
				t.Errorf("%d ids, count %d; want %d, %d", len(got), count, c.wantLen, c.wantCount)
			}
		})
	}
}

func toAny(ids []string) []any {
	out := make([]any, len(ids))
	for i, id := range ids {
		out[i] = id
	}
	return out
}

// TestSetIDsBounds: a list set at once keeps Senlin's shape up to the
// bound and is cut with a count past it; setting it again drops a count
// the new list does not need.
func TestSetIDsBounds(t *testing.T) {
	a := &model.Action{Outputs: map[string]any{}}
	setIDs(a, "nodes_removed", idsN(0, api.MaxInlineIDs+5))
	if got := a.Outputs["nodes_removed"].([]string); len(got) != api.MaxInlineIDs || got[0] != "n0" || a.Outputs["nodes_removed_count"] != api.MaxInlineIDs+5 {
		t.Errorf("past the bound: %d ids from %s, count %v", len(got), got[0], a.Outputs["nodes_removed_count"])
	}
	setIDs(a, "nodes_removed", idsN(0, 2))
	if got := a.Outputs["nodes_removed"].([]string); len(got) != 2 {
		t.Errorf("a small list: %v", got)
	}
	if c, ok := a.Outputs["nodes_removed_count"]; ok {
		t.Errorf("a small list kept the count %v", c)
	}
}
