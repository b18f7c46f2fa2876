package engine

import (
	"context"
	"fmt"
	"reflect"
	"strings"
	"time"

	"github.com/grovehq/grove/core/model"
	"github.com/grovehq/grove/core/store"
	"github.com/grovehq/grove/plugins/host"
	"github.com/grovehq/grove/plugins/sdk"
)

// specFor returns the spec a driver gets for a profile.
func (e *Engine) specFor(ctx context.Context, profileID string) (sdk.Spec, error) {
	// Every batch of node actions reads its profile and cluster: from the
	// read pool (SQLite), not in the writer's queue.
	prof, err := store.ReadsOf(e.store).GetProfile(ctx, profileID)
	if err != nil {
		return sdk.Spec{}, err
	}
	props, err := e.openProfile(prof)
	if err != nil {
		return sdk.Spec{}, err
	}
	return sdk.Spec{ID: prof.ID, Name: prof.Name, Type: prof.Type, Version: prof.Version, Properties: props}, nil
}

func (e *Engine) sdkNodes(ctx context.Context, nodes []*model.Node) []sdk.Node {
	names := map[string]string{}
	out := make([]sdk.Node, len(nodes))
	for i, n := range nodes {
		cname, ok := names[n.ClusterID]
		if !ok && n.ClusterID != "" {
			if cl, err := store.ReadsOf(e.store).GetCluster(ctx, n.ClusterID); err == nil {
				cname = cl.Name
			}
			names[n.ClusterID] = cname
		}
		out[i] = sdk.Node{ID: n.ID, Name: n.Name, Index: n.Index, ClusterID: n.ClusterID, ClusterName: cname, PhysicalID: n.PhysicalID,
			State: n.State, Data: n.Data, Metadata: n.Metadata}
	}
	return out
}

// callDriver makes a batch call to the driver of a profile type, retrying
// with a short backoff when the whole call failed in a retryable way (a
// plugin restarting after a crash). Each attempt asks the host for the
// current client, since a restarted plugin has a new connection.
func (e *Engine) callDriver(ctx context.Context, typ, what string, call func(c *sdk.Client) ([]sdk.Result, error)) ([]sdk.Result, error) {
	delay := 200 * time.Millisecond
	for attempt := 1; ; attempt++ {
		client, _, err := e.plugins.Client(ctx, "profile", typ)
		var res []sdk.Result
		if err == nil {
			res, err = call(client)
		}
		if err == nil || !host.IsRetryable(err) || attempt >= 5 {
			return res, err
		}
		e.logger(ctx).Warn("driver call failed; retrying", "call", what, "attempt", attempt, "error", err)
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(delay):
		}
		delay *= 2
	}
}

// setStatus moves nodes to a transitional status before a driver call, so a
// crash leaves a trace the start-up reconciliation can act on.
func (e *Engine) setStatus(ctx context.Context, nodes []*model.Node, status, reason string) error {
	for _, n := range nodes {
		n.Status, n.StatusReason = status, reason
	}
	return e.store.SetNodeStatus(ctx, nodeIDs(nodes), status, reason)
}

// outcome classifies one node's result of a batch call: the whole call
// failed, the driver forgot the node, or the node failed.
func outcome(verb string, n *model.Node, r sdk.Result, ok bool, callErr error) error {
	switch {
	case callErr != nil:
		return fmt.Errorf("Failed in %s node %s: %w", verb, n.Name, callErr)
	case !ok:
		return fmt.Errorf("Failed in %s node %s: the driver returned no result for it", verb, n.Name)
	case r.Err != nil:
		return fmt.Errorf("Failed in %s node %s: %w", verb, n.Name, r.Err)
	}
	return nil
}

// resultsByID indexes a batch's results by node id. A node the driver
// answered for more than once gets its first result with an error in
// place of its outcome: which answer is true cannot be told, and taking
// the last one silently could record a success that did not happen.
func resultsByID(res []sdk.Result) map[string]sdk.Result {
	m := make(map[string]sdk.Result, len(res))
	var count map[string]int // results per node, kept only for nodes answered twice
	for _, r := range res {
		first, again := m[r.ID]
		if !again {
			m[r.ID] = r
			continue
		}
		if count == nil {
			count = map[string]int{}
		}
		count[r.ID] = max(count[r.ID], 1) + 1
		first.Err = fmt.Errorf("the driver returned %d results for it; one was expected", count[r.ID])
		m[r.ID] = first
	}
	return m
}

// claimShared fails the nodes of a batch whose result names a physical id
// that another node of the batch, or a node of another batch of the same
// profile type, already holds: two nodes on one resource would both act
// on it, and deleting either would destroy the other's resource (the rule
// adoption keeps, in checkUnowned). Such a node keeps none of its result,
// so that nothing done to it later reaches the other node's resource.
func (e *Engine) claimShared(ctx context.Context, typ string, nodes []*model.Node, byID map[string]sdk.Result, out map[string]error, verb string) {
	holder := map[string]*model.Node{}
	var pids []string
	for _, n := range nodes {
		r, ok := byID[n.ID]
		if !ok || r.Err != nil || r.PhysicalID == "" || out[n.ID] != nil {
			continue
		}
		if h := holder[r.PhysicalID]; h != nil {
			out[n.ID] = fmt.Errorf("Failed in %s node %s: the driver returned physical id %q, which node %s of the same call also got; two nodes cannot hold one resource",
				verb, n.Name, r.PhysicalID, h.Name)
			delete(byID, n.ID)
			continue
		}
		holder[r.PhysicalID] = n
		pids = append(pids, r.PhysicalID)
	}
	if len(pids) == 0 {
		return
	}
	held, err := store.ReadsOf(e.store).PhysicalHolders(ctx, pids)
	if err != nil {
		// The driver did its work: a failed read must not undo it, and
		// the start-up reconciliation has no better answer.
		e.logger(ctx).Warn("cannot check the physical ids a driver returned against other nodes", "error", err)
		return
	}
	inBatch := make(map[string]bool, len(nodes))
	for _, n := range nodes {
		inBatch[n.ID] = true
	}
	for _, other := range held {
		// A node whose profile is gone counts as one of this type:
		// refusing is the safe mistake.
		if inBatch[other.NodeID] || other.ProfileType != "" && other.ProfileType != typ {
			continue
		}
		n := holder[other.PhysicalID]
		if n == nil || out[n.ID] != nil {
			continue
		}
		out[n.ID] = fmt.Errorf("Failed in %s node %s: the driver returned physical id %q, which node %s (id %s) already holds; two nodes cannot hold one resource",
			verb, n.Name, other.PhysicalID, other.Name, other.NodeID)
		delete(byID, n.ID)
	}
}

func failAll(nodes []*model.Node, err error) map[string]error {
	out := map[string]error{}
	for _, n := range nodes {
		out[n.ID] = err
	}
	return out
}

func (e *Engine) createNodes(ctx context.Context, nodes []*model.Node) map[string]error {
	spec, err := e.specFor(ctx, nodes[0].ProfileID)
	if err != nil {
		return failAll(nodes, fmt.Errorf("Failed in creating node: %w", err))
	}
	if err := e.setStatus(ctx, nodes, model.NodeCreating, "Creation in progress"); err != nil {
		return failAll(nodes, err)
	}
	res, err := e.callDriver(ctx, spec.Type, "create", func(c *sdk.Client) ([]sdk.Result, error) {
		return c.Batch(ctx, sdk.CallCreate, spec, e.sdkNodes(ctx, nodes))
	})
	out := map[string]error{}
	byID := resultsByID(res)
	if err == nil {
		e.claimShared(ctx, spec.Type, nodes, byID, out, "creating")
	}
	now := e.cfg.Now()
	for _, n := range nodes {
		r, ok := byID[n.ID]
		if out[n.ID] == nil {
			if err := outcome("creating", n, r, ok, err); err != nil {
				out[n.ID] = err
			}
		}
		if ok {
			applyResult(n, r)
		}
		n.UpdatedAt = &now
		if out[n.ID] != nil {
			n.Status, n.StatusReason = model.NodeError, out[n.ID].Error()
			continue
		}
		n.Status, n.StatusReason, n.CreatedAt = model.NodeActive, "Creation succeeded", &now
	}
	if uerr := e.recordResults(ctx, nodes); uerr != nil {
		return failAll(nodes, uerr)
	}
	return out
}

// recordNodes writes the nodes' state after a driver call, also when the
// call was cut short by the action's context: the nodes must not stay in the
// transitional status set before the call.
func (e *Engine) recordNodes(ctx context.Context, nodes []*model.Node) error {
	ctx, cancel := detached(ctx)
	defer cancel()
	return e.store.UpdateNodes(ctx, nodes)
}

// recordResults is recordNodes for a call that changed only what a driver
// decides (applyResult, status, times): a create.
func (e *Engine) recordResults(ctx context.Context, nodes []*model.Node) error {
	ctx, cancel := detached(ctx)
	defer cancel()
	return e.store.RecordNodeResults(ctx, nodes)
}

func applyResult(n *model.Node, r sdk.Result) {
	if r.PhysicalID != "" {
		n.PhysicalID = r.PhysicalID
	}
	if r.State != nil {
		n.State = r.State
	}
	// The driver's data is merged in: keys the engine keeps in node data
	// (restart history, placement) survive drivers that return only theirs.
	if r.Data != nil {
		if n.Data == nil {
			n.Data = map[string]any{}
		}
		for k, v := range r.Data {
			n.Data[k] = v
		}
	}
}

// refreshData merges the data a check returned into the node's, as
// applyResult does, and says whether any value changed: a driver's check
// keeps what node data says of the thing (a VM's host, its addresses) true.
func refreshData(n *model.Node, data map[string]any) bool {
	changed := false
	for k, v := range data {
		if old, ok := n.Data[k]; ok && reflect.DeepEqual(old, v) {
			continue
		}
		if n.Data == nil {
			n.Data = map[string]any{}
		}
		n.Data[k] = v
		changed = true
	}
	return changed
}

func (e *Engine) deleteNodes(ctx context.Context, nodes []*model.Node) map[string]error {
	spec, err := e.specFor(ctx, nodes[0].ProfileID)
	if err != nil {
		return failAll(nodes, fmt.Errorf("Failed in deleting node: %w", err))
	}
	if err := e.setStatus(ctx, nodes, model.NodeDeleting, "Deletion in progress"); err != nil {
		return failAll(nodes, err)
	}
	res, err := e.callDriver(ctx, spec.Type, "delete", func(c *sdk.Client) ([]sdk.Result, error) {
		return c.Batch(ctx, sdk.CallDelete, spec, e.sdkNodes(ctx, nodes))
	})
	out := map[string]error{}
	byID := resultsByID(res)
	var gone []string
	var failed []*model.Node
	for _, n := range nodes {
		r, ok := byID[n.ID]
		// A node the driver gave no result for is not known to be gone:
		// dropping its row would leave its resource with nothing to
		// delete it by.
		out[n.ID] = outcome("deleting", n, r, ok, err)
		if out[n.ID] != nil {
			n.Status, n.StatusReason = model.NodeError, out[n.ID].Error()
			failed = append(failed, n)
			continue
		}
		delete(out, n.ID)
		gone = append(gone, n.ID)
	}
	bg, cancel := detached(ctx)
	defer cancel()
	if derr := e.store.DeleteNodes(bg, gone); derr != nil {
		return failAll(nodes, derr)
	}
	if uerr := e.store.UpdateNodes(bg, failed); uerr != nil {
		return failAll(nodes, uerr)
	}
	return out
}

// updateNodes updates nodes that share a profile and a new profile; updates
// holds each node's inputs.
func (e *Engine) updateNodes(ctx context.Context, nodes []*model.Node, updates map[string]model.NodeUpdateInputs) map[string]error {
	newProfile := updates[nodes[0].ID].NewProfileID
	now := e.cfg.Now()
	apply := func(n *model.Node) {
		in := updates[n.ID]
		if in.Name != nil {
			n.Name = *in.Name
		}
		if in.Role != nil {
			n.Role = *in.Role
		}
		if in.Metadata != nil {
			n.Metadata = in.Metadata
		}
		if in.Tainted != nil {
			n.Tainted = *in.Tainted
		}
		n.UpdatedAt = &now
	}
	if newProfile == "" {
		for _, n := range nodes {
			apply(n)
		}
		if err := e.store.UpdateNodes(ctx, nodes); err != nil {
			return failAll(nodes, err)
		}
		return map[string]error{}
	}
	oldSpec, err := e.specFor(ctx, nodes[0].ProfileID)
	if err != nil {
		return failAll(nodes, err)
	}
	newSpec, err := e.specFor(ctx, newProfile)
	if err != nil {
		return failAll(nodes, err)
	}
	if err := e.setStatus(ctx, nodes, model.NodeUpdating, "Update in progress"); err != nil {
		return failAll(nodes, err)
	}
	res, err := e.callDriver(ctx, newSpec.Type, "update", func(c *sdk.Client) ([]sdk.Result, error) {
		return c.Update(ctx, oldSpec, newSpec, e.sdkNodes(ctx, nodes))
	})
	out := map[string]error{}
	byID := resultsByID(res)
	for _, n := range nodes {
		r, ok := byID[n.ID]
		if err := outcome("updating", n, r, ok, err); err != nil {
			out[n.ID] = err
		}
		if ok {
			applyResult(n, r)
		}
		apply(n)
		if out[n.ID] != nil {
			n.Status, n.StatusReason = model.NodeError, out[n.ID].Error()
			continue
		}
		n.ProfileID, n.Status, n.StatusReason = newProfile, model.NodeActive, "Update succeeded"
	}
	if uerr := e.recordNodes(ctx, nodes); uerr != nil {
		return failAll(nodes, uerr)
	}
	return out
}

// checkNodes asks the driver whether nodes are healthy and records the
// answer. With failUnhealthy an unhealthy node fails its action, as Senlin's
// NODE_CHECK does.
func (e *Engine) checkNodes(ctx context.Context, nodes []*model.Node, failUnhealthy bool) map[string]error {
	spec, err := e.specFor(ctx, nodes[0].ProfileID)
	if err != nil {
		return failAll(nodes, err)
	}
	res, err := e.callDriver(ctx, spec.Type, "check", func(c *sdk.Client) ([]sdk.Result, error) {
		return c.Batch(ctx, sdk.CallCheck, spec, e.sdkNodes(ctx, nodes))
	})
	if err != nil {
		return failAll(nodes, fmt.Errorf("Failed in checking nodes: %w", err))
	}
	out := map[string]error{}
	byID := resultsByID(res)
	now := e.cfg.Now()
	for _, n := range nodes {
		r, ok := byID[n.ID]
		n.UpdatedAt = &now
		if ok && r.Err == nil {
			refreshData(n, r.Data)
		}
		switch {
		case !ok:
			// No answer is not an unhealthy answer: the node is left as
			// it was, and the check fails saying why.
			out[n.ID] = fmt.Errorf("Failed in checking node %s: the driver returned no result for it", n.Name)
		case r.Err != nil:
			out[n.ID] = fmt.Errorf("Failed in checking node %s: %w", n.Name, r.Err)
		case r.Healthy:
			if n.Status != model.NodeWarning {
				n.Status = model.NodeActive
			}
			n.StatusReason = "Check: Node is ACTIVE."
		default:
			n.Status, n.StatusReason = model.NodeError, "Check: Node is not ACTIVE: "+r.Reason
			if failUnhealthy {
				out[n.ID] = fmt.Errorf("Node check failed: node %s is not ACTIVE: %s", n.Name, r.Reason)
			}
		}
	}
	if uerr := e.recordNodes(ctx, nodes); uerr != nil {
		return failAll(nodes, uerr)
	}
	return out
}

func (e *Engine) recoverNodes(ctx context.Context, nodes []*model.Node, in model.RecoverInputs) map[string]error {
	out := map[string]error{}
	todo := nodes
	if in.Check != nil && *in.Check {
		res := e.checkNodes(ctx, nodes, false)
		todo = nil
		for _, n := range nodes {
			if res[n.ID] != nil {
				out[n.ID] = res[n.ID]
			} else if n.Status != model.NodeActive && n.Status != model.NodeWarning {
				todo = append(todo, n)
			}
		}
	}
	if len(todo) == 0 {
		return out
	}
	spec, err := e.specFor(ctx, todo[0].ProfileID)
	if err != nil {
		return failAll(todo, err)
	}
	op, params := in.Operation, in.OperationParams
	if op == "" {
		op = "RECREATE"
	}
	if err := e.setStatus(ctx, todo, model.NodeRecovering, "Recovery in progress"); err != nil {
		return failAll(todo, err)
	}
	res, err := e.callDriver(ctx, spec.Type, "recover", func(c *sdk.Client) ([]sdk.Result, error) {
		return c.Recover(ctx, spec, e.sdkNodes(ctx, todo), op, params)
	})
	byID := resultsByID(res)
	if err == nil {
		e.claimShared(ctx, spec.Type, todo, byID, out, "recovering")
	}
	now := e.cfg.Now()
	for _, n := range todo {
		r, ok := byID[n.ID]
		oldPhysical := n.PhysicalID
		if out[n.ID] == nil {
			if err := outcome("recovering", n, r, ok, err); err != nil {
				out[n.ID] = err
			}
		}
		if ok {
			applyResult(n, r)
		}
		n.UpdatedAt = &now
		if out[n.ID] != nil {
			n.Status, n.StatusReason = model.NodeError, out[n.ID].Error()
			continue
		}
		n.Status, n.StatusReason = model.NodeActive, "Recovery succeeded"
		if n.PhysicalID != oldPhysical {
			n.Data["recovery"] = strings.ToUpper(op)
		}
	}
	if uerr := e.recordNodes(ctx, todo); uerr != nil {
		return failAll(todo, uerr)
	}
	return out
}
