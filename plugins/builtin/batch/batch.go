// Package batch is senlin.policy.batch: it plans the batches in which a
// cluster update moves the nodes to a new profile (how many at a time, the
// ones in error first) and the pause between batches. The engine's rolling
// update follows the plan (data.update) instead of the cluster's
// grove.update parallelism and delay. The plan is the pure function Plan.
package batch

import (
	"context"
	"fmt"
	"math"

	"github.com/grovehq/grove/plugins/sdk"
	"github.com/grovehq/grove/plugins/sdk/schema"
)

// TypeName is Senlin's type name, so Senlin specs work unchanged.
const TypeName = "senlin.policy.batch"

// Priority is Senlin's priority of the batch policy class.
const Priority = 200

// Properties are the policy's properties, as the schema fills them in.
type Properties struct {
	MinInService int `json:"min_in_service"`
	MaxBatchSize int `json:"max_batch_size"`
	PauseTime    int `json:"pause_time"`
}

// Type returns the policy registration.
func Type() sdk.PolicyType {
	return sdk.PolicyType{
		Type:        TypeName,
		Versions:    []string{"1.0"},
		Description: "Updates a cluster's nodes in batches: at most max_batch_size at a time, keeping min_in_service nodes in service, nodes in error first, pause_time seconds apart.",
		Schema: schema.Schema{
			"min_in_service": {Type: schema.Integer, Default: int64(1), Description: "Minimum number of nodes in service when performing updates.",
				Constraints: []schema.Constraint{schema.Range(schema.F(0), schema.F(math.MaxInt32))}},
			"max_batch_size": {Type: schema.Integer, Default: int64(-1), Description: "Maximum number of nodes that will be updated in parallel; -1 for no limit.",
				Constraints: []schema.Constraint{schema.Range(schema.F(-1), schema.F(math.MaxInt32))}},
			"pause_time": {Type: schema.Integer, Default: int64(60), Description: "Interval in seconds between update batches if any.",
				Constraints: []schema.Constraint{schema.Range(schema.F(0), schema.F(math.MaxInt32))}},
		},
		Targets:   []sdk.Target{{Phase: "BEFORE", Action: "CLUSTER_UPDATE"}},
		Priority:  Priority,
		Singleton: true,
		Policy:    policy{},
		Validate: func(_ context.Context, spec sdk.Spec) schema.Diagnostics {
			var p Properties
			if err := spec.Decode(&p); err != nil {
				return schema.Diagnostics{{Field: "properties", Message: err.Error()}}
			}
			// Senlin takes 0 and loops on batches of no node.
			if p.MaxBatchSize == 0 {
				return schema.Diagnostics{{Field: "properties.max_batch_size", Message: "max_batch_size must be -1 (no limit) or at least 1."}}
			}
			return nil
		},
	}
}

type policy struct{}

func (policy) Attach(context.Context, sdk.Spec, sdk.Cluster) (map[string]any, error) { return nil, nil }
func (policy) Detach(context.Context, sdk.Spec, sdk.Cluster, map[string]any) error   { return nil }

// Check writes data.update: the pause between batches and the plan, the
// node ids of each batch in order.
func (policy) Check(_ context.Context, req sdk.CheckRequest) (sdk.CheckResult, error) {
	if req.Phase != "BEFORE" || req.Action.Name != "CLUSTER_UPDATE" {
		return sdk.CheckResult{}, nil
	}
	var p Properties
	if err := req.Policy.Decode(&p); err != nil {
		return sdk.CheckResult{}, fmt.Errorf("the properties of policy %s cannot be read: %w", req.Policy.ID, err)
	}
	nodes := make([]Node, len(req.Cluster.Nodes))
	for i, n := range req.Cluster.Nodes {
		nodes[i] = Node{ID: n.ID, Status: n.Status, Tainted: n.Tainted, Created: n.CreatedAt != 0}
	}
	plan := Plan(nodes, p.MinInService, p.MaxBatchSize)
	return sdk.CheckResult{Data: map[string]any{sdk.DataUpdate: sdk.UpdateData{PauseTime: p.PauseTime, Plan: plan}}}, nil
}
