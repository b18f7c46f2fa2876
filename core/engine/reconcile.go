package engine

import (
	"context"

	"github.com/grovehq/grove/core/model"
	"github.com/grovehq/grove/core/store"
)

// reconcileNodes settles nodes left in a transitional status with no action
// that will finish them (the action ended, or was cancelled, while the agent
// was down): the driver's check decides whether they are ACTIVE or ERROR.
// Nodes whose action is still pending are left to it: reclaimed actions
// re-run, and drivers make create and delete idempotent.
func (e *Engine) reconcileNodes(ctx context.Context) error {
	var stuck []*model.Node
	for _, status := range []string{model.NodeCreating, model.NodeDeleting, model.NodeUpdating, model.NodeRecovering} {
		nodes, err := e.store.ListNodes(ctx, store.ListOpts{Filters: map[string][]string{"status": {status}}})
		if err != nil {
			return err
		}
		for _, n := range nodes {
			if n.Host != "" && n.Host != e.cfg.HostName {
				continue // its own host's agent settles it
			}
			active, err := e.store.ActiveActions(ctx, n.ID)
			if err != nil {
				return err
			}
			if len(active) == 0 {
				stuck = append(stuck, n)
			}
		}
	}
	byProfile := map[string][]*model.Node{}
	for _, n := range stuck {
		byProfile[n.ProfileID] = append(byProfile[n.ProfileID], n)
	}
	for _, nodes := range byProfile {
		res := e.checkNodes(ctx, nodes, false)
		for _, n := range nodes {
			if err := res[n.ID]; err != nil {
				e.log.Warn("node left in a transitional status could not be checked", "node", n.ID, "error", err)
			}
		}
		e.log.Info("reconciled nodes left in a transitional status", "count", len(nodes))
	}
	return nil
}
