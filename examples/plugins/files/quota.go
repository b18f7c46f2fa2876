package main

import (
	"context"
	"fmt"

	"github.com/grovehq/grove/plugins/sdk"
	"github.com/grovehq/grove/plugins/sdk/scaling"
)

func quotaPolicy() sdk.PolicyType {
	return sdk.PolicyType{
		Type:        "grove.policy.quota",
		Versions:    []string{"1.0"},
		Description: "Refuses any action that would grow a cluster beyond max_nodes.",
		Schema: sdk.Schema{
			"max_nodes": {Type: sdk.Integer, Required: true, Description: "The most nodes the cluster may have.",
				Constraints: []sdk.Constraint{sdk.Range(sdk.F(0), nil)}},
		},
		Targets: []sdk.Target{
			{Phase: "BEFORE", Action: "CLUSTER_SCALE_OUT"}, {Phase: "BEFORE", Action: "CLUSTER_RESIZE"},
			{Phase: "BEFORE", Action: "CLUSTER_ADD_NODES"}, {Phase: "BEFORE", Action: "NODE_CREATE"},
		},
		Priority:  150,
		Singleton: true,
		Policy:    quota{},
	}
}

type quota struct{}

func (quota) Attach(context.Context, sdk.Spec, sdk.Cluster) (map[string]any, error) { return nil, nil }
func (quota) Detach(context.Context, sdk.Spec, sdk.Cluster, map[string]any) error   { return nil }

// quotaProps are the policy's properties, as the schema above fills them in.
type quotaProps struct {
	MaxNodes int `json:"max_nodes"`
}

// Check works out how many nodes the action adds and refuses it past the quota.
func (quota) Check(_ context.Context, req sdk.CheckRequest) (sdk.CheckResult, error) {
	var p quotaProps
	if err := req.Policy.Decode(&p); err != nil {
		return sdk.CheckResult{}, fmt.Errorf("the properties of policy %s cannot be read: %w", req.Policy.ID, err)
	}
	grow, err := growth(req)
	if err != nil {
		return sdk.CheckResult{Refuse: err.Error()}, nil
	}
	if current := len(req.Cluster.Nodes); current+grow > p.MaxNodes {
		return sdk.CheckResult{Refuse: fmt.Sprintf("the quota of %d nodes would be exceeded: the cluster has %d and the action adds %d", p.MaxNodes, current, grow)}, nil
	}
	return sdk.CheckResult{}, nil
}

// unreadable says the action's inputs or data cannot be read; err names the
// field.
func unreadable(a sdk.Action, err error) error {
	return fmt.Errorf("the %s action cannot be sized: %w", a.Name, err)
}

// growth is how many nodes the action adds.
func growth(req sdk.CheckRequest) (int, error) {
	a := req.Action
	switch a.Name {
	case "CLUSTER_SCALE_OUT":
		// As the engine sizes a scale-out: the count a scaling policy checked
		// before this one decided, else the user's count, else one.
		var decided sdk.CreationData
		if _, err := a.DecodeData(sdk.DataCreation, &decided); err != nil {
			return 0, unreadable(a, err)
		}
		if decided.Count != nil {
			return *decided.Count, nil
		}
		var in sdk.ClusterScaleInputs
		if err := a.DecodeInputs(&in); err != nil {
			return 0, unreadable(a, err)
		}
		if in.Count != nil {
			return *in.Count, nil
		}
		return 1, nil
	case "CLUSTER_RESIZE":
		var in sdk.ClusterResizeInputs
		if err := a.DecodeInputs(&in); err != nil {
			return 0, unreadable(a, err)
		}
		c := req.Cluster
		res, err := scaling.ParseResize(scaling.Bounds{Desired: c.DesiredCapacity, Min: c.MinSize, Max: c.MaxSize}, len(c.Nodes), in.Resize(), 1<<30)
		return res.Create, err
	case "CLUSTER_ADD_NODES":
		var in sdk.ClusterAddNodesInputs
		if err := a.DecodeInputs(&in); err != nil {
			return 0, unreadable(a, err)
		}
		return len(in.Nodes), nil
	case "NODE_CREATE":
		return 1, nil
	}
	return 0, nil
}
