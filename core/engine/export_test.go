package engine

import "time"

// WakesArmed reports whether the engine has a timer armed to run its
// health loop at t (wakeHealthAt).
func (e *Engine) WakesArmed(t time.Time) bool {
	e.wakeMu.Lock()
	defer e.wakeMu.Unlock()
	_, ok := e.wakes[t.UnixNano()]
	return ok
}
