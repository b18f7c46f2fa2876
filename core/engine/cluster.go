package engine

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/grovehq/grove/core/model"
	"github.com/grovehq/grove/core/orchestrator"
	"github.com/grovehq/grove/core/store"
	"github.com/grovehq/grove/plugins/sdk"
	"github.com/grovehq/grove/plugins/sdk/scaling"
)

// Cluster handlers run under the cluster's exclusive lock. Each step that
// writes is recorded in the action's data ("stage.<name>") in the same
// transaction, so an action reclaimed after a crash resumes without redoing
// what is done: nodes are created once, children forked once.

// begin takes the cluster's exclusive lock and runs the bound policies'
// BEFORE checks: the prologue of every cluster action that policies see.
func (e *Engine) begin(ctx context.Context, a *model.Action) (*model.Cluster, error) {
	cl, err := e.lockCluster(ctx, a)
	if err != nil {
		return nil, err
	}
	if err := e.checkPolicies(ctx, a, cl.ID, PhaseBefore); err != nil {
		return nil, err
	}
	return cl, nil
}

// end runs the AFTER checks and records the action's success reason.
func (e *Engine) end(ctx context.Context, a *model.Action, clusterID, reason string) error {
	if err := e.checkPolicies(ctx, a, clusterID, PhaseAfter); err != nil {
		return err
	}
	a.StatusReason = reason
	return nil
}

func (e *Engine) lockCluster(ctx context.Context, a *model.Action) (*model.Cluster, error) {
	if err := e.lock(ctx, func() (bool, error) { return e.store.AcquireClusterLock(ctx, a.ClusterID, a.ID, store.LockCluster) }); err != nil {
		return nil, err
	}
	return e.store.GetCluster(ctx, a.ClusterID)
}

func stageDone(a *model.Action, stage string) bool {
	done, _ := a.Data["stage."+stage].(bool)
	return done
}

// runStage runs fn once: its writes and the stage marker commit together.
func (e *Engine) runStage(ctx context.Context, a *model.Action, stage string, fn func(tx store.Store) error) error {
	if stageDone(a, stage) {
		return nil
	}
	return e.store.InTx(ctx, func(tx store.Store) error {
		if err := fn(tx); err != nil {
			return err
		}
		a.Data["stage."+stage] = true
		return tx.UpdateActions(ctx, []*model.Action{a})
	})
}

func (e *Engine) setClusterStatus(ctx context.Context, tx store.Store, clusterID, status, reason string, mutate func(*model.Cluster)) error {
	cl, err := tx.GetCluster(ctx, clusterID)
	if err != nil {
		return err
	}
	cl.Status, cl.StatusReason = status, reason
	if mutate != nil {
		mutate(cl)
	}
	return tx.UpdateCluster(ctx, cl)
}

// child builds a derived node action with its typed inputs.
func (e *Engine) child(parent *model.Action, action, nodeID string, inputs any) (*model.Action, error) {
	c, err := e.newAction(Caller{User: parent.User, Project: parent.Project}, action, nodeID, parent.ClusterID, inputs, parent.Timeout)
	if err != nil {
		return nil, err
	}
	c.Cause, c.ParentID = model.CauseDerived, parent.ID
	return c, nil
}

// forkCreate creates count nodes in INIT with their NODE_CREATE children.
func (e *Engine) forkCreate(ctx context.Context, tx store.Store, a *model.Action, clusterID string, count int) error {
	_, err := e.forkCreateWith(ctx, tx, a, clusterID, "", count)
	return err
}

// forkCreateWith is forkCreate with the nodes' profile chosen (empty: the
// cluster's); it returns the new nodes' ids.
func (e *Engine) forkCreateWith(ctx context.Context, tx store.Store, a *model.Action, clusterID, profileID string, count int) ([]string, error) {
	if count <= 0 {
		return nil, nil
	}
	cl, err := tx.GetCluster(ctx, clusterID)
	if err != nil {
		return nil, err
	}
	if profileID == "" {
		profileID = cl.ProfileID
	}
	prof, err := tx.GetProfile(ctx, profileID)
	if err != nil {
		return nil, err
	}
	now := e.cfg.Now()
	format := configString(cl.Config, "node.name.format")
	nodes := make([]*model.Node, count)
	kids := make([]*model.Action, count)
	placement, _, err := dataOf[model.PlacementData](a, model.DataPlacement)
	if err != nil {
		return nil, err
	}
	placements := placement.Placements
	for i := range nodes {
		idx := cl.NextIndex + i
		n := &model.Node{ID: e.newID(), Name: e.randName(format, idx), ClusterID: cl.ID, ProfileID: profileID, User: a.User, Project: a.Project,
			Index: idx, InitAt: now, Status: model.NodeInit, StatusReason: "Initializing", Data: map[string]any{}, Metadata: map[string]any{}, Dependents: map[string]any{}}
		if i < len(placements) {
			n.Data["placement"] = placements[i]
		}
		nodes[i] = n
		if kids[i], err = e.child(a, model.NodeCreateAction, n.ID, model.NodeCreateInputs{}); err != nil {
			return nil, err
		}
	}
	if err := e.preparePorts(ctx, prof, nodes); err != nil {
		return nil, err
	}
	cl.NextIndex += count
	if err := tx.UpdateCluster(ctx, cl); err != nil {
		return nil, err
	}
	if err := tx.CreateNodes(ctx, nodes); err != nil {
		return nil, err
	}
	ids := make([]string, count)
	for i, n := range nodes {
		ids[i] = n.ID
	}
	if err := addOutput(a, "nodes_added", ids); err != nil {
		return nil, err
	}
	return ids, tx.CreateActions(ctx, kids)
}

// addOutput appends node ids to a list in the action's outputs.
func addOutput(a *model.Action, key string, ids []string) error {
	var had []string
	if err := decodeDoc(a.Outputs[key], &had); err != nil {
		return fmt.Errorf("The %s action %s has outputs Grove cannot read: %s.", a.Action, a.ID, docError("outputs."+key, err))
	}
	a.Outputs[key] = append(had, ids...)
	return nil
}

// forkEach forks one node action per node, each with the typed inputs given.
func (e *Engine) forkEach(ctx context.Context, tx store.Store, a *model.Action, action string, nodeIDs []string, inputs any) error {
	if len(nodeIDs) == 0 {
		return nil
	}
	kids := make([]*model.Action, len(nodeIDs))
	for i, id := range nodeIDs {
		var err error
		if kids[i], err = e.child(a, action, id, inputs); err != nil {
			return err
		}
	}
	return tx.CreateActions(ctx, kids)
}

// settle re-evaluates a cluster's status after an operation, Senlin's
// eval_status: mutate may adjust desired, min and max first. opErr, when
// set, is appended to the reason.
func (e *Engine) settle(ctx context.Context, clusterID, op string, mutate func(cl *model.Cluster, count int), opErr error) error {
	// It records how an operation ended, also one cut short by its context.
	ctx, cancel := detached(ctx)
	defer cancel()
	nodes, err := e.store.ClusterNodes(ctx, clusterID)
	if err != nil {
		return err
	}
	active := 0
	for _, n := range nodes {
		if n.Status == model.NodeActive {
			active++
		}
	}
	return e.store.InTx(ctx, func(tx store.Store) error {
		cl, err := tx.GetCluster(ctx, clusterID)
		if err != nil {
			return err
		}
		if mutate != nil {
			mutate(cl, len(nodes))
		}
		prev := cl.Status
		cl.Status, cl.StatusReason = EvalStatus(op, active, cl.DesiredCapacity, cl.MinSize, cl.MaxSize)
		if opErr != nil {
			cl.StatusReason += " " + opErr.Error()
		}
		now := e.cfg.Now()
		if prev == model.ClusterCreating && cl.CreatedAt == nil {
			cl.CreatedAt = &now
		} else {
			cl.UpdatedAt = &now
		}
		return tx.UpdateCluster(ctx, cl)
	})
}

func (e *Engine) doClusterCreate(ctx context.Context, a *model.Action) error {
	cl, err := e.lockCluster(ctx, a)
	if err != nil {
		return err
	}
	err = e.runStage(ctx, a, "create", func(tx store.Store) error {
		if err := e.setClusterStatus(ctx, tx, cl.ID, model.ClusterCreating, "Creation in progress", nil); err != nil {
			return err
		}
		return e.forkCreate(ctx, tx, a, cl.ID, cl.DesiredCapacity)
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
	}
	return werr
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

func (e *Engine) detach(ctx context.Context, cl *model.Cluster, b *model.Binding) error {
	pol, err := e.store.GetPolicy(ctx, b.PolicyID)
	if err != nil {
		return err
	}
	client, _, err := e.plugins.Client(ctx, "policy", pol.Type)
	if err != nil {
		return fmt.Errorf("detach policy '%s': %w", pol.Name, err)
	}
	snap, err := e.snapshot(ctx, cl)
	if err != nil {
		return err
	}
	if err := client.Detach(ctx, sdk.Spec{ID: pol.ID, Name: pol.Name, Type: pol.Type, Version: pol.Version, Properties: pol.Properties}, snap, b.Data); err != nil {
		return fmt.Errorf("detach policy '%s': %w", pol.Name, err)
	}
	return e.store.DeleteBinding(ctx, cl.ID, pol.ID)
}

func nodeIDs(nodes []*model.Node) []string {
	out := make([]string, len(nodes))
	for i, n := range nodes {
		out[i] = n.ID
	}
	return out
}

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
		req.Resize = resizeOf(in)
		return req, nil
	}
	in, err := inputsOf[model.ClusterScaleInputs](a)
	req.Count = in.Count
	return req, err
}

// resizeOf is the resize request of CLUSTER_RESIZE's inputs.
func resizeOf(in model.ClusterResizeInputs) scaling.Resize {
	r := scaling.Resize{Number: in.Number, MinSize: in.MinSize, MaxSize: in.MaxSize, Strict: in.Strict}
	if in.AdjustmentType != nil {
		r.AdjustmentType = *in.AdjustmentType
	}
	if in.MinStep != nil {
		r.MinStep = *in.MinStep
	}
	return r
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

// removeNodes deletes victims (destroy) or makes them orphans.
func (e *Engine) removeNodes(ctx context.Context, a *model.Action, victims []string, destroy bool) error {
	if len(victims) == 0 {
		return nil
	}
	a.Outputs["nodes_removed"] = victims
	return e.runStage(ctx, a, "remove", func(tx store.Store) error {
		if destroy {
			return e.forkEach(ctx, tx, a, model.NodeDeleteAction, victims, model.NodeDeleteInputs{})
		}
		return e.leave(ctx, tx, a, victims)
	})
}

// leave makes nodes orphans: no cluster, index -1.
func (e *Engine) leave(ctx context.Context, tx store.Store, a *model.Action, ids []string) error {
	nodes, err := tx.GetNodes(ctx, ids)
	if err != nil {
		return err
	}
	now := e.cfg.Now()
	var events []*model.Event
	for _, n := range nodes {
		n.ClusterID, n.Index, n.Role, n.UpdatedAt = "", -1, "", &now
		events = append(events, e.nodeEvent(a, n, model.NodeActive, "Node left the cluster."))
	}
	if err := tx.UpdateNodes(ctx, nodes); err != nil {
		return err
	}
	return tx.CreateEvents(ctx, events)
}

// join adds orphan nodes to a cluster, with the next indexes.
func (e *Engine) join(ctx context.Context, tx store.Store, a *model.Action, clusterID string, ids []string) error {
	cl, err := tx.GetCluster(ctx, clusterID)
	if err != nil {
		return err
	}
	nodes, err := tx.GetNodes(ctx, ids)
	if err != nil {
		return err
	}
	now := e.cfg.Now()
	var events []*model.Event
	for _, n := range nodes {
		n.ClusterID, n.Index, n.Role, n.UpdatedAt = cl.ID, cl.NextIndex, "", &now
		cl.NextIndex++
		events = append(events, e.nodeEvent(a, n, model.NodeActive, "Node joined the cluster."))
	}
	if err := tx.UpdateCluster(ctx, cl); err != nil {
		return err
	}
	if err := tx.UpdateNodes(ctx, nodes); err != nil {
		return err
	}
	return tx.CreateEvents(ctx, events)
}

func (e *Engine) nodeEvent(a *model.Action, n *model.Node, status, reason string) *model.Event {
	return &model.Event{ID: e.newID(), Timestamp: e.cfg.Now(), OID: n.ID, OName: n.Name, OType: "NODE", ClusterID: a.ClusterID, User: a.User,
		Project: a.Project, Action: a.Action, Status: status, StatusReason: reason, Level: model.LevelInfo, MetaData: map[string]any{"action": a.ID}}
}

func (e *Engine) doAddNodes(ctx context.Context, a *model.Action) error {
	cl, err := e.begin(ctx, a)
	if err != nil {
		return err
	}
	in, err := inputsOf[model.ClusterAddNodesInputs](a)
	if err != nil {
		return err
	}
	ids := in.Nodes
	err = e.runStage(ctx, a, "join", func(tx store.Store) error {
		nodes, err := tx.GetNodes(ctx, ids)
		if err != nil {
			return err
		}
		if len(nodes) != len(ids) {
			return errors.New("Some of the nodes to add no longer exist.")
		}
		for _, n := range nodes {
			if n.ClusterID != "" && n.ClusterID != cl.ID {
				return fmt.Errorf("The node '%s' joined another cluster meanwhile.", n.Name)
			}
			if n.Status != model.NodeActive {
				return fmt.Errorf("The node '%s' is %s; only ACTIVE nodes can be added.", n.Name, n.Status)
			}
		}
		a.Outputs["nodes_added"] = ids
		return e.join(ctx, tx, a, cl.ID, ids)
	})
	if err != nil {
		return err
	}
	if err := e.end(ctx, a, cl.ID, "Completed adding nodes."); err != nil {
		return err
	}
	return e.settle(ctx, cl.ID, a.Action, func(c *model.Cluster, count int) { c.DesiredCapacity = count }, nil)
}

func (e *Engine) doDelNodes(ctx context.Context, a *model.Action) error {
	cl, err := e.begin(ctx, a)
	if err != nil {
		return err
	}
	in, err := inputsOf[model.ClusterDelNodesInputs](a)
	if err != nil {
		return err
	}
	ids, destroy, grace, reduce := in.Candidates, in.DestroyAfterDeletion, 0, true
	del, decided, err := dataOf[model.DeletionData](a, model.DataDeletion)
	if err != nil {
		return err
	}
	if decided {
		destroy, grace, reduce = del.Destroy(), del.GracePeriod, del.Reduce()
	}
	members, err := e.store.ClusterNodes(ctx, cl.ID)
	if err != nil {
		return err
	}
	isMember := map[string]bool{}
	for _, n := range members {
		isMember[n.ID] = true
	}
	var victims []string
	for _, id := range ids {
		if isMember[id] || stageDone(a, "remove") {
			victims = append(victims, id)
		}
	}
	if !stageDone(a, "remove") && grace > 0 {
		if err := sleepCtx(ctx, time.Duration(grace)*time.Second); err != nil {
			return err
		}
	}
	if err := e.removeNodes(ctx, a, victims, destroy); err != nil {
		return err
	}
	werr := e.waitChildren(ctx, a)
	if werr != nil {
		werr = fmt.Errorf("Failed in deleting nodes: %w", werr)
	}
	if err := e.settle(ctx, cl.ID, a.Action, func(c *model.Cluster, count int) {
		if reduce {
			c.DesiredCapacity = count
		}
	}, werr); err != nil {
		return err
	}
	if werr != nil {
		return werr
	}
	return e.end(ctx, a, cl.ID, "Completed deleting nodes.")
}

func (e *Engine) doReplaceNodes(ctx context.Context, a *model.Action) error {
	cl, err := e.begin(ctx, a)
	if err != nil {
		return err
	}
	in, err := inputsOf[model.ClusterReplaceNodesInputs](a)
	if err != nil {
		return err
	}
	olds := slices.Sorted(maps.Keys(in.Candidates))
	news := make([]string, len(olds))
	for i, o := range olds {
		news[i] = in.Candidates[o]
	}
	err = e.runStage(ctx, a, "replace", func(tx store.Store) error {
		fresh, err := tx.GetNodes(ctx, news)
		if err != nil {
			return err
		}
		for _, n := range fresh {
			if n.ClusterID != "" || n.Status != model.NodeActive {
				return fmt.Errorf("The replacement node '%s' is no longer an ACTIVE orphan.", n.Name)
			}
		}
		if err := e.leave(ctx, tx, a, olds); err != nil {
			return err
		}
		return e.join(ctx, tx, a, cl.ID, news)
	})
	if err != nil {
		return err
	}
	if err := e.end(ctx, a, cl.ID, "Completed replacing nodes."); err != nil {
		return err
	}
	return e.settle(ctx, cl.ID, a.Action, nil, nil)
}

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

func (e *Engine) doClusterUpdate(ctx context.Context, a *model.Action) error {
	in, err := inputsOf[model.ClusterUpdateInputs](a)
	if err != nil {
		return err
	}
	cl, err := e.begin(ctx, a)
	if err != nil {
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
	return e.end(ctx, a, cl.ID, "Cluster update completed.")
}

func (e *Engine) doAttachPolicy(ctx context.Context, a *model.Action) error {
	in, err := inputsOf[model.ClusterAttachPolicyInputs](a)
	if err != nil {
		return err
	}
	cl, err := e.lockCluster(ctx, a)
	if err != nil {
		return err
	}
	policyID := in.PolicyID
	if _, err := e.store.GetBinding(ctx, cl.ID, policyID); err == nil {
		a.StatusReason = "Policy already attached."
		return nil
	}
	pol, err := e.store.GetPolicy(ctx, policyID)
	if err != nil {
		return err
	}
	bindings, err := e.store.ListBindings(ctx, cl.ID)
	if err != nil {
		return err
	}
	for _, b := range bindings {
		if other, err := e.store.GetPolicy(ctx, b.PolicyID); err == nil && other.Type == pol.Type {
			return fmt.Errorf("The cluster already has a %s policy ('%s'); a cluster takes at most one policy of a type.", pol.Type, other.Name)
		}
	}
	client, comp, err := e.plugins.Client(ctx, "policy", pol.Type)
	if err != nil {
		return err
	}
	snap, err := e.snapshot(ctx, cl)
	if err != nil {
		return err
	}
	data, err := client.Attach(ctx, sdk.Spec{ID: pol.ID, Name: pol.Name, Type: pol.Type, Version: pol.Version, Properties: pol.Properties}, snap)
	if err != nil {
		return fmt.Errorf("Failed in attaching policy '%s': %w", pol.Name, err)
	}
	enabled, priority := true, comp.DefaultPriority
	if in.Enabled != nil {
		enabled = *in.Enabled
	}
	if in.Priority != nil {
		priority = *in.Priority
	}
	if err := e.store.CreateBinding(ctx, &model.Binding{ID: e.newID(), ClusterID: cl.ID, PolicyID: pol.ID, Enabled: enabled, Priority: priority, Data: data}); err != nil {
		return err
	}
	a.StatusReason = "Policy attached."
	return nil
}

// boundPolicy locks the cluster and finds the binding the action is about.
func (e *Engine) boundPolicy(ctx context.Context, a *model.Action, policyID string) (*model.Cluster, *model.Binding, error) {
	cl, err := e.lockCluster(ctx, a)
	if err != nil {
		return nil, nil, err
	}
	b, err := e.store.GetBinding(ctx, cl.ID, policyID)
	if err != nil {
		return nil, nil, errors.New("The policy is not attached to the cluster.")
	}
	return cl, b, nil
}

func (e *Engine) doDetachPolicy(ctx context.Context, a *model.Action) error {
	in, err := inputsOf[model.ClusterDetachPolicyInputs](a)
	if err != nil {
		return err
	}
	cl, b, err := e.boundPolicy(ctx, a, in.PolicyID)
	if err != nil {
		return err
	}
	if err := e.detach(ctx, cl, b); err != nil {
		return err
	}
	a.StatusReason = "Policy detached."
	return nil
}

func (e *Engine) doUpdatePolicy(ctx context.Context, a *model.Action) error {
	in, err := inputsOf[model.ClusterUpdatePolicyInputs](a)
	if err != nil {
		return err
	}
	_, b, err := e.boundPolicy(ctx, a, in.PolicyID)
	if err != nil {
		return err
	}
	if in.Enabled != nil {
		b.Enabled = *in.Enabled
	}
	if in.Priority != nil {
		b.Priority = *in.Priority
	}
	if err := e.store.UpdateBinding(ctx, b); err != nil {
		return err
	}
	a.StatusReason = "Policy updated."
	return nil
}
