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

// Check works out how many nodes the action adds and refuses it past the quota.
func (quota) Check(_ context.Context, req sdk.CheckRequest) (sdk.CheckResult, error) {
	limit, _ := scaling.Int(req.Policy.Properties["max_nodes"])
	current := len(req.Cluster.Nodes)
	grow := 0
	switch req.Action.Name {
	case "CLUSTER_SCALE_OUT":
		grow = 1
		if c, ok := req.Action.Data["creation"].(map[string]any); ok {
			grow, _ = scaling.Int(c["count"])
		} else if c, ok := req.Action.Inputs["count"]; ok {
			grow, _ = scaling.Int(c)
		}
	case "CLUSTER_RESIZE":
		r, err := scaling.ResizeFromInputs(req.Action.Inputs)
		if err != nil {
			return sdk.CheckResult{Refuse: err.Error()}, nil
		}
		c := req.Cluster
		res, err := scaling.ParseResize(scaling.Bounds{Desired: c.DesiredCapacity, Min: c.MinSize, Max: c.MaxSize}, current, r, 1<<30)
		if err != nil {
			return sdk.CheckResult{Refuse: err.Error()}, nil
		}
		grow = res.Create
	case "CLUSTER_ADD_NODES":
		nodes, _ := req.Action.Inputs["nodes"].([]any)
		grow = len(nodes)
	case "NODE_CREATE":
		grow = 1
	}
	if current+grow > limit {
		return sdk.CheckResult{Refuse: fmt.Sprintf("the quota of %d nodes would be exceeded: the cluster has %d and the action adds %d", limit, current, grow)}, nil
	}
	return sdk.CheckResult{}, nil
}
