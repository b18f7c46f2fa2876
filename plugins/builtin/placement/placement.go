// Package placement is senlin.policy.zone_placement and
// senlin.policy.region_placement: they spread a cluster's nodes over
// availability zones or regions by weight (regions with a cap), with
// Senlin's plan. A growth's plan goes to data.creation (Senlin's shape)
// and, one entry per new node, to data.placement, which each node keeps
// and its driver follows (the Nova driver boots the server in the zone);
// a shrink's plan goes to data.deletion with the nodes that leave each
// area, which a deletion policy checked after may choose again with its
// criterion.
//
// The decisions are pure functions in decide/. Files: placement.go (what
// both types share), zone.go, region.go.
package placement

import (
	"context"
	"fmt"
	"maps"
	"math"

	"github.com/grovehq/grove/plugins/builtin/placement/decide"
	"github.com/grovehq/grove/plugins/sdk"
	"github.com/grovehq/grove/plugins/sdk/scaling"
	"github.com/grovehq/grove/plugins/sdk/schema"
)

// kind is what sets a zone placement policy apart from a region one.
type kind struct {
	// listKey is the properties' list ("zones") and the plan's key in
	// data.creation and data.deletion.
	listKey string
	// nodeKey is the key of a node's placement entry ("zone").
	nodeKey string
	// noneUsable is Senlin's refusal when no area of the spec is usable.
	noneUsable string
	// check refuses a cluster the type does not handle; nil handles any.
	check func(c sdk.Cluster) error
	// pinned says the profile names the area of every node already.
	pinned func(c sdk.Cluster) bool
	// known returns the test of which areas the cloud knows.
	known  func(ctx context.Context, c sdk.Cluster) (func(string) bool, error)
	areaOf func(data map[string]any) string
}

// area is one entry of the properties' list.
type area struct {
	Name   string `json:"name"`
	Weight int    `json:"weight"`
	Cap    *int   `json:"cap"`
}

func (k kind) areas(spec sdk.Spec) ([]decide.Area, error) {
	var p map[string][]area
	if err := spec.Decode(&p); err != nil {
		return nil, fmt.Errorf("the properties of policy %s cannot be read: %w", spec.ID, err)
	}
	out := make([]decide.Area, 0, len(p[k.listKey]))
	for _, a := range p[k.listKey] {
		c := -1
		if a.Cap != nil {
			c = *a.Cap
		}
		out = append(out, decide.Area{Name: a.Name, Weight: a.Weight, Cap: c})
	}
	return out, nil
}

// validate checks what the schema cannot: at least one area, each named
// once.
func (k kind) validate(_ context.Context, spec sdk.Spec) schema.Diagnostics {
	areas, err := k.areas(spec)
	if err != nil {
		return schema.Diagnostics{{Field: "properties." + k.listKey, Message: err.Error()}}
	}
	if len(areas) == 0 {
		return schema.Diagnostics{{Field: "properties." + k.listKey, Message: fmt.Sprintf("%s must list at least one entry.", k.listKey)}}
	}
	seen := map[string]bool{}
	for i, a := range areas {
		if seen[a.Name] {
			return schema.Diagnostics{{Field: fmt.Sprintf("properties.%s[%d].name", k.listKey, i), Message: fmt.Sprintf("'%s' is listed twice.", a.Name)}}
		}
		seen[a.Name] = true
	}
	return nil
}

// listSchema is the properties' list: entries of a name and a weight, and
// a cap for regions.
func listSchema(what string, capped bool) schema.Property {
	entry := schema.Schema{
		"name": {Type: schema.String, Required: true, Description: "Name of " + what + "."},
		"weight": {Type: schema.Integer, Default: int64(100), Description: "Weight of " + what + ". The default is 100.",
			Constraints: []schema.Constraint{schema.Range(schema.F(0), schema.F(math.MaxInt32))}},
	}
	if capped {
		entry["cap"] = &schema.Property{Type: schema.Integer, Default: int64(-1), Description: "Maximum number of nodes in this region. The default is -1 which means no cap set.",
			Constraints: []schema.Constraint{schema.Range(schema.F(-1), schema.F(math.MaxInt32))}}
	}
	return schema.Property{Type: schema.List, Required: true, Description: "List of " + what + "s to choose from.",
		Elem: &schema.Property{Type: schema.Map, Schema: entry}}
}

type policy struct{ k kind }

// Attach refuses a cluster the type does not handle, and areas the cloud
// does not know (Senlin refuses them when the policy is created, with the
// user's cloud; Grove's cloud is the cluster profile's).
func (p policy) Attach(ctx context.Context, spec sdk.Spec, c sdk.Cluster) (map[string]any, error) {
	if p.k.check != nil {
		if err := p.k.check(c); err != nil {
			return nil, err
		}
	}
	areas, err := p.k.areas(spec)
	if err != nil {
		return nil, err
	}
	known, err := p.k.known(ctx, c)
	if err != nil {
		return nil, err
	}
	var missing []string
	for _, a := range areas {
		if !known(a.Name) {
			missing = append(missing, a.Name)
		}
	}
	if len(missing) > 0 {
		return nil, fmt.Errorf("The specified %s '%v' could not be found.", p.k.listKey, missing)
	}
	return nil, nil
}

func (policy) Detach(context.Context, sdk.Spec, sdk.Cluster, map[string]any) error { return nil }

// Check plans where the nodes an action adds or removes go.
func (p policy) Check(ctx context.Context, req sdk.CheckRequest) (sdk.CheckResult, error) {
	if req.Phase != "BEFORE" {
		return sdk.CheckResult{}, nil
	}
	all, err := p.k.areas(req.Policy)
	if err != nil {
		return sdk.CheckResult{}, err
	}
	count, err := p.count(req)
	if err != nil {
		return refuse(err.Error()), nil
	}
	if count == 0 {
		return sdk.CheckResult{}, nil
	}
	if p.k.check != nil {
		if err := p.k.check(req.Cluster); err != nil {
			return refuse(err.Error()), nil
		}
	}
	known, err := p.k.known(ctx, req.Cluster)
	if err != nil {
		return sdk.CheckResult{}, err
	}
	areas := decide.Usable(all, known)
	if len(areas) == 0 {
		return refuse(p.k.noneUsable), nil
	}
	current := decide.Distribution(req.Cluster.Nodes, areas, func(n sdk.ClusterNode) string { return p.k.areaOf(n.Data) })
	expand := count > 0
	plan, err := decide.Plan(current, areas, abs(count), expand)
	if err != nil {
		return refuse(err.Error()), nil
	}
	if expand {
		return sdk.CheckResult{Data: p.creation(req.Action, count, plan)}, nil
	}
	return sdk.CheckResult{Data: p.deletion(req, -count, plan)}, nil
}

// creation merges the plan into data.creation and gives each new node its
// area in data.placement, beside what a policy checked before put there.
func (p policy) creation(a sdk.Action, count int, plan map[string]int) map[string]any {
	creation := map[string]any{}
	if had, ok := a.Data[sdk.DataCreation].(map[string]any); ok {
		maps.Copy(creation, had)
	}
	creation["count"] = count
	creation[p.k.listKey] = plan
	var entries []any
	if had, ok := a.Data[sdk.DataPlacement].(map[string]any); ok {
		entries, _ = had["placements"].([]any)
	}
	names := decide.Spread(plan)
	out := make([]any, len(names))
	for i, name := range names {
		e := map[string]any{}
		if i < len(entries) {
			if m, ok := entries[i].(map[string]any); ok {
				maps.Copy(e, m)
			}
		}
		e[p.k.nodeKey] = name
		out[i] = e
	}
	return map[string]any{sdk.DataCreation: creation, sdk.DataPlacement: map[string]any{"count": count, "placements": out}}
}

// deletion merges the plan into data.deletion with the nodes that leave
// each area, youngest first (nodes in error before them), as the engine
// would choose among nodes it has no other reason to prefer. A deletion
// policy checked after chooses them again with its criterion.
func (p policy) deletion(req sdk.CheckRequest, count int, plan map[string]int) map[string]any {
	deletion := map[string]any{}
	if had, ok := req.Action.Data[sdk.DataDeletion].(map[string]any); ok {
		maps.Copy(deletion, had)
	}
	nodes := make([]decide.Victim, len(req.Cluster.Nodes))
	for i, n := range req.Cluster.Nodes {
		nodes[i] = decide.Victim{Area: p.k.areaOf(n.Data), Candidate: scaling.Candidate{ID: n.ID, Status: n.Status, Tainted: n.Tainted,
			CreatedAt: n.CreatedAt, ProfileCreatedAt: n.ProfileCreatedAt}}
	}
	deletion["count"] = count
	deletion[p.k.listKey] = plan
	deletion["candidates"] = decide.Victims(nodes, plan, scaling.YoungestFirst)
	return map[string]any{sdk.DataDeletion: deletion}
}

// count reads what decide.Count needs from the action.
func (p policy) count(req sdk.CheckRequest) (int, error) {
	cr := decide.CountRequest{Action: req.Action.Name}
	var created sdk.CreationData
	if _, err := req.Action.DecodeData(sdk.DataCreation, &created); err != nil {
		return 0, fmt.Errorf("The creation decided by an earlier policy cannot be read: %w.", err)
	}
	var deleted sdk.DeletionData
	if _, err := req.Action.DecodeData(sdk.DataDeletion, &deleted); err != nil {
		return 0, fmt.Errorf("The deletion decided by an earlier policy cannot be read: %w.", err)
	}
	cr.Creation, cr.Deletion = created.Count, deleted.Count
	switch req.Action.Name {
	case "CLUSTER_SCALE_OUT", "CLUSTER_SCALE_IN":
		var in sdk.ClusterScaleInputs
		if err := req.Action.DecodeInputs(&in); err != nil {
			return 0, fmt.Errorf("The inputs of action %s cannot be read: %w.", req.Action.Name, err)
		}
		cr.ScaleCount = in.Count
	case "CLUSTER_RESIZE":
		var in sdk.ClusterResizeInputs
		if err := req.Action.DecodeInputs(&in); err != nil {
			return 0, fmt.Errorf("The inputs of action %s cannot be read: %w.", req.Action.Name, err)
		}
		c := req.Cluster
		cr.Resize, cr.Bounds, cr.Current = in.Resize(), scaling.Bounds{Desired: c.DesiredCapacity, Min: c.MinSize, Max: c.MaxSize}, len(c.Nodes)
	case "NODE_CREATE":
		cr.Pinned = p.k.pinned(req.Cluster)
	}
	return decide.Count(cr)
}

// refuse is a refusal with Senlin's status data.
func refuse(reason string) sdk.CheckResult {
	return sdk.CheckResult{Refuse: reason, Data: map[string]any{"status": "ERROR", "status_reason": reason}}
}

func abs(n int) int {
	if n < 0 {
		return -n
	}
	return n
}

// targets are both types' checks, Senlin's.
func targets() []sdk.Target {
	var out []sdk.Target
	for _, a := range []string{"CLUSTER_SCALE_OUT", "CLUSTER_SCALE_IN", "CLUSTER_RESIZE", "NODE_CREATE"} {
		out = append(out, sdk.Target{Phase: "BEFORE", Action: a})
	}
	return out
}

// profileType is the cluster profile's type without its version.
func profileType(c sdk.Cluster) string {
	if c.Profile.Type != "" {
		return c.Profile.Type
	}
	for i, r := range c.ProfileType {
		if r == '-' {
			return c.ProfileType[:i]
		}
	}
	return c.ProfileType
}
