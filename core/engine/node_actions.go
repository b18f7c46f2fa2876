package engine

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/grovehq/grove/core/model"
	"github.com/grovehq/grove/core/store"
)

// runNodeBatch runs derived node actions of one parent and one kind with
// as few driver calls as possible.
func (e *Engine) runNodeBatch(parent context.Context, actions []*model.Action) {
	parent = context.WithValue(parent, logKey{}, e.batchLog(actions))
	ctx, stop := context.WithCancelCause(parent)
	defer stop(nil)
	cancel := func() { stop(errCancelled) }
	var live []*model.Action
	for _, a := range actions {
		e.track(a.ID, cancel)
		defer e.untrack(a.ID)
		if a.Control == model.SignalCancel {
			e.finish(parent, a, errCancelled)
			continue
		}
		live = append(live, a)
	}
	if len(live) == 0 {
		return
	}
	outcomes := e.execNodes(ctx, live)
	if parent.Err() != nil {
		return // stopping: the leases expire and the batch is reclaimed
	}
	for id, err := range outcomes {
		outcomes[id] = stoppedBy(ctx, err)
	}
	e.finishBatch(parent, live, outcomes)
}

// finishBatch records the results of a node batch in one transaction.
func (e *Engine) finishBatch(parent context.Context, actions []*model.Action, outcomes map[string]error) {
	ctx, cancel := detached(parent)
	defer cancel()
	now := e.cfg.Now()
	var events []*model.Event
	for _, a := range actions {
		a.EndTime, a.UpdatedAt, a.Owner = float64(now.UnixMicro())/1e6, &now, ""
		err, level, phase := outcomes[a.Target], model.LevelInfo, "end"
		switch {
		case err == nil:
			a.Status, a.StatusReason = model.ActionSucceeded, "Action completed successfully."
		case errors.Is(err, errCancelled) || errors.Is(err, context.Canceled):
			a.Status, a.StatusReason, level, phase = model.ActionCancelled, "The action was cancelled.", model.LevelWarning, "error"
		default:
			a.Status, a.StatusReason, level, phase = model.ActionFailed, err.Error(), model.LevelError, "error"
		}
		events = append(events, &model.Event{ID: e.rowID(), Timestamp: now, OID: a.Target, OType: "NODE", ClusterID: a.ClusterID, User: a.User,
			Project: a.Project, Action: a.Action, Status: phase, StatusReason: a.StatusReason, Level: level, MetaData: map[string]any{"action": a.ID}})
	}
	// Actions that ended the same way are finished in one statement.
	type outcome struct{ status, reason string }
	groups := map[outcome][]string{}
	for _, a := range actions {
		k := outcome{a.Status, a.StatusReason}
		groups[k] = append(groups[k], a.ID)
	}
	err := e.store.InTx(ctx, func(tx store.Store) error {
		for k, ids := range groups {
			if err := tx.FinishActions(ctx, ids, k.status, k.reason, now); err != nil {
				return err
			}
		}
		return tx.CreateEvents(ctx, events)
	})
	if err != nil {
		e.logger(ctx).Error("record node batch results", "error", err)
	}
	for _, a := range actions {
		e.cfg.Metrics.finished(a)
		e.actionLog(a).Debug("action finished", "status", a.Status, "reason", a.StatusReason, "took", sinceStart(a, now).String())
	}
	parents := map[string]bool{}
	for _, a := range actions {
		parents[a.ParentID] = true
	}
	for p := range parents {
		e.notifyParent(p)
	}
}

// execNodes performs one kind of node action on a batch and updates the
// node rows. It returns each node's failure (nil for success) by node id.
func (e *Engine) execNodes(ctx context.Context, actions []*model.Action) map[string]error {
	out := map[string]error{}
	ids := make([]string, len(actions))
	byNode := map[string]*model.Action{}
	for i, a := range actions {
		ids[i] = a.Target
		byNode[a.Target] = a
	}
	// Read where reads wait for no write (SQLite's read pool): the claim
	// that handed these actions over has committed, and the writer's one
	// connection is the engine's busiest resource during a large create.
	nodes, err := store.ReadsOf(e.store).GetNodes(ctx, ids)
	if err != nil {
		for _, id := range ids {
			out[id] = err
		}
		return out
	}
	found := map[string]bool{}
	for _, n := range nodes {
		found[n.ID] = true
	}
	for _, id := range ids {
		if !found[id] {
			if actions[0].Action == model.NodeDeleteAction {
				out[id] = nil // already gone: deletion is idempotent
			} else {
				out[id] = fmt.Errorf("The node '%s' could not be found.", id)
			}
		}
	}
	// The store hands this agent another host's node action only when
	// that host is down: nothing here can reach the node's process.
	kept, err := e.offHost(ctx, actions[0].Action, nodes, out)
	if err != nil {
		for _, id := range ids {
			out[id] = err
		}
		return out
	}
	nodes = kept
	// Each action's inputs are read once; an action whose inputs cannot be
	// read fails alone.
	updates := map[string]model.NodeUpdateInputs{}
	recovers := map[string]model.RecoverInputs{}
	operations := map[string]model.OperationInputs{}
	var readable []*model.Node
	for _, n := range nodes {
		var err error
		switch a := byNode[n.ID]; a.Action {
		case model.NodeUpdateAction:
			updates[n.ID], err = inputsOf[model.NodeUpdateInputs](a)
		case model.NodeRecoverAction:
			recovers[n.ID], err = inputsOf[model.RecoverInputs](a)
		case model.NodeOperationAction:
			operations[n.ID], err = inputsOf[model.OperationInputs](a)
		}
		if err != nil {
			out[n.ID] = err
			continue
		}
		readable = append(readable, n)
	}
	// Nodes of one batch share a parent but may differ in profile (update,
	// recover after a profile_only change): one driver call per profile.
	groups := map[string][]*model.Node{}
	var order []string
	for _, n := range readable {
		key := n.ProfileID
		if in, ok := updates[n.ID]; ok {
			key += "->" + in.NewProfileID
		}
		if in, ok := operations[n.ID]; ok {
			key += "/" + in.Operation // children of one parent share it; a batch may not
		}
		if _, ok := groups[key]; !ok {
			order = append(order, key)
		}
		groups[key] = append(groups[key], n)
	}
	for _, key := range order {
		group := groups[key]
		var res map[string]error
		switch actions[0].Action {
		case model.NodeCreateAction:
			res = e.createNodes(ctx, group)
		case model.NodeDeleteAction:
			res = e.deleteNodes(ctx, group)
		case model.NodeUpdateAction:
			res = e.updateNodes(ctx, group, updates)
		case model.NodeCheckAction:
			res = e.checkNodes(ctx, group, true)
		case model.NodeRecoverAction:
			res = e.recoverNodes(ctx, group, recovers[group[0].ID])
		case model.NodeOperationAction:
			res = e.operateNodes(ctx, group, operations[group[0].ID])
		default:
			err := fmt.Errorf("unknown node action %s", actions[0].Action)
			res = map[string]error{}
			for _, n := range group {
				res[n.ID] = err
			}
		}
		for k, v := range res {
			out[k] = v
		}
	}
	return out
}

// placeNode gives a member's creation the placement a policy decided
// (data.placement, an affinity policy's server group or host), as a
// cluster's creations get theirs in forkCreateWith.
func (e *Engine) placeNode(ctx context.Context, a *model.Action, n *model.Node) error {
	if a.Action != model.NodeCreateAction {
		return nil
	}
	pl, _, err := dataOf[model.PlacementData](a, model.DataPlacement)
	if err != nil || len(pl.Placements) == 0 {
		return err
	}
	if n.Data == nil {
		n.Data = map[string]any{}
	}
	n.Data["placement"] = pl.Placements[0]
	return e.store.UpdateNodes(ctx, []*model.Node{n})
}

// doNodeRPC runs a node action a user asked for: it takes the node's locks,
// runs the cluster's policies when the node is a member, and keeps the
// cluster's desired capacity in step with creations and deletions.
func (e *Engine) doNodeRPC(ctx context.Context, a *model.Action) error {
	n, err := e.store.GetNode(ctx, a.Target)
	if err != nil {
		if a.Action == model.NodeDeleteAction && errors.Is(err, store.ErrNotFound) {
			return nil
		}
		return err
	}
	a.ClusterID = n.ClusterID
	if n.ClusterID != "" {
		if err := e.lock(ctx, func() (bool, error) { return e.store.AcquireClusterLock(ctx, n.ClusterID, a.ID, store.LockNode) }); err != nil {
			return err
		}
		if err := e.checkPolicies(ctx, a, n.ClusterID, PhaseBefore); err != nil {
			return err
		}
		if err := e.placeNode(ctx, a, n); err != nil {
			return err
		}
	}
	if err := e.lock(ctx, func() (bool, error) { return e.store.AcquireNodeLock(ctx, n.ID, a.ID) }); err != nil {
		return err
	}
	// A deletion policy decides a member's deletion (data.deletion).
	del, _, err := dataOf[model.DeletionData](a, model.DataDeletion)
	if err != nil {
		return err
	}
	if a.Action == model.NodeDeleteAction && n.ClusterID != "" && del.GracePeriod > 0 {
		if err := sleepCtx(ctx, time.Duration(del.GracePeriod)*time.Second); err != nil {
			return err
		}
	}
	res := e.execNodes(ctx, []*model.Action{a})
	if err := res[n.ID]; err != nil {
		return err
	}
	if n.ClusterID == "" {
		return nil
	}
	if err := e.checkPolicies(ctx, a, n.ClusterID, PhaseAfter); err != nil {
		return err
	}
	switch a.Action {
	case model.NodeCreateAction:
		return e.settle(ctx, n.ClusterID, a.Action, func(cl *model.Cluster, count int) { cl.DesiredCapacity = count }, nil)
	case model.NodeDeleteAction:
		return e.settle(ctx, n.ClusterID, a.Action, func(cl *model.Cluster, count int) {
			if del.Reduce() {
				cl.DesiredCapacity = count
			}
		}, nil)
	case model.NodeRecoverAction, model.NodeCheckAction, model.NodeUpdateAction, model.NodeOperationAction:
		return e.settle(ctx, n.ClusterID, a.Action, nil, nil)
	}
	return nil
}
