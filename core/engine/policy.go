package engine

import (
	"context"
	"fmt"
	"time"

	"github.com/grovehq/grove/core/model"
	"github.com/grovehq/grove/plugins/sdk"
)

// Policy check phases.
const (
	PhaseBefore = "BEFORE"
	PhaseAfter  = "AFTER"
)

// snapshot builds what a policy sees of a cluster.
func (e *Engine) snapshot(ctx context.Context, cl *model.Cluster) (sdk.Cluster, error) {
	prof, err := e.store.GetProfile(ctx, cl.ProfileID)
	if err != nil {
		return sdk.Cluster{}, err
	}
	nodes, err := e.store.ClusterNodes(ctx, cl.ID)
	if err != nil {
		return sdk.Cluster{}, err
	}
	profAge := map[string]int64{}
	out := sdk.Cluster{ID: cl.ID, Name: cl.Name, ProfileID: cl.ProfileID, ProfileType: prof.FullType(), DesiredCapacity: cl.DesiredCapacity,
		MinSize: cl.MinSize, MaxSize: cl.MaxSize, Config: cl.Config, Nodes: make([]sdk.ClusterNode, 0, len(nodes))}
	for _, n := range nodes {
		age, ok := profAge[n.ProfileID]
		if !ok {
			if p, err := e.store.GetProfile(ctx, n.ProfileID); err == nil {
				age = p.CreatedAt.UnixMicro()
			}
			profAge[n.ProfileID] = age
		}
		cn := sdk.ClusterNode{ID: n.ID, Name: n.Name, Status: n.Status, Index: n.Index, ProfileID: n.ProfileID, ProfileCreatedAt: age, Tainted: n.Tainted, Data: n.Data}
		if n.CreatedAt != nil {
			cn.CreatedAt = n.CreatedAt.UnixMicro()
		}
		out.Nodes = append(out.Nodes, cn)
	}
	return out, nil
}

// checkPolicies runs the enabled bindings' checks for a phase in priority
// order, one plugin call per policy. A refusal fails the action; data a
// policy returns is merged into the action's data for the handler.
func (e *Engine) checkPolicies(ctx context.Context, a *model.Action, clusterID, phase string) error {
	if clusterID == "" {
		return nil
	}
	marker := "policy_" + phase
	if done, _ := a.Data[marker].(bool); done {
		return nil
	}
	bindings, err := e.store.ListBindings(ctx, clusterID)
	if err != nil {
		return err
	}
	var snap *sdk.Cluster
	var checked []*model.Binding
	for _, b := range bindings {
		if !b.Enabled {
			continue
		}
		pol, err := e.store.GetPolicy(ctx, b.PolicyID)
		if err != nil {
			return fmt.Errorf("policy check: %w", err)
		}
		client, comp, err := e.plugins.Client(ctx, "policy", pol.Type)
		if err != nil {
			return fmt.Errorf("Policy check failure: policy '%s' could not be checked: %w", pol.Name, err)
		}
		if !comp.WantsCheck(phase, a.Action) {
			continue
		}
		if snap == nil {
			cl, err := e.store.GetCluster(ctx, clusterID)
			if err != nil {
				return err
			}
			s, err := e.snapshot(ctx, cl)
			if err != nil {
				return err
			}
			snap = &s
		}
		req := sdk.CheckRequest{
			Policy:  sdk.Spec{ID: pol.ID, Name: pol.Name, Type: pol.Type, Version: pol.Version, Properties: pol.Properties},
			Phase:   phase,
			Action:  sdk.Action{ID: a.ID, Name: a.Action, Target: a.Target, Inputs: a.Inputs, Data: a.Data},
			Cluster: *snap, BindingData: b.Data, Now: e.cfg.Now().UnixMicro(),
		}
		if b.LastOp != nil {
			req.LastOp = b.LastOp.UnixMicro()
		}
		res, err := client.Check(ctx, req)
		if err != nil {
			return fmt.Errorf("Policy check failure: policy '%s' could not be checked: %w", pol.Name, err)
		}
		if res.Refuse != "" {
			return fmt.Errorf("Policy check failure: Failed policy '%s': %s", pol.Name, res.Refuse)
		}
		for k, v := range res.Data {
			a.Data[k] = v
		}
		checked = append(checked, b)
	}
	a.Data[marker] = true
	if phase == PhaseAfter {
		now := e.cfg.Now().Truncate(time.Microsecond)
		for _, b := range checked {
			b.LastOp = &now
			if err := e.store.UpdateBinding(ctx, b); err != nil {
				return err
			}
		}
	}
	return e.saveData(ctx, a)
}
