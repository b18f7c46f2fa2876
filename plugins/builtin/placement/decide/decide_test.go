package decide_test

import (
	"errors"
	"reflect"
	"testing"

	"github.com/grovehq/grove/plugins/builtin/placement/decide"
	"github.com/grovehq/grove/plugins/sdk/scaling"
)

func areas(spec ...any) []decide.Area {
	var out []decide.Area
	for i := 0; i < len(spec); i += 3 {
		out = append(out, decide.Area{Name: spec[i].(string), Weight: spec[i+1].(int), Cap: spec[i+2].(int)})
	}
	return out
}

// TestPlan holds Senlin's plan algorithm: weights, caps, the stable order
// among equal weights, rounding up when expanding and down when
// shrinking, and infeasible plans.
func TestPlan(t *testing.T) {
	cases := []struct {
		name    string
		areas   []decide.Area
		current map[string]int
		count   int
		expand  bool
		want    map[string]int // nil: infeasible
	}{
		{"equal weights spread evenly", areas("a", 100, -1, "b", 100, -1, "c", 100, -1), nil, 3, true, map[string]int{"a": 1, "b": 1, "c": 1}},
		{"weights share the nodes", areas("a", 200, -1, "b", 100, -1), nil, 3, true, map[string]int{"a": 2, "b": 1}},
		{"without its cap the heavy area takes two", areas("a", 200, -1, "b", 100, -1, "c", 100, -1), nil, 3, true, map[string]int{"a": 2, "b": 1}},
		{"the heaviest first when expanding, rounded up", areas("b", 100, -1, "a", 200, -1), nil, 1, true, map[string]int{"a": 1}},
		{"equal weights keep the spec's order", areas("c", 100, -1, "b", 100, -1, "a", 100, -1), nil, 1, true, map[string]int{"c": 1}},
		{"what runs now counts toward the quota", areas("a", 100, -1, "b", 100, -1), map[string]int{"a": 2}, 2, true, map[string]int{"b": 2}},
		{"a cap holds and the rest goes on", areas("a", 200, 1, "b", 100, -1, "c", 100, -1), nil, 3, true, map[string]int{"a": 1, "b": 1, "c": 1}},
		{"a cap leaves nodes no quota takes: infeasible", areas("a", 300, 2, "b", 100, -1), nil, 4, true, nil},
		{"a full area takes none", areas("a", 100, 2, "b", 100, -1), map[string]int{"a": 2, "b": 0}, 2, true, map[string]int{"b": 2}},
		{"shrinking takes from the lightest first, rounded down", areas("a", 200, -1, "b", 100, -1), map[string]int{"a": 2, "b": 2}, 1, false, map[string]int{"b": 1}},
		{"shrinking takes from the crowded area", areas("a", 100, -1, "b", 100, -1), map[string]int{"a": 3, "b": 1}, 2, false, map[string]int{"a": 2}},
		{"shrinking more than the areas hold: infeasible", areas("a", 100, -1, "b", 100, -1), map[string]int{"a": 1}, 2, false, nil},
		{"nodes outside the areas do not count", areas("a", 100, -1), map[string]int{"a": 1, "elsewhere": 5}, 1, true, map[string]int{"a": 1}},
		{"no weight at all: infeasible", areas("a", 0, -1, "b", 0, -1), nil, 1, true, nil},
		{"nothing to place: an empty plan", areas("a", 100, -1), nil, 0, true, map[string]int{}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := decide.Plan(c.current, c.areas, c.count, c.expand)
			if c.want == nil {
				if !errors.Is(err, decide.ErrInfeasible) {
					t.Errorf("Plan = %v, %v; want the infeasible plan error", got, err)
				}
				return
			}
			if err != nil || !reflect.DeepEqual(got, c.want) {
				t.Errorf("Plan = %v, %v; want %v", got, err, c.want)
			}
		})
	}
	if decide.ErrInfeasible.Error() != "There is no feasible plan to handle all nodes." {
		t.Errorf("the infeasible plan error reads %q, not Senlin's", decide.ErrInfeasible)
	}
}

func ptr(n int) *int { return &n }

// TestCount holds Senlin's _get_count for the four actions.
func TestCount(t *testing.T) {
	num := func(f float64) *float64 { return &f }
	bounds := scaling.Bounds{Desired: 2, Min: 0, Max: -1}
	cases := []struct {
		name string
		req  decide.CountRequest
		want int
	}{
		{"a node creation is one node", decide.CountRequest{Action: "NODE_CREATE"}, 1},
		{"a node creation the profile pins is left alone", decide.CountRequest{Action: "NODE_CREATE", Pinned: true}, 0},
		{"a scale-out without count is one", decide.CountRequest{Action: "CLUSTER_SCALE_OUT"}, 1},
		{"a scale-out's count", decide.CountRequest{Action: "CLUSTER_SCALE_OUT", ScaleCount: ptr(3)}, 3},
		{"a scale-out takes the scaling policy's decision", decide.CountRequest{Action: "CLUSTER_SCALE_OUT", ScaleCount: ptr(3), Creation: ptr(2)}, 2},
		{"a scale-in removes", decide.CountRequest{Action: "CLUSTER_SCALE_IN", ScaleCount: ptr(2)}, -2},
		{"a scale-in takes the decision", decide.CountRequest{Action: "CLUSTER_SCALE_IN", Deletion: ptr(1), ScaleCount: ptr(2)}, -1},
		{"a growing resize parses", decide.CountRequest{Action: "CLUSTER_RESIZE", Bounds: bounds, Current: 2,
			Resize: scaling.Resize{AdjustmentType: scaling.ChangeInCapacity, Number: num(2), Strict: true}}, 2},
		{"a shrinking resize parses", decide.CountRequest{Action: "CLUSTER_RESIZE", Bounds: bounds, Current: 2,
			Resize: scaling.Resize{AdjustmentType: scaling.ExactCapacity, Number: num(1), Strict: true}}, -1},
		{"a resize takes an earlier deletion", decide.CountRequest{Action: "CLUSTER_RESIZE", Deletion: ptr(2)}, -2},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got, err := decide.Count(c.req); err != nil || got != c.want {
				t.Errorf("Count = %d, %v; want %d", got, err, c.want)
			}
		})
	}
	if _, err := decide.Count(decide.CountRequest{Action: "CLUSTER_DELETE"}); err == nil {
		t.Error("an action the policy does not handle was counted")
	}
}

// TestSpreadAndVictims: a growth's plan becomes one area per new node in
// name order; a shrink's plan picks each area's number of nodes there,
// nodes in error first.
func TestSpreadAndVictims(t *testing.T) {
	if got := decide.Spread(map[string]int{"b": 1, "a": 2}); !reflect.DeepEqual(got, []string{"a", "a", "b"}) {
		t.Errorf("Spread = %v", got)
	}
	v := func(id, area, status string, created int64) decide.Victim {
		return decide.Victim{Candidate: scaling.Candidate{ID: id, Status: status, CreatedAt: created}, Area: area}
	}
	nodes := []decide.Victim{v("a1", "a", "ACTIVE", 1), v("a2", "a", "ACTIVE", 2), v("a3", "a", "ERROR", 3), v("b1", "b", "ACTIVE", 4), v("b2", "b", "ACTIVE", 5)}
	got := decide.Victims(nodes, map[string]int{"b": 1, "a": 2}, scaling.YoungestFirst)
	if !reflect.DeepEqual(got, []string{"a3", "a2", "b2"}) {
		t.Errorf("Victims = %v, want a3 (in error), a2 (youngest of a), b2 (youngest of b)", got)
	}
	dist := decide.Distribution(nodes, areas("a", 100, -1, "c", 100, -1), func(n decide.Victim) string { return n.Area })
	if !reflect.DeepEqual(dist, map[string]int{"a": 3, "c": 0}) {
		t.Errorf("Distribution = %v", dist)
	}
}
