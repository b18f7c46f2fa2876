// Package noop is the grove.noop profile: nodes that exist only in Grove's
// store. It measures the engine and the plugin boundary without any backend,
// and lets users dry-run policies.
package noop

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/grovehq/grove/plugins/sdk"
	"github.com/grovehq/grove/plugins/sdk/schema"
)

// TypeName is the profile type.
const TypeName = "grove.noop"

// HostsEnv names the pretend hosts grove.noop reports, so placement can be
// tried and measured without a backend: names separated by spaces, each
// optionally followed by a colon and comma-separated key=value labels;
// load_avg, mem_avail and swap_avail with numbers are load figures.
// Example: "h1:zone=a,load_avg=0.5 h2:zone=b".
const HostsEnv = "GROVE_NOOP_HOSTS"

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
		Hosts:  hosts,
	}
}

// hosts reads HostsEnv.
func hosts(context.Context) ([]sdk.Host, error) {
	var out []sdk.Host
	for _, f := range strings.Fields(os.Getenv(HostsEnv)) {
		name, labels, _ := strings.Cut(f, ":")
		h := sdk.Host{Name: name, Attributes: map[string]string{}, Load: map[string]float64{}}
		for _, kv := range strings.Split(labels, ",") {
			if kv == "" {
				continue
			}
			k, v, ok := strings.Cut(kv, "=")
			if !ok || k == "" {
				return nil, fmt.Errorf("%s: %q of host %s is not key=value", HostsEnv, kv, name)
			}
			if n, err := strconv.ParseFloat(v, 64); err == nil && (k == "load_avg" || k == "mem_avail" || k == "swap_avail") {
				h.Load[k] = n
				continue
			}
			h.Attributes[k] = v
		}
		out = append(out, h)
	}
	return out, nil
}

type driver struct{}

func each(nodes []sdk.Node, f func(sdk.Node) sdk.Result) []sdk.Result {
	out := make([]sdk.Result, len(nodes))
	for i, n := range nodes {
		out[i] = f(n)
	}
	return out
}

// created records the node's host: the one a placement policy chose
// (data.placement.host), else the one it had, so placement counts it there.
func created(p sdk.Spec) func(sdk.Node) sdk.Result {
	return func(n sdk.Node) sdk.Result {
		data := map[string]any{"label": p.Properties["label"]}
		if pl, ok := n.Data["placement"].(map[string]any); ok {
			if h, _ := pl["host"].(string); h != "" {
				data["host"] = h
			}
		}
		if _, ok := data["host"]; !ok {
			if h, _ := n.Data["host"].(string); h != "" {
				data["host"] = h
			}
		}
		return sdk.Result{ID: n.ID, PhysicalID: "noop-" + n.ID, Healthy: true, Data: data}
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
