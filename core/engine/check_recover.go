package engine

import (
	"context"
	"fmt"

	"github.com/grovehq/grove/core/model"
	"github.com/grovehq/grove/core/store"
)

func (e *Engine) doClusterCheck(ctx context.Context, a *model.Action) error {
	in, err := inputsOf[model.CheckInputs](a)
	if err != nil {
		return err
	}
	cl, err := e.lockCluster(ctx, a)
	if err != nil {
		return err
	}
	nodes, err := e.store.ClusterNodes(ctx, cl.ID)
	if err != nil {
		return err
	}
	err = e.runStage(ctx, a, "check", func(tx store.Store) error {
		if err := e.setClusterStatus(ctx, tx, cl.ID, model.ClusterChecking, "Check in progress", nil); err != nil {
			return err
		}
		return e.forkEach(ctx, tx, a, model.NodeCheckAction, nodeIDs(nodes), in)
	})
	if err != nil {
		return err
	}
	werr := e.waitChildren(ctx, a)
	if err := e.settle(ctx, cl.ID, a.Action, nil, nil); err != nil {
		return err
	}
	if werr != nil {
		return fmt.Errorf("Cluster check found unhealthy nodes: %w", werr)
	}
	a.StatusReason = "Cluster checking completed."
	return nil
}

func (e *Engine) doClusterRecover(ctx context.Context, a *model.Action) error {
	in, err := inputsOf[model.RecoverInputs](a)
	if err != nil {
		return err
	}
	cl, err := e.begin(ctx, a)
	if err != nil {
		return err
	}
	nodes, err := e.store.ClusterNodes(ctx, cl.ID)
	if err != nil {
		return err
	}
	check := in.Check != nil && *in.Check
	var ids []string
	for _, n := range nodes {
		if check || n.Status != model.NodeActive {
			ids = append(ids, n.ID)
		}
	}
	inputs := model.RecoverInputs{Operation: in.Operation, OperationParams: in.OperationParams, Check: &check}
	err = e.runStage(ctx, a, "recover", func(tx store.Store) error {
		if err := e.setClusterStatus(ctx, tx, cl.ID, model.ClusterRecovering, "Recovery in progress", nil); err != nil {
			return err
		}
		return e.forkEach(ctx, tx, a, model.NodeRecoverAction, ids, inputs)
	})
	if err != nil {
		return err
	}
	werr := e.waitChildren(ctx, a)
	if werr == nil {
		if in.CheckCapacity != nil && *in.CheckCapacity {
			werr = e.restoreCapacity(ctx, a, cl.ID)
		}
	}
	if err := e.settle(ctx, cl.ID, a.Action, nil, werr); err != nil {
		return err
	}
	if werr != nil {
		return fmt.Errorf("Failed in recovering the cluster: %w", werr)
	}
	return e.end(ctx, a, cl.ID, "Cluster recovery succeeded.")
}
