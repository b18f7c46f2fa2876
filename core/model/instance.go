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
