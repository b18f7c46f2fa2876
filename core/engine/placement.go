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
// policy reads (sdk.CheckRequest.Hosts): the hosts of the store with
// their labels (reported and the operator's), load, state and
// availability, and every node that is on a host. A host-local type
// (local.process) places on the agent hosts; any other type on the hosts
// its driver reports through its Hosts hook, recorded in the store by
// this call, in the driver's order. A driver without hosts, or one that
// cannot be asked, gives a snapshot whose Err says why, so the policy can
// refuse with the reason instead of the check failing.
func (e *Engine) placementSnapshot(ctx context.Context, cl *model.Cluster) (*sdk.HostSnapshot, error) {
	prof, err := e.store.GetProfile(ctx, cl.ProfileID)
	if err != nil {
		return nil, err
	}
	out := &sdk.HostSnapshot{}
	var reported []sdk.Host
	if !hostLocal(prof.Type) {
		err = e.plugins.Call(ctx, "profile", prof.Type, func(ctx context.Context, c *sdk.Client) (err error) {
			reported, err = c.Hosts(ctx, prof.Type)
			return err
		})
		if err != nil {
			out.Err = fmt.Sprintf("the hosts of %s cannot be listed: %v", prof.Type, err)
			return out, nil
		}
		if err := e.RecordDriverHosts(ctx, prof.Type, reported); err != nil {
			return nil, err
		}
	}
	stored, err := e.store.ListHosts(ctx)
	if err != nil {
		return nil, err
	}
	byName := make(map[string]*model.Host, len(stored))
	for _, h := range stored {
		byName[h.Name] = h
	}
	var hosts []*model.Host
	if hostLocal(prof.Type) {
		for _, h := range stored {
			if h.Kind == model.HostAgent {
				hosts = append(hosts, h)
			}
		}
		if len(hosts) == 0 {
			out.Err = fmt.Sprintf("no agent host is recorded for %s: agents record theirs when they start", prof.Type)
			return out, nil
		}
	} else {
		for _, r := range reported {
			if r.Attributes["kind"] == "availability_zone" {
				// A zone groups hosts (Nova reports its zones beside its
				// hypervisors): no node is placed on a zone itself.
				continue
			}
			h := byName[r.Name]
			if h == nil || h.Driver != prof.Type {
				// Not recorded (a name that is no valid host name, or an
				// agent's): as the driver reports it.
				h = &model.Host{Name: r.Name, Labels: r.Attributes, Load: r.Load, State: model.HostUp, Availability: model.HostActive}
				if r.Err != "" {
					h.State = model.HostDown
				}
			}
			hosts = append(hosts, h)
		}
	}
	for _, h := range hosts {
		ph := sdk.PlacementHost{Name: h.Name, Labels: h.EffectiveLabels(), State: h.State, Availability: h.Availability}
		// An agent reports its load averages, a driver its own figures;
		// these are the ones the placement policies rank by.
		load := "load_avg"
		if h.Kind == model.HostAgent {
			load = "load15" // OpenSVC's load avg policy ranks by the 15-minute figure
		}
		for key, dst := range map[string]**float64{load: &ph.Load, "mem_avail": &ph.MemAvail, "swap_avail": &ph.SwapAvail} {
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
	nodes, err := e.store.PlacedNodes(ctx)
	if err != nil {
		return nil, err
	}
	for _, n := range nodes {
		h := n.Host
		if h == "" {
			h = placedOn(n.Data)
		}
		if h == "" {
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
	props, bound, err := e.boundPlacement(ctx, cl)
	if err != nil {
		return placement.Decision{}, err
	}
	if !bound {
		return placement.Decision{}, BadRequest("The cluster '%s' has no %s policy attached; attach one to see where its nodes go.", cl.Name, PlacementPolicyType)
	}
	hosts, err := e.placementSnapshot(ctx, cl)
	if err != nil {
		return placement.Decision{}, err
	}
	if hosts.Err != "" {
		return placement.Decision{}, Conflict("FeatureNotSupported", "The hosts of cluster '%s' cannot be read: %s.", cl.Name, hosts.Err)
	}
	s := decisionSnapshot(cl.Name, props, hosts)
	s.Add = 1
	d, err := placement.Decide(s)
	if err != nil {
		return placement.Decision{}, fmt.Errorf("the placement of cluster '%s': %w", cl.Name, err)
	}
	return d, nil
}

// boundPlacement reads the properties of the cluster's
// grove.policy.placement policy; bound says whether one is attached.
func (e *Engine) boundPlacement(ctx context.Context, cl *model.Cluster) (props placement.Policy, bound bool, err error) {
	bindings, err := e.store.ListBindings(ctx, cl.ID)
	if err != nil {
		return props, false, err
	}
	for _, b := range bindings {
		p, err := e.store.GetPolicy(ctx, b.PolicyID)
		if err != nil {
			return props, false, err
		}
		if p.Type != PlacementPolicyType {
			continue
		}
		raw, err := json.Marshal(p.Properties)
		if err == nil {
			err = json.Unmarshal(raw, &props)
		}
		if err != nil {
			return props, false, fmt.Errorf("the properties of policy '%s' cannot be read: %w", p.Name, err)
		}
		return props, true, nil
	}
	return props, false, nil
}

// decisionSnapshot is the pure decision's snapshot of the hosts and
// instances the engine read.
func decisionSnapshot(cluster string, props placement.Policy, hosts *sdk.HostSnapshot) placement.Snapshot {
	s := placement.Snapshot{Cluster: cluster, Policy: props}
	for _, h := range hosts.Hosts {
		s.Hosts = append(s.Hosts, placement.Host{Name: h.Name, Labels: h.Labels, Load: h.Load, MemAvail: h.MemAvail, SwapAvail: h.SwapAvail,
			State: h.State, Availability: h.Availability, Frozen: h.Frozen, Overloaded: h.Overloaded})
	}
	for _, in := range hosts.Instances {
		s.Instances = append(s.Instances, placement.Instance{Cluster: in.Cluster, Node: in.Node, Host: in.Host, State: in.State})
	}
	return s
}
