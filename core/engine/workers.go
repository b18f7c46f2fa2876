package engine

import (
	"context"
	"time"
)

func (e *Engine) wake() {
	for _, ch := range []chan struct{}{e.wakeCluster, e.wakeNode} {
		select {
		case ch <- struct{}{}:
		default:
		}
	}
}

func (e *Engine) worker(ctx context.Context, nodeLevel bool) {
	defer e.wg.Done()
	wake := e.wakeCluster
	max := 1
	if nodeLevel {
		wake, max = e.wakeNode, e.cfg.NodeBatch
	}
	t := time.NewTicker(e.cfg.Poll)
	defer t.Stop()
	for {
		actions, err := e.store.ClaimActions(ctx, e.cfg.EngineID, e.cfg.HostName, e.cfg.Now().Add(e.cfg.Lease), nodeLevel, max)
		if err != nil && ctx.Err() == nil {
			e.log.Error("claim actions", "error", err)
		}
		if len(actions) > 0 {
			// Another worker may find more right away.
			e.wakeOne(wake)
			if nodeLevel {
				e.runNodeBatch(ctx, actions)
			} else {
				e.runAction(ctx, actions[0])
			}
			continue
		}
		select {
		case <-ctx.Done():
			return
		case <-wake:
		case <-t.C:
		}
	}
}

func (e *Engine) wakeOne(ch chan struct{}) {
	select {
	case ch <- struct{}{}:
	default:
	}
}

// leaseLoop renews the leases of running actions and reclaims actions whose
// lease expired.
func (e *Engine) leaseLoop(ctx context.Context) {
	defer e.wg.Done()
	t := time.NewTicker(e.cfg.Lease / 3)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		// Take over work whose owner stopped renewing: another agent on the
		// same database that crashed.
		if n, err := e.store.ReclaimActions(ctx, "", e.cfg.Now()); err != nil && ctx.Err() == nil {
			e.log.Error("reclaim expired leases", "error", err)
		} else if n > 0 {
			e.log.Warn("took over actions whose lease expired", "count", n)
			e.wake()
		}
		e.mu.Lock()
		ids := make([]string, 0, len(e.running))
		for id := range e.running {
			ids = append(ids, id)
		}
		e.mu.Unlock()
		if len(ids) == 0 {
			continue
		}
		if err := e.store.RenewLeases(ctx, e.cfg.EngineID, ids, e.cfg.Now().Add(e.cfg.Lease)); err != nil && ctx.Err() == nil {
			e.log.Error("renew leases", "error", err)
		}
	}
}

func (e *Engine) track(id string, cancel context.CancelFunc) {
	e.mu.Lock()
	e.running[id] = cancel
	e.mu.Unlock()
}

func (e *Engine) untrack(id string) {
	e.mu.Lock()
	delete(e.running, id)
	e.mu.Unlock()
}
