package engine

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/grovehq/grove/core/model"
	"github.com/grovehq/grove/core/orchestrator/placement"
	"github.com/grovehq/grove/core/store"
	"github.com/grovehq/grove/plugins/sdk"
)

// placementSnapshot is the one place the engine builds what a placement
// policy reads (sdk.CheckRequest.Hosts): today the hosts the cluster's
// profile driver reports through its Hosts hook, and every node that
// records a host in its data; first-class hosts in the store will replace
// its body, not its callers. A driver without hosts, or one that cannot be
// asked, gives a snapshot whose Err says why, so the policy can refuse
// with the reason instead of the check failing.
func (e *Engine) placementSnapshot(ctx context.Context, cl *model.Cluster) (*sdk.HostSnapshot, error) {
	prof, err := e.store.GetProfile(ctx, cl.ProfileID)
	if err != nil {
		return nil, err
	}
	out := &sdk.HostSnapshot{}
	var hosts []sdk.Host
	err = e.plugins.Call(ctx, "profile", prof.Type, func(ctx context.Context, c *sdk.Client) (err error) {
		hosts, err = c.Hosts(ctx, prof.Type)
		return err
	})
	if err != nil {
		out.Err = fmt.Sprintf("the hosts of %s cannot be listed: %v", prof.Type, err)
		return out, nil
	}
	for _, h := range hosts {
		ph := sdk.PlacementHost{Name: h.Name, Labels: h.Attributes, State: "up", Availability: "active"}
		if h.Err != "" {
			ph.State = "down"
		}
		// Drivers report load figures by name; these three are the ones
		// the placement policies rank by.
		for key, dst := range map[string]**float64{"load_avg": &ph.Load, "mem_avail": &ph.MemAvail, "swap_avail": &ph.SwapAvail} {
			if v, ok := h.Load[key]; ok {
				*dst = &v
			}
		}
		out.Hosts = append(out.Hosts, ph)
	}
	clusters, err := e.store.ListClusters(ctx, store.ListOpts{})
	if err != nil {
		return nil, err
	}
	names := make(map[string]string, len(clusters))
	for _, c := range clusters {
		names[c.ID] = c.Name
	}
	nodes, err := e.store.ListNodes(ctx, store.ListOpts{})
	if err != nil {
		return nil, err
	}
	for _, n := range nodes {
		h := placedOn(n.Data)
		if h == "" || n.ClusterID == "" {
			continue
		}
		out.Instances = append(out.Instances, sdk.HostInstance{Cluster: names[n.ClusterID], Node: n.Name, Host: h, State: instanceState(n.Status)})
	}
	return out, nil
}

// placedOn is the host a node is on: the one its driver reported, else
// the one it was placed on.
func placedOn(data map[string]any) string {
	if h, _ := data["host"].(string); h != "" {
		return h
	}
	pl, _ := data["placement"].(map[string]any)
	h, _ := pl["host"].(string)
	return h
}

// instanceState maps a node's status to what placement counts: a node
// being made or changed counts as starting, a node in error as failed.
func instanceState(status string) string {
	switch status {
	case model.NodeActive, model.NodeOperating:
		return "running"
	case model.NodeInit, model.NodeCreating, model.NodeUpdating, model.NodeRecovering:
		return "starting"
	case model.NodeError, model.NodeWarning:
		return "failed"
	}
	return "stopped"
}

// PlacementPolicyType is the policy type whose ranking ClusterPlacement
// shows.
const PlacementPolicyType = "grove.policy.placement"

// ClusterPlacement ranks the hosts for a cluster now, as its bound
// grove.policy.placement policy would for a new node: every host with its
// rank, flags and reason, the leaders, and the node that would leave
// first. It changes nothing.
func (e *Engine) ClusterPlacement(ctx context.Context, cl *model.Cluster) (placement.Decision, error) {
	bindings, err := e.store.ListBindings(ctx, cl.ID)
	if err != nil {
		return placement.Decision{}, err
	}
	var pol *model.Policy
	for _, b := range bindings {
		p, err := e.store.GetPolicy(ctx, b.PolicyID)
		if err != nil {
			return placement.Decision{}, err
		}
		if p.Type == PlacementPolicyType {
			pol = p
			break
		}
	}
	if pol == nil {
		return placement.Decision{}, BadRequest("The cluster '%s' has no %s policy attached; attach one to see where its nodes go.", cl.Name, PlacementPolicyType)
	}
	var props placement.Policy
	raw, err := json.Marshal(pol.Properties)
	if err == nil {
		err = json.Unmarshal(raw, &props)
	}
	if err != nil {
		return placement.Decision{}, fmt.Errorf("the properties of policy '%s' cannot be read: %w", pol.Name, err)
	}
	hosts, err := e.placementSnapshot(ctx, cl)
	if err != nil {
		return placement.Decision{}, err
	}
	if hosts.Err != "" {
		return placement.Decision{}, Conflict("FeatureNotSupported", "The hosts of cluster '%s' cannot be read: %s.", cl.Name, hosts.Err)
	}
	s := placement.Snapshot{Cluster: cl.Name, Policy: props, Add: 1}
	for _, h := range hosts.Hosts {
		s.Hosts = append(s.Hosts, placement.Host{Name: h.Name, Labels: h.Labels, Load: h.Load, MemAvail: h.MemAvail, SwapAvail: h.SwapAvail,
			State: h.State, Availability: h.Availability, Frozen: h.Frozen, Overloaded: h.Overloaded})
	}
	for _, in := range hosts.Instances {
		s.Instances = append(s.Instances, placement.Instance{Cluster: in.Cluster, Node: in.Node, Host: in.Host, State: in.State})
	}
	d, err := placement.Decide(s)
	if err != nil {
		return placement.Decision{}, fmt.Errorf("the placement of cluster '%s': %w", cl.Name, err)
	}
	return d, nil
}
