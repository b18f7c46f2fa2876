package engine

import (
	"context"
	"errors"
	"fmt"
	"maps"

	"github.com/grovehq/grove/core/model"
	"github.com/grovehq/grove/core/orchestrator"
	"github.com/grovehq/grove/core/orchestrator/deps"
	"github.com/grovehq/grove/core/store"
)

func (e *Engine) doClusterCreate(ctx context.Context, a *model.Action) error {
	cl, err := e.lockCluster(ctx, a)
	if err != nil {
		return err
	}
	// A part that cannot be forked fails the action as any failed step
	// does: its forked children are cancelled and the cluster settles
	// (finish). A reclaimed action resumes with the parts not yet forked.
	err = e.forkCreateInParts(ctx, a, "create", cl.ID, cl.DesiredCapacity, func(tx store.Store) error {
		return e.setClusterStatus(ctx, tx, cl.ID, model.ClusterCreating, "Creation in progress", nil)
	})
	if err != nil {
		return err
	}
	werr := e.waitChildren(ctx, a)
	if werr != nil && (errors.Is(werr, errCancelled) || ctx.Err() != nil) {
		_ = e.settle(ctx, cl.ID, model.ClusterCreateAction, nil, fmt.Errorf("Cluster creation stopped: %w.", werr))
		return werr
	}
	if werr != nil {
		werr = fmt.Errorf("Failed in creating nodes: %w", werr)
	}
	if err := e.settle(ctx, cl.ID, model.ClusterCreateAction, nil, werr); err != nil {
		return err
	}
	if werr == nil {
		a.StatusReason = "Cluster creation succeeded."
		if err := e.afterCreate(ctx, a, cl.ID); err != nil {
			return fmt.Errorf("The cluster was created, but its dependencies could not be applied: %w", err)
		}
	}
	return werr
}

func (e *Engine) doClusterUpdate(ctx context.Context, a *model.Action) error {
	in, err := inputsOf[model.ClusterUpdateInputs](a)
	if err != nil {
		return err
	}
	cl, err := e.begin(ctx, a)
	if err != nil {
		return err
	}
	if err := e.keepBatchPlan(ctx, a); err != nil {
		return err
	}
	err = e.runStage(ctx, a, "fields", func(tx store.Store) error {
		return e.setClusterStatus(ctx, tx, cl.ID, model.ClusterUpdating, "Updating cluster.", func(c *model.Cluster) {
			if in.Name != nil {
				c.Name = *in.Name
			}
			maps.Copy(c.Metadata, in.Metadata)
			maps.Copy(c.Config, in.Config)
			if in.Timeout != nil {
				c.Timeout = *in.Timeout
			}
		})
	})
	if err != nil {
		return err
	}
	// A rolling update is a non-error stop of the cluster (§C.3): its
	// dependents with restart_on restart or refresh stop first and start
	// again once it is done.
	restartDependents := false
	if np := in.NewProfileID; np != "" && (in.ProfileOnly == nil || !*in.ProfileOnly) && depState(cl) == deps.Running {
		restartDependents = true
		if !stageDone(a, "dependents-stopped") {
			g, d, err := e.decide(ctx, cl, deps.Running, deps.Event{Kind: deps.Stop, Cluster: cl.Name})
			if err != nil {
				return err
			}
			if err := e.applySteps(ctx, g, d.Steps, cl.Name); err != nil {
				return fmt.Errorf("Failed in stopping the cluster's dependents: %w", err)
			}
			if err := e.runStage(ctx, a, "dependents-stopped", func(store.Store) error { return nil }); err != nil {
				return err
			}
		}
	}
	updated := false
	if restartDependents {
		defer func() {
			if !updated {
				return
			}
			if fresh, err := e.store.GetCluster(ctx, cl.ID); err == nil {
				e.propagateAsync(fresh, deps.Running, deps.Event{Kind: deps.Start, Cluster: fresh.Name, Reason: deps.Restart})
			}
		}()
	}
	if np := in.NewProfileID; np != "" {
		if in.ProfileOnly == nil || !*in.ProfileOnly {
			previous := in.PreviousProfileID
			if previous == "" {
				previous = cl.ProfileID
			}
			if err := e.rollingUpdate(ctx, a, cl.ID, np, previous, in.IsRollback(), in.IsRollback()); err != nil {
				_ = e.settle(ctx, cl.ID, a.Action, nil, err)
				return err
			}
		}
		if err := e.store.InTx(ctx, func(tx store.Store) error {
			c, err := tx.GetCluster(ctx, cl.ID)
			if err != nil {
				return err
			}
			c.ProfileID = np
			return tx.UpdateCluster(ctx, c)
		}); err != nil {
			return err
		}
	}
	if size := in.Size; size != nil {
		plan, planned, err := dataOf[sizePlan](a, dataPlan)
		if err != nil {
			return err
		}
		if !planned {
			cur, err := e.store.GetCluster(ctx, cl.ID)
			if err != nil {
				return err
			}
			nodes, err := e.store.ClusterNodes(ctx, cl.ID)
			if err != nil {
				return err
			}
			d := orchestrator.PlanSizeUpdate(e.sizeOf(cur, nodes), orchestrator.SizeUpdate{Desired: size.DesiredCapacity, Min: size.MinSize, Max: size.MaxSize})
			plan = sizePlan{Desired: d.Desired, Min: d.Min, Max: d.Max, Create: d.Create, Victims: d.Victims, Destroy: true}
			if err := setData(a, dataPlan, plan); err != nil {
				return err
			}
		}
		if err := e.applySize(ctx, a, cl, plan, "Cluster resize started."); err != nil {
			return err
		}
	} else if err := e.settle(ctx, cl.ID, a.Action, nil, nil); err != nil {
		return err
	}
	updated = true
	return e.end(ctx, a, cl.ID, "Cluster update completed.")
}

func (e *Engine) doClusterDelete(ctx context.Context, a *model.Action) error {
	cl, err := e.lockCluster(ctx, a)
	if errors.Is(err, store.ErrNotFound) {
		return nil
	}
	if err != nil {
		return err
	}
	if !stageDone(a, "detach") {
		bindings, err := e.store.ListBindings(ctx, cl.ID)
		if err != nil {
			return err
		}
		for _, b := range bindings {
			if err := e.detach(ctx, cl, b); err != nil {
				return err
			}
		}
	}
	nodes, err := e.store.ClusterNodes(ctx, cl.ID)
	if err != nil {
		return err
	}
	err = e.runStage(ctx, a, "delete", func(tx store.Store) error {
		if err := e.setClusterStatus(ctx, tx, cl.ID, model.ClusterDeleting, "Deletion in progress", nil); err != nil {
			return err
		}
		return e.forkEach(ctx, tx, a, model.NodeDeleteAction, nodeIDs(nodes), model.NodeDeleteInputs{})
	})
	if err != nil {
		return err
	}
	if err := e.waitChildren(ctx, a); err != nil {
		// finish moves the cluster out of DELETING (unstick), with the
		// action's reason: a timeout reads as one.
		return fmt.Errorf("Failed in deleting nodes: %w", err)
	}
	if err := e.store.DeleteCluster(ctx, cl.ID); err != nil {
		return err
	}
	a.StatusReason = "Cluster deletion succeeded."
	return nil
}
