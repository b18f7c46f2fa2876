package orchestrator

import (
	"errors"
	"fmt"

	"github.com/grovehq/grove/plugins/sdk/scaling"
)

// This file holds the size decisions of CLUSTER_RESIZE, CLUSTER_SCALE_OUT,
// CLUSTER_SCALE_IN, a cluster update that sets sizes, and which nodes leave
// when a cluster shrinks. The arithmetic is Senlin's scaleutils
// (../shared/reference/senlin.md §e), kept in plugins/sdk/scaling because
// the built-in scaling and deletion policies share it; what is decided here
// is which of those rules an action applies, to what count, and with what
// the bound policies already chose (§b.8, §b.9).

// Size is a cluster as the size decisions see it.
type Size struct {
	Desired int
	Min     int
	Max     int // -1: unbounded
	// Nodes are the cluster's members; their number is the current size.
	Nodes []Slot
	// MaxNodes is the agent's max_nodes_per_cluster (§e.6).
	MaxNodes int
}

func (s Size) bounds() scaling.Bounds {
	return scaling.Bounds{Desired: s.Desired, Min: s.Min, Max: s.Max}
}

// Chosen is what the bound policies decided in their BEFORE checks and left
// in the action's data (§b.8). The zero value is "no policy decided".
type Chosen struct {
	// CreateCount is data.creation.count (a scaling policy on scale-out).
	CreateCount *int
	// Deletion is data.deletion (a scaling or deletion policy), nil when
	// absent.
	Deletion *Deletion
}

// Deletion is the part of data.deletion that sizing reads; the flags it
// carries (destroy_after_deletion, grace_period) do not change the sizes.
type Deletion struct {
	Candidates []string
	Count      int
}

// ResizeRequest is a CLUSTER_RESIZE's inputs (§a.4): the adjustment, and the
// new min_size and max_size when the request sets them.
type ResizeRequest struct {
	// AdjustmentType is EXACT_CAPACITY, CHANGE_IN_CAPACITY or
	// CHANGE_IN_PERCENTAGE; "" changes only the bounds.
	AdjustmentType string
	Number         *float64
	MinSize        *int
	MaxSize        *int
	// MinStep is the smallest change a percentage makes (§e.1).
	MinStep int
	// Strict refuses a size outside the bounds instead of clamping into
	// them (§e.2, §e.3).
	Strict bool
}

// SizeDecision is the outcome of a size decision: the new size settings and
// the nodes to create and remove to reach them.
type SizeDecision struct {
	Desired int
	// Min and Max are the new bounds when the request sets them.
	Min *int
	Max *int
	// Create is how many nodes to create.
	Create int
	// Victims are the nodes to remove: the policy's candidates in its
	// order, or the scale-down choice sorted by id.
	Victims []string
}

// PlanScaleOut decides a CLUSTER_SCALE_OUT (§b.9 SCALE_OUT): the count is
// the scaling policy's data.creation.count, else the request's count, else
// 1; it must be positive, and the new size passes the strict size check
// against the cluster's bounds (§e.3).
func PlanScaleOut(s Size, count *int, c Chosen) (SizeDecision, error) {
	n := 1
	switch {
	case c.CreateCount != nil:
		n = *c.CreateCount
	case count != nil:
		n = *count
	}
	if n <= 0 {
		return SizeDecision{}, fmt.Errorf("Invalid count (%d) for scaling out.", n)
	}
	desired := len(s.Nodes) + n
	b := s.bounds()
	if msg := scaling.CheckSizeParams(&b, &desired, nil, nil, true, s.MaxNodes); msg != "" {
		return SizeDecision{}, errors.New(msg)
	}
	return SizeDecision{Desired: desired, Create: n}, nil
}

// PlanScaleIn decides a CLUSTER_SCALE_IN (§b.9 SCALE_IN): the count is the
// number of candidates a deletion policy chose, else data.deletion.count,
// else the request's count, else 1; it must be positive, is trimmed to the
// current size, and the new size passes the strict size check (§e.3). The
// victims are the policy's candidates, or chosen by Victims.
func PlanScaleIn(s Size, count *int, c Chosen) (SizeDecision, error) {
	n := 1
	var candidates []string
	if c.Deletion != nil {
		candidates = c.Deletion.Candidates
	}
	switch {
	case len(candidates) > 0:
		n = len(candidates)
	case c.Deletion != nil && c.Deletion.Count > 0:
		n = c.Deletion.Count
	case count != nil:
		n = *count
	}
	if n <= 0 {
		return SizeDecision{}, fmt.Errorf("Invalid count (%d) for scaling in.", n)
	}
	n = min(n, len(s.Nodes))
	desired := len(s.Nodes) - n
	b := s.bounds()
	if msg := scaling.CheckSizeParams(&b, &desired, nil, nil, true, s.MaxNodes); msg != "" {
		return SizeDecision{}, errors.New(msg)
	}
	return SizeDecision{Desired: desired, Victims: Victims(s.Nodes, candidates, n)}, nil
}

// PlanResize decides a CLUSTER_RESIZE as Senlin's parse_resize_params does
// (§e.4): the current size is the node count, or desired_capacity when the
// cluster has no node; the adjustment gives the new desired capacity (§e.1);
// a request that is not strict clamps it into the bounds (§e.2); then the
// size check (§e.3) refuses with its sentence. The request's min_size and
// max_size become the cluster's.
func PlanResize(s Size, r ResizeRequest, c Chosen) (SizeDecision, error) {
	res, err := scaling.ParseResize(s.bounds(), len(s.Nodes), scaling.Resize{AdjustmentType: r.AdjustmentType, Number: r.Number,
		MinSize: r.MinSize, MaxSize: r.MaxSize, MinStep: r.MinStep, Strict: r.Strict}, s.MaxNodes)
	if err != nil {
		return SizeDecision{}, err
	}
	d := SizeDecision{Desired: res.Desired, Min: r.MinSize, Max: r.MaxSize, Create: res.Create}
	if res.Delete > 0 {
		var candidates []string
		if c.Deletion != nil {
			candidates = c.Deletion.Candidates
		}
		d.Victims = Victims(s.Nodes, candidates, res.Delete)
	}
	return d, nil
}

// SizeUpdate is the size part of a cluster update: each field is set when
// the update changes it.
type SizeUpdate struct {
	Desired *int
	Min     *int
	Max     *int
}

// PlanSizeUpdate decides the sizes a cluster update sets: the given desired
// capacity, or the current one clamped into the new bounds (§e.2); nodes
// are created or removed to match it. The update was checked when it was
// submitted, so nothing here refuses.
func PlanSizeUpdate(s Size, u SizeUpdate) SizeDecision {
	desired := s.Desired
	if u.Desired != nil {
		desired = *u.Desired
	} else {
		b := s.bounds()
		desired = scaling.TruncateDesired(&b, desired, u.Min, u.Max)
	}
	d := SizeDecision{Desired: desired, Min: u.Min, Max: u.Max}
	if diff := desired - len(s.Nodes); diff > 0 {
		d.Create = diff
	} else if diff < 0 {
		d.Victims = Victims(s.Nodes, nil, -diff)
	}
	return d
}

// Victims chooses count nodes to remove. A deletion policy's candidates are
// taken when there are enough of them; otherwise the choice is the
// scale-down balance (§B.3 of semantics.md, ScaleDownVictims): nodes that
// are not running first, then so that the nodes kept spread across hosts,
// higher indexes first. Grove takes this instead of Senlin's random pick
// (senlin.md §e.5) so a shrink is repeatable and keeps hosts balanced. A
// count above the number of nodes removes them all.
func Victims(nodes []Slot, candidates []string, count int) []string {
	if count <= 0 {
		return nil
	}
	if len(candidates) >= count {
		return candidates[:count]
	}
	return ScaleDownVictims(nodes, len(nodes)-count)
}
