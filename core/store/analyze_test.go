package store

import (
	"slices"
	"testing"
)

// TestAnalyzeThresholds: a table's statistics are refreshed after its
// first analyzeRows inserted rows, then each time the agent's inserts
// into it have doubled, and at least every analyzeRowsMax rows; rows of
// other tables than actions and nodes are not counted.
func TestAnalyzeThresholds(t *testing.T) {
	for name, c := range map[string]struct {
		parts, size int
		want        []int // the totals at which actions is refreshed
	}{
		"a fork in parts":     {100, 1000, []int{5000, 10000, 20000, 40000, 80000}},
		"a fork in one":       {1, 100000, []int{100000}},
		"two forks in parts":  {200, 1000, []int{5000, 10000, 20000, 40000, 80000, 130000, 180000}},
		"small creates":       {40, 250, []int{5000, 10000}},
		"one under the first": {1, analyzeRows - 1, nil},
		"exactly the first":   {1, analyzeRows, []int{analyzeRows}},
	} {
		t.Run(name, func(t *testing.T) {
			counts := newInsertCounts()
			var got []int
			total := 0
			for range c.parts {
				total += c.size
				due := counts.due(map[string]int{"actions": c.size, "events": c.size})
				if slices.Contains(due, "events") {
					t.Fatalf("events are due at %d rows", total)
				}
				if slices.Contains(due, "actions") {
					got = append(got, total)
				}
			}
			if !slices.Equal(got, c.want) {
				t.Errorf("actions refreshed at %v rows, want %v", got, c.want)
			}
		})
	}
}
