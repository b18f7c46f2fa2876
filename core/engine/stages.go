package engine

import (
	"context"
	"fmt"
	"maps"

	"github.com/grovehq/grove/api"
	"github.com/grovehq/grove/core/model"
	"github.com/grovehq/grove/core/store"
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
	err := e.store.InTx(ctx, func(tx store.Store) error {
		if err := fn(tx); err != nil {
			return err
		}
		a.Data["stage."+stage] = true
		return tx.UpdateActions(ctx, []*model.Action{a})
	})
	if err == nil {
		// A stage may have forked node actions: idle workers would only
		// find them at their next poll.
		e.wake()
	}
	return err
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

// forkCreateInParts runs the stage that forks a cluster's count new nodes
// (forkCreate) in transactions of Config.ForkPart nodes, so that the
// workers start on the first part's children while the rest are forked.
// Forked in one transaction, every child waited for the last: on
// PostgreSQL the workers sat idle for the 0.4–0.6 s that forking 10,000
// nodes takes, a third of the create. Each part commits its nodes, its
// children, the cluster's next index and the count forked so far
// ("forked.<stage>" in the action's data) together, so an action
// reclaimed after a crash forks only the nodes it had not, whatever part
// size the agent that resumes it uses; the last part sets the stage's
// marker instead. first runs in the first part's transaction (the
// cluster's status).
func (e *Engine) forkCreateInParts(ctx context.Context, a *model.Action, stage, clusterID string, count int, first func(tx store.Store) error) error {
	if stageDone(a, stage) {
		return nil
	}
	key := "forked." + stage
	done, _, err := dataOf[int](a, key)
	if err != nil {
		return err
	}
	if done < 0 || done > count {
		return fmt.Errorf("The %s action %s has data Grove cannot read: data.%s must be between 0 and %d, got %d.", a.Action, a.ID, key, count, done)
	}
	for {
		n := min(e.cfg.ForkPart, count-done)
		last := done+n >= count
		// A failed part leaves the action as the store has it.
		data, outputs := maps.Clone(a.Data), maps.Clone(a.Outputs)
		err := e.store.InTx(ctx, func(tx store.Store) error {
			if done == 0 && first != nil {
				if err := first(tx); err != nil {
					return err
				}
			}
			if _, err := e.forkCreateFrom(ctx, tx, a, clusterID, "", done, n); err != nil {
				return err
			}
			if last {
				delete(a.Data, key)
				a.Data["stage."+stage] = true
			} else {
				a.Data[key] = done + n
			}
			return tx.UpdateActions(ctx, []*model.Action{a})
		})
		if err != nil {
			a.Data, a.Outputs = data, outputs
			return err
		}
		e.wake()
		if last {
			return nil
		}
		done += n
	}
}

// forkCreate creates count nodes in INIT with their NODE_CREATE children.
func (e *Engine) forkCreate(ctx context.Context, tx store.Store, a *model.Action, clusterID string, count int) error {
	_, err := e.forkCreateWith(ctx, tx, a, clusterID, "", count)
	return err
}

// forkCreateWith is forkCreate with the nodes' profile chosen (empty: the
// cluster's); it returns the new nodes' ids.
func (e *Engine) forkCreateWith(ctx context.Context, tx store.Store, a *model.Action, clusterID, profileID string, count int) ([]string, error) {
	return e.forkCreateFrom(ctx, tx, a, clusterID, profileID, 0, count)
}

// forkCreateFrom is forkCreateWith for the nodes first to first+count-1 of
// a fork made in parts (forkCreateInParts): the action's placements are
// numbered over the whole fork.
func (e *Engine) forkCreateFrom(ctx context.Context, tx store.Store, a *model.Action, clusterID, profileID string, first, count int) ([]string, error) {
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
	placements := placement.Placements[min(first, len(placement.Placements)):]
	for i := range nodes {
		idx := cl.NextIndex + i
		n := &model.Node{ID: e.rowID(), Name: e.randName(format, idx), ClusterID: cl.ID, ProfileID: profileID, User: a.User, Project: a.Project,
			Index: idx, InitAt: now, Status: model.NodeInit, StatusReason: "Initializing", Data: map[string]any{}, Metadata: map[string]any{}, Dependents: map[string]any{}}
		if i < len(placements) {
			n.Data["placement"] = placements[i]
		}
		nodes[i] = n
		if kids[i], err = e.child(a, model.NodeCreateAction, n.ID, model.NodeCreateInputs{}); err != nil {
			return nil, err
		}
	}
	if hostLocal(prof.Type) {
		if err := e.placeOnHosts(ctx, tx, nodes); err != nil {
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

// An action's outputs are decoded on every read of the action, so a list of
// node ids as long as the cluster would make GET /v1/actions/{id} cost what
// the cluster weighs (benchmarks.md). A list in the outputs keeps at most
// api.MaxInlineIDs ids, the bound the API puts on a cluster's node ids:
// below it the list is Senlin's, whole; past it the list holds its first
// api.MaxInlineIDs ids and key+"_count" counts the whole list. The rest stay
// reachable as the action's children or the cluster's nodes (api.md).

// countKey names the output that counts a bounded list's ids.
func countKey(key string) string { return key + "_count" }

// setIDs records node ids under key in the action's outputs, bounded.
func setIDs(a *model.Action, key string, ids []string) {
	delete(a.Outputs, countKey(key))
	if len(ids) > api.MaxInlineIDs {
		a.Outputs[countKey(key)] = len(ids)
		ids = ids[:api.MaxInlineIDs:api.MaxInlineIDs]
	}
	a.Outputs[key] = ids
}

// addOutput appends node ids to a list in the action's outputs, bounded as
// setIDs bounds it: past the bound only the count grows.
func addOutput(a *model.Action, key string, ids []string) error {
	var had []string
	if err := decodeDoc(a.Outputs[key], &had); err != nil {
		return fmt.Errorf("The %s action %s has outputs Grove cannot read: %s.", a.Action, a.ID, docError("outputs."+key, err))
	}
	total := len(had)
	if doc, ok := a.Outputs[countKey(key)]; ok {
		if err := decodeDoc(doc, &total); err != nil || total < len(had) {
			return fmt.Errorf("The %s action %s has outputs Grove cannot read: outputs.%s must be a whole number at least the length of outputs.%s, got %v.",
				a.Action, a.ID, countKey(key), key, doc)
		}
	}
	total += len(ids)
	room := max(api.MaxInlineIDs-len(had), 0)
	a.Outputs[key] = append(had, ids[:min(room, len(ids))]...)
	if total > api.MaxInlineIDs {
		a.Outputs[countKey(key)] = total
	}
	return nil
}

// forkEach forks one node action per node, each with the typed inputs given.
func (e *Engine) forkEach(ctx context.Context, tx store.Store, a *model.Action, action string, nodeIDs []string, inputs any) error {
	_, err := e.forkEachIDs(ctx, tx, a, action, nodeIDs, inputs)
	return err
}

// forkEachIDs is forkEach that also returns the children's ids, for a stage
// that records which children are its own (a rolling update's batch).
func (e *Engine) forkEachIDs(ctx context.Context, tx store.Store, a *model.Action, action string, nodeIDs []string, inputs any) ([]string, error) {
	if len(nodeIDs) == 0 {
		return nil, nil
	}
	kids := make([]*model.Action, len(nodeIDs))
	ids := make([]string, len(nodeIDs))
	for i, id := range nodeIDs {
		var err error
		if kids[i], err = e.child(a, action, id, inputs); err != nil {
			return nil, err
		}
		ids[i] = kids[i].ID
	}
	return ids, tx.CreateActions(ctx, kids)
}

// settle re-evaluates a cluster's status after an operation, Senlin's
// eval_status: mutate may adjust desired, min and max first. opErr, when
// set, is appended to the reason.
func (e *Engine) settle(ctx context.Context, clusterID, op string, mutate func(cl *model.Cluster, count int), opErr error) error {
	// It records how an operation ended, also one cut short by its context.
	ctx, cancel := detached(ctx)
	defer cancel()
	// The kept counts (migration 0013), not the nodes: settling a create
	// of 100,000 nodes read and decoded every one of them.
	counts, err := e.store.CountNodesByStatus(ctx, clusterID)
	if err != nil {
		return err
	}
	total := 0
	for _, n := range counts {
		total += n
	}
	active := counts[model.NodeActive]
	return e.store.InTx(ctx, func(tx store.Store) error {
		cl, err := tx.GetCluster(ctx, clusterID)
		if err != nil {
			return err
		}
		if mutate != nil {
			mutate(cl, total)
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

func nodeIDs(nodes []*model.Node) []string {
	out := make([]string, len(nodes))
	for i, n := range nodes {
		out[i] = n.ID
	}
	return out
}
