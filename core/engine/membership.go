package engine

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/grovehq/grove/core/model"
	"github.com/grovehq/grove/core/store"
)

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
		setIDs(a, "nodes_added", ids)
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

// removeNodes deletes victims (destroy) or makes them orphans.
func (e *Engine) removeNodes(ctx context.Context, a *model.Action, victims []string, destroy bool) error {
	if len(victims) == 0 {
		return nil
	}
	setIDs(a, "nodes_removed", victims)
	// A deletion policy's lifecycle hook holds the deletions (not nodes
	// that only leave) until completed or timed out.
	hooks, hooked, err := dataOf[model.HooksData](a, model.DataHooks)
	if err != nil {
		return err
	}
	if hooked && destroy {
		if !hooks.Webhook() {
			return fmt.Errorf("Lifecycle hook type '%s' is not implemented; Grove implements type webhook with params.url.", hooks.Type)
		}
		return e.removeWithHook(ctx, a, victims, hooks)
	}
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
	return &model.Event{ID: e.rowID(), Timestamp: e.cfg.Now(), OID: n.ID, OName: n.Name, OType: "NODE", ClusterID: a.ClusterID, User: a.User,
		Project: a.Project, Action: a.Action, Status: status, StatusReason: reason, Level: model.LevelInfo, MetaData: map[string]any{"action": a.ID}}
}
