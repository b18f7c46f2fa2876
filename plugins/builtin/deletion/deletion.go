// Package deletion is senlin.policy.deletion: it chooses which nodes leave a
// cluster when it shrinks, and how (destroy, grace period, desired capacity).
package deletion

import (
	"context"
	"fmt"
	"math"

	"github.com/grovehq/grove/plugins/sdk"
	"github.com/grovehq/grove/plugins/sdk/scaling"
	"github.com/grovehq/grove/plugins/sdk/schema"
)

// TypeName is Senlin's type name, so Senlin specs work unchanged.
const TypeName = "senlin.policy.deletion"

// MaxNodes is the size limit used when a resize is parsed inside the policy;
// the engine has already enforced its own limit before the check runs.
const MaxNodes = 1 << 30

// Type returns the policy registration.
func Type() sdk.PolicyType {
	return sdk.PolicyType{
		Type:        TypeName,
		Versions:    []string{"1.0", "1.1"},
		Description: "Chooses the nodes removed when a cluster shrinks. ERROR and WARNING nodes go first, then by criteria.",
		Schema: schema.Schema{
			"criteria": {Type: schema.String, Default: scaling.Random, Description: "How victims are chosen.",
				Constraints: []schema.Constraint{schema.AllowedValues(scaling.OldestFirst, scaling.OldestProfileFirst, scaling.YoungestFirst, scaling.Random)}},
			"destroy_after_deletion":  {Type: schema.Boolean, Default: true, Description: "Destroy removed nodes instead of keeping them as orphans."},
			"grace_period":            {Type: schema.Integer, Default: int64(0), Description: "Seconds to wait before removing nodes.", Constraints: []schema.Constraint{schema.Range(schema.F(0), schema.F(math.MaxInt32))}},
			"reduce_desired_capacity": {Type: schema.Boolean, Default: true, Description: "Lower desired_capacity by the number of nodes removed."},
			"hooks": {Type: schema.Map, Default: map[string]any{}, Description: "Lifecycle hooks (version 1.1). Not supported by Grove yet; must be empty.",
				Schema: schema.Schema{
					"type":    {Type: schema.String, Default: "zaqar", Constraints: []schema.Constraint{schema.AllowedValues("zaqar", "webhook")}},
					"params":  {Type: schema.Map},
					"timeout": {Type: schema.Integer, Default: int64(0)},
				}},
		},
		Targets: []sdk.Target{
			{Phase: "BEFORE", Action: "CLUSTER_SCALE_IN"}, {Phase: "BEFORE", Action: "CLUSTER_DEL_NODES"},
			{Phase: "BEFORE", Action: "CLUSTER_RESIZE"}, {Phase: "BEFORE", Action: "NODE_DELETE"},
		},
		Priority:  400,
		Singleton: true,
		Policy:    policy{},
		Validate: func(_ context.Context, p sdk.Spec) schema.Diagnostics {
			if h, ok := p.Properties["hooks"].(map[string]any); ok && len(h) > 0 {
				if params, _ := h["params"].(map[string]any); len(params) > 0 {
					return schema.Diagnostics{{Field: "properties.hooks", Message: "lifecycle hooks are not supported by Grove yet; remove them."}}
				}
			}
			return nil
		},
	}
}

type policy struct{}

func (policy) Attach(context.Context, sdk.Spec, sdk.Cluster) (map[string]any, error) { return nil, nil }
func (policy) Detach(context.Context, sdk.Spec, sdk.Cluster, map[string]any) error   { return nil }

// Check fills data.deletion with the victims and the policy's flags.
func (policy) Check(_ context.Context, req sdk.CheckRequest) (sdk.CheckResult, error) {
	props := req.Policy.Properties
	deletion := map[string]any{}
	if d, ok := req.Action.Data["deletion"].(map[string]any); ok {
		for k, v := range d {
			deletion[k] = v
		}
	}
	victims := listOf(req.Action.Inputs["candidates"])
	switch {
	case len(victims) > 0:
	case req.Action.Name == "NODE_DELETE":
		victims = []string{req.Action.Target}
	default:
		count, err := count(req, deletion)
		if err != nil {
			return sdk.CheckResult{Refuse: err.Error()}, nil
		}
		if count <= 0 {
			return sdk.CheckResult{}, nil
		}
		criterion, _ := props["criteria"].(string)
		victims = scaling.SelectVictims(candidates(req.Cluster), count, criterion, nil)
	}
	deletion["count"] = len(victims)
	deletion["candidates"] = victims
	deletion["destroy_after_deletion"] = props["destroy_after_deletion"]
	deletion["grace_period"] = props["grace_period"]
	deletion["reduce_desired_capacity"] = props["reduce_desired_capacity"]
	return sdk.CheckResult{Data: map[string]any{"deletion": deletion}}, nil
}

func count(req sdk.CheckRequest, deletion map[string]any) (int, error) {
	if c, ok := deletion["count"]; ok {
		return scaling.Int(c)
	}
	switch req.Action.Name {
	case "CLUSTER_SCALE_IN":
		if c, ok := req.Action.Inputs["count"]; ok && c != nil {
			return scaling.Int(c)
		}
		return 1, nil
	case "CLUSTER_RESIZE":
		r, err := scaling.ResizeFromInputs(req.Action.Inputs)
		if err != nil {
			return 0, err
		}
		c := req.Cluster
		res, err := scaling.ParseResize(scaling.Bounds{Desired: c.DesiredCapacity, Min: c.MinSize, Max: c.MaxSize}, len(c.Nodes), r, MaxNodes)
		if err != nil {
			return 0, err
		}
		return res.Delete, nil
	}
	return 0, fmt.Errorf("the deletion policy cannot size action %s", req.Action.Name)
}

func candidates(c sdk.Cluster) []scaling.Candidate {
	out := make([]scaling.Candidate, len(c.Nodes))
	for i, n := range c.Nodes {
		out[i] = scaling.Candidate{ID: n.ID, Status: n.Status, Tainted: n.Tainted, CreatedAt: n.CreatedAt, ProfileCreatedAt: n.ProfileCreatedAt}
	}
	return out
}

func listOf(v any) []string {
	items, _ := v.([]any)
	if len(items) == 0 {
		return nil
	}
	out := make([]string, 0, len(items))
	for _, it := range items {
		if s, ok := it.(string); ok {
			out = append(out, s)
		}
	}
	return out
}
