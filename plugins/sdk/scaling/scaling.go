// Package scaling holds Senlin's resize arithmetic and victim selection as
// pure functions. The engine and the built-in policies share it, and plugin
// authors may use it so their policies size clusters the way Grove does.
package scaling

import (
	"cmp"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
)

// Adjustment types.
const (
	ExactCapacity      = "EXACT_CAPACITY"
	ChangeInCapacity   = "CHANGE_IN_CAPACITY"
	ChangeInPercentage = "CHANGE_IN_PERCENTAGE"
)

// Bounds are a cluster's current size settings.
type Bounds struct {
	Desired int
	Min     int
	Max     int // -1 means unbounded
}

// CalculateDesired computes the new desired capacity from the current node
// count. Percentages round away from zero below one node and toward zero
// above; minStep (when > 0) raises small percentage steps.
func CalculateDesired(current int, adjType string, number float64, minStep int) int {
	switch adjType {
	case ExactCapacity:
		return int(number)
	case ChangeInCapacity:
		return current + int(number)
	}
	delta := number * float64(current) / 100
	var rounded int
	if delta > 0 {
		if delta < 1 {
			rounded = int(math.Ceil(delta))
		} else {
			rounded = int(math.Floor(delta))
		}
	} else {
		if math.Abs(delta) < 1 {
			rounded = int(math.Floor(delta))
		} else {
			rounded = int(math.Ceil(delta))
		}
	}
	if minStep > 0 && minStep > abs(rounded) {
		if rounded > 0 {
			return current + minStep
		}
		return current - minStep
	}
	return current + rounded
}

// TruncateDesired clamps desired into the new or current bounds; it is used
// when a resize is not strict.
func TruncateDesired(c *Bounds, desired int, newMin, newMax *int) int {
	if newMin != nil && desired < *newMin {
		desired = *newMin
	}
	if newMin == nil && c != nil && desired < c.Min {
		desired = c.Min
	}
	if newMax != nil && *newMax > 0 && desired > *newMax {
		desired = *newMax
	}
	if newMax == nil && c != nil && c.Max > 0 && desired > c.Max {
		desired = c.Max
	}
	return desired
}

// CheckSizeParams returns the first violated size rule as a sentence, or "".
// c is nil when there is no cluster yet (at create); maxNodes is the global
// per-cluster limit. strict gates the checks against the cluster's current
// values.
func CheckSizeParams(c *Bounds, desired, min, max *int, strict bool, maxNodes int) string {
	if desired != nil {
		d := *desired
		switch {
		case d > maxNodes:
			return fmt.Sprintf("The target capacity (%d) is greater than the maximum number of nodes allowed per cluster (%d).", d, maxNodes)
		case min != nil && d < *min:
			return fmt.Sprintf("The target capacity (%d) is less than the specified min_size (%d).", d, *min)
		case min == nil && c != nil && strict && d < c.Min:
			return fmt.Sprintf("The target capacity (%d) is less than the cluster's min_size (%d).", d, c.Min)
		case max != nil && *max >= 0 && d > *max:
			return fmt.Sprintf("The target capacity (%d) is greater than the specified max_size (%d).", d, *max)
		case max == nil && c != nil && strict && c.Max >= 0 && d > c.Max:
			return fmt.Sprintf("The target capacity (%d) is greater than the cluster's max_size (%d).", d, c.Max)
		}
	}
	if min != nil {
		n := *min
		switch {
		case max != nil && *max >= 0 && n > *max:
			return fmt.Sprintf("The specified min_size (%d) is greater than the specified max_size (%d).", n, *max)
		case max == nil && c != nil && c.Max >= 0 && n > c.Max:
			return fmt.Sprintf("The specified min_size (%d) is greater than the current max_size (%d) of the cluster.", n, c.Max)
		case desired == nil && c != nil && strict && n > c.Desired:
			return fmt.Sprintf("The specified min_size (%d) is greater than the current desired_capacity (%d) of the cluster.", n, c.Desired)
		}
	}
	if max != nil {
		m := *max
		switch {
		case m > maxNodes:
			return fmt.Sprintf("The specified max_size (%d) is greater than the maximum number of nodes allowed per cluster (%d).", m, maxNodes)
		case min == nil && c != nil && m >= 0 && m < c.Min:
			return fmt.Sprintf("The specified max_size (%d) is less than the current min_size (%d) of the cluster.", m, c.Min)
		case desired == nil && c != nil && strict && m >= 0 && m < c.Desired:
			return fmt.Sprintf("The specified max_size (%d) is less than the current desired_capacity (%d) of the cluster.", m, c.Desired)
		}
	}
	return ""
}

// Resize is a resize request as the API accepts it.
type Resize struct {
	AdjustmentType string
	Number         *float64
	MinSize        *int
	MaxSize        *int
	MinStep        int
	Strict         bool
}

// ResizeResult says how many nodes to create or delete, and the desired
// capacity that results.
type ResizeResult struct {
	Desired int
	Create  int
	Delete  int
}

// ParseResize turns a resize request into a plan against the current node
// count, applying truncation when not strict and the size checks.
func ParseResize(c Bounds, current int, r Resize, maxNodes int) (ResizeResult, error) {
	if current == 0 {
		current = c.Desired
	}
	desired := current
	if r.AdjustmentType != "" && r.Number != nil {
		desired = CalculateDesired(current, r.AdjustmentType, *r.Number, r.MinStep)
	}
	if !r.Strict {
		desired = TruncateDesired(&c, desired, r.MinSize, r.MaxSize)
	}
	if msg := CheckSizeParams(&c, &desired, r.MinSize, r.MaxSize, r.Strict, maxNodes); msg != "" {
		return ResizeResult{}, fmt.Errorf("%s", msg)
	}
	res := ResizeResult{Desired: desired}
	if n := current - desired; n > 0 {
		res.Delete = n
	} else {
		res.Create = -n
	}
	return res, nil
}

// Candidate is a node considered for deletion.
type Candidate struct {
	ID               string
	Status           string
	Tainted          bool
	CreatedAt        int64 // Unix microseconds; 0 when never created
	ProfileCreatedAt int64
}

// Victim selection criteria.
const (
	OldestFirst        = "OLDEST_FIRST"
	YoungestFirst      = "YOUNGEST_FIRST"
	OldestProfileFirst = "OLDEST_PROFILE_FIRST"
	Random             = "RANDOM"
)

// SelectVictims picks count nodes to delete. Nodes in ERROR or WARNING, or
// tainted, go first, then nodes never created; the rest are chosen by
// criterion. rng is used for RANDOM (pass a seeded source in tests).
func SelectVictims(nodes []Candidate, count int, criterion string, rng *rand.Rand) []string {
	if count > len(nodes) {
		count = len(nodes)
	}
	if count <= 0 {
		return nil
	}
	var bad, uncreated []string
	var good []Candidate
	for _, n := range nodes {
		switch {
		case n.Status == "ERROR" || n.Status == "WARNING" || n.Tainted:
			bad = append(bad, n.ID)
		case n.CreatedAt == 0:
			uncreated = append(uncreated, n.ID)
		default:
			good = append(good, n)
		}
	}
	bad = append(bad, uncreated...)
	if count <= len(bad) {
		return bad[:count]
	}
	out := append([]string{}, bad...)
	need := count - len(bad)
	switch criterion {
	case OldestFirst, YoungestFirst:
		slices.SortStableFunc(good, func(a, b Candidate) int { return cmp.Compare(a.CreatedAt, b.CreatedAt) })
		if criterion == YoungestFirst {
			for i := len(good) - 1; i >= len(good)-need; i-- {
				out = append(out, good[i].ID)
			}
			return out
		}
	case OldestProfileFirst:
		slices.SortStableFunc(good, func(a, b Candidate) int { return cmp.Compare(a.ProfileCreatedAt, b.ProfileCreatedAt) })
	default:
		if rng == nil {
			rng = rand.New(rand.NewPCG(rand.Uint64(), rand.Uint64()))
		}
		rng.Shuffle(len(good), func(i, j int) { good[i], good[j] = good[j], good[i] })
	}
	for i := 0; i < need; i++ {
		out = append(out, good[i].ID)
	}
	return out
}

func abs(n int) int {
	if n < 0 {
		return -n
	}
	return n
}
