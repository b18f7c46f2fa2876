package engine

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/grovehq/grove/api"
	"github.com/grovehq/grove/core/model"
	"github.com/grovehq/grove/core/orchestrator"
	"github.com/grovehq/grove/core/store"
	"github.com/grovehq/grove/plugins/sdk"
)

// A rolling update's progress (api.UpdateProgress) lives in the action's
// data (so a reclaimed action resumes) and is mirrored in the cluster's data
// under "update" (so `grove cluster status` shows it).

// updateProgressOf reads the progress of a cluster's last rolling update.
func updateProgressOf(cl *model.Cluster) (api.UpdateProgress, bool, error) {
	var u api.UpdateProgress
	raw, ok := cl.Data["update"]
	if !ok || raw == nil {
		return u, false, nil
	}
	if err := decodeDoc(raw, &u); err != nil {
		return u, true, fmt.Errorf("The cluster '%s' has update progress Grove cannot read: %s.", cl.Name, docError("data.update", err))
	}
	return u, true, nil
}

// publish writes the update's progress to the action, the cluster and an
// event.
func (e *Engine) publish(ctx context.Context, a *model.Action, clusterID, key string, u *api.UpdateProgress, note string) error {
	u.UpdatedAt = e.cfg.Now().UTC().Format(time.RFC3339)
	if u.FailedNodes == nil {
		u.FailedNodes = []string{}
	}
	doc, err := document(u)
	if err != nil {
		return err
	}
	a.Data[key] = doc
	a.Outputs["update"] = doc
	if err := e.saveData(ctx, a); err != nil {
		return err
	}
	err = e.store.InTx(ctx, func(tx store.Store) error {
		cl, err := tx.GetCluster(ctx, clusterID)
		if err != nil {
			return err
		}
		cl.Data["update"] = doc
		return tx.UpdateCluster(ctx, cl)
	})
	if err != nil {
		return err
	}
	if note != "" {
		e.event(ctx, a, "update", note, model.LevelInfo)
	}
	return nil
}

// batchRecord is one batch of a rolling update, stored in the action's data
// under the batch's stage name ("update.batch2") with the progress that
// starts it, before anything is forked. A resumed update finishes the batch
// it had started, on the same nodes and with the children it had forked,
// and counts it once, instead of taking the nodes still on the old profile
// (among them the batch's own) for a new batch.
type batchRecord struct {
	// Nodes are the nodes the batch moves to the target profile.
	Nodes []string `json:"nodes"`
	// Children are the node updates forked for the batch (stop-first),
	// recorded with the fork.
	Children []string `json:"children,omitzero"`
	// Kept are the nodes a start-first batch kept on their old profile
	// because their replacement failed, recorded with the swap.
	Kept []string `json:"kept,omitzero"`
	// Counted is set in the same write as the progress that counts the
	// batch's result.
	Counted bool `json:"counted"`
}

// keepBatchPlan moves a batch policy's plan out of data.update, where the
// policy leaves it (Senlin's key), to data.batch_plan, before the update's
// progress takes data.update. Progress always has a status and the plan
// never does; a resumed action whose plan moved already finds progress or
// nothing there.
func (e *Engine) keepBatchPlan(ctx context.Context, a *model.Action) error {
	raw, ok := a.Data[model.DataUpdate].(map[string]any)
	if !ok {
		return nil
	}
	if _, progress := raw["status"]; progress {
		return nil
	}
	if _, plan := raw["plan"]; !plan {
		return nil
	}
	plan, _, err := dataOf[model.UpdateData](a, model.DataUpdate)
	if err != nil {
		return err
	}
	if err := setData(a, model.DataBatchPlan, plan); err != nil {
		return err
	}
	delete(a.Data, model.DataUpdate)
	return e.saveData(ctx, a)
}

// rollingUpdate moves a cluster's nodes to the target profile in batches, as
// the cluster's grove.update settings say (§B.5): parallelism, delay
// between batches, stop-first or start-first, a monitor period after each
// batch, and the failure action once failures over the nodes to update
// exceed max_failure_ratio. A rollback runs through the same updater towards
// the previous profile and never rolls back itself: it pauses.
//
// asked says whether the action's inputs asked for a rollback (a paused
// update rolled back by the user), as opposed to one this action started.
func (e *Engine) rollingUpdate(ctx context.Context, a *model.Action, clusterID, target, previous string, rollingBack, asked bool) (err error) {
	cl, err := e.store.GetCluster(ctx, clusterID)
	if err != nil {
		return err
	}
	pol := orchestrator.ParseUpdate(cl.Config)
	// A batch policy's plan decides the batches and the pause between
	// them; grove.update still says how each batch is done and watched.
	plan, planned, err := dataOf[model.UpdateData](a, model.DataBatchPlan)
	if err != nil {
		return err
	}
	if planned {
		pol.Delay = time.Duration(plan.PauseTime) * time.Second
	} else {
		plan.Plan = nil
	}
	if isGlobal(cl) {
		// Host by host: a global cluster's nodes are one per host, each
		// updated in place (a start-first replacement could land on
		// another host).
		pol.Parallelism, pol.Order, plan.Plan, planned = 1, "stop-first", nil, false
	}
	key := "update"
	if rollingBack && !asked {
		key = "rollback" // an automatic rollback inside this action
	}
	saved, resumed, err := dataOf[api.UpdateProgress](a, key)
	if err != nil {
		return err
	}
	u := &saved
	if !resumed {
		u = &api.UpdateProgress{Status: api.UpdateUpdating, Target: target, Previous: previous, RollingBack: rollingBack, Order: pol.Order, ActionID: a.ID}
		if rollingBack {
			u.Status = api.UpdateRollingBack
		}
	}
	defer func() {
		if err == nil || ctx.Err() == nil || u.Status == api.UpdatePaused {
			return
		}
		// Cancelled or out of time: the progress shown with the cluster
		// must not read "updating" forever.
		u.Status = api.UpdateStopped
		dctx, cancel := detached(ctx)
		defer cancel()
		if perr := e.publish(dctx, a, clusterID, key, u, fmt.Sprintf("The update stopped after %d of %d nodes: %v", u.Updated, u.Total, context.Cause(ctx))); perr != nil {
			e.logger(ctx).Error("record a stopped update", "cluster", clusterID, "error", perr)
		}
	}()
	if resumed {
		// A stopping agent recorded the update as stopped; it goes on.
		if u.Status == api.UpdateStopped {
			u.Status = api.UpdateUpdating
			if rollingBack || a.Data["rollback"] != nil {
				u.Status = api.UpdateRollingBack
			}
		}
		// The verdict on the last batch counted stands.
		switch {
		case u.Status == api.UpdatePaused:
			return pausedError(u, pol)
		case !rollingBack && (u.Status == api.UpdateRollingBack || u.Status == api.UpdateRolledBack):
			return e.rollBack(ctx, a, clusterID, key, u, pol, "")
		}
	}
	for {
		stage := batchStage(key, u.Batch)
		rec, started, err := dataOf[batchRecord](a, stage)
		if err != nil {
			return err
		}
		if !started || rec.Counted {
			if !started && stageDone(a, stage) {
				// An engine before batch records forked this batch: its
				// nodes are not moved to the next one while it runs.
				if err := e.waitChildren(ctx, a); err != nil && ctx.Err() != nil {
					return ctx.Err()
				}
			}
			batch, err := e.nextBatch(ctx, clusterID, target, pol, plan.Plan, planned, u)
			if err != nil {
				return err
			}
			if len(batch) == 0 {
				break
			}
			u.Batch++
			stage, rec = batchStage(key, u.Batch), batchRecord{Nodes: batch}
			if err := setData(a, stage, rec); err != nil {
				return err
			}
			if err := e.publish(ctx, a, clusterID, key, u, fmt.Sprintf("Batch %d of %d: updating %d nodes (%s).", u.Batch, u.Batches, len(batch), pol.Order)); err != nil {
				return err
			}
		}
		failed, err := e.updateBatch(ctx, a, clusterID, &rec, target, pol, stage)
		if err != nil {
			return err
		}
		u.Updated += len(rec.Nodes) - len(failed)
		u.Failures += len(failed)
		u.FailedNodes = append(u.FailedNodes, failed...)
		rec.Counted = true
		if err := setData(a, stage, rec); err != nil {
			return err
		}
		note := fmt.Sprintf("Batch %d of %d done: %d updated, %d failed so far.", u.Batch, u.Batches, u.Updated, u.Failures)
		switch orchestrator.AfterBatch(pol, u.Failures, u.Total, rollingBack) {
		case orchestrator.Pause:
			u.Status = api.UpdatePaused
			if err := e.publish(ctx, a, clusterID, key, u, note+" The update is paused."); err != nil {
				return err
			}
			return pausedError(u, pol)
		case orchestrator.Rollback:
			return e.rollBack(ctx, a, clusterID, key, u, pol, note+" Rolling back.")
		}
		if err := e.publish(ctx, a, clusterID, key, u, note); err != nil {
			return err
		}
		if pol.Delay > 0 {
			if err := sleepCtx(ctx, pol.Delay); err != nil {
				return err
			}
		}
	}
	u.Status = api.UpdateCompleted
	if rollingBack {
		u.Status = api.UpdateRolledBack
	}
	return e.publish(ctx, a, clusterID, key, u, fmt.Sprintf("Update %s: %d nodes on the new profile.", u.Status, u.Updated))
}

// batchStage names a batch's stage, and its record in the action's data.
func batchStage(key string, batch int) string { return fmt.Sprintf("%s.batch%d", key, batch) }

// nextBatch returns the nodes of the update's next batch, none when every
// node is on the target profile or failed; the first call sizes the update.
// With a batch policy's plan (planned), the batches are the plan's.
func (e *Engine) nextBatch(ctx context.Context, clusterID, target string, pol orchestrator.UpdatePolicy, plan [][]string, planned bool, u *api.UpdateProgress) ([]string, error) {
	nodes, err := e.store.ClusterNodes(ctx, clusterID)
	if err != nil {
		return nil, err
	}
	members := make([]orchestrator.Member, len(nodes))
	for i, n := range nodes {
		members[i] = orchestrator.Member{ID: n.ID, Index: n.Index, Profile: n.ProfileID, Gone: n.Status == model.NodeDeleting}
	}
	dirty := orchestrator.Dirty(members, target, u.FailedNodes)
	batches := orchestrator.Batches(dirty, pol.Parallelism)
	if planned {
		batches = orchestrator.PlannedBatches(dirty, plan)
	}
	if u.Total == 0 {
		u.Total = len(dirty)
		u.Batches = len(batches)
	}
	if len(dirty) == 0 {
		return nil, nil
	}
	return batches[0], nil
}

// rollBack rolls the update u back to the previous profile within the same
// action, after note (empty when a resumed action goes on with a rollback
// it had started), and fails with how it ended.
func (e *Engine) rollBack(ctx context.Context, a *model.Action, clusterID, key string, u *api.UpdateProgress, pol orchestrator.UpdatePolicy, note string) error {
	if note != "" {
		u.Status = api.UpdateRollingBack
		if err := e.publish(ctx, a, clusterID, key, u, note); err != nil {
			return err
		}
	}
	if err := e.rollingUpdate(ctx, a, clusterID, u.Previous, u.Target, true, false); err != nil {
		return err
	}
	u.Status = api.UpdateRolledBack
	if err := e.publish(ctx, a, clusterID, key, u, "The update was rolled back."); err != nil {
		return err
	}
	return fmt.Errorf("Update rolled back: %d of %d nodes failed on the new profile (max_failure_ratio %v); the cluster is back on its previous profile.",
		u.Failures, u.Total, pol.MaxFailureRatio)
}

// pausedError is how an update that paused ends its action.
func pausedError(u *api.UpdateProgress, pol orchestrator.UpdatePolicy) error {
	verb := "Update"
	if u.RollingBack {
		verb = "Rollback"
	}
	return fmt.Errorf("%s paused: %d of %d nodes failed (max_failure_ratio %v). Resume it with the cluster action update_resume, or roll back with update_rollback.",
		verb, u.Failures, u.Total, pol.MaxFailureRatio)
}

// updateBatch updates one batch and returns the nodes that failed: those
// whose update failed, or that stopped being healthy within the monitor
// period. A batch resumed after a crash forks nothing it had forked: it
// waits for the children it recorded.
func (e *Engine) updateBatch(ctx context.Context, a *model.Action, clusterID string, rec *batchRecord, target string, pol orchestrator.UpdatePolicy, stage string) ([]string, error) {
	if pol.Order == "start-first" {
		return e.startFirst(ctx, a, clusterID, rec, target, pol, stage)
	}
	err := e.runStage(ctx, a, stage, func(tx store.Store) error {
		kids, err := e.forkEachIDs(ctx, tx, a, model.NodeUpdateAction, rec.Nodes, model.NodeUpdateInputs{NewProfileID: target})
		if err != nil {
			return err
		}
		rec.Children = kids
		return setData(a, stage, *rec)
	})
	if err != nil {
		return nil, err
	}
	_ = e.waitChildren(ctx, a) // failed children are counted below
	if ctx.Err() != nil {
		return nil, ctx.Err()
	}
	failed, err := e.failedChildren(ctx, a.ID, func(k *model.Action) bool { return slices.Contains(rec.Children, k.ID) })
	if err != nil {
		return nil, err
	}
	watch := withoutIDs(rec.Nodes, failed)
	bad, err := e.monitor(ctx, watch, pol.Monitor)
	return append(failed, bad...), err
}

// startFirst creates the batch's replacements on the target profile first,
// watches them, and only then removes the nodes they replace, so the cluster
// never drops below its size. A replacement that fails is removed and its
// old node kept.
func (e *Engine) startFirst(ctx context.Context, a *model.Action, clusterID string, rec *batchRecord, target string, pol orchestrator.UpdatePolicy, stage string) ([]string, error) {
	fresh, _, err := dataOf[[]string](a, stage+".new")
	if err != nil {
		return nil, err
	}
	err = e.runStage(ctx, a, stage, func(tx store.Store) error {
		ids, err := e.forkCreateWith(ctx, tx, a, clusterID, target, len(rec.Nodes))
		if err != nil {
			return err
		}
		fresh = ids
		a.Data[stage+".new"] = ids
		return nil
	})
	if err != nil {
		return nil, err
	}
	_ = e.waitChildren(ctx, a)
	if ctx.Err() != nil {
		return nil, ctx.Err()
	}
	if !stageDone(a, stage+".swap") {
		failedNew, err := e.failedChildren(ctx, a.ID, func(k *model.Action) bool { return slices.Contains(fresh, k.Target) })
		if err != nil {
			return nil, err
		}
		bad, err := e.monitor(ctx, withoutIDs(fresh, failedNew), pol.Monitor)
		if err != nil {
			return nil, err
		}
		failedNew = append(failedNew, bad...)
		// Replace as many old nodes as replacements came up; drop the
		// failed replacements. What the swap removes and keeps is decided
		// once, with the fork.
		okCount := len(fresh) - len(failedNew)
		remove := append(append([]string{}, rec.Nodes[:okCount]...), failedNew...)
		err = e.runStage(ctx, a, stage+".swap", func(tx store.Store) error {
			rec.Kept = rec.Nodes[okCount:]
			if err := setData(a, stage, *rec); err != nil {
				return err
			}
			return e.forkEach(ctx, tx, a, model.NodeDeleteAction, remove, model.NodeDeleteInputs{})
		})
		if err != nil {
			return nil, err
		}
	}
	if err := e.waitChildren(ctx, a); err != nil && ctx.Err() != nil {
		return nil, ctx.Err()
	}
	return rec.Kept, nil
}

// failedChildren lists the targets of a's children that the filter keeps
// and that failed or were cancelled.
func (e *Engine) failedChildren(ctx context.Context, parentID string, keep func(*model.Action) bool) ([]string, error) {
	kids, err := e.store.Children(ctx, parentID)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, k := range kids {
		if (k.Status == model.ActionFailed || k.Status == model.ActionCancelled) && keep(k) && !slices.Contains(out, k.Target) {
			out = append(out, k.Target)
		}
	}
	return out, nil
}

// monitor watches nodes for a period and returns those found unhealthy.
func (e *Engine) monitor(ctx context.Context, ids []string, period time.Duration) ([]string, error) {
	if len(ids) == 0 || period <= 0 {
		return nil, nil
	}
	deadline := time.Now().Add(period)
	step := min(period/5, 500*time.Millisecond)
	var bad []string
	for {
		nodes, err := e.store.GetNodes(ctx, withoutIDs(ids, bad))
		if err != nil {
			return nil, err
		}
		byProfile := map[string][]*model.Node{}
		for _, n := range nodes {
			byProfile[n.ProfileID] = append(byProfile[n.ProfileID], n)
		}
		for profileID, group := range byProfile {
			spec, err := e.specFor(ctx, profileID)
			if err != nil {
				return nil, err
			}
			// Another host's node is checked by its own agent, whose
			// verdict the store holds.
			here := e.checkable(group, spec.Type, true)
			for _, n := range group {
				if !slices.Contains(here, n) && n.Status == model.NodeError {
					bad = append(bad, n.ID)
				}
			}
			if group = here; len(group) == 0 {
				continue
			}
			res, err := e.callDriver(ctx, spec.Type, "check", func(c *sdk.Client) ([]sdk.Result, error) {
				return c.Batch(ctx, sdk.CallCheck, spec, e.sdkNodes(ctx, group))
			})
			if err != nil {
				return nil, err
			}
			var down []*model.Node
			byID := resultsByID(res)
			for _, n := range group {
				if r, ok := byID[n.ID]; ok && r.Err == nil && !r.Healthy {
					bad = append(bad, n.ID)
					n.Status, n.StatusReason = model.NodeError, "Update monitor: node failed after the update: "+r.Reason
					down = append(down, n)
				}
			}
			if err := e.store.UpdateNodes(ctx, down); err != nil {
				return nil, err
			}
		}
		if !time.Now().Before(deadline) || len(bad) == len(ids) {
			return bad, nil
		}
		if err := sleepCtx(ctx, step); err != nil {
			return nil, err
		}
	}
}

func withoutIDs(ids, drop []string) []string {
	var out []string
	for _, id := range ids {
		if !slices.Contains(drop, id) {
			out = append(out, id)
		}
	}
	return out
}
