// Package decide holds the zone and region placement policies' decisions
// as pure functions: how many nodes an action adds or removes, how the
// cluster's nodes are spread over the areas (zones or regions) now, and
// Senlin's plan of how many nodes each area gains or loses. The policies
// (plugins/builtin/placement) read the cloud around them.
package decide

import (
	"errors"
	"fmt"
	"math"
	"sort"

	"github.com/grovehq/grove/plugins/sdk/scaling"
)

// Area is a zone or region a policy spreads nodes over, as its spec lists
// it.
type Area struct {
	Name   string
	Weight int
	// Cap is the most nodes the area takes; -1 for no cap (zones have
	// none).
	Cap int
}

// ErrInfeasible is Senlin's refusal of a plan that cannot place every node.
var ErrInfeasible = errors.New("There is no feasible plan to handle all nodes.")

// Plan is Senlin's placement plan: how many of count nodes each area gains
// (expand) or loses. Areas are taken by weight, heaviest first when
// expanding and lightest first when shrinking, in the spec's order among
// equal weights. Each area's quota is its share of the cluster's size
// after the action, total×weight/Σweight, rounded up when expanding
// (at most its cap) and down when shrinking; an area takes what separates
// its current count from its quota, as far as nodes remain (and, when
// shrinking, at most the nodes it has). Nodes left over make the plan
// infeasible. Areas with nothing to do are left out.
func Plan(current map[string]int, areas []Area, count int, expand bool) (map[string]int, error) {
	if count <= 0 {
		return map[string]int{}, nil
	}
	sorted := append([]Area(nil), areas...)
	sort.SliceStable(sorted, func(i, j int) bool {
		if expand {
			return sorted[i].Weight > sorted[j].Weight
		}
		return sorted[i].Weight < sorted[j].Weight
	})
	sum, now := 0, 0
	for _, a := range areas {
		sum += a.Weight
	}
	for _, a := range areas {
		now += current[a.Name]
	}
	if sum <= 0 {
		return nil, ErrInfeasible
	}
	total := now - count
	if expand {
		total = now + count
	}
	remain := count
	plan := map[string]int{}
	for _, a := range sorted {
		q := float64(total) * float64(a.Weight) / float64(sum)
		var headroom int
		if expand {
			quota := int(math.Ceil(q))
			if a.Cap >= 0 {
				quota = min(quota, a.Cap)
			}
			headroom = quota - current[a.Name]
		} else {
			// Senlin's headroom can exceed what the area has when the
			// action removes more nodes than the areas hold; an area
			// gives at most its nodes, and the rest is infeasible.
			headroom = min(current[a.Name]-int(math.Floor(q)), current[a.Name])
		}
		if headroom <= 0 {
			continue
		}
		take := min(headroom, remain)
		plan[a.Name] = take
		remain -= take
		if remain == 0 {
			break
		}
	}
	if remain > 0 {
		return nil, ErrInfeasible
	}
	return plan, nil
}

// CountRequest is what the number of nodes an action adds or removes is
// decided from.
type CountRequest struct {
	// Action is CLUSTER_SCALE_OUT, CLUSTER_SCALE_IN, CLUSTER_RESIZE or
	// NODE_CREATE.
	Action string
	// Creation and Deletion are data.creation.count and
	// data.deletion.count, what a policy checked earlier decided; nil when
	// none did.
	Creation, Deletion *int
	// ScaleCount is a scale action's count input, nil when not given.
	ScaleCount *int
	// Pinned says the profile already names the node's area (a Nova
	// profile's availability_zone, its context's region_name): a node
	// creation is then left alone.
	Pinned bool
	// Resize is a resize's request; Bounds and Current what it applies to.
	Resize  scaling.Resize
	Bounds  scaling.Bounds
	Current int
}

// MaxNodes bounds a resize parsed inside the policy; the engine has
// enforced its own limit before the check runs.
const MaxNodes = 1 << 30

// Count is Senlin's _get_count: the nodes the action adds (positive) or
// removes (negative), zero when the policy has nothing to place. A node
// creation is one node, none when the profile pins its area; a resize
// takes what an earlier policy decided, else what it parses to; a
// scale-in or scale-out takes the earlier decision, else its count input,
// else one.
func Count(r CountRequest) (int, error) {
	switch r.Action {
	case "NODE_CREATE":
		if r.Pinned {
			return 0, nil
		}
		return 1, nil
	case "CLUSTER_RESIZE":
		if r.Deletion != nil && *r.Deletion > 0 {
			return -*r.Deletion, nil
		}
		if r.Creation != nil && *r.Creation > 0 {
			return *r.Creation, nil
		}
		res, err := scaling.ParseResize(r.Bounds, r.Current, r.Resize, MaxNodes)
		if err != nil {
			return 0, err
		}
		if res.Delete > 0 {
			return -res.Delete, nil
		}
		return res.Create, nil
	case "CLUSTER_SCALE_IN":
		n := 1
		if r.Deletion != nil {
			n = *r.Deletion
		} else if r.ScaleCount != nil {
			n = *r.ScaleCount
		}
		if n < 0 {
			return 0, fmt.Errorf("The count %d of the scale-in is negative.", n)
		}
		return -n, nil
	case "CLUSTER_SCALE_OUT":
		n := 1
		if r.Creation != nil {
			n = *r.Creation
		} else if r.ScaleCount != nil {
			n = *r.ScaleCount
		}
		if n < 0 {
			return 0, fmt.Errorf("The count %d of the scale-out is negative.", n)
		}
		return n, nil
	}
	return 0, fmt.Errorf("The placement policy does not handle action %s.", r.Action)
}

// Distribution counts the nodes in each of the areas given: areaOf says
// which area a node is in ("" when unknown); nodes elsewhere are not
// counted, as in Senlin.
func Distribution[N any](nodes []N, areas []Area, areaOf func(N) string) map[string]int {
	out := make(map[string]int, len(areas))
	for _, a := range areas {
		out[a.Name] = 0
	}
	for _, n := range nodes {
		if name := areaOf(n); name != "" {
			if _, ok := out[name]; ok {
				out[name]++
			}
		}
	}
	return out
}

// Usable keeps the areas the cloud knows, in the spec's order.
func Usable(areas []Area, known func(string) bool) []Area {
	var out []Area
	for _, a := range areas {
		if known(a.Name) {
			out = append(out, a)
		}
	}
	return out
}

// Spread lists one area per new node from a plan: the areas in name order,
// each repeated as many times as it gains nodes, so that the nodes created
// in order get the plan.
func Spread(plan map[string]int) []string {
	names := make([]string, 0, len(plan))
	for name := range plan {
		names = append(names, name)
	}
	sort.Strings(names)
	var out []string
	for _, name := range names {
		for range plan[name] {
			out = append(out, name)
		}
	}
	return out
}

// Victim is a node that may leave, with the area it is in.
type Victim struct {
	scaling.Candidate
	Area string
}

// Victims picks, area by area in name order, the plan's number of nodes
// from each area's nodes with the criterion (scaling.SelectVictims: nodes
// in error first). A Senlin deletion policy does the same with
// data.deletion's zones or regions.
func Victims(nodes []Victim, plan map[string]int, criterion string) []string {
	var out []string
	names := make([]string, 0, len(plan))
	for name := range plan {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		var in []scaling.Candidate
		for _, n := range nodes {
			if n.Area == name {
				in = append(in, n.Candidate)
			}
		}
		out = append(out, scaling.SelectVictims(in, min(plan[name], len(in)), criterion, nil)...)
	}
	return out
}

// ZoneOf is the availability zone a node's data says it is in: its
// placement's zone, else the zone its driver reported (the Nova driver's
// "zone", Senlin's OS-EXT-AZ:availability_zone).
func ZoneOf(data map[string]any) string {
	if pl, ok := data["placement"].(map[string]any); ok {
		if z, _ := pl["zone"].(string); z != "" {
			return z
		}
	}
	z, _ := data["zone"].(string)
	return z
}

// RegionOf is the region a node's data says it is in: its placement's
// region_name, as in Senlin.
func RegionOf(data map[string]any) string {
	pl, _ := data["placement"].(map[string]any)
	r, _ := pl["region_name"].(string)
	return r
}
