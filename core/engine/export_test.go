package engine

import (
	"context"
	"time"

	"github.com/grovehq/grove/core/model"
)

// WakesArmed reports whether the engine has a timer armed to run its
// health loop at t (wakeHealthAt).
func (e *Engine) WakesArmed(t time.Time) bool {
	e.wakeMu.Lock()
	defer e.wakeMu.Unlock()
	_, ok := e.wakes[t.UnixNano()]
	return ok
}

// Fault marks a running cluster faulted and propagates the fault, as a
// health round does when one of its nodes dies (faulted).
func (e *Engine) Fault(ctx context.Context, cl *model.Cluster) error { return e.faulted(ctx, cl) }

// Recover clears a cluster's fault and propagates its start, as a health
// round does once all of its nodes run again (recovered).
func (e *Engine) Recover(ctx context.Context, cl *model.Cluster) error {
	return e.recovered(ctx, cl, true)
}

// Cascades reports how many dependency cascades the engine carries out in
// the project, and how many of those wait for an earlier one to end
// (cascadeInBackground).
func (e *Engine) Cascades(project string) (underWay, queued int) {
	e.cascadeMu.Lock()
	defer e.cascadeMu.Unlock()
	return e.cascades[project], e.cascadesQueued[project]
}
