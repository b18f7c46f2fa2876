package orchestrator

import (
	"fmt"
	"slices"
	"testing"
)

// Rules are cited by section of ../shared/reference/senlin.md (§a.4 resize
// request, §b.9 action handlers, §e.1 calculate_desired, §e.2
// truncate_desired, §e.3 check_size_params with its checks numbered 1–11,
// §e.4 parse_resize_params, §e.5 victim selection) and of
// ../shared/reference/semantics.md (§B.3 scale-down balance). A resize
// always has a target capacity (§e.4 takes the current size when there is no
// adjustment), so checks 6–8 and 11, which need none, answer only at submit
// (§a.4); plugins/sdk/scaling tests them.

func ip(n int) *int            { return &n }
func fp(f float64) *float64    { return &f }
func ids(s ...string) []string { return s }

// running is n running nodes n01…nNN with indexes 1…n and no host.
func running(n int) []Slot {
	out := make([]Slot, n)
	for i := range out {
		out[i] = Slot{ID: fmt.Sprintf("n%02d", i+1), Index: i + 1, Running: true}
	}
	return out
}

// sized is a cluster of n running nodes whose desired capacity is n.
func sized(n, minSize, maxSize int) Size {
	return Size{Desired: n, Min: minSize, Max: maxSize, Nodes: running(n), MaxNodes: 1000}
}

type sizeCase struct {
	name   string
	size   Size
	chosen Chosen
	want   SizeDecision
	err    string
}

func checkSize(t *testing.T, c sizeCase, got SizeDecision, err error) {
	t.Helper()
	if c.err != "" {
		if err == nil || err.Error() != c.err {
			t.Fatalf("error %v, want %q", err, c.err)
		}
		return
	}
	if err != nil {
		t.Fatalf("unexpected error: %v", err)
	}
	if got.Desired != c.want.Desired || got.Create != c.want.Create || !slices.Equal(got.Victims, c.want.Victims) ||
		!eqInt(got.Min, c.want.Min) || !eqInt(got.Max, c.want.Max) {
		t.Errorf("got %s, want %s", show(got), show(c.want))
	}
}

func eqInt(a, b *int) bool { return (a == nil) == (b == nil) && (a == nil || *a == *b) }

func show(d SizeDecision) string {
	p := func(n *int) string {
		if n == nil {
			return "unset"
		}
		return fmt.Sprint(*n)
	}
	return fmt.Sprintf("{desired %d, min %s, max %s, create %d, victims %v}", d.Desired, p(d.Min), p(d.Max), d.Create, d.Victims)
}

func TestPlanResize(t *testing.T) {
	ten := sized(10, 0, -1)
	exact := func(n float64) ResizeRequest {
		return ResizeRequest{AdjustmentType: "EXACT_CAPACITY", Number: fp(n), Strict: true}
	}
	change := func(n float64) ResizeRequest {
		return ResizeRequest{AdjustmentType: "CHANGE_IN_CAPACITY", Number: fp(n), Strict: true}
	}
	pct := func(n float64, minStep int) ResizeRequest {
		return ResizeRequest{AdjustmentType: "CHANGE_IN_PERCENTAGE", Number: fp(n), MinStep: minStep, Strict: true}
	}
	loose := func(r ResizeRequest) ResizeRequest { r.Strict = false; return r }
	bounded := func(r ResizeRequest, minSize, maxSize *int) ResizeRequest {
		r.MinSize, r.MaxSize = minSize, maxSize
		return r
	}
	empty := Size{Desired: 3, Max: -1, MaxNodes: 1000}
	cases := []struct {
		sizeCase
		r ResizeRequest
	}{
		// §e.1 adjustment types.
		{sizeCase{name: "§e.1 EXACT_CAPACITY sets the size", size: ten, want: SizeDecision{Desired: 4,
			Victims: ids("n05", "n06", "n07", "n08", "n09", "n10")}}, exact(4)},
		{sizeCase{name: "§e.1 CHANGE_IN_CAPACITY adds", size: ten, want: SizeDecision{Desired: 13, Create: 3}}, change(3)},
		{sizeCase{name: "§e.1 CHANGE_IN_CAPACITY removes, highest indexes first (§B.3)", size: ten,
			want: SizeDecision{Desired: 7, Victims: ids("n08", "n09", "n10")}}, change(-3)},
		// §e.1 percentage rounding, Senlin's examples on 10 nodes.
		{sizeCase{name: "§e.1 10% of 10 is one node", size: ten, want: SizeDecision{Desired: 11, Create: 1}}, pct(10, 0)},
		{sizeCase{name: "§e.1 a step of one node or more rounds toward zero: 15% is 1", size: ten, want: SizeDecision{Desired: 11, Create: 1}}, pct(15, 0)},
		{sizeCase{name: "§e.1 22% is 2", size: ten, want: SizeDecision{Desired: 12, Create: 2}}, pct(22, 0)},
		{sizeCase{name: "§e.1 a step under one node rounds away from zero: 1% is 1", size: ten, want: SizeDecision{Desired: 11, Create: 1}}, pct(1, 0)},
		{sizeCase{name: "§e.1 −1% is −1", size: ten, want: SizeDecision{Desired: 9, Victims: ids("n10")}}, pct(-1, 0)},
		{sizeCase{name: "§e.1 −22% rounds toward zero to −2", size: ten, want: SizeDecision{Desired: 8, Victims: ids("n09", "n10")}}, pct(-22, 0)},
		{sizeCase{name: "§e.1 min_step raises a smaller step: 10% with min_step 2 is 2", size: ten, want: SizeDecision{Desired: 12, Create: 2}}, pct(10, 2)},
		{sizeCase{name: "§e.1 min_step keeps the sign: −10% with min_step 2 is −2", size: ten, want: SizeDecision{Desired: 8, Victims: ids("n09", "n10")}}, pct(-10, 2)},
		{sizeCase{name: "§e.1 min_step leaves a larger step alone: 30% with min_step 2 is 3", size: ten, want: SizeDecision{Desired: 13, Create: 3}}, pct(30, 2)},
		{sizeCase{name: "§e.1 quirk: 0% with min_step takes the negative branch", size: ten, want: SizeDecision{Desired: 9, Victims: ids("n10")}}, pct(0, 1)},
		// §e.4 current size and no-op resizes.
		{sizeCase{name: "§e.4 no adjustment type keeps the size and sets the bounds", size: ten,
			want: SizeDecision{Desired: 10, Min: ip(2), Max: ip(12)}}, ResizeRequest{MinSize: ip(2), MaxSize: ip(12), Strict: true}},
		{sizeCase{name: "§e.4 a resize to the current size creates and removes nothing", size: ten, want: SizeDecision{Desired: 10}}, exact(10)},
		{sizeCase{name: "§e.4 a cluster without nodes counts from desired_capacity", size: empty, want: SizeDecision{Desired: 4, Create: 1}}, change(1)},
		{sizeCase{name: "§e.4 shrinking a cluster without nodes removes nothing", size: empty, want: SizeDecision{Desired: 1}}, exact(1)},
		// §a.4 min_size and max_size updates.
		{sizeCase{name: "§a.4 min_size and max_size become the cluster's", size: ten,
			want: SizeDecision{Desired: 5, Min: ip(2), Max: ip(8), Victims: ids("n06", "n07", "n08", "n09", "n10")}}, bounded(exact(5), ip(2), ip(8))},
		{sizeCase{name: "§e.3 max_size −1 lifts the cluster's max", size: sized(10, 0, 15), want: SizeDecision{Desired: 50, Max: ip(-1), Create: 40}},
			bounded(exact(50), nil, ip(-1))},
		// §e.2 truncate_desired, only when not strict.
		{sizeCase{name: "§e.2 rule 1: not strict clamps up to the new min_size", size: ten,
			want: SizeDecision{Desired: 3, Min: ip(3), Victims: ids("n04", "n05", "n06", "n07", "n08", "n09", "n10")}}, loose(bounded(exact(1), ip(3), nil))},
		{sizeCase{name: "§e.2 rule 2: not strict clamps up to the cluster's min_size", size: sized(10, 5, -1),
			want: SizeDecision{Desired: 5, Victims: ids("n06", "n07", "n08", "n09", "n10")}}, loose(exact(2))},
		{sizeCase{name: "§e.2 rule 3: not strict clamps down to the new max_size", size: ten, want: SizeDecision{Desired: 12, Max: ip(12), Create: 2}},
			loose(bounded(exact(20), nil, ip(12)))},
		{sizeCase{name: "§e.2 rule 4: not strict clamps down to the cluster's max_size", size: sized(10, 0, 15), want: SizeDecision{Desired: 15, Create: 5}},
			loose(exact(20))},
		{sizeCase{name: "§e.2 rule 3 needs max_size > 0, so §e.3 check 4 refuses max_size 0", size: ten,
			err: "The target capacity (20) is greater than the specified max_size (0)."}, loose(bounded(exact(20), nil, ip(0)))},
		{sizeCase{name: "§e.2 truncation does not lift the global limit (§e.3 check 1)", size: ten,
			err: "The target capacity (1001) is greater than the maximum number of nodes allowed per cluster (1000)."}, loose(exact(1001))},
		// §e.3 check_size_params, strict.
		{sizeCase{name: "§e.3 check 1: above max_nodes_per_cluster", size: ten,
			err: "The target capacity (1001) is greater than the maximum number of nodes allowed per cluster (1000)."}, exact(1001)},
		{sizeCase{name: "§e.3 check 2: below the new min_size", size: ten,
			err: "The target capacity (1) is less than the specified min_size (3)."}, bounded(exact(1), ip(3), nil)},
		{sizeCase{name: "§e.3 check 3: strict, below the cluster's min_size", size: sized(10, 5, -1),
			err: "The target capacity (2) is less than the cluster's min_size (5)."}, exact(2)},
		{sizeCase{name: "§e.3 check 4: above the new max_size", size: ten,
			err: "The target capacity (20) is greater than the specified max_size (12)."}, bounded(exact(20), nil, ip(12))},
		{sizeCase{name: "§e.3 check 5: strict, above the cluster's max_size", size: sized(10, 0, 15),
			err: "The target capacity (20) is greater than the cluster's max_size (15)."}, exact(20)},
		{sizeCase{name: "§e.3 check 2 answers before check 6: a resize always has a target", size: ten,
			err: "The target capacity (8) is less than the specified min_size (9)."}, bounded(exact(8), ip(9), ip(8))},
		{sizeCase{name: "§e.3 check 2 answers before check 7 once §e.2 rules 1 and 4 clamped the target", size: sized(10, 0, 12),
			err: "The target capacity (12) is less than the specified min_size (13)."}, ResizeRequest{MinSize: ip(13), Strict: false}},
		{sizeCase{name: "§e.3 check 9: new max_size above max_nodes_per_cluster", size: ten,
			err: "The specified max_size (2000) is greater than the maximum number of nodes allowed per cluster (1000)."}, ResizeRequest{MaxSize: ip(2000), Strict: true}},
		{sizeCase{name: "§e.3 strict: check 4 answers before check 10", size: sized(10, 5, -1),
			err: "The target capacity (10) is greater than the specified max_size (4)."}, ResizeRequest{MaxSize: ip(4), Strict: true}},
		{sizeCase{name: "§e.3 check 10: not strict, new max_size below the cluster's min_size", size: sized(10, 5, -1),
			err: "The specified max_size (4) is less than the current min_size (5) of the cluster."}, loose(ResizeRequest{MaxSize: ip(4)})},
		{sizeCase{name: "§e.3 strict only gates checks on the cluster's values: loose may go below its min", size: sized(10, 5, -1),
			want: SizeDecision{Desired: 2, Min: ip(2), Victims: ids("n03", "n04", "n05", "n06", "n07", "n08", "n09", "n10")}}, loose(bounded(exact(2), ip(2), nil))},
		// §b.9 RESIZE: candidates from the deletion policy, else the balance.
		{sizeCase{name: "§b.9 the deletion policy's candidates are removed in its order", size: ten,
			chosen: Chosen{Deletion: &Deletion{Candidates: ids("n03", "n01"), Count: 2}}, want: SizeDecision{Desired: 8, Victims: ids("n03", "n01")}}, change(-2)},
		{sizeCase{name: "§b.9 too few candidates: the balance chooses them all (§B.3)", size: ten,
			chosen: Chosen{Deletion: &Deletion{Candidates: ids("n03"), Count: 1}}, want: SizeDecision{Desired: 8, Victims: ids("n09", "n10")}}, change(-2)},
		{sizeCase{name: "§B.3 a node that is not running goes first", size: Size{Desired: 3, Max: -1, MaxNodes: 1000,
			Nodes: []Slot{{ID: "a", Index: 1, Running: false}, {ID: "b", Index: 2, Running: true}, {ID: "c", Index: 3, Running: true}}},
			want: SizeDecision{Desired: 2, Victims: ids("a")}}, change(-1)},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := PlanResize(c.size, c.r, c.chosen)
			checkSize(t, c.sizeCase, got, err)
		})
	}
}

func TestPlanScaleOut(t *testing.T) {
	three := sized(3, 1, 5)
	cases := []struct {
		sizeCase
		count *int
	}{
		{sizeCase{name: "§b.9 SCALE_OUT count defaults to 1", size: three, want: SizeDecision{Desired: 4, Create: 1}}, nil},
		{sizeCase{name: "§b.9 SCALE_OUT count from the request", size: three, want: SizeDecision{Desired: 5, Create: 2}}, ip(2)},
		{sizeCase{name: "§b.9 SCALE_OUT data.creation.count of a scaling policy wins over the request (§c.1)", size: three,
			chosen: Chosen{CreateCount: ip(1)}, want: SizeDecision{Desired: 4, Create: 1}}, ip(2)},
		{sizeCase{name: "§b.9 SCALE_OUT count 0 is invalid", size: three, err: "Invalid count (0) for scaling out."}, ip(0)},
		{sizeCase{name: "§b.9 SCALE_OUT a policy's count 0 is invalid", size: three, chosen: Chosen{CreateCount: ip(0)},
			err: "Invalid count (0) for scaling out."}, nil},
		{sizeCase{name: "§b.9 SCALE_OUT strict check on current+count: §e.3 check 5", size: three,
			err: "The target capacity (6) is greater than the cluster's max_size (5)."}, ip(3)},
		{sizeCase{name: "§b.9 SCALE_OUT §e.3 check 1: max_nodes_per_cluster", size: Size{Desired: 3, Max: -1, Nodes: running(3), MaxNodes: 4},
			err: "The target capacity (5) is greater than the maximum number of nodes allowed per cluster (4)."}, ip(2)},
		{sizeCase{name: "§b.9 SCALE_OUT counts from the nodes, not desired_capacity", size: Size{Desired: 5, Max: -1, Nodes: running(2), MaxNodes: 1000},
			want: SizeDecision{Desired: 3, Create: 1}}, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := PlanScaleOut(c.size, c.count, c.chosen)
			checkSize(t, c.sizeCase, got, err)
		})
	}
}

func TestPlanScaleIn(t *testing.T) {
	three := sized(3, 1, 5)
	cases := []struct {
		sizeCase
		count *int
	}{
		{sizeCase{name: "§b.9 SCALE_IN count defaults to 1", size: three, want: SizeDecision{Desired: 2, Victims: ids("n03")}}, nil},
		{sizeCase{name: "§b.9 SCALE_IN count from the request", size: three, want: SizeDecision{Desired: 1, Victims: ids("n02", "n03")}}, ip(2)},
		{sizeCase{name: "§b.9 SCALE_IN the candidates' number wins (§c.2)", size: three,
			chosen: Chosen{Deletion: &Deletion{Candidates: ids("n01"), Count: 2}}, want: SizeDecision{Desired: 2, Victims: ids("n01")}}, ip(2)},
		{sizeCase{name: "§b.9 SCALE_IN data.deletion.count of a scaling policy wins over the request (§c.1)", size: three,
			chosen: Chosen{Deletion: &Deletion{Count: 2}}, want: SizeDecision{Desired: 1, Victims: ids("n02", "n03")}}, ip(1)},
		{sizeCase{name: "§b.9 SCALE_IN a deletion count of 0 leaves the request's count", size: three,
			chosen: Chosen{Deletion: &Deletion{}}, want: SizeDecision{Desired: 1, Victims: ids("n02", "n03")}}, ip(2)},
		{sizeCase{name: "§b.9 SCALE_IN count 0 is invalid", size: three, err: "Invalid count (0) for scaling in."}, ip(0)},
		{sizeCase{name: "§b.9 SCALE_IN a negative count is invalid", size: three, err: "Invalid count (-1) for scaling in."}, ip(-1)},
		{sizeCase{name: "§b.9 SCALE_IN count is trimmed to the current size", size: sized(3, 0, -1),
			want: SizeDecision{Desired: 0, Victims: ids("n01", "n02", "n03")}}, ip(5)},
		{sizeCase{name: "§b.9 SCALE_IN of an empty cluster removes nothing", size: Size{Max: -1, MaxNodes: 1000}, want: SizeDecision{Desired: 0}}, nil},
		{sizeCase{name: "§b.9 SCALE_IN strict check on current−count: §e.3 check 3", size: three,
			err: "The target capacity (0) is less than the cluster's min_size (1)."}, ip(3)},
		{sizeCase{name: "§B.3 SCALE_IN keeps the nodes spread across hosts", size: Size{Desired: 4, Max: -1, MaxNodes: 1000, Nodes: []Slot{
			{ID: "a1", Index: 1, Host: "a", Running: true}, {ID: "a2", Index: 2, Host: "a", Running: true},
			{ID: "a3", Index: 3, Host: "a", Running: true}, {ID: "b4", Index: 4, Host: "b", Running: true}}},
			want: SizeDecision{Desired: 2, Victims: ids("a2", "a3")}}, ip(2)},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := PlanScaleIn(c.size, c.count, c.chosen)
			checkSize(t, c.sizeCase, got, err)
		})
	}
}

func TestPlanSizeUpdate(t *testing.T) {
	three := sized(3, 1, 5)
	cases := []struct {
		name string
		size Size
		u    SizeUpdate
		want SizeDecision
	}{
		{"a given desired_capacity grows the cluster", three, SizeUpdate{Desired: ip(5)}, SizeDecision{Desired: 5, Create: 2}},
		{"a given desired_capacity shrinks it, highest indexes first (§B.3)", three, SizeUpdate{Desired: ip(1)}, SizeDecision{Desired: 1, Victims: ids("n02", "n03")}},
		{"§e.2 rule 1: a new min_size above desired_capacity raises it", three, SizeUpdate{Min: ip(4)}, SizeDecision{Desired: 4, Min: ip(4), Create: 1}},
		{"§e.2 rule 3: a new max_size below desired_capacity lowers it", three, SizeUpdate{Max: ip(2)}, SizeDecision{Desired: 2, Max: ip(2), Victims: ids("n03")}},
		{"§e.2 rule 3 needs max_size > 0: max_size 0 does not clamp", three, SizeUpdate{Max: ip(0)}, SizeDecision{Desired: 3, Max: ip(0)}},
		{"desired_capacity counts against the nodes there are", Size{Desired: 3, Min: 0, Max: -1, Nodes: running(1)}, SizeUpdate{Min: ip(0)},
			SizeDecision{Desired: 3, Min: ip(0), Create: 2}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			checkSize(t, sizeCase{want: c.want}, PlanSizeUpdate(c.size, c.u), nil)
		})
	}
}

func TestVictims(t *testing.T) {
	cases := []struct {
		name       string
		nodes      []Slot
		candidates []string
		count      int
		want       []string
	}{
		{"nothing to remove", running(3), ids("n01"), 0, nil},
		{"enough candidates: the first count of them, in the policy's order", running(3), ids("n02", "n01", "n03"), 2, ids("n02", "n01")},
		{"too few candidates: the balance chooses (§B.3)", running(3), ids("n01"), 2, ids("n02", "n03")},
		{"§e.5 more than there are: all of them", running(2), nil, 5, ids("n01", "n02")},
		{"§e.5 no nodes: none", nil, nil, 2, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := Victims(c.nodes, c.candidates, c.count); !slices.Equal(got, c.want) {
				t.Errorf("got %v, want %v", got, c.want)
			}
		})
	}
}
