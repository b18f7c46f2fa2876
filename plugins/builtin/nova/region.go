package nova

import (
	"context"
	"errors"
	"maps"
	"slices"

	"github.com/grovehq/grove/plugins/sdk"
)

// A node whose data.placement names a region_name (what
// senlin.policy.region_placement writes) has its server in that region of
// the profile's cloud, as Senlin's server profile builds its compute client
// from the node's placement: every call on the node (boot, check, delete,
// update, recover, operations) goes to that region's compute endpoint. The
// entry points below split a batch by region and run the call once per
// region with the profile's context moved there; a node with no region
// uses the profile's context as it is.

// regionOf is the region a node's placement names, "" for none.
func regionOf(n sdk.Node) string {
	pl, _ := n.Data["placement"].(map[string]any)
	r, _ := pl["region_name"].(string)
	return r
}

// specIn is the spec with its context's region_name set to region. Its
// ID is its own, so that names resolved in one region (image and flavor
// ids differ between regions) are not reused in another.
func specIn(p sdk.Spec, region string) sdk.Spec {
	cx, _ := p.Properties["context"].(map[string]any)
	if region == "" || cx["region_name"] == region {
		return p
	}
	cx = maps.Clone(cx)
	if cx == nil {
		cx = map[string]any{}
	}
	cx["region_name"] = region
	props := maps.Clone(p.Properties)
	props["context"] = cx
	p.Properties = props
	if p.ID != "" {
		p.ID += "@" + region
	}
	return p
}

// byRegion runs f once per region of the nodes' placements (in the order
// the regions first appear), each time with the nodes of that region, and
// returns the results in the nodes' order.
func byRegion(nodes []sdk.Node, f func(region string, nodes []sdk.Node) []sdk.Result) []sdk.Result {
	var regions []string
	groups := map[string][]int{}
	for i, n := range nodes {
		r := regionOf(n)
		if _, ok := groups[r]; !ok {
			regions = append(regions, r)
		}
		groups[r] = append(groups[r], i)
	}
	if len(regions) <= 1 {
		r := ""
		if len(regions) == 1 {
			r = regions[0]
		}
		return f(r, nodes)
	}
	out := make([]sdk.Result, len(nodes))
	for _, r := range regions {
		idx := groups[r]
		batch := make([]sdk.Node, len(idx))
		for j, i := range idx {
			batch[j] = nodes[i]
		}
		res := f(r, batch)
		for j, i := range idx {
			out[i] = res[j]
		}
	}
	return out
}

// Create boots one server per node in the node's region (see createIn).
func (d *Driver) Create(ctx context.Context, p sdk.Spec, nodes []sdk.Node) []sdk.Result {
	return byRegion(nodes, func(r string, ns []sdk.Node) []sdk.Result { return d.createIn(ctx, specIn(p, r), ns) })
}

// Check checks each node's server in the node's region (see checkIn).
func (d *Driver) Check(ctx context.Context, p sdk.Spec, nodes []sdk.Node) []sdk.Result {
	return byRegion(nodes, func(r string, ns []sdk.Node) []sdk.Result { return d.checkIn(ctx, specIn(p, r), ns) })
}

// Delete deletes each node's server in the node's region (see deleteIn).
// Nodes placed in a region the cloud does not have, with no server
// recorded, are deleted with nothing to do: their creation failed before
// any boot, for want of the region.
func (d *Driver) Delete(ctx context.Context, p sdk.Spec, nodes []sdk.Node) []sdk.Result {
	return byRegion(nodes, func(r string, ns []sdk.Node) []sdk.Result {
		pr, err := propsOf(specIn(p, r))
		if err == nil && !slices.ContainsFunc(ns, func(n sdk.Node) bool { return stateOf(n).ServerID != "" }) {
			if _, err := d.connect(ctx, pr.Context); errors.As(err, new(noRegionError)) {
				out := make([]sdk.Result, len(ns))
				for i, n := range ns {
					out[i] = sdk.Result{ID: n.ID, Reason: err.Error()}
				}
				return out
			}
		}
		return d.deleteIn(ctx, specIn(p, r), ns)
	})
}

// noRegionError is a region the cloud does not have.
type noRegionError struct{ error }

func (e noRegionError) Unwrap() error { return e.error }

// Update changes each node's server in the node's region (see updateIn).
func (d *Driver) Update(ctx context.Context, old, new sdk.Spec, nodes []sdk.Node) []sdk.Result {
	return byRegion(nodes, func(r string, ns []sdk.Node) []sdk.Result {
		return d.updateIn(ctx, specIn(old, r), specIn(new, r), ns)
	})
}

// Recover recovers each node's server in the node's region (see
// recoverIn).
func (d *Driver) Recover(ctx context.Context, p sdk.Spec, nodes []sdk.Node, operation string, params map[string]any) []sdk.Result {
	return byRegion(nodes, func(r string, ns []sdk.Node) []sdk.Result {
		return d.recoverIn(ctx, specIn(p, r), ns, operation, params)
	})
}

// Operate runs a node operation on each node's server in the node's
// region (see operateIn).
func (d *Driver) Operate(ctx context.Context, p sdk.Spec, nodes []sdk.Node, op string, params map[string]any) []sdk.Result {
	return byRegion(nodes, func(r string, ns []sdk.Node) []sdk.Result {
		return d.operateIn(ctx, specIn(p, r), ns, op, params)
	})
}

// regionNames are the names of a clouds.yaml entry's regions.
func regionNames(rs []regionEntry) []string {
	out := make([]string, len(rs))
	for i, r := range rs {
		out[i] = r.Name
	}
	slices.Sort(out)
	return out
}
