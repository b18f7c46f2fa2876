package engine

import (
	"context"
	"fmt"
	"time"

	"github.com/grovehq/grove/core/model"
	"github.com/grovehq/grove/core/orchestrator"
	"github.com/grovehq/grove/core/store"
	"github.com/grovehq/grove/plugins/sdk"
	"github.com/grovehq/grove/plugins/sdk/scaling"
)

// dataPlan is the key of the size plan in an action's data.
const dataPlan = "plan"

// sizePlan is what a resize, scale or update decided, stored in the action's
// data (data.plan) so a resumed action keeps its decision.
type sizePlan struct {
	Desired int      `json:"desired"`
	Min     *int     `json:"min,omitzero"`
	Max     *int     `json:"max,omitzero"`
	Create  int      `json:"create"`
	Victims []string `json:"victims"`
	Destroy bool     `json:"destroy"`
	Grace   int      `json:"grace"`
}

// sizeRequest is what planResize decides from: the action's kind, its
// typed inputs, and what the policies put in its data.
type sizeRequest struct {
	Action string
	// Count is a scale-out's or scale-in's count, when given.
	Count       *int
	Resize      scaling.Resize
	Deletion    model.DeletionData
	HasDeletion bool
	Creation    model.CreationData
}

// sizeRequestOf decodes the inputs and policy data of a resize, scale-out
// or scale-in.
func sizeRequestOf(a *model.Action) (sizeRequest, error) {
	req := sizeRequest{Action: a.Action}
	var err error
	if req.Deletion, req.HasDeletion, err = dataOf[model.DeletionData](a, model.DataDeletion); err != nil {
		return req, err
	}
	if req.Creation, _, err = dataOf[model.CreationData](a, model.DataCreation); err != nil {
		return req, err
	}
	if a.Action == model.ClusterResizeAction {
		in, err := inputsOf[model.ClusterResizeInputs](a)
		if err != nil {
			return req, err
		}
		// The SDK's resize inputs are the same fields (a test keeps their
		// keys equal), so its conversion to a scaling request serves both.
		req.Resize = sdk.ClusterResizeInputs(in).Resize()
		return req, nil
	}
	in, err := inputsOf[model.ClusterScaleInputs](a)
	req.Count = in.Count
	return req, err
}

// sizeOf is a cluster and its nodes as the size decisions see them.
func (e *Engine) sizeOf(cl *model.Cluster, nodes []*model.Node) orchestrator.Size {
	return orchestrator.Size{Desired: cl.DesiredCapacity, Min: cl.MinSize, Max: cl.MaxSize, Nodes: slotsOf(nodes), MaxNodes: e.cfg.MaxNodesPerCluster}
}

// slotsOf is nodes as victim picking sees them; a node's host is its data's
// "host".
func slotsOf(nodes []*model.Node) []orchestrator.Slot {
	slots := make([]orchestrator.Slot, len(nodes))
	for i, n := range nodes {
		host, _ := n.Data["host"].(string)
		slots[i] = orchestrator.Slot{ID: n.ID, Index: n.Index, Host: host, Running: n.Status == model.NodeActive}
	}
	return slots
}

// chosen is what the policies decided, as the size decisions take it.
func (r sizeRequest) chosen() orchestrator.Chosen {
	c := orchestrator.Chosen{CreateCount: r.Creation.Count}
	if r.HasDeletion {
		c.Deletion = &orchestrator.Deletion{Candidates: r.Deletion.Candidates, Count: r.Deletion.Count}
	}
	return c
}

// planResize decides a resize, scale-in or scale-out against the current
// nodes, honouring what the policies put in the action's data; the
// decision is core/orchestrator's.
func (e *Engine) planResize(req sizeRequest, cl *model.Cluster, nodes []*model.Node) (sizePlan, error) {
	size, chosen := e.sizeOf(cl, nodes), req.chosen()
	var d orchestrator.SizeDecision
	var err error
	switch req.Action {
	case model.ClusterScaleOutAction:
		d, err = orchestrator.PlanScaleOut(size, req.Count, chosen)
	case model.ClusterScaleInAction:
		d, err = orchestrator.PlanScaleIn(size, req.Count, chosen)
	default: // resize
		r := req.Resize
		d, err = orchestrator.PlanResize(size, orchestrator.ResizeRequest{AdjustmentType: r.AdjustmentType, Number: r.Number,
			MinSize: r.MinSize, MaxSize: r.MaxSize, MinStep: r.MinStep, Strict: r.Strict}, chosen)
	}
	if err != nil {
		return sizePlan{}, err
	}
	return sizePlan{Desired: d.Desired, Min: d.Min, Max: d.Max, Create: d.Create, Victims: d.Victims,
		Destroy: req.Deletion.Destroy(), Grace: req.Deletion.GracePeriod}, nil
}

func (e *Engine) doResize(ctx context.Context, a *model.Action) error {
	cl, err := e.begin(ctx, a)
	if err != nil {
		return err
	}
	plan, planned, err := dataOf[sizePlan](a, dataPlan)
	if err != nil {
		return err
	}
	if !planned {
		req, err := sizeRequestOf(a)
		if err != nil {
			return err
		}
		nodes, err := e.store.ClusterNodes(ctx, cl.ID)
		if err != nil {
			return err
		}
		if plan, err = e.planResize(req, cl, nodes); err != nil {
			return err
		}
		if err := setData(a, dataPlan, plan); err != nil {
			return err
		}
	}
	reason := map[string]string{model.ClusterResizeAction: "Cluster resize started.", model.ClusterScaleOutAction: "Cluster scale out started.",
		model.ClusterScaleInAction: "Cluster scale in started."}[a.Action]
	if err := e.applySize(ctx, a, cl, plan, reason); err != nil {
		return err
	}
	return e.end(ctx, a, cl.ID, map[string]string{model.ClusterResizeAction: "Cluster resize succeeded.", model.ClusterScaleOutAction: "Cluster scaling succeeded.",
		model.ClusterScaleInAction: "Cluster scaling succeeded."}[a.Action])
}

// applySize carries out a size plan: new bounds, removals, creations, then
// the cluster's status.
func (e *Engine) applySize(ctx context.Context, a *model.Action, cl *model.Cluster, plan sizePlan, reason string) error {
	err := e.runStage(ctx, a, "size", func(tx store.Store) error {
		return e.setClusterStatus(ctx, tx, cl.ID, model.ClusterResizing, reason, func(c *model.Cluster) {
			c.DesiredCapacity = plan.Desired
			if plan.Min != nil {
				c.MinSize = *plan.Min
			}
			if plan.Max != nil {
				c.MaxSize = *plan.Max
			}
		})
	})
	if err != nil {
		return err
	}
	if len(plan.Victims) > 0 && !stageDone(a, "remove") && plan.Grace > 0 {
		if err := sleepCtx(ctx, time.Duration(plan.Grace)*time.Second); err != nil {
			return err
		}
	}
	if err := e.removeNodes(ctx, a, plan.Victims, plan.Destroy); err != nil {
		return err
	}
	err = e.runStage(ctx, a, "grow", func(tx store.Store) error { return e.forkCreate(ctx, tx, a, cl.ID, plan.Create) })
	if err != nil {
		return err
	}
	werr := e.waitChildren(ctx, a)
	if werr != nil {
		werr = fmt.Errorf("Failed in resizing the cluster: %w", werr)
	}
	if err := e.settle(ctx, cl.ID, a.Action, nil, werr); err != nil {
		return err
	}
	return werr
}

// restoreCapacity creates or deletes nodes until the node count matches
// desired_capacity (recover with check_capacity).
func (e *Engine) restoreCapacity(ctx context.Context, a *model.Action, clusterID string) error {
	cl, err := e.store.GetCluster(ctx, clusterID)
	if err != nil {
		return err
	}
	nodes, err := e.store.ClusterNodes(ctx, clusterID)
	if err != nil {
		return err
	}
	diff := cl.DesiredCapacity - len(nodes)
	err = e.runStage(ctx, a, "capacity", func(tx store.Store) error {
		if diff > 0 {
			return e.forkCreate(ctx, tx, a, clusterID, diff)
		}
		return e.forkEach(ctx, tx, a, model.NodeDeleteAction, orchestrator.Victims(slotsOf(nodes), nil, -diff), model.NodeDeleteInputs{})
	})
	if err != nil {
		return err
	}
	return e.waitChildren(ctx, a)
}
