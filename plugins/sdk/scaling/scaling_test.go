package scaling

import (
	"math/rand/v2"
	"slices"
	"testing"
)

func ip(n int) *int { return &n }

func TestCalculateDesired(t *testing.T) {
	cases := []struct {
		typ     string
		number  float64
		minStep int
		want    int
	}{
		{ExactCapacity, 4, 0, 4},
		{ChangeInCapacity, -3, 0, 7},
		{ChangeInPercentage, 10, 0, 11},
		{ChangeInPercentage, 15, 0, 11},
		{ChangeInPercentage, 22, 0, 12},
		{ChangeInPercentage, 1, 0, 11},
		{ChangeInPercentage, -1, 0, 9},
		{ChangeInPercentage, -22, 0, 8},
		{ChangeInPercentage, 10, 2, 12},
		{ChangeInPercentage, -10, 2, 8},
	}
	for _, c := range cases {
		if got := CalculateDesired(10, c.typ, c.number, c.minStep); got != c.want {
			t.Errorf("CalculateDesired(10, %s, %v, %d) = %d, want %d", c.typ, c.number, c.minStep, got, c.want)
		}
	}
}

func TestCheckSizeParams(t *testing.T) {
	cl := &Bounds{Desired: 3, Min: 2, Max: 5}
	cases := []struct {
		name              string
		c                 *Bounds
		desired, min, max *int
		strict            bool
		want              string
	}{
		{"ok", cl, ip(4), nil, nil, true, ""},
		{"over global", nil, ip(1001), nil, nil, true, "The target capacity (1001) is greater than the maximum number of nodes allowed per cluster (1000)."},
		{"below given min", nil, ip(1), ip(2), nil, true, "The target capacity (1) is less than the specified min_size (2)."},
		{"below cluster min strict", cl, ip(1), nil, nil, true, "The target capacity (1) is less than the cluster's min_size (2)."},
		{"below cluster min loose", cl, ip(1), nil, nil, false, ""},
		{"above given max", nil, ip(6), nil, ip(5), true, "The target capacity (6) is greater than the specified max_size (5)."},
		{"above cluster max", cl, ip(6), nil, nil, true, "The target capacity (6) is greater than the cluster's max_size (5)."},
		{"unbounded max", &Bounds{Desired: 1, Max: -1}, ip(900), nil, nil, true, ""},
		{"min over max", nil, nil, ip(4), ip(3), true, "The specified min_size (4) is greater than the specified max_size (3)."},
		{"min over cluster max", cl, nil, ip(6), nil, true, "The specified min_size (6) is greater than the current max_size (5) of the cluster."},
		{"min over desired", cl, nil, ip(4), nil, true, "The specified min_size (4) is greater than the current desired_capacity (3) of the cluster."},
		{"max over global", nil, nil, nil, ip(2000), true, "The specified max_size (2000) is greater than the maximum number of nodes allowed per cluster (1000)."},
		{"max under cluster min", cl, nil, nil, ip(1), true, "The specified max_size (1) is less than the current min_size (2) of the cluster."},
		{"max under desired", cl, nil, ip(1), ip(2), true, "The specified max_size (2) is less than the current desired_capacity (3) of the cluster."},
	}
	for _, c := range cases {
		if got := CheckSizeParams(c.c, c.desired, c.min, c.max, c.strict, 1000); got != c.want {
			t.Errorf("%s: got %q, want %q", c.name, got, c.want)
		}
	}
}

func TestParseResize(t *testing.T) {
	b := Bounds{Desired: 4, Min: 1, Max: 6}
	n := func(f float64) *float64 { return &f }
	r, err := ParseResize(b, 4, Resize{AdjustmentType: ChangeInCapacity, Number: n(5), Strict: false}, 1000)
	if err != nil || r.Desired != 6 || r.Create != 2 {
		t.Fatalf("non-strict resize should truncate to max: %+v %v", r, err)
	}
	if _, err := ParseResize(b, 4, Resize{AdjustmentType: ChangeInCapacity, Number: n(5), Strict: true}, 1000); err == nil {
		t.Fatal("strict resize beyond max_size must fail")
	}
	r, err = ParseResize(b, 4, Resize{AdjustmentType: ExactCapacity, Number: n(2), Strict: true}, 1000)
	if err != nil || r.Delete != 2 || r.Desired != 2 {
		t.Fatalf("exact capacity 2: %+v %v", r, err)
	}
}

func TestSelectVictims(t *testing.T) {
	nodes := []Candidate{
		{ID: "a", Status: "ACTIVE", CreatedAt: 30, ProfileCreatedAt: 2},
		{ID: "b", Status: "ACTIVE", CreatedAt: 10, ProfileCreatedAt: 3},
		{ID: "c", Status: "ERROR", CreatedAt: 20, ProfileCreatedAt: 1},
		{ID: "d", Status: "ACTIVE", CreatedAt: 0},
		{ID: "e", Status: "ACTIVE", CreatedAt: 40, ProfileCreatedAt: 1},
	}
	cases := []struct {
		count     int
		criterion string
		want      []string
	}{
		{1, OldestFirst, []string{"c"}},
		{2, OldestFirst, []string{"c", "d"}},
		{3, OldestFirst, []string{"c", "d", "b"}},
		{3, YoungestFirst, []string{"c", "d", "e"}},
		{4, OldestProfileFirst, []string{"c", "d", "e", "a"}},
		{9, OldestFirst, []string{"c", "d", "b", "a", "e"}},
		{0, OldestFirst, nil},
	}
	for _, c := range cases {
		got := SelectVictims(slices.Clone(nodes), c.count, c.criterion, nil)
		if !slices.Equal(got, c.want) {
			t.Errorf("SelectVictims(%d, %s) = %v, want %v", c.count, c.criterion, got, c.want)
		}
	}
	rng := rand.New(rand.NewPCG(1, 2))
	got := SelectVictims(slices.Clone(nodes), 3, Random, rng)
	if len(got) != 3 || got[0] != "c" || got[1] != "d" || got[2] == "c" || got[2] == "d" {
		t.Errorf("random selection must take bad nodes first and then one good node: %v", got)
	}
}

// TestFloatReadsPlainDecimal: numeric strings are plain decimal, so Go's
// literal forms and the non-finite spellings are not numbers.
func TestFloatReadsPlainDecimal(t *testing.T) {
	for in, want := range map[string]float64{"3": 3, "-2.5": -2.5, "1e2": 100} {
		if f, err := Float(in); err != nil || f != want {
			t.Errorf("Float(%q) = %v, %v; want %v", in, f, err, want)
		}
	}
	for in, want := range map[string]string{
		"1_0":   `"1_0" is not a number`,
		"0x1p3": `"0x1p3" is not a number`,
		"NaN":   `"NaN" is not a finite number`,
		"-Inf":  `"-Inf" is not a finite number`,
	} {
		if f, err := Float(in); err == nil || err.Error() != want {
			t.Errorf("Float(%q) = %v, %v; want the error %q", in, f, err, want)
		}
	}
	if _, err := Int("1_0"); err == nil {
		t.Error(`Int("1_0") must fail`)
	}
}
