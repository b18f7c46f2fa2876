package store

import "time"

//go:generate go run observed_gen.go

// Observed is a Store that reports how long each of its calls took, by the
// Store method's name: the agent's store latency metric. A transaction is
// reported as InTx (its whole length) and the calls made inside it under
// their own names. Its methods are generated (observed_methods.go).
type Observed struct {
	s   Store
	obs func(method string, took time.Duration)
}

// Observe wraps s; obs is called after every call but Close and Dialect.
func Observe(s Store, obs func(method string, took time.Duration)) *Observed {
	return &Observed{s: s, obs: obs}
}

// Unwrap returns the store it wraps.
func (w *Observed) Unwrap() Store { return w.s }

func (w *Observed) observe(method string, start time.Time) { w.obs(method, time.Since(start)) }

// Reads implements Reader: the wrapped store's read pool, observed too.
func (w *Observed) Reads() Store {
	r := ReadsOf(w.s)
	if r == w.s {
		return w
	}
	return &Observed{s: r, obs: w.obs}
}
