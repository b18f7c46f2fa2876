package engine

import (
	"context"
	"time"

	"github.com/grovehq/grove/core/orchestrator"
	"github.com/grovehq/grove/core/store"
)

// reapLoop keeps finished actions and events per cluster and per node to the
// retention limit (§B.6): oldest first, never anything still running.
func (e *Engine) reapLoop(ctx context.Context) {
	defer e.wg.Done()
	if e.cfg.Retention < 0 {
		return
	}
	t := time.NewTicker(e.cfg.ReapInterval)
	defer t.Stop()
	for {
		if err := e.Reap(ctx); err != nil && ctx.Err() == nil {
			e.log.Error("reap actions and events", "error", err)
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// Reap runs the reaper once.
func (e *Engine) Reap(ctx context.Context) error {
	keep := e.cfg.Retention
	clusters, err := e.store.ListClusters(ctx, store.ListOpts{})
	if err != nil {
		return err
	}
	deleted := 0
	for _, cl := range clusters {
		targets, err := e.store.CrowdedTargets(ctx, cl.ID, keep)
		if err != nil {
			return err
		}
		for _, target := range targets {
			stamps, err := e.store.ActionStamps(ctx, target)
			if err != nil {
				return err
			}
			ids := orchestrator.Reap(items(stamps), keep)
			if err := e.store.DeleteActions(ctx, ids); err != nil {
				return err
			}
			deleted += len(ids)
		}
		objs, err := e.store.CrowdedEventObjects(ctx, cl.ID, keep)
		if err != nil {
			return err
		}
		for _, oid := range objs {
			stamps, err := e.store.EventStamps(ctx, oid)
			if err != nil {
				return err
			}
			ids := orchestrator.Reap(items(stamps), keep)
			if err := e.store.DeleteEvents(ctx, ids); err != nil {
				return err
			}
			deleted += len(ids)
		}
	}
	if deleted > 0 {
		e.log.Debug("reaped old actions and events", "count", deleted)
	}
	return nil
}

func items(stamps []store.Stamp) []orchestrator.Item {
	out := make([]orchestrator.Item, len(stamps))
	for i, s := range stamps {
		out[i] = orchestrator.Item{ID: s.ID, At: s.At, Terminal: s.Terminal}
	}
	return out
}
