package engine

import (
	"context"
	"fmt"
	"slices"

	"github.com/grovehq/grove/core/model"
	"github.com/grovehq/grove/core/orchestrator/deps"
	"github.com/grovehq/grove/core/store"
	"github.com/grovehq/grove/plugins/sdk"
)

// A cluster's start and stop, as an SMF instance has them: a stopped
// cluster keeps its nodes' records while their workloads are stopped
// through the driver's own node operations (a process or container
// stopped, a server or VM powered off), and the health loop leaves it
// alone until it is started again. The run state lives in the cluster's
// data (model.RunData), beside the Senlin status.

// stopOperations and startOperations are the node operations that stop and
// start a node's workload, by the names the built-in drivers declare
// (local.process, container.docker and os.nova.server: stop/start; vsphere.vm:
// power_off/power_on). A profile type with neither keeps its nodes as they
// are; only the cluster's run state changes.
var (
	stopOperations  = []string{"stop", "power_off"}
	startOperations = []string{"start", "power_on"}
)

// runActions maps the keys of POST /v1/clusters/{id}/actions that change a
// cluster's run state to their action kinds.
var runActions = map[string]string{
	"start":   model.ClusterStartAction,
	"stop":    model.ClusterStopAction,
	"restart": model.ClusterRestartAction,
	"refresh": model.ClusterRefreshAction,
}

// runInputs checks the parameters of an operator's start, stop, restart or
// refresh: there are none.
func runInputs(name string, params map[string]any) (model.ClusterRunInputs, error) {
	for k := range params {
		return model.ClusterRunInputs{}, BadRequest("%s: unrecognized parameter '%s'; %s takes no parameters.", name, k, name)
	}
	return model.ClusterRunInputs{Cause: model.StopByOperator}, nil
}

// nodeOperation returns the first of names that the profile type of
// profileID declares as a node operation, or "".
func (e *Engine) nodeOperation(ctx context.Context, profileID string, names []string) (string, error) {
	spec, err := e.specFor(ctx, profileID)
	if err != nil {
		return "", err
	}
	c, ok := e.plugins.Component("profile", spec.Type)
	if !ok {
		return "", fmt.Errorf("The profile type %s is not served by any plugin.", spec.Type)
	}
	if c.APIVersion != "" && apiBefore(c.APIVersion, sdk.ProfileAPIOperate) {
		return "", nil
	}
	for _, name := range names {
		if _, ok := sdk.FindNodeOperation(c.NodeOperations, name); ok {
			return name, nil
		}
	}
	return "", nil
}

// runOperations picks, for each node that want selects, the operation (the
// first of names) its profile type has; nodes of a type with none are left
// as they are. It reads the store, so it runs before a stage's
// transaction.
func (e *Engine) runOperations(ctx context.Context, nodes []*model.Node, names []string, want func(*model.Node) bool) (map[string][]string, error) {
	byOp := map[string][]string{}
	for _, n := range nodes {
		if !want(n) {
			continue
		}
		op, err := e.nodeOperation(ctx, n.ProfileID, names)
		if err != nil {
			return nil, err
		}
		if op != "" {
			byOp[op] = append(byOp[op], n.ID)
		}
	}
	return byOp, nil
}

// forkRunOperations forks one NODE_OPERATION per node of byOp.
func (e *Engine) forkRunOperations(ctx context.Context, tx store.Store, a *model.Action, byOp map[string][]string) error {
	ops := make([]string, 0, len(byOp))
	for op := range byOp {
		ops = append(ops, op)
	}
	slices.Sort(ops)
	for _, op := range ops {
		if err := e.forkEach(ctx, tx, a, model.NodeOperationAction, byOp[op], model.OperationInputs{Operation: op, Params: map[string]any{}}); err != nil {
			return err
		}
	}
	return nil
}

// stopReason is the sentence a stopped cluster shows for a cause.
func stopReason(cause string) string {
	switch cause {
	case model.StopByDependency:
		return "Stopped because a dependency stopped; it starts again when its dependencies run."
	case model.StopByMilestone:
		return "Stopped by a milestone."
	}
	return "Stopped by the operator; `grove cluster start` starts it."
}

// markStopped records a cluster as stopped before its dependents are
// stopped: to them, and to the health round's look at waiting clusters, it
// is no longer up.
func (e *Engine) markStopped(ctx context.Context, clusterID, cause, reason string) error {
	return e.store.InTx(ctx, func(tx store.Store) error {
		c, err := tx.GetCluster(ctx, clusterID)
		if err != nil {
			return err
		}
		model.SetRunData(c, model.RunData{Stopped: true, Cause: cause, Reason: reason})
		return tx.UpdateCluster(ctx, c)
	})
}

// stopCluster is the stop stage: the run state says stopped first, so the
// health loop leaves the nodes alone while their workloads stop.
func (e *Engine) stopCluster(ctx context.Context, a *model.Action, cl *model.Cluster, cause, reason string) error {
	nodes, err := e.store.ClusterNodes(ctx, cl.ID)
	if err != nil {
		return err
	}
	byOp, err := e.runOperations(ctx, nodes, stopOperations, func(n *model.Node) bool {
		return n.Status == model.NodeActive || n.Status == model.NodeError
	})
	if err != nil {
		return err
	}
	err = e.runStage(ctx, a, "stop", func(tx store.Store) error {
		if err := e.setClusterStatus(ctx, tx, cl.ID, model.ClusterOperating, "Stopping the cluster's nodes.", func(c *model.Cluster) {
			model.SetRunData(c, model.RunData{Stopped: true, Cause: cause, Reason: reason})
		}); err != nil {
			return err
		}
		return e.forkRunOperations(ctx, tx, a, byOp)
	})
	if err != nil {
		return err
	}
	werr := e.waitChildren(ctx, a)
	// A stopped cluster is WARNING whatever its nodes say: it has nodes, by
	// design none of them running; its run state says why.
	serr := e.store.InTx(ctx, func(tx store.Store) error {
		return e.setClusterStatus(ctx, tx, cl.ID, model.ClusterWarning, a.Action+": "+reason, nil)
	})
	if werr != nil {
		return fmt.Errorf("Failed in stopping the cluster's nodes: %w", werr)
	}
	return serr
}

// startCluster is the start stage: the nodes a stop left stopped start
// again, then the cluster's status is evaluated from its ACTIVE nodes.
func (e *Engine) startCluster(ctx context.Context, a *model.Action, cl *model.Cluster) error {
	nodes, err := e.store.ClusterNodes(ctx, cl.ID)
	if err != nil {
		return err
	}
	byOp, err := e.runOperations(ctx, nodes, startOperations, func(n *model.Node) bool {
		return n.Status == model.NodeWarning || n.Status == model.NodeError
	})
	if err != nil {
		return err
	}
	err = e.runStage(ctx, a, "start", func(tx store.Store) error {
		if err := e.setClusterStatus(ctx, tx, cl.ID, model.ClusterOperating, "Starting the cluster's nodes.", func(c *model.Cluster) {
			model.SetRunData(c, model.RunData{})
		}); err != nil {
			return err
		}
		return e.forkRunOperations(ctx, tx, a, byOp)
	})
	if err != nil {
		return err
	}
	werr := e.waitChildren(ctx, a)
	if err := e.settle(ctx, cl.ID, a.Action, nil, werr); err != nil {
		return err
	}
	if werr != nil {
		return fmt.Errorf("Failed in starting the cluster's nodes: %w", werr)
	}
	return nil
}

// doClusterRun runs CLUSTER_START, CLUSTER_STOP, CLUSTER_RESTART and
// CLUSTER_REFRESH. An operator's are events on the dependency graph: a
// stop takes the running dependents down first, a start waits for the
// dependencies, a restart and a refresh reach the dependents whose
// restart_on asks. The engine's own (cause dependency or milestone) are
// steps of a decision already made, and do not propagate again.
func (e *Engine) doClusterRun(ctx context.Context, a *model.Action) error {
	in, err := inputsOf[model.ClusterRunInputs](a)
	if err != nil {
		return err
	}
	cause := in.Cause
	if cause == "" {
		cause = model.StopByOperator
	}
	operator := cause == model.StopByOperator
	cl, err := e.begin(ctx, a)
	if err != nil {
		return err
	}
	reason := in.Reason
	if reason == "" {
		reason = stopReason(cause)
	}
	switch a.Action {
	case model.ClusterStopAction:
		var after []deps.Step
		if operator && depState(cl) == deps.Running {
			g, d, err := e.decide(ctx, cl, "", deps.Event{Kind: deps.AdminStop, Cluster: cl.Name})
			if err != nil {
				return err
			}
			before, rest := splitSteps(d.Steps, cl.Name)
			after = rest
			// Stopped from here on, so that no health round starts a
			// dependent again between its stop and the cluster's.
			if err := e.markStopped(ctx, cl.ID, cause, reason); err != nil {
				return err
			}
			if err := e.applySteps(ctx, g, before, cl.Name); err != nil {
				return fmt.Errorf("Failed in stopping the cluster's dependents: %w", err)
			}
			defer func() {
				// Dependents that exclude the cluster may start once it is
				// down (§C.4).
				if len(after) > 0 {
					if err := e.applySteps(ctx, g, after, cl.Name); err != nil {
						e.log.Warn("starting the dependents of a stopped cluster", "cluster", cl.Name, "error", err)
					}
				}
			}()
		}
		if err := e.stopCluster(ctx, a, cl, cause, reason); err != nil {
			after = nil
			return err
		}
		if in.Maintenance {
			if err := e.holdCluster(ctx, cl.ID, deps.Verdict{Maintenance: true, Reason: reason}); err != nil {
				return err
			}
		}
		return e.end(ctx, a, cl.ID, "Cluster stopped.")
	case model.ClusterStartAction:
		if operator {
			v, err := e.startVerdict(ctx, cl)
			if err != nil {
				return err
			}
			if !v.Start {
				if depState(cl) == deps.Running {
					if err := e.stopCluster(ctx, a, cl, model.StopByDependency, waitReason(v)); err != nil {
						return err
					}
				}
				if err := e.holdCluster(ctx, cl.ID, v); err != nil {
					return err
				}
				return e.end(ctx, a, cl.ID, "Cluster not started: "+waitReason(v))
			}
		} else if cause == model.StopByDependency {
			if why, err := e.startNoLongerOwed(ctx, cl); err != nil || why != "" {
				if err != nil {
					return err
				}
				return e.end(ctx, a, cl.ID, "Cluster not started: "+why)
			}
		}
		if err := e.startCluster(ctx, a, cl); err != nil {
			return err
		}
		if operator {
			e.propagateAsync(cl, deps.Running, deps.Event{Kind: deps.Start, Cluster: cl.Name})
		}
		return e.end(ctx, a, cl.ID, "Cluster started.")
	case model.ClusterRestartAction:
		running := depState(cl) == deps.Running
		if running {
			g, d, err := e.decide(ctx, cl, "", deps.Event{Kind: deps.Stop, Cluster: cl.Name})
			if err != nil {
				return err
			}
			if err := e.markStopped(ctx, cl.ID, cause, "Restarting."); err != nil {
				return err
			}
			if err := e.applySteps(ctx, g, d.Steps, cl.Name); err != nil {
				return fmt.Errorf("Failed in stopping the cluster's dependents: %w", err)
			}
		}
		if err := e.stopCluster(ctx, a, cl, cause, "Restarting."); err != nil {
			return err
		}
		if err := e.startCluster(ctx, a, cl); err != nil {
			return err
		}
		if running {
			e.propagateAsync(cl, deps.Running, deps.Event{Kind: deps.Start, Cluster: cl.Name, Reason: deps.Restart})
		}
		return e.end(ctx, a, cl.ID, "Cluster restarted.")
	}
	// A refresh changes nothing on the cluster itself: it is an event
	// that dependents with restart_on refresh act on.
	if depState(cl) == deps.Running {
		g, d, err := e.decide(ctx, cl, "", deps.Event{Kind: deps.RefreshEvent, Cluster: cl.Name})
		if err != nil {
			return err
		}
		if err := e.applySteps(ctx, g, d.Steps, cl.Name); err != nil {
			return fmt.Errorf("Failed in refreshing the cluster's dependents: %w", err)
		}
	}
	return e.end(ctx, a, cl.ID, "Cluster refreshed.")
}

// startNoLongerOwed says why a cascade's start of cl is not to be taken
// after all, or "" when it is. A cascade decides all of its steps when it
// begins and takes them one after the other, each waiting for the one
// before; an operator acting meanwhile (stopping the cluster itself, or a
// dependency of it) is not in that decision. Taken anyway, the start would
// override the operator's stop, or run the cluster on a stopped
// dependency. So it is decided again here, inside the action that holds
// the cluster: only a cluster still waiting on its dependencies alone is
// started, and only if they allow it now; one they do not allow is held
// with the reason shown, as an operator's start would be.
func (e *Engine) startNoLongerOwed(ctx context.Context, cl *model.Cluster) (string, error) {
	if st := depState(cl); st != deps.Offline {
		_, reason := model.RunState(cl)
		if reason == "" {
			reason = "it is " + string(st) + "."
		}
		return reason, nil
	}
	v, err := e.startVerdict(ctx, cl)
	if err != nil || v.Start {
		return "", err
	}
	if err := e.holdCluster(ctx, cl.ID, v); err != nil {
		return "", err
	}
	return waitReason(v), nil
}

// splitSteps splits a decision's steps at the named cluster's own step:
// those before it and those after it.
func splitSteps(steps []deps.Step, name string) (before, after []deps.Step) {
	for i, st := range steps {
		if st.Cluster == name {
			return steps[:i], steps[i+1:]
		}
	}
	return steps, nil
}
