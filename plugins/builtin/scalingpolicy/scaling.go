// Package scalingpolicy is senlin.policy.scaling: it sizes scale-in and
// scale-out actions from an adjustment and enforces a cooldown between them.
package scalingpolicy

import (
	"context"
	"fmt"
	"math"

	"github.com/grovehq/grove/plugins/sdk"
	"github.com/grovehq/grove/plugins/sdk/scaling"
	"github.com/grovehq/grove/plugins/sdk/schema"
)

// TypeName is Senlin's type name.
const TypeName = "senlin.policy.scaling"

// MaxNodes bounds scaling when the cluster has no max_size.
const MaxNodes = 10000

// Type returns the policy registration.
func Type() sdk.PolicyType {
	return sdk.PolicyType{
		Type:        TypeName,
		Versions:    []string{"1.0"},
		Description: "Decides how many nodes a scale-in or scale-out adds or removes, with a cooldown between scalings.",
		Schema: schema.Schema{
			"event": {Type: schema.String, Required: true, Description: "The action this policy sizes.",
				Constraints: []schema.Constraint{schema.AllowedValues("CLUSTER_SCALE_IN", "CLUSTER_SCALE_OUT")}},
			"adjustment": {Type: schema.Map, Default: map[string]any{}, Schema: schema.Schema{
				"type": {Type: schema.String, Default: scaling.ChangeInCapacity,
					Constraints: []schema.Constraint{schema.AllowedValues(scaling.ExactCapacity, scaling.ChangeInCapacity, scaling.ChangeInPercentage)}},
				"number":      {Type: schema.Number, Default: float64(1), Constraints: []schema.Constraint{{Type: "Range", Min: schema.F(math.SmallestNonzeroFloat64), Max: schema.F(math.MaxInt32)}}},
				"min_step":    {Type: schema.Integer, Default: int64(1), Constraints: []schema.Constraint{schema.Range(schema.F(0), schema.F(math.MaxInt32))}},
				"best_effort": {Type: schema.Boolean, Default: false},
				"cooldown":    {Type: schema.Integer, Default: int64(0), Description: "Seconds after a scaling during which the next one is refused.", Constraints: []schema.Constraint{schema.Range(schema.F(0), schema.F(math.MaxInt32))}},
			}},
		},
		Targets: []sdk.Target{
			{Phase: "BEFORE", Action: "CLUSTER_SCALE_IN"}, {Phase: "BEFORE", Action: "CLUSTER_SCALE_OUT"},
			{Phase: "AFTER", Action: "CLUSTER_SCALE_IN"}, {Phase: "AFTER", Action: "CLUSTER_SCALE_OUT"},
		},
		Priority: 100,
		Policy:   policy{},
	}
}

// props are the policy's properties, as the schema above fills them in.
type props struct {
	Event      string     `json:"event"`
	Adjustment adjustment `json:"adjustment"`
}

type adjustment struct {
	Type       string  `json:"type"`
	Number     float64 `json:"number"`
	MinStep    int     `json:"min_step"`
	BestEffort bool    `json:"best_effort"`
	Cooldown   int     `json:"cooldown"`
}

type policy struct{}

func (policy) Attach(context.Context, sdk.Spec, sdk.Cluster) (map[string]any, error) { return nil, nil }
func (policy) Detach(context.Context, sdk.Spec, sdk.Cluster, map[string]any) error   { return nil }

func (policy) Check(_ context.Context, req sdk.CheckRequest) (sdk.CheckResult, error) {
	var p props
	if err := req.Policy.Decode(&p); err != nil {
		return sdk.CheckResult{}, fmt.Errorf("the properties of policy %s cannot be read: %w", req.Policy.ID, err)
	}
	if req.Phase != "BEFORE" || p.Event != req.Action.Name {
		return sdk.CheckResult{}, nil
	}
	adj := p.Adjustment
	if adj.Cooldown > 0 && req.LastOp > 0 && req.Now-req.LastOp < int64(adj.Cooldown)*1e6 {
		return sdk.CheckResult{Refuse: fmt.Sprintf("Policy %s cooldown is still in progress.", req.Policy.ID)}, nil
	}
	var in sdk.ClusterScaleInputs
	if err := req.Action.DecodeInputs(&in); err != nil {
		return sdk.CheckResult{Refuse: fmt.Sprintf("Invalid count (%v) for action '%s': %v.", req.Action.Inputs["count"], req.Action.Name, err)}, nil
	}
	current := len(req.Cluster.Nodes)
	var count int
	if in.Count != nil {
		count = *in.Count
	} else {
		switch adj.Type {
		case scaling.ExactCapacity:
			if p.Event == "CLUSTER_SCALE_IN" {
				count = current - int(adj.Number)
			} else {
				count = int(adj.Number) - current
			}
		case scaling.ChangeInCapacity:
			count = int(adj.Number)
		default:
			count = int(adj.Number * float64(current) / 100)
			if count < adj.MinStep {
				count = adj.MinStep
			}
		}
	}
	if count <= 0 {
		return sdk.CheckResult{Refuse: fmt.Sprintf("Invalid count (%d) for action '%s'.", count, req.Action.Name)}, nil
	}
	c := req.Cluster
	max := c.MaxSize
	if max < 0 {
		max = MaxNodes
	}
	bestEffort := adj.BestEffort
	desired := current + count
	key := sdk.DataCreation
	if p.Event == "CLUSTER_SCALE_IN" {
		if bestEffort && count > current-c.MinSize {
			count = current - c.MinSize
		}
		desired, key = current-count, sdk.DataDeletion
	} else if bestEffort && count > max-current {
		count = max - current
		desired = current + count
	}
	b := scaling.Bounds{Desired: c.DesiredCapacity, Min: c.MinSize, Max: c.MaxSize}
	if msg := scaling.CheckSizeParams(&b, &desired, nil, nil, !bestEffort, MaxNodes); msg != "" {
		return sdk.CheckResult{Refuse: msg}, nil
	}
	return sdk.CheckResult{Data: map[string]any{key: map[string]any{"count": count}}}, nil
}
