package engine

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/grovehq/grove/core/model"
	"github.com/grovehq/grove/core/store"
	"github.com/grovehq/grove/plugins/host"
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
		MinSize: cl.MinSize, MaxSize: cl.MaxSize, Config: cl.Config, Nodes: make([]sdk.ClusterNode, 0, len(nodes)),
		Profile: sdk.Spec{ID: prof.ID, Name: prof.Name, Type: prof.Type, Version: prof.Version, Properties: Redact(prof.Properties)}}
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

// forPolicy is the snapshot a policy served by comp's plugin gets: the
// profile's sensitive values opened when that plugin also serves the
// profile's type (it is given them for every node operation anyway), so a
// policy acting on the nodes' backend can log in as the driver does;
// redacted for any other plugin.
func (e *Engine) forPolicy(ctx context.Context, snap sdk.Cluster, comp *host.Component) (sdk.Cluster, error) {
	prof, ok := e.plugins.Component("profile", snap.Profile.Type)
	if !ok || comp == nil || prof.Plugin != comp.Plugin {
		return snap, nil
	}
	p, err := e.store.GetProfile(ctx, snap.ProfileID)
	if err != nil {
		return snap, err
	}
	props, err := e.openProfile(p)
	if err != nil {
		return snap, err
	}
	snap.Profile.Properties = props
	return snap, nil
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
	var hosts *sdk.HostSnapshot
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
		spec, err := e.policySpec(pol)
		if err != nil {
			return err
		}
		seen, err := e.forPolicy(ctx, *snap, comp)
		if err != nil {
			return err
		}
		req := sdk.CheckRequest{
			Policy:  spec,
			Phase:   phase,
			Action:  sdk.Action{ID: a.ID, Name: a.Action, Target: a.Target, Inputs: a.Inputs, Data: a.Data},
			Cluster: seen, BindingData: b.Data, Now: e.cfg.Now().UnixMicro(),
		}
		if b.LastOp != nil {
			req.LastOp = b.LastOp.UnixMicro()
		}
		if comp.WantsHosts {
			if hosts == nil {
				cl, err := e.store.GetCluster(ctx, clusterID)
				if err != nil {
					return err
				}
				if hosts, err = e.placementSnapshot(ctx, cl); err != nil {
					return fmt.Errorf("policy check: the hosts for policy '%s': %w", pol.Name, err)
				}
			}
			req.Hosts = hosts
		}
		res, err := client.Check(ctx, req)
		if err != nil {
			return fmt.Errorf("Policy check failure: policy '%s' could not be checked: %w", pol.Name, err)
		}
		if err := e.warnNodes(ctx, clusterID, res.Data); err != nil {
			return err
		}
		if res.Refuse != "" {
			// What a refusing policy says of it (Senlin's status and
			// status_reason) stays in the action's data for the user.
			if len(res.Data) > 0 {
				for k, v := range res.Data {
					a.Data[k] = v
				}
				if err := e.saveData(ctx, a); err != nil {
					return err
				}
			}
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

// warnNodes marks WARNING, with the policy's reason, the cluster's nodes
// a check names under sdk.DataNodeWarnings (Senlin's load-balancing policy
// does so for a node whose member could not be added or removed). Ids of
// nodes not in the cluster are ignored.
func (e *Engine) warnNodes(ctx context.Context, clusterID string, data map[string]any) error {
	warn, _ := data[sdk.DataNodeWarnings].(map[string]any)
	if len(warn) == 0 {
		return nil
	}
	now := e.cfg.Now()
	var nodes []*model.Node
	for id, r := range warn {
		n, err := e.store.GetNode(ctx, id)
		if err != nil || n.ClusterID != clusterID {
			continue
		}
		reason, _ := r.(string)
		n.Status, n.StatusReason, n.UpdatedAt = model.NodeWarning, reason, &now
		nodes = append(nodes, n)
	}
	if len(nodes) == 0 {
		return nil
	}
	return e.recordNodes(ctx, nodes)
}

func (e *Engine) doAttachPolicy(ctx context.Context, a *model.Action) error {
	in, err := inputsOf[model.ClusterAttachPolicyInputs](a)
	if err != nil {
		return err
	}
	cl, err := e.lockCluster(ctx, a)
	if err != nil {
		return err
	}
	policyID := in.PolicyID
	if _, err := e.store.GetBinding(ctx, cl.ID, policyID); err == nil {
		a.StatusReason = "Policy already attached."
		return nil
	}
	pol, err := e.store.GetPolicy(ctx, policyID)
	if err != nil {
		return err
	}
	bindings, err := e.store.ListBindings(ctx, cl.ID)
	if err != nil {
		return err
	}
	for _, b := range bindings {
		if other, err := e.store.GetPolicy(ctx, b.PolicyID); err == nil && other.Type == pol.Type {
			return fmt.Errorf("The cluster already has a %s policy ('%s'); a cluster takes at most one policy of a type.", pol.Type, other.Name)
		}
	}
	client, comp, err := e.plugins.Client(ctx, "policy", pol.Type)
	if err != nil {
		return err
	}
	snap, err := e.snapshot(ctx, cl)
	if err == nil {
		snap, err = e.forPolicy(ctx, snap, comp)
	}
	if err != nil {
		return err
	}
	spec, err := e.policySpec(pol)
	if err != nil {
		return err
	}
	data, err := client.Attach(ctx, spec, snap)
	if err != nil {
		return fmt.Errorf("Failed in attaching policy '%s': %w", pol.Name, err)
	}
	enabled, priority := true, comp.DefaultPriority
	if in.Enabled != nil {
		enabled = *in.Enabled
	}
	if in.Priority != nil {
		priority = *in.Priority
	}
	// The attach under way keeps the policy in use, so a delete is refused
	// until the binding is written. On PostgreSQL a delete whose check ran
	// just before this action was stored can still commit after the
	// action read the policy; holding the policy while the binding is
	// written makes the attach fail then instead of binding a policy that
	// is gone.
	err = e.store.InTx(ctx, func(tx store.Store) error {
		if err := tx.LockSpec(ctx, "policy", pol.ID, false); err != nil {
			return err
		}
		return tx.CreateBinding(ctx, &model.Binding{ID: e.newID(), ClusterID: cl.ID, PolicyID: pol.ID, Enabled: enabled, Priority: priority, Data: data})
	})
	if err != nil {
		return err
	}
	if err := e.publishClusterData(ctx, cl.ID, pol.ID, data, true); err != nil {
		return err
	}
	a.StatusReason = "Policy attached."
	return nil
}

func (e *Engine) doDetachPolicy(ctx context.Context, a *model.Action) error {
	in, err := inputsOf[model.ClusterDetachPolicyInputs](a)
	if err != nil {
		return err
	}
	cl, b, err := e.boundPolicy(ctx, a, in.PolicyID)
	if err != nil {
		return err
	}
	if err := e.detach(ctx, cl, b); err != nil {
		return err
	}
	a.StatusReason = "Policy detached."
	return nil
}

func (e *Engine) doUpdatePolicy(ctx context.Context, a *model.Action) error {
	in, err := inputsOf[model.ClusterUpdatePolicyInputs](a)
	if err != nil {
		return err
	}
	_, b, err := e.boundPolicy(ctx, a, in.PolicyID)
	if err != nil {
		return err
	}
	if in.Enabled != nil {
		b.Enabled = *in.Enabled
	}
	if in.Priority != nil {
		b.Priority = *in.Priority
	}
	if err := e.store.UpdateBinding(ctx, b); err != nil {
		return err
	}
	a.StatusReason = "Policy updated."
	return nil
}

// boundPolicy locks the cluster and finds the binding the action is about.
func (e *Engine) boundPolicy(ctx context.Context, a *model.Action, policyID string) (*model.Cluster, *model.Binding, error) {
	cl, err := e.lockCluster(ctx, a)
	if err != nil {
		return nil, nil, err
	}
	b, err := e.store.GetBinding(ctx, cl.ID, policyID)
	if err != nil {
		return nil, nil, errors.New("The policy is not attached to the cluster.")
	}
	return cl, b, nil
}

func (e *Engine) detach(ctx context.Context, cl *model.Cluster, b *model.Binding) error {
	pol, err := e.store.GetPolicy(ctx, b.PolicyID)
	if err != nil {
		return err
	}
	client, comp, err := e.plugins.Client(ctx, "policy", pol.Type)
	if err != nil {
		return fmt.Errorf("detach policy '%s': %w", pol.Name, err)
	}
	snap, err := e.snapshot(ctx, cl)
	if err == nil {
		snap, err = e.forPolicy(ctx, snap, comp)
	}
	if err != nil {
		return err
	}
	spec, err := e.policySpec(pol)
	if err != nil {
		return err
	}
	if err := client.Detach(ctx, spec, snap, b.Data); err != nil {
		return fmt.Errorf("detach policy '%s': %w", pol.Name, err)
	}
	if err := e.publishClusterData(ctx, cl.ID, pol.ID, b.Data, false); err != nil {
		return err
	}
	return e.store.DeleteBinding(ctx, cl.ID, pol.ID)
}

// publishClusterData records (or, at detach, removes) what a policy
// publishes in the cluster's data under its binding data's
// sdk.BindingClusterData: data.K[policy id] = V for each K, V. Senlin's
// load-balancing policy shows the VIP so (data.loadbalancers).
func (e *Engine) publishClusterData(ctx context.Context, clusterID, policyID string, binding map[string]any, add bool) error {
	pub, _ := binding[sdk.BindingClusterData].(map[string]any)
	if len(pub) == 0 {
		return nil
	}
	cl, err := e.store.GetCluster(ctx, clusterID)
	if err != nil {
		return err
	}
	if cl.Data == nil {
		cl.Data = map[string]any{}
	}
	for k, v := range pub {
		m, _ := cl.Data[k].(map[string]any)
		if m == nil {
			m = map[string]any{}
		}
		if add {
			m[policyID] = v
		} else {
			delete(m, policyID)
		}
		if len(m) == 0 {
			delete(cl.Data, k)
		} else {
			cl.Data[k] = m
		}
	}
	return e.store.UpdateCluster(ctx, cl)
}
