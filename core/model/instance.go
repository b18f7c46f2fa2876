package model

import "time"

// Instance is one host's instance of a failover or flex cluster: what that
// host's instance monitor keeps between rounds (docs/failover.md). The
// instance's status (up, down, warn, n/a) is not stored: it is read from
// the cluster's node on the host each round.
type Instance struct {
	ClusterID string
	Host      string
	// State is the monitor state (core/orchestrator/monitor's names).
	State string
	// Since is when the instance entered State.
	Since time.Time
	// Frozen is the instance's own frozen flag (freeze, thaw).
	Frozen bool
	// Outcome is how the action of an *ing state ended: empty while it
	// runs, else succeeded or failed.
	Outcome string
	// Restarts counts the restarts since the last clear.
	Restarts int
	// Reason says why the monitor took its last step.
	Reason string
	// Version is the row's write counter: a write names the version it
	// read and fails with a ConflictError if another writer came first.
	// Zero means the row is new.
	Version   int64
	UpdatedAt time.Time
}

// Expectation is the operator's pending cluster-wide order to a failover
// or flex cluster's instance monitors (start, stop, switch, giveback;
// OpenSVC's global_expect). Every host's monitor honours it until it is
// reached or cannot be, and then it is cleared: Kind empty, Reason saying
// how it ended.
type Expectation struct {
	ClusterID string
	// Kind is start, stop, switch or giveback (core/orchestrator/monitor's
	// Expect kinds); empty when none is pending.
	Kind string
	// Host is the switch's target.
	Host string
	// Since is when it was set, or cleared.
	Since time.Time
	// ActionID is the action that set it.
	ActionID string
	// Reason says how the last one ended once cleared.
	Reason string
	// Version is the row's write counter, as Instance's.
	Version   int64
	UpdatedAt time.Time
}
