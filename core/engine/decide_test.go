package engine

import (
	"math/rand/v2"
	"regexp"
	"testing"
)

func TestEvalStatus(t *testing.T) {
	cases := []struct {
		active, desired, min, max int
		status, reason            string
	}{
		{1, 3, 2, 5, "ERROR", "op: number of active nodes is below min_size (2)."},
		{2, 3, 2, 5, "WARNING", "op: number of active nodes is below desired_capacity (3)."},
		{3, 3, 2, 5, "ACTIVE", "op: number of active nodes is equal or above desired_capacity (3)."},
		{9, 3, 0, -1, "ACTIVE", "op: number of active nodes is equal or above desired_capacity (3)."},
		{6, 3, 0, 5, "WARNING", "op: number of active nodes is above max_size (5)."},
		{0, 0, 0, -1, "ACTIVE", "op: number of active nodes is equal or above desired_capacity (0)."},
	}
	for _, c := range cases {
		s, r := EvalStatus("op", c.active, c.desired, c.min, c.max)
		if s != c.status || r != c.reason {
			t.Errorf("EvalStatus(%d,%d,%d,%d) = %s %q, want %s %q", c.active, c.desired, c.min, c.max, s, r, c.status, c.reason)
		}
	}
}

func TestNodeName(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 1))
	cases := map[string]string{
		"":              `^node-[A-Za-z0-9]{8}$`,
		"web-$3I":       `^web-007$`,
		"x-$4r-$2I":     `^x-[a-z0-9]{4}-07$`,
		"literal$":      `^literal\$$`,
		"cost-$5":       `^cost-\$5$`,
		"keep-$2Q-tail": `^keep-\$2Q-tail$`,
	}
	for format, want := range cases {
		got := NodeName(format, 7, rng)
		if !regexp.MustCompile(want).MatchString(got) {
			t.Errorf("NodeName(%q) = %q, want match %s", format, got, want)
		}
	}
}
