// Package noop is the grove.noop profile: nodes that exist only in Grove's
// store. It measures the engine and the plugin boundary without any backend,
// and lets users dry-run policies.
package noop

import (
	"context"
	"time"

	"github.com/grovehq/grove/plugins/sdk"
	"github.com/grovehq/grove/plugins/sdk/schema"
)

// TypeName is the profile type.
const TypeName = "grove.noop"

// Type returns the profile type registration.
func Type() sdk.ProfileType {
	return sdk.ProfileType{
		Type:        TypeName,
		Versions:    []string{"1.0"},
		Description: "Nodes with no backend: create, check and delete succeed at once. For benchmarks and policy dry runs.",
		Schema: schema.Schema{
			"label": {Type: schema.String, Updatable: true, Default: "", Description: "A free label copied into each node's data."},
			"create_delay": {Type: schema.Integer, Updatable: true, Default: int64(0), Description: "Milliseconds each create call waits, to simulate a slow backend.",
				Constraints: []schema.Constraint{schema.Range(schema.F(0), schema.F(60000))}},
		},
		Operations: []string{"RECREATE"},
		NodeOperations: []sdk.NodeOperation{{Name: "touch", Description: "Does nothing and succeeds; for trying node and cluster operations.",
			Parameters: schema.Schema{"note": {Type: schema.String, Default: "", Description: "A free note, ignored."}}}},
		Driver: driver{},
	}
}

type driver struct{}

func each(nodes []sdk.Node, f func(sdk.Node) sdk.Result) []sdk.Result {
	out := make([]sdk.Result, len(nodes))
	for i, n := range nodes {
		out[i] = f(n)
	}
	return out
}

func created(p sdk.Spec) func(sdk.Node) sdk.Result {
	return func(n sdk.Node) sdk.Result {
		return sdk.Result{ID: n.ID, PhysicalID: "noop-" + n.ID, Healthy: true, Data: map[string]any{"label": p.Properties["label"]}}
	}
}

func (driver) Create(ctx context.Context, p sdk.Spec, nodes []sdk.Node) []sdk.Result {
	if d, _ := p.Properties["create_delay"].(int64); d > 0 {
		select {
		case <-ctx.Done():
			return each(nodes, func(n sdk.Node) sdk.Result { return sdk.Result{ID: n.ID, Err: sdk.Retryable(ctx.Err())} })
		case <-time.After(time.Duration(d) * time.Millisecond):
		}
	}
	return each(nodes, created(p))
}

func (driver) Delete(_ context.Context, _ sdk.Spec, nodes []sdk.Node) []sdk.Result {
	return each(nodes, func(n sdk.Node) sdk.Result { return sdk.Result{ID: n.ID} })
}

func (driver) Check(_ context.Context, _ sdk.Spec, nodes []sdk.Node) []sdk.Result {
	return each(nodes, func(n sdk.Node) sdk.Result {
		return sdk.Result{ID: n.ID, Healthy: true, PhysicalID: n.PhysicalID, State: n.State}
	})
}

func (driver) Update(_ context.Context, _, p sdk.Spec, nodes []sdk.Node) []sdk.Result {
	return each(nodes, created(p))
}

func (driver) Recover(_ context.Context, p sdk.Spec, nodes []sdk.Node, _ string, _ map[string]any) []sdk.Result {
	return each(nodes, created(p))
}

// Operate runs touch, which does nothing: every node stays running.
func (driver) Operate(_ context.Context, _ sdk.Spec, nodes []sdk.Node, _ string, _ map[string]any) []sdk.Result {
	out := make([]sdk.Result, len(nodes))
	for i, n := range nodes {
		out[i] = sdk.Result{ID: n.ID, PhysicalID: n.PhysicalID, State: n.State, Healthy: true}
	}
	return out
}
