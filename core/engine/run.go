package engine

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/grovehq/grove/core/model"
	"github.com/grovehq/grove/core/store"
)

// errCancelled ends an action that was cancelled.
var errCancelled = errors.New("the action was cancelled")

// statusTimeout bounds a write that records how work ended after the work's
// own context was cancelled or ran out of time: long enough for a busy
// store, short enough that a hung one cannot hold a worker forever.
const statusTimeout = 10 * time.Second

// runAction runs one top-level action to its end.
func (e *Engine) runAction(parent context.Context, a *model.Action) {
	parent = e.withActionLog(parent, a)
	if a.Control == model.SignalCancel {
		e.finish(parent, a, errCancelled)
		return
	}
	timeout := time.Duration(a.Timeout) * time.Second
	if timeout <= 0 {
		timeout = time.Duration(e.cfg.DefaultTimeout) * time.Second
	}
	started := time.UnixMicro(int64(a.StartTime * 1e6))
	ctx, cancel := context.WithDeadline(parent, started.Add(timeout))
	defer cancel()
	ctx, stop := context.WithCancelCause(ctx)
	defer stop(nil)
	e.track(a.ID, func() { stop(errCancelled) })
	defer e.untrack(a.ID)
	e.event(ctx, a, "start", a.StatusReason, model.LevelInfo)
	e.logger(ctx).Info("action started", "target", a.Target)
	err := stoppedBy(ctx, e.dispatch(ctx, a))
	if parent.Err() != nil && !errors.Is(err, errCancelled) {
		// The agent is stopping: leave the action RUNNING under our lease so
		// the next start reclaims it.
		return
	}
	e.finish(parent, a, err)
}

func (e *Engine) dispatch(ctx context.Context, a *model.Action) error {
	switch a.Action {
	case model.ClusterCreateAction:
		return e.doClusterCreate(ctx, a)
	case model.ClusterDeleteAction:
		return e.doClusterDelete(ctx, a)
	case model.ClusterUpdateAction:
		return e.doClusterUpdate(ctx, a)
	case model.ClusterAddNodesAction:
		return e.doAddNodes(ctx, a)
	case model.ClusterDelNodesAction:
		return e.doDelNodes(ctx, a)
	case model.ClusterReplaceNodesAction:
		return e.doReplaceNodes(ctx, a)
	case model.ClusterMoveNodesAction:
		return e.doMoveNodes(ctx, a)
	case model.ClusterGlobalSyncAction:
		return e.doGlobalSync(ctx, a)
	case model.ClusterResizeAction, model.ClusterScaleInAction, model.ClusterScaleOutAction:
		return e.doResize(ctx, a)
	case model.ClusterCheckAction:
		return e.doClusterCheck(ctx, a)
	case model.ClusterRecoverAction:
		return e.doClusterRecover(ctx, a)
	case model.ClusterAttachPolicyAction:
		return e.doAttachPolicy(ctx, a)
	case model.ClusterDetachPolicyAction:
		return e.doDetachPolicy(ctx, a)
	case model.ClusterUpdatePolicyAction:
		return e.doUpdatePolicy(ctx, a)
	case model.ClusterOperationAction:
		return e.doClusterOperation(ctx, a)
	case model.ClusterStartAction, model.ClusterStopAction, model.ClusterRestartAction, model.ClusterRefreshAction:
		return e.doClusterRun(ctx, a)
	case model.ClusterFreezeAction, model.ClusterThawAction, model.ClusterClearAction:
		return e.doInstanceCommand(ctx, a)
	case model.ClusterExpectStartAction, model.ClusterExpectStopAction, model.ClusterSwitchAction, model.ClusterGivebackAction:
		return e.doExpect(ctx, a)
	case model.NodeCreateAction, model.NodeDeleteAction, model.NodeUpdateAction, model.NodeCheckAction, model.NodeRecoverAction, model.NodeOperationAction:
		return e.doNodeRPC(ctx, a)
	}
	return fmt.Errorf("unknown action %s", a.Action)
}

// verdict is how an action that returned err ends: its status, reason and
// event level. Cancel and timeout are told apart from failures, as Senlin's
// CANCEL and TIMEOUT results are.
func (e *Engine) verdict(ctx context.Context, a *model.Action, err error) (status, reason string, level int) {
	switch {
	case err == nil:
		reason = a.StatusReason
		if reason == "" || reason == "The action is being processed." {
			reason = "Action completed successfully."
		}
		return model.ActionSucceeded, reason, model.LevelInfo
	case errors.Is(err, errCancelled) || (errors.Is(err, context.Canceled) && e.cancelRequested(ctx, a.ID)):
		return model.ActionCancelled, "The action was cancelled.", model.LevelWarning
	case errors.Is(err, context.DeadlineExceeded):
		return model.ActionFailed, fmt.Sprintf("TIMEOUT: the action did not finish within its timeout of %d seconds.", a.Timeout), model.LevelError
	}
	return model.ActionFailed, err.Error(), model.LevelError
}

// finish records an action's result, emits its end event, releases its
// locks and wakes its parent.
func (e *Engine) finish(parent context.Context, a *model.Action, err error) {
	ctx, cancel := detached(parent)
	defer cancel()
	log := e.actionLog(a)
	now := e.cfg.Now()
	a.EndTime = float64(now.UnixMicro()) / 1e6
	a.UpdatedAt = &now
	a.Owner = ""
	var level int
	a.Status, a.StatusReason, level = e.verdict(ctx, a, err)
	if a.Status != model.ActionSucceeded {
		if serr := e.store.SignalChildren(ctx, a.ID, model.SignalCancel, now); serr != nil {
			log.Error("cancel children", "error", serr)
		}
		if !a.IsNodeAction() { // node actions have no children nor cluster to settle
			e.cancelRunningChildren(ctx, a.ID)
			e.unstick(ctx, a)
		}
	}
	// The end and the release commit together: an agent that dies between
	// them leaves no ended action holding its cluster (the store also
	// frees a lock whose holder has ended, for rows written before).
	if uerr := e.store.InTx(ctx, func(tx store.Store) error {
		if err := tx.UpdateActions(ctx, []*model.Action{a}); err != nil {
			return err
		}
		if a.ClusterID != "" {
			if err := tx.ReleaseClusterLock(ctx, a.ClusterID, a.ID); err != nil {
				return err
			}
		}
		if a.IsNodeAction() {
			return tx.ReleaseNodeLock(ctx, a.Target, a.ID)
		}
		return nil
	}); uerr != nil {
		log.Error("record action result", "error", uerr)
	}
	phase := "end"
	if a.Status != model.ActionSucceeded {
		phase = "error"
	}
	e.event(ctx, a, phase, a.StatusReason, level)
	e.notifyParent(a.ParentID)
	e.cfg.Metrics.finished(a)
	log.Info("action finished", "status", a.Status, "reason", a.StatusReason, "took", sinceStart(a, now).String())
}

// cancelRunningChildren stops the children of an action that ended without
// success which this engine is running now, so a cancelled scale-out stops
// creating nodes instead of finishing the work in the background.
func (e *Engine) cancelRunningChildren(ctx context.Context, parentID string) {
	kids, err := e.store.Children(ctx, parentID)
	if err != nil {
		e.logger(ctx).Error("list children to cancel", "parent_action_id", parentID, "error", err)
		return
	}
	for _, k := range kids {
		if k.Terminal() {
			continue
		}
		e.mu.Lock()
		cancel := e.running[k.ID]
		e.mu.Unlock()
		if cancel != nil {
			cancel()
		}
	}
}

// transitional are the cluster statuses an action sets while it works.
var transitional = []string{model.ClusterCreating, model.ClusterUpdating, model.ClusterResizing, model.ClusterDeleting,
	model.ClusterChecking, model.ClusterRecovering, model.ClusterOperating}

// unstick leaves no cluster in a transitional status, or a cluster that was
// never created in INIT, after the action working on it failed, was
// cancelled or timed out: whatever step failed (a store write refused for a
// full disk, a deadline), the cluster ends in ERROR or in the status its
// nodes give, with the action's reason. A cluster whose lock another action
// holds is that action's to settle and is left alone.
func (e *Engine) unstick(ctx context.Context, a *model.Action) {
	if a.ClusterID == "" {
		return
	}
	held, err := e.store.AcquireClusterLock(ctx, a.ClusterID, a.ID, store.LockCluster)
	if err != nil || !held {
		return
	}
	cl, err := e.store.GetCluster(ctx, a.ClusterID)
	if err != nil {
		return // deleted, or the store is down: nothing to write to
	}
	var werr error
	switch {
	case cl.Status == model.ClusterInit && a.Action == model.ClusterCreateAction:
		werr = e.store.InTx(ctx, func(tx store.Store) error {
			return e.setClusterStatus(ctx, tx, cl.ID, model.ClusterError, "Cluster creation failed: "+a.StatusReason, nil)
		})
	case cl.Status == model.ClusterDeleting:
		werr = e.store.InTx(ctx, func(tx store.Store) error {
			return e.setClusterStatus(ctx, tx, cl.ID, model.ClusterError, "Cluster deletion failed: "+a.StatusReason, nil)
		})
	case slices.Contains(transitional, cl.Status):
		werr = e.settle(ctx, cl.ID, a.Action, nil, errors.New(a.StatusReason))
	default:
		return
	}
	if werr != nil {
		e.actionLog(a).Error("record the cluster's status after its action failed", "error", werr)
	}
}

func (e *Engine) cancelRequested(ctx context.Context, id string) bool {
	a, err := e.store.GetAction(ctx, id)
	return err == nil && a.Control == model.SignalCancel
}

// event records an event about an action's target.
func (e *Engine) event(ctx context.Context, a *model.Action, phase, reason string, level int) {
	ev := &model.Event{ID: e.rowID(), Timestamp: e.cfg.Now(), OID: a.Target, ClusterID: a.ClusterID, User: a.User, Project: a.Project,
		Action: a.Action, Status: phase, StatusReason: reason, Level: level, OType: "CLUSTER", MetaData: map[string]any{"action": a.ID}}
	if a.IsNodeAction() {
		ev.OType = "NODE"
	}
	ctx, cancel := detached(ctx)
	defer cancel()
	if err := e.store.CreateEvents(ctx, []*model.Event{ev}); err != nil {
		e.actionLog(a).Error("record event", "error", err)
	}
}

// saveData persists an action's data and outputs as it goes, so a reclaimed
// action resumes where it stopped.
func (e *Engine) saveData(ctx context.Context, a *model.Action) error {
	return e.store.UpdateActions(ctx, []*model.Action{a})
}

// detached returns the context for recording the outcome of work whose own
// context may have ended: a timed-out action must still move its cluster out
// of DELETING. It keeps ctx's values, drops its cancellation and deadline,
// and has a short deadline of its own.
func detached(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.WithoutCancel(ctx), statusTimeout)
}

// stoppedBy marks err, returned by work run under ctx, with the reason ctx
// ended (errCancelled, context.DeadlineExceeded), so errors.Is sees it
// even when the error came through a plugin's gRPC call, which does not
// unwrap to the context's error.
func stoppedBy(ctx context.Context, err error) error {
	if err == nil {
		return nil
	}
	if ctx.Err() == nil {
		awaitDeadline(ctx)
	}
	if ctx.Err() == nil {
		return err
	}
	cause := context.Cause(ctx)
	if errors.Is(err, cause) {
		return err
	}
	return fmt.Errorf("%w: %w", cause, err)
}

// awaitDeadline waits for ctx to end when its deadline is at most a moment
// away. A plugin enforces the deadline it was sent on its own clock (gRPC
// sends it rounded, as time left), so its DeadlineExceeded, as a call's
// status or as a node's error text, can arrive just before ours fires;
// without the wait, a timed-out action would read as a plugin failure. An
// error that comes within that moment of the deadline is judged after it.
func awaitDeadline(ctx context.Context) {
	dl, ok := ctx.Deadline()
	if !ok || time.Until(dl) > time.Second {
		return
	}
	t := time.NewTimer(time.Until(dl) + 100*time.Millisecond)
	defer t.Stop()
	select {
	case <-ctx.Done():
	case <-t.C:
	}
}
