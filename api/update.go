package api

// UpdateProgress is a rolling update's progress, shown under "update" in a
// cluster's data (and the update action's outputs) so that `grove cluster
// status` and other clients can follow it.
type UpdateProgress struct {
	// Status is one of the Update* statuses.
	Status string `json:"status"`
	// Target is the profile the nodes move to; Previous the one they leave.
	Target   string `json:"target_profile"`
	Previous string `json:"previous_profile"`
	// RollingBack is set when the update is a rollback.
	RollingBack bool   `json:"rolling_back"`
	Order       string `json:"order"`
	Batch       int    `json:"batch"`
	Batches     int    `json:"batches"`
	Total       int    `json:"total"`
	Updated     int    `json:"updated"`
	Failures    int    `json:"failures"`
	// FailedNodes lists the nodes whose update failed; never null.
	FailedNodes []string `json:"failed_nodes"`
	// ActionID is the action that runs the update.
	ActionID  string `json:"action"`
	UpdatedAt string `json:"updated_at"`
}

// Statuses of a rolling update.
const (
	UpdateUpdating    = "updating"
	UpdateRollingBack = "rolling back"
	// UpdatePaused: failures passed max_failure_ratio; the cluster actions
	// update_resume and update_rollback continue it.
	UpdatePaused = "paused"
	// UpdateStopped: the action was cancelled or ran out of time.
	UpdateStopped    = "stopped"
	UpdateCompleted  = "completed"
	UpdateRolledBack = "rolled back"
)
