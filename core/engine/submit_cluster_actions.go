package engine

import (
	"context"
	"slices"
	"sort"
	"strings"

	"github.com/grovehq/grove/api"
	"github.com/grovehq/grove/core/model"
	"github.com/grovehq/grove/plugins/sdk/scaling"
)

// ClusterActionNames lists the action keys accepted by
// POST /v1/clusters/{id}/actions.
var ClusterActionNames = []string{"add_nodes", "del_nodes", "replace_nodes", "resize", "scale_in", "scale_out",
	"policy_attach", "policy_detach", "policy_update", "check", "recover", "update_resume", "update_rollback", "complete_lifecycle",
	"start", "stop", "restart", "refresh", "freeze", "thaw", "clear", "switch", "giveback"}

// ClusterAction validates a cluster action body (exactly one key naming the
// action) and queues the action.
func (e *Engine) ClusterAction(ctx context.Context, c Caller, ident string, body map[string]any) (*model.Action, error) {
	return e.clusterAction(ctx, c, ident, body, "")
}

// clusterAction is ClusterAction with the action's name given (a webhook's
// actions are named after their receiver, as in Senlin); "" names it after
// its kind.
func (e *Engine) clusterAction(ctx context.Context, c Caller, ident string, body map[string]any, actionName string) (*model.Action, error) {
	switch {
	case len(body) == 0:
		return nil, BadRequest("No action specified.")
	case len(body) > 1:
		keys := make([]string, 0, len(body))
		for k := range body {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		return nil, BadRequest("Multiple actions specified: %s; send one action per request.", strings.Join(keys, ", "))
	}
	var name string
	var params map[string]any
	for k, v := range body {
		name = k
		if v != nil {
			m, ok := v.(map[string]any)
			if !ok {
				return nil, BadRequest("%s: the action's parameters must be an object.", k)
			}
			params = m
		}
	}
	if !slices.Contains(ClusterActionNames, name) {
		return nil, BadRequest("Unrecognized action '%s' specified; known actions are %s.", name, strings.Join(ClusterActionNames, ", "))
	}
	if params == nil {
		params = map[string]any{}
	}
	if name == "complete_lifecycle" {
		// No new action: the one the token names goes on.
		return e.CompleteLifecycle(ctx, c, ident, params)
	}
	cl, err := e.store.FindCluster(ctx, c.Project, ident)
	if err != nil {
		return nil, err
	}
	if isGlobal(cl) && slices.Contains([]string{"add_nodes", "del_nodes", "resize", "scale_in", "scale_out"}, name) {
		return nil, globalRefusal(cl, name)
	}
	if slices.Contains([]string{"add_nodes", "del_nodes", "resize", "scale_in", "scale_out"}, name) {
		if runs, err := e.monitorRuns(ctx, cl); err != nil {
			return nil, err
		} else if runs {
			return nil, monitorRefusal(cl, name)
		}
	}
	var action string
	var inputs any
	switch name {
	case "add_nodes":
		action = model.ClusterAddNodesAction
		inputs, err = e.addNodesInputs(ctx, c, cl, params)
	case "del_nodes":
		action = model.ClusterDelNodesAction
		inputs, err = e.delNodesInputs(ctx, c, cl, params)
	case "replace_nodes":
		action = model.ClusterReplaceNodesAction
		inputs, err = e.replaceNodesInputs(ctx, c, cl, params)
	case "resize":
		action = model.ClusterResizeAction
		inputs, err = e.resizeInputs(ctx, cl, params)
	case "scale_in", "scale_out":
		action = model.ClusterScaleInAction
		if name == "scale_out" {
			action = model.ClusterScaleOutAction
		}
		inputs, err = e.scaleInputs(ctx, cl, name, params)
	case "policy_attach", "policy_detach", "policy_update":
		action, inputs, err = e.policyInputs(ctx, c, cl, name, params)
	case "check":
		action, inputs = model.ClusterCheckAction, model.CheckInputs(params)
	case "update_resume", "update_rollback":
		action = model.ClusterUpdateAction
		inputs, err = pausedUpdateInputs(cl, name)
	case "start", "stop", "restart", "refresh":
		runs, rerr := e.monitorRuns(ctx, cl)
		if rerr != nil {
			return nil, rerr
		}
		if runs && (name == "start" || name == "stop") {
			// The instance monitors run this cluster: the operator's start
			// and stop are expectations they honour (docs/failover.md).
			action, inputs, err = e.expectInputs(ctx, cl, name, params)
			break
		}
		action = runActions[name]
		inputs, err = runInputs(name, params)
	case "freeze", "thaw", "clear":
		action, inputs, err = e.instanceCommandInputs(ctx, cl, name, params)
	case "switch", "giveback":
		action, inputs, err = e.expectInputs(ctx, cl, name, params)
	case "recover":
		action = model.ClusterRecoverAction
		inputs, err = recoverInputs(params, clusterRecoverParams)
	}
	if err != nil {
		return nil, err
	}
	a, err := e.newAction(c, action, cl.ID, cl.ID, inputs, cl.Timeout)
	if err != nil {
		return nil, err
	}
	if actionName != "" {
		a.Name = actionName
	}
	return a, e.submit(ctx, a, lockFree(action), cl.ProfileID, nil)
}

func (e *Engine) findNodes(ctx context.Context, c Caller, field string, idents []string) ([]*model.Node, error) {
	var out []*model.Node
	seen := map[string]bool{}
	for _, id := range idents {
		n, err := e.store.FindNode(ctx, c.Project, id)
		if err != nil {
			return nil, bodyRef(field, err)
		}
		if seen[n.ID] {
			return nil, BadRequest("%s: the node '%s' is listed twice.", field, id)
		}
		seen[n.ID] = true
		out = append(out, n)
	}
	return out, nil
}

func stringList(field string, v any) ([]string, error) {
	items, ok := v.([]any)
	if !ok {
		return nil, BadRequest("%s must be a list of node ids or names.", field)
	}
	if len(items) == 0 {
		return nil, BadRequest("%s must not be empty.", field)
	}
	out := make([]string, len(items))
	for i, it := range items {
		s, ok := it.(string)
		if !ok || s == "" {
			return nil, BadRequest("%s[%d] must be a node id or name.", field, i)
		}
		out[i] = s
	}
	return out, nil
}

func (e *Engine) addNodesInputs(ctx context.Context, c Caller, cl *model.Cluster, p map[string]any) (*model.ClusterAddNodesInputs, error) {
	if err := checkActionParams("add_nodes", "add_nodes", p); err != nil {
		return nil, err
	}
	idents, err := stringList("add_nodes.nodes", p["nodes"])
	if err != nil {
		return nil, err
	}
	nodes, err := e.findNodes(ctx, c, "add_nodes.nodes", idents)
	if err != nil {
		return nil, err
	}
	prof, err := e.store.GetProfile(ctx, cl.ProfileID)
	if err != nil {
		return nil, err
	}
	var ids []string
	for _, n := range nodes {
		if n.Status != model.NodeActive {
			return nil, BadRequest("add_nodes.nodes: the node '%s' is %s; only ACTIVE nodes can be added.", n.Name, n.Status)
		}
		if n.ClusterID != "" {
			return nil, BadRequest("add_nodes.nodes: the node '%s' is already a member of cluster %s.", n.Name, n.ClusterID)
		}
		np, err := e.store.GetProfile(ctx, n.ProfileID)
		if err != nil {
			return nil, err
		}
		if np.Type != prof.Type {
			return nil, BadRequest("add_nodes.nodes: the node '%s' has profile type %s but the cluster's is %s.", n.Name, np.Type, prof.Type)
		}
		ids = append(ids, n.ID)
	}
	count, err := e.store.CountNodes(ctx, cl.ID)
	if err != nil {
		return nil, err
	}
	desired := count + len(ids)
	b := scaling.Bounds{Desired: cl.DesiredCapacity, Min: cl.MinSize, Max: cl.MaxSize}
	if msg := scaling.CheckSizeParams(&b, &desired, nil, nil, true, e.cfg.MaxNodesPerCluster); msg != "" {
		return nil, BadRequest("%s", msg)
	}
	return &model.ClusterAddNodesInputs{Nodes: ids}, nil
}

func (e *Engine) delNodesInputs(ctx context.Context, c Caller, cl *model.Cluster, p map[string]any) (*model.ClusterDelNodesInputs, error) {
	if err := checkActionParams("del_nodes", "del_nodes", p); err != nil {
		return nil, err
	}
	idents, err := stringList("del_nodes.nodes", p["nodes"])
	if err != nil {
		return nil, err
	}
	nodes, err := e.findNodes(ctx, c, "del_nodes.nodes", idents)
	if err != nil {
		return nil, err
	}
	var ids []string
	for _, n := range nodes {
		if n.ClusterID != cl.ID {
			return nil, BadRequest("del_nodes.nodes: the node '%s' is not a member of cluster '%s'.", n.Name, cl.Name)
		}
		if deps, _ := n.Dependents["nodes"].([]any); len(deps) > 0 {
			return nil, Conflict("ResourceInUse", "The node '%s' has dependent nodes and cannot be removed.", n.Name)
		}
		ids = append(ids, n.ID)
	}
	destroy := false
	if v, ok := p["destroy_after_deletion"]; ok {
		destroy, _ = scaling.Bool(v) // judged by checkActionParams
	}
	count, err := e.store.CountNodes(ctx, cl.ID)
	if err != nil {
		return nil, err
	}
	desired := count - len(ids)
	b := scaling.Bounds{Desired: cl.DesiredCapacity, Min: cl.MinSize, Max: cl.MaxSize}
	if msg := scaling.CheckSizeParams(&b, &desired, nil, nil, true, e.cfg.MaxNodesPerCluster); msg != "" {
		return nil, BadRequest("%s", msg)
	}
	return &model.ClusterDelNodesInputs{Candidates: ids, Count: len(ids), DestroyAfterDeletion: destroy}, nil
}

func (e *Engine) replaceNodesInputs(ctx context.Context, c Caller, cl *model.Cluster, p map[string]any) (*model.ClusterReplaceNodesInputs, error) {
	if _, ok := p["nodes"]; !ok {
		return nil, BadRequest("replace_nodes.nodes is required: a map of old node to new node.")
	}
	if err := checkActionParams("replace_nodes", "replace_nodes", p); err != nil {
		return nil, err
	}
	pairs := p["nodes"].(map[string]any)
	prof, err := e.store.GetProfile(ctx, cl.ProfileID)
	if err != nil {
		return nil, err
	}
	out := map[string]string{}
	used := map[string]bool{}
	keys := make([]string, 0, len(pairs))
	for k := range pairs {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, oldIdent := range keys {
		newIdent, ok := pairs[oldIdent].(string)
		if !ok {
			return nil, BadRequest("replace_nodes.nodes.%s must name the replacement node.", oldIdent)
		}
		old, err := e.store.FindNode(ctx, c.Project, oldIdent)
		if err != nil {
			return nil, bodyRef("replace_nodes.nodes", err)
		}
		nw, err := e.store.FindNode(ctx, c.Project, newIdent)
		if err != nil {
			return nil, bodyRef("replace_nodes.nodes", err)
		}
		if old.ClusterID != cl.ID {
			return nil, BadRequest("replace_nodes.nodes: the node '%s' is not a member of cluster '%s'.", old.Name, cl.Name)
		}
		if nw.ClusterID != "" {
			return nil, BadRequest("replace_nodes.nodes: the replacement node '%s' is already a member of a cluster.", nw.Name)
		}
		if nw.Status != model.NodeActive {
			return nil, BadRequest("replace_nodes.nodes: the replacement node '%s' is %s; it must be ACTIVE.", nw.Name, nw.Status)
		}
		np, err := e.store.GetProfile(ctx, nw.ProfileID)
		if err != nil {
			return nil, err
		}
		if np.Type != prof.Type {
			return nil, BadRequest("replace_nodes.nodes: the replacement node '%s' has profile type %s but the cluster's is %s.", nw.Name, np.Type, prof.Type)
		}
		if used[nw.ID] {
			return nil, BadRequest("replace_nodes.nodes: the node '%s' replaces two nodes.", nw.Name)
		}
		used[nw.ID] = true
		out[old.ID] = nw.ID
	}
	return &model.ClusterReplaceNodesInputs{Candidates: out}, nil
}

// resizeInputs applies the API-layer resize checks in Senlin's order.
func (e *Engine) resizeInputs(ctx context.Context, cl *model.Cluster, p map[string]any) (*model.ClusterResizeInputs, error) {
	if err := checkActionParams("resize", "resize", p); err != nil {
		return nil, err
	}
	typ, hasType := p["adjustment_type"]
	num, hasNum := p["number"]
	_, hasMin := p["min_size"]
	_, hasMax := p["max_size"]
	if !hasType && !hasNum && !hasMin && !hasMax {
		return nil, BadRequest("Not enough parameters to do resize action.")
	}
	if hasType {
		if !hasNum {
			return nil, BadRequest("Missing number value for size adjustment.")
		}
	} else if hasNum {
		return nil, BadRequest("Missing adjustment_type value for size adjustment.")
	}
	r, err := scaling.ResizeFromInputs(p)
	if err != nil {
		return nil, BadRequest("resize.%s.", err)
	}
	if r.MinSize != nil && *r.MinSize < 0 {
		return nil, BadRequest("resize.min_size must be a non-negative integer, got %d.", *r.MinSize)
	}
	if r.MaxSize != nil && *r.MaxSize < -1 {
		return nil, BadRequest("resize.max_size must be at least -1, got %d.", *r.MaxSize)
	}
	if r.MinSize != nil && r.MaxSize != nil && *r.MaxSize > 0 && *r.MinSize > *r.MaxSize {
		return nil, BadRequest("The specified min_size (%d) is greater than the specified max_size (%d).", *r.MinSize, *r.MaxSize)
	}
	if hasType {
		if typ == scaling.ExactCapacity && *r.Number < 0 {
			return nil, BadRequest("The 'number' must be non-negative integer for adjustment type 'EXACT_CAPACITY'.")
		}
		if typ != scaling.ChangeInPercentage && *r.Number != float64(int(*r.Number)) {
			return nil, BadRequest("resize.number must be an integer for adjustment type '%s', got %v.", typ, num)
		}
	}
	count, err := e.store.CountNodes(ctx, cl.ID)
	if err != nil {
		return nil, err
	}
	var desired *int
	if hasType {
		d := scaling.CalculateDesired(count, r.AdjustmentType, *r.Number, r.MinStep)
		desired = &d
	}
	b := scaling.Bounds{Desired: cl.DesiredCapacity, Min: cl.MinSize, Max: cl.MaxSize}
	if r.Strict {
		if msg := scaling.CheckSizeParams(&b, desired, r.MinSize, r.MaxSize, true, e.cfg.MaxNodesPerCluster); msg != "" {
			return nil, BadRequest("%s", msg)
		}
	}
	// The values are stored as read: a numeric string the client sent is
	// stored as its number.
	in := &model.ClusterResizeInputs{Number: r.Number, MinSize: r.MinSize, MaxSize: r.MaxSize, Strict: r.Strict}
	if hasType {
		in.AdjustmentType = &r.AdjustmentType
	}
	if _, ok := p["min_step"]; ok && r.AdjustmentType == scaling.ChangeInPercentage && p["min_step"] != nil {
		in.MinStep = &r.MinStep
	}
	return in, nil
}

func (e *Engine) scaleInputs(ctx context.Context, cl *model.Cluster, name string, p map[string]any) (*model.ClusterScaleInputs, error) {
	if err := checkActionParams(name, name, p); err != nil {
		return nil, err
	}
	v, ok := p["count"]
	if !ok || v == nil {
		return &model.ClusterScaleInputs{}, nil
	}
	n, err := intParam(name+".count", v, 1, MaxCount)
	if err != nil {
		return nil, err
	}
	count, err := e.store.CountNodes(ctx, cl.ID)
	if err != nil {
		return nil, err
	}
	desired := count + n
	if name == "scale_in" {
		desired = count - n
	}
	b := scaling.Bounds{Desired: cl.DesiredCapacity, Min: cl.MinSize, Max: cl.MaxSize}
	if msg := scaling.CheckSizeParams(&b, &desired, nil, nil, false, e.cfg.MaxNodesPerCluster); msg != "" {
		return nil, BadRequest("%s", msg)
	}
	return &model.ClusterScaleInputs{Count: &n}, nil
}

func (e *Engine) policyInputs(ctx context.Context, c Caller, cl *model.Cluster, name string, p map[string]any) (string, any, error) {
	if err := checkActionParams(name, name, p); err != nil {
		return "", nil, err
	}
	ident, _ := p["policy_id"].(string)
	if ident == "" {
		return "", nil, BadRequest("%s.policy_id is required.", name)
	}
	pol, err := e.store.FindPolicy(ctx, c.Project, ident)
	if err != nil {
		return "", nil, bodyRef(name+".policy_id", err)
	}
	var enabled *bool
	var priority *int
	if v, ok := p["enabled"]; ok && name != "policy_detach" {
		b, err := scaling.Bool(v)
		if err != nil {
			return "", nil, BadRequest("%s.enabled must be a boolean.", name)
		}
		enabled = &b
	}
	if v, ok := p["priority"]; ok && name != "policy_detach" {
		n, err := intParam(name+".priority", v, 0, MaxCount)
		if err != nil {
			return "", nil, err
		}
		priority = &n
	}
	_, bindErr := e.store.GetBinding(ctx, cl.ID, pol.ID)
	attached := bindErr == nil
	switch name {
	case "policy_attach":
		if !attached {
			if _, ok := e.plugins.Component("policy", pol.Type); !ok {
				return "", nil, BadRequest("policy_attach.policy_id: no plugin provides the policy type %s.", pol.Type)
			}
			bs, err := e.store.ListBindings(ctx, cl.ID)
			if err != nil {
				return "", nil, err
			}
			for _, b := range bs {
				other, err := e.store.GetPolicy(ctx, b.PolicyID)
				if err == nil && other.Type == pol.Type {
					return "", nil, BadRequest("policy_attach.policy_id: the cluster already has a %s policy ('%s'); a cluster takes at most one policy of a type.", pol.Type, other.Name)
				}
			}
		}
		return model.ClusterAttachPolicyAction, model.ClusterAttachPolicyInputs{PolicyID: pol.ID, Enabled: enabled, Priority: priority}, nil
	case "policy_detach":
		if !attached {
			return "", nil, BadRequest("The policy '%s' is not attached to the specified cluster '%s'.", pol.Name, cl.Name)
		}
		return model.ClusterDetachPolicyAction, model.ClusterDetachPolicyInputs{PolicyID: pol.ID}, nil
	}
	if !attached {
		return "", nil, BadRequest("The policy '%s' is not attached to the specified cluster '%s'.", pol.Name, cl.Name)
	}
	if enabled == nil && priority == nil {
		return "", nil, BadRequest("policy_update needs enabled or priority.")
	}
	return model.ClusterUpdatePolicyAction, model.ClusterUpdatePolicyInputs{PolicyID: pol.ID, Enabled: enabled, Priority: priority}, nil
}

// recoverInputs reads the parameters of a cluster's or a node's recover,
// of which allowed are the ones its kind takes.
func recoverInputs(p map[string]any, allowed []string) (*model.RecoverInputs, error) {
	if err := (actionParams{rules: pick(recoverParamRules, allowed...)}).check("recover", "recover", p); err != nil {
		return nil, err
	}
	// Judged above: what follows converts.
	in := &model.RecoverInputs{}
	if op, ok := p["operation"]; ok {
		in.Operation = strings.ToUpper(op.(string))
	}
	if m, ok := p["operation_params"].(map[string]any); ok {
		in.OperationParams = m
	}
	for k, dst := range map[string]**bool{"check": &in.Check, "check_capacity": &in.CheckCapacity, "force_recreate": &in.ForceRecreate} {
		if v, ok := p[k]; ok {
			b, _ := scaling.Bool(v)
			*dst = &b
		}
	}
	if v, ok := p["delete_timeout"]; ok && v != nil {
		n, _ := intParam("recover.delete_timeout", v, 0, MaxTimeout)
		in.DeleteTimeout = &n
	}
	return in, nil
}

// pausedUpdateInputs turns a paused rolling update into the inputs of the
// CLUSTER_UPDATE that resumes it or rolls it back (Grove's extension of the
// cluster actions).
func pausedUpdateInputs(cl *model.Cluster, name string) (*model.ClusterUpdateInputs, error) {
	u, ok, err := updateProgressOf(cl)
	if err != nil {
		return nil, err
	}
	if !ok || u.Status != api.UpdatePaused {
		return nil, BadRequest("%s: the cluster '%s' has no paused update.", name, cl.Name)
	}
	yes := true
	switch {
	case name == "update_resume":
		return &model.ClusterUpdateInputs{NewProfileID: u.Target, PreviousProfileID: u.Previous, RollingBack: &u.RollingBack}, nil
	case u.RollingBack:
		// Rolling back a paused rollback means finishing it.
		return &model.ClusterUpdateInputs{NewProfileID: u.Target, PreviousProfileID: u.Previous, RollingBack: &yes}, nil
	}
	return &model.ClusterUpdateInputs{NewProfileID: u.Previous, PreviousProfileID: u.Target, RollingBack: &yes}, nil
}

// lockFree says whether an action is one of the monitor commands: they
// take no cluster lock and retry lost versioned writes, so they are not
// held up by a running action (a freeze is most wanted while the monitors
// are moving the cluster, and an expectation only writes a row).
func lockFree(action string) bool {
	switch action {
	case model.ClusterFreezeAction, model.ClusterThawAction, model.ClusterClearAction,
		model.ClusterExpectStartAction, model.ClusterExpectStopAction, model.ClusterSwitchAction, model.ClusterGivebackAction:
		return true
	}
	return false
}
