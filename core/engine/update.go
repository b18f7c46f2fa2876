package engine

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/grovehq/grove/core/model"
	"github.com/grovehq/grove/core/orchestrator"
	"github.com/grovehq/grove/core/store"
	"github.com/grovehq/grove/plugins/sdk"
)

// updateState is a rolling update's progress. It lives in the action's data
// (so a reclaimed action resumes) and is mirrored in the cluster's data under
// "update" (so `grove cluster status` shows it).
type updateState struct {
	Status      string   `json:"status"` // updating, rolling back, paused, stopped, completed, rolled back
	Target      string   `json:"target_profile"`
	Previous    string   `json:"previous_profile"`
	RollingBack bool     `json:"rolling_back"`
	Order       string   `json:"order"`
	Batch       int      `json:"batch"`
	Batches     int      `json:"batches"`
	Total       int      `json:"total"`
	Updated     int      `json:"updated"`
	Failures    int      `json:"failures"`
	FailedNodes []string `json:"failed_nodes"`
	ActionID    string   `json:"action"`
	UpdatedAt   string   `json:"updated_at"`
}

func (u *updateState) toMap() map[string]any {
	return map[string]any{"status": u.Status, "target_profile": u.Target, "previous_profile": u.Previous, "rolling_back": u.RollingBack,
		"order": u.Order, "batch": u.Batch, "batches": u.Batches, "total": u.Total, "updated": u.Updated, "failures": u.Failures,
		"failed_nodes": toAny(u.FailedNodes), "action": u.ActionID, "updated_at": u.UpdatedAt}
}

func updateFromMap(m map[string]any) *updateState {
	u := &updateState{}
	u.Status, _ = m["status"].(string)
	u.Target, _ = m["target_profile"].(string)
	u.Previous, _ = m["previous_profile"].(string)
	u.RollingBack, _ = m["rolling_back"].(bool)
	u.Order, _ = m["order"].(string)
	u.Batch = intOf(m["batch"])
	u.Batches = intOf(m["batches"])
	u.Total = intOf(m["total"])
	u.Updated = intOf(m["updated"])
	u.Failures = intOf(m["failures"])
	u.FailedNodes = toStrings(m["failed_nodes"])
	u.ActionID, _ = m["action"].(string)
	return u
}

func intOf(v any) int {
	switch x := v.(type) {
	case float64:
		return int(x)
	case int:
		return x
	}
	return 0
}

// publish writes the update's progress to the action, the cluster and an
// event.
func (e *Engine) publish(ctx context.Context, a *model.Action, clusterID, key string, u *updateState, note string) error {
	u.UpdatedAt = e.cfg.Now().UTC().Format(time.RFC3339)
	a.Data[key] = u.toMap()
	a.Outputs["update"] = u.toMap()
	if err := e.saveData(ctx, a); err != nil {
		return err
	}
	err := e.store.InTx(ctx, func(tx store.Store) error {
		cl, err := tx.GetCluster(ctx, clusterID)
		if err != nil {
			return err
		}
		cl.Data["update"] = u.toMap()
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

// rollingUpdate moves a cluster's nodes to the target profile in batches, as
// the cluster's grove.update settings say (§B.5): parallelism, delay
// between batches, stop-first or start-first, a monitor period after each
// batch, and the failure action once failures over the nodes to update
// exceed max_failure_ratio. A rollback runs through the same updater towards
// the previous profile and never rolls back itself: it pauses.
func (e *Engine) rollingUpdate(ctx context.Context, a *model.Action, clusterID, target, previous string, rollingBack bool) (err error) {
	cl, err := e.store.GetCluster(ctx, clusterID)
	if err != nil {
		return err
	}
	pol := orchestrator.ParseUpdate(cl.Config)
	key := "update"
	if rollingBack && a.Inputs["rolling_back"] != true {
		key = "rollback" // an automatic rollback inside this action
	}
	var u *updateState
	if m, ok := a.Data[key].(map[string]any); ok {
		u = updateFromMap(m)
	} else {
		u = &updateState{Status: "updating", Target: target, Previous: previous, RollingBack: rollingBack, Order: pol.Order, ActionID: a.ID}
		if rollingBack {
			u.Status = "rolling back"
		}
	}
	defer func() {
		if err == nil || ctx.Err() == nil || u.Status == "paused" {
			return
		}
		// Cancelled or out of time: the progress shown with the cluster
		// must not read "updating" forever.
		u.Status = "stopped"
		dctx, cancel := detached(ctx)
		defer cancel()
		if perr := e.publish(dctx, a, clusterID, key, u, fmt.Sprintf("The update stopped after %d of %d nodes: %v", u.Updated, u.Total, context.Cause(ctx))); perr != nil {
			e.log.Error("record a stopped update", "cluster", clusterID, "error", perr)
		}
	}()
	for {
		nodes, err := e.store.ClusterNodes(ctx, clusterID)
		if err != nil {
			return err
		}
		members := make([]orchestrator.Member, len(nodes))
		for i, n := range nodes {
			members[i] = orchestrator.Member{ID: n.ID, Index: n.Index, Profile: n.ProfileID, Gone: n.Status == model.NodeDeleting}
		}
		dirty := orchestrator.Dirty(members, target, u.FailedNodes)
		if u.Total == 0 {
			u.Total = len(dirty)
			u.Batches = len(orchestrator.Batches(dirty, pol.Parallelism))
		}
		if len(dirty) == 0 {
			break
		}
		batch := orchestrator.Batches(dirty, pol.Parallelism)[0]
		u.Batch++
		if err := e.publish(ctx, a, clusterID, key, u, fmt.Sprintf("Batch %d of %d: updating %d nodes (%s).", u.Batch, u.Batches, len(batch), pol.Order)); err != nil {
			return err
		}
		failed, err := e.updateBatch(ctx, a, clusterID, batch, target, pol, fmt.Sprintf("%s.batch%d", key, u.Batch))
		if err != nil {
			return err
		}
		u.Updated += len(batch) - len(failed)
		u.Failures += len(failed)
		u.FailedNodes = append(u.FailedNodes, failed...)
		note := fmt.Sprintf("Batch %d of %d done: %d updated, %d failed so far.", u.Batch, u.Batches, u.Updated, u.Failures)
		switch orchestrator.AfterBatch(pol, u.Failures, u.Total, rollingBack) {
		case orchestrator.Pause:
			u.Status = "paused"
			if err := e.publish(ctx, a, clusterID, key, u, note+" The update is paused."); err != nil {
				return err
			}
			verb := "Update"
			if rollingBack {
				verb = "Rollback"
			}
			return fmt.Errorf("%s paused: %d of %d nodes failed (max_failure_ratio %v). Resume it with the cluster action update_resume, or roll back with update_rollback.",
				verb, u.Failures, u.Total, pol.MaxFailureRatio)
		case orchestrator.Rollback:
			u.Status = "rolling back"
			if err := e.publish(ctx, a, clusterID, key, u, note+" Rolling back."); err != nil {
				return err
			}
			if err := e.rollingUpdate(ctx, a, clusterID, previous, target, true); err != nil {
				return err
			}
			u.Status = "rolled back"
			if err := e.publish(ctx, a, clusterID, key, u, "The update was rolled back."); err != nil {
				return err
			}
			return fmt.Errorf("Update rolled back: %d of %d nodes failed on the new profile (max_failure_ratio %v); the cluster is back on its previous profile.",
				u.Failures, u.Total, pol.MaxFailureRatio)
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
	u.Status = "completed"
	if rollingBack {
		u.Status = "rolled back"
	}
	return e.publish(ctx, a, clusterID, key, u, fmt.Sprintf("Update %s: %d nodes on the new profile.", u.Status, u.Updated))
}

// updateBatch updates one batch and returns the nodes that failed: those
// whose update failed, or that stopped being healthy within the monitor
// period.
func (e *Engine) updateBatch(ctx context.Context, a *model.Action, clusterID string, batch []string, target string, pol orchestrator.UpdatePolicy, stage string) ([]string, error) {
	if pol.Order == "start-first" {
		return e.startFirst(ctx, a, clusterID, batch, target, pol, stage)
	}
	err := e.runStage(ctx, a, stage, func(tx store.Store) error {
		return e.forkEach(ctx, tx, a, model.NodeUpdateAction, batch, map[string]any{"new_profile_id": target})
	})
	if err != nil {
		return nil, err
	}
	_ = e.waitChildren(ctx, a) // failed children are counted below
	if ctx.Err() != nil {
		return nil, ctx.Err()
	}
	failed, err := e.failedChildren(ctx, a.ID, batch)
	if err != nil {
		return nil, err
	}
	watch := withoutIDs(batch, failed)
	bad, err := e.monitor(ctx, watch, pol.Monitor)
	return append(failed, bad...), err
}

// startFirst creates the batch's replacements on the target profile first,
// watches them, and only then removes the nodes they replace, so the cluster
// never drops below its size. A replacement that fails is removed and its
// old node kept.
func (e *Engine) startFirst(ctx context.Context, a *model.Action, clusterID string, batch []string, target string, pol orchestrator.UpdatePolicy, stage string) ([]string, error) {
	var fresh []string
	if ids := toStrings(a.Data[stage+".new"]); len(ids) > 0 {
		fresh = ids
	}
	err := e.runStage(ctx, a, stage, func(tx store.Store) error {
		ids, err := e.forkCreateWith(ctx, tx, a, clusterID, target, len(batch))
		fresh = ids
		a.Data[stage+".new"] = toAny(ids)
		return err
	})
	if err != nil {
		return nil, err
	}
	_ = e.waitChildren(ctx, a)
	if ctx.Err() != nil {
		return nil, ctx.Err()
	}
	failedNew, err := e.failedChildren(ctx, a.ID, fresh)
	if err != nil {
		return nil, err
	}
	bad, err := e.monitor(ctx, withoutIDs(fresh, failedNew), pol.Monitor)
	if err != nil {
		return nil, err
	}
	failedNew = append(failedNew, bad...)
	// Replace as many old nodes as replacements came up; drop the failed
	// replacements.
	okCount := len(fresh) - len(failedNew)
	remove := append(append([]string{}, batch[:okCount]...), failedNew...)
	err = e.runStage(ctx, a, stage+".swap", func(tx store.Store) error {
		return e.forkEach(ctx, tx, a, model.NodeDeleteAction, remove, nil)
	})
	if err != nil {
		return nil, err
	}
	if err := e.waitChildren(ctx, a); err != nil && ctx.Err() != nil {
		return nil, ctx.Err()
	}
	return batch[okCount:], nil
}

// failedChildren lists which of the given nodes had a failed or cancelled
// child action of a.
func (e *Engine) failedChildren(ctx context.Context, parentID string, nodes []string) ([]string, error) {
	kids, err := e.store.Children(ctx, parentID)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, k := range kids {
		if (k.Status == model.ActionFailed || k.Status == model.ActionCancelled) && slices.Contains(nodes, k.Target) && !slices.Contains(out, k.Target) {
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
