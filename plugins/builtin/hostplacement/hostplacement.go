// Package hostplacement is grove.policy.placement: OpenSVC's placement
// policies and affinities between clusters over the hosts of a cluster's
// driver. Its check reads the host snapshot the engine sends
// (sdk.CheckRequest.Hosts), runs the pure decision of
// core/orchestrator/placement, and writes a host for each new node in
// data.placement (the driver follows it) or, when the cluster shrinks, the
// nodes that leave in data.deletion, from the worst-placed hosts first.
// It is not senlin.policy.zone_placement (plugins/builtin/placement),
// which spreads Nova servers over availability zones by weight.
package hostplacement

import (
	"context"
	"errors"
	"fmt"
	"maps"

	"github.com/grovehq/grove/core/orchestrator/placement"
	"github.com/grovehq/grove/plugins/builtin/placement/decide"
	"github.com/grovehq/grove/plugins/sdk"
	"github.com/grovehq/grove/plugins/sdk/scaling"
	"github.com/grovehq/grove/plugins/sdk/schema"
)

// TypeName is the policy type.
const TypeName = "grove.policy.placement"

// Priority runs the policy before a deletion policy (400), which may then
// choose the victims again with its criterion, as it does after a zone
// placement.
const Priority = 300

// noHost stands for the host of a node whose data names none: such a node
// is on no candidate host, so it is the first to leave.
const noHost = "(no host)"

func names() *schema.Property {
	return &schema.Property{Type: schema.String}
}

// Type returns the policy registration.
func Type() sdk.PolicyType {
	list := func(what string) *schema.Property {
		return &schema.Property{Type: schema.List, Elem: names(), Default: []any{}, Description: what}
	}
	return sdk.PolicyType{
		Type:     TypeName,
		Versions: []string{"1.0"},
		Description: "Places new nodes on the hosts of the cluster's driver by OpenSVC's placement policies (nodes order, load avg, spread, score, shift, none), " +
			"constraints on host labels and affinities between clusters; removes nodes from the worst-placed hosts first.",
		Schema: schema.Schema{
			"placement": {Type: schema.String, Default: placement.NodesOrder, Description: "How candidate hosts are ranked (docs/placement.md).",
				Constraints: []schema.Constraint{schema.AllowedValues(policies()...)}},
			"hosts":              list("The ordered candidate hosts; empty means every host of the driver, in its order."),
			"constraints":        {Type: schema.String, Default: "", Description: "An expression over a host's name and labels that must be true, e.g. labels.disk == \"ssd\"."},
			"hard_affinity":      list("Clusters that must each run a node on a host for it to take this cluster's nodes."),
			"hard_anti_affinity": list("Clusters none of which may run a node on a host that takes this cluster's nodes."),
			"soft_affinity":      list("Clusters whose hosts are preferred, when two or more hosts remain."),
			"soft_anti_affinity": list("Clusters whose hosts are avoided, when two or more hosts remain."),
		},
		Targets: []sdk.Target{
			{Phase: "BEFORE", Action: "CLUSTER_SCALE_OUT"}, {Phase: "BEFORE", Action: "CLUSTER_SCALE_IN"},
			{Phase: "BEFORE", Action: "CLUSTER_RESIZE"}, {Phase: "BEFORE", Action: "NODE_CREATE"},
			// The engine's move of nodes off a down or draining host
			// creates their replacements first: they are placed too.
			{Phase: "BEFORE", Action: "CLUSTER_MOVE_NODES"},
		},
		Priority:   Priority,
		Singleton:  true,
		WantsHosts: true,
		Policy:     policy{},
		Validate: func(_ context.Context, spec sdk.Spec) schema.Diagnostics {
			if _, err := properties(spec); err != nil {
				var fe *placement.FieldError
				if errors.As(err, &fe) {
					return schema.Diagnostics{{Field: "properties." + fe.Field, Message: fe.Problem}}
				}
				return schema.Diagnostics{{Field: "properties", Message: err.Error()}}
			}
			return nil
		},
	}
}

// properties reads and checks the policy's properties: they are the
// placement.Policy's fields under the same names.
func properties(spec sdk.Spec) (placement.Policy, error) {
	var p placement.Policy
	if err := spec.Decode(&p); err != nil {
		return p, fmt.Errorf("the properties of policy %s cannot be read: %w", spec.ID, err)
	}
	return p, placement.ValidatePolicy(p)
}

func policies() []any {
	out := make([]any, len(placement.Policies))
	for i, p := range placement.Policies {
		out[i] = p
	}
	return out
}

type policy struct{}

func (policy) Attach(context.Context, sdk.Spec, sdk.Cluster) (map[string]any, error) { return nil, nil }
func (policy) Detach(context.Context, sdk.Spec, sdk.Cluster, map[string]any) error   { return nil }

// Check places the nodes an action adds or chooses those it removes.
func (policy) Check(_ context.Context, req sdk.CheckRequest) (sdk.CheckResult, error) {
	p, err := properties(req.Policy)
	if err != nil {
		return sdk.CheckResult{}, err
	}
	count, err := countOf(req)
	if err != nil {
		return refuse(err.Error()), nil
	}
	if count == 0 {
		return sdk.CheckResult{}, nil
	}
	if req.Hosts == nil {
		return refuse("The engine sent no hosts with the check; grove.policy.placement needs an engine that sends them."), nil
	}
	if req.Hosts.Err != "" {
		return refuse("The hosts cannot be read: " + req.Hosts.Err + "."), nil
	}
	s := Snapshot(req.Cluster, p, req.Hosts)
	if count > 0 {
		s.Add = count
	} else {
		s.Remove = -count
	}
	d, err := placement.Decide(s)
	if err != nil {
		return refuse(fmt.Sprintf("The placement cannot be decided: %v.", err)), nil
	}
	if d.Refuse != "" {
		return refuse(fmt.Sprintf("The placement policy found no place: %s.", d.Refuse)), nil
	}
	if count > 0 {
		if len(d.Place) == 0 { // placement none: the driver chooses
			return sdk.CheckResult{}, nil
		}
		return sdk.CheckResult{Data: creation(req.Action, d.Place)}, nil
	}
	return sdk.CheckResult{Data: deletion(req.Action, d.Victims)}, nil
}

// Snapshot is what the decision reads for a cluster: the engine's hosts
// and the nodes of other clusters on them, and this cluster's own nodes as
// its snapshot has them (by id, so victims are node ids). It is exported
// for the engine's placement view, which shows the same ranking.
func Snapshot(c sdk.Cluster, p placement.Policy, hs *sdk.HostSnapshot) placement.Snapshot {
	s := placement.Snapshot{Cluster: c.Name, Policy: p}
	for _, h := range hs.Hosts {
		s.Hosts = append(s.Hosts, placement.Host{Name: h.Name, Labels: h.Labels, Load: h.Load, MemAvail: h.MemAvail, SwapAvail: h.SwapAvail,
			State: h.State, Availability: h.Availability, Frozen: h.Frozen, Overloaded: h.Overloaded})
	}
	for _, in := range hs.Instances {
		if in.Cluster == c.Name {
			continue
		}
		s.Instances = append(s.Instances, placement.Instance{Cluster: in.Cluster, Node: in.Node, Host: in.Host, State: in.State})
	}
	for _, n := range c.Nodes {
		host := hostOf(n.Data)
		if host == "" {
			host = noHost
		}
		s.Instances = append(s.Instances, placement.Instance{Cluster: c.Name, Node: n.ID, Host: host, State: stateOf(n.Status)})
	}
	return s
}

// hostOf is the host a node is on: the one its driver reported, else the
// one it was placed on.
func hostOf(data map[string]any) string {
	if h, _ := data["host"].(string); h != "" {
		return h
	}
	pl, _ := data["placement"].(map[string]any)
	h, _ := pl["host"].(string)
	return h
}

func stateOf(status string) string {
	switch status {
	case "ACTIVE", "OPERATING":
		return placement.InstanceRunning
	case "INIT", "CREATING", "UPDATING", "RECOVERING":
		return placement.InstanceStarting
	case "ERROR", "WARNING":
		return placement.InstanceFailed
	}
	return placement.InstanceStopped
}

// creation gives each new node its host in data.placement, beside what a
// policy checked before put in the same entry (a zone, a region).
func creation(a sdk.Action, hosts []string) map[string]any {
	var had []any
	if pl, ok := a.Data[sdk.DataPlacement].(map[string]any); ok {
		had, _ = pl["placements"].([]any)
	}
	out := make([]any, len(hosts))
	for i, h := range hosts {
		e := map[string]any{}
		if i < len(had) {
			if m, ok := had[i].(map[string]any); ok {
				maps.Copy(e, m)
			}
		}
		e["host"] = h
		out[i] = e
	}
	return map[string]any{sdk.DataPlacement: map[string]any{"count": len(hosts), "placements": out}}
}

// deletion names the nodes that leave in data.deletion, keeping what a
// policy checked before decided beside them.
func deletion(a sdk.Action, victims []placement.Victim) map[string]any {
	out := map[string]any{}
	if had, ok := a.Data[sdk.DataDeletion].(map[string]any); ok {
		maps.Copy(out, had)
	}
	ids := make([]string, len(victims))
	for i, v := range victims {
		ids[i] = v.Node
	}
	out["count"] = len(ids)
	out["candidates"] = ids
	return map[string]any{sdk.DataDeletion: out}
}

// countOf is Senlin's count of the nodes the action adds (positive) or
// removes (negative), as the zone placement policy reads it.
func countOf(req sdk.CheckRequest) (int, error) {
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
	case "CLUSTER_MOVE_NODES":
		var in struct {
			Nodes []string `json:"nodes"`
		}
		if err := req.Action.DecodeInputs(&in); err != nil {
			return 0, fmt.Errorf("The inputs of action %s cannot be read: %w.", req.Action.Name, err)
		}
		return len(in.Nodes), nil
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
	}
	return decide.Count(cr)
}

// refuse is a refusal with Senlin's status data.
func refuse(reason string) sdk.CheckResult {
	return sdk.CheckResult{Refuse: reason, Data: map[string]any{"status": "ERROR", "status_reason": reason}}
}
