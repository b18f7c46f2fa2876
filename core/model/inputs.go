package model

// Typed action inputs and data. An action's inputs and data travel as JSON
// documents (Action.Inputs and Action.Data: the store, the API and policy
// plugins see them), and the engine reads and writes them only through the
// types below, whose JSON keys are the documents' keys. A pointer field is a
// key that is present only when set; a field without omitzero is a key that
// is always present (null when unset), as the documents have always been.

// ClusterCreateInputs are CLUSTER_CREATE's inputs: none, the new cluster's
// row holds the request.
type ClusterCreateInputs struct{}

// ClusterDeleteInputs are CLUSTER_DELETE's inputs.
type ClusterDeleteInputs struct {
	Force bool `json:"force"`
}

// ClusterUpdateInputs are CLUSTER_UPDATE's inputs: the fields a user
// changes, or the profiles of a paused rolling update that is resumed or
// rolled back (update_resume, update_rollback).
type ClusterUpdateInputs struct {
	Name     *string        `json:"name,omitzero"`
	Metadata map[string]any `json:"metadata,omitzero"`
	// Config holds the settings that change, merged into the cluster's.
	Config  map[string]any `json:"config,omitzero"`
	Timeout *int           `json:"timeout,omitzero"`
	// NewProfileID is the profile the nodes move to.
	NewProfileID string `json:"new_profile_id,omitzero"`
	// ProfileOnly changes the cluster's profile without updating its nodes;
	// set only by a user's update.
	ProfileOnly *bool `json:"profile_only,omitzero"`
	// PreviousProfileID and RollingBack are set only when a paused update
	// continues: the profile to roll back to, and whether the paused update
	// was itself a rollback.
	PreviousProfileID string      `json:"previous_profile_id,omitzero"`
	RollingBack       *bool       `json:"rolling_back,omitzero"`
	Size              *SizeInputs `json:"size,omitzero"`
}

// IsRollback reports whether the update rolls a paused update back.
func (in ClusterUpdateInputs) IsRollback() bool { return in.RollingBack != nil && *in.RollingBack }

// SizeInputs are the size settings a cluster update changes.
type SizeInputs struct {
	DesiredCapacity *int `json:"desired_capacity,omitzero"`
	MinSize         *int `json:"min_size,omitzero"`
	MaxSize         *int `json:"max_size,omitzero"`
}

// ClusterAddNodesInputs are CLUSTER_ADD_NODES's inputs: the ids of the
// orphan nodes that join.
type ClusterAddNodesInputs struct {
	Nodes []string `json:"nodes"`
}

// ClusterDelNodesInputs are CLUSTER_DEL_NODES's inputs, in Senlin's keys.
type ClusterDelNodesInputs struct {
	Candidates           []string `json:"candidates"`
	Count                int      `json:"count"`
	DestroyAfterDeletion bool     `json:"destroy_after_deletion"`
}

// ClusterMoveNodesInputs are CLUSTER_MOVE_NODES's inputs: the nodes to move
// off their hosts, in order, and why (host down, host draining).
type ClusterMoveNodesInputs struct {
	Nodes  []string `json:"nodes"`
	Reason string   `json:"reason,omitempty"`
}

// ClusterGlobalSyncInputs are CLUSTER_GLOBAL_SYNC's inputs, the global
// mode's decision: the hosts that get a new node, and the nodes shut down
// (deleted, not replaced elsewhere) with why.
type ClusterGlobalSyncInputs struct {
	Create   []string          `json:"create,omitempty"`
	Shutdown []string          `json:"shutdown,omitempty"`
	Reasons  map[string]string `json:"reasons,omitempty"`
}

// ClusterReplaceNodesInputs are CLUSTER_REPLACE_NODES's inputs: old node id
// to the id of the orphan that replaces it.
type ClusterReplaceNodesInputs struct {
	Candidates map[string]string `json:"candidates"`
}

// ClusterResizeInputs are CLUSTER_RESIZE's inputs, Senlin's resize
// parameters. Every key is present, null when not given; MinStep is kept
// only for CHANGE_IN_PERCENTAGE.
type ClusterResizeInputs struct {
	AdjustmentType *string  `json:"adjustment_type"`
	Number         *float64 `json:"number"`
	MinSize        *int     `json:"min_size"`
	MaxSize        *int     `json:"max_size"`
	MinStep        *int     `json:"min_step"`
	Strict         bool     `json:"strict"`
}

// ClusterScaleInputs are the inputs of CLUSTER_SCALE_OUT and
// CLUSTER_SCALE_IN: the number of nodes, when the user gave it (otherwise
// the policies decide, or one).
type ClusterScaleInputs struct {
	Count *int `json:"count,omitzero"`
}

// CheckInputs are the inputs of CLUSTER_CHECK and NODE_CHECK: Senlin passes
// a check's parameters through to the node checks; Grove reads none.
type CheckInputs map[string]any

// RecoverInputs are the inputs of CLUSTER_RECOVER and NODE_RECOVER.
// CheckCapacity is a cluster's, DeleteTimeout and ForceRecreate a node's.
type RecoverInputs struct {
	// Restart marks the recovery the restart supervisor starts.
	Restart bool `json:"restart,omitzero"`
	// Operation is REBOOT, REBUILD or RECREATE; empty means RECREATE.
	Operation       string         `json:"operation,omitzero"`
	OperationParams map[string]any `json:"operation_params,omitzero"`
	Check           *bool          `json:"check,omitzero"`
	CheckCapacity   *bool          `json:"check_capacity,omitzero"`
	DeleteTimeout   *int           `json:"delete_timeout,omitzero"`
	ForceRecreate   *bool          `json:"force_recreate,omitzero"`
}

// ClusterAttachPolicyInputs are CLUSTER_ATTACH_POLICY's inputs; enabled and
// priority default to true and the policy type's priority.
type ClusterAttachPolicyInputs struct {
	PolicyID string `json:"policy_id"`
	Enabled  *bool  `json:"enabled,omitzero"`
	Priority *int   `json:"priority,omitzero"`
}

// ClusterUpdatePolicyInputs are CLUSTER_UPDATE_POLICY's inputs: what
// changes in the binding.
type ClusterUpdatePolicyInputs struct {
	PolicyID string `json:"policy_id"`
	Enabled  *bool  `json:"enabled,omitzero"`
	Priority *int   `json:"priority,omitzero"`
}

// ClusterDetachPolicyInputs are CLUSTER_DETACH_POLICY's inputs.
type ClusterDetachPolicyInputs struct {
	PolicyID string `json:"policy_id"`
}

// NodeCreateInputs are NODE_CREATE's inputs: none, the node's row holds the
// request.
type NodeCreateInputs struct{}

// NodeDeleteInputs are NODE_DELETE's inputs: none.
type NodeDeleteInputs struct{}

// NodeUpdateInputs are NODE_UPDATE's inputs: the fields that change. A
// rolling update's children carry only NewProfileID.
type NodeUpdateInputs struct {
	Name *string `json:"name,omitzero"`
	Role *string `json:"role,omitzero"`
	// Metadata replaces the node's metadata; an empty map clears it.
	Metadata     map[string]any `json:"metadata,omitzero"`
	Tainted      *bool          `json:"tainted,omitzero"`
	NewProfileID string         `json:"new_profile_id,omitzero"`
}

// OperationInputs are NODE_OPERATION's inputs: the operation of the node's
// profile type and its parameters, checked against the operation's schema.
type OperationInputs struct {
	Operation string         `json:"operation"`
	Params    map[string]any `json:"params,omitzero"`
}

// ClusterOperationInputs are CLUSTER_OPERATION's inputs, in Senlin's keys:
// the operation, its parameters, and the nodes the request's filters
// matched when it was accepted.
type ClusterOperationInputs struct {
	Operation string         `json:"operation"`
	Params    map[string]any `json:"params,omitzero"`
	Nodes     []string       `json:"nodes"`
}

// ClusterRunInputs are the inputs of CLUSTER_START, CLUSTER_STOP,
// CLUSTER_RESTART and CLUSTER_REFRESH: who asked (StopBy*: the operator,
// a dependency, a milestone) and, for the engine's own stops, the reason
// the stopped cluster shows.
type ClusterRunInputs struct {
	Cause  string `json:"cause,omitzero"`
	Reason string `json:"reason,omitzero"`
	// Maintenance, on a stop, leaves the cluster in maintenance (a
	// dependency cycle) rather than offline.
	Maintenance bool `json:"maintenance,omitzero"`
}

// InstanceCommandInputs are the inputs of CLUSTER_FREEZE, CLUSTER_THAW and
// CLUSTER_CLEAR: the host whose instance the command is for; empty means
// every host's, resolved when the action runs. They are also the inputs
// of the expectations (CLUSTER_EXPECT_START, CLUSTER_EXPECT_STOP,
// CLUSTER_SWITCH, CLUSTER_GIVEBACK), where Host is the switch's target.
type InstanceCommandInputs struct {
	Host string `json:"host,omitzero"`
}

// InputsFor returns a pointer to the zero inputs of an action kind, or nil
// for a kind Grove does not know.
func InputsFor(action string) any {
	switch action {
	case ClusterCreateAction:
		return &ClusterCreateInputs{}
	case ClusterDeleteAction:
		return &ClusterDeleteInputs{}
	case ClusterUpdateAction:
		return &ClusterUpdateInputs{}
	case ClusterAddNodesAction:
		return &ClusterAddNodesInputs{}
	case ClusterDelNodesAction:
		return &ClusterDelNodesInputs{}
	case ClusterReplaceNodesAction:
		return &ClusterReplaceNodesInputs{}
	case ClusterMoveNodesAction:
		return &ClusterMoveNodesInputs{}
	case ClusterGlobalSyncAction:
		return &ClusterGlobalSyncInputs{}
	case ClusterResizeAction:
		return &ClusterResizeInputs{}
	case ClusterScaleOutAction, ClusterScaleInAction:
		return &ClusterScaleInputs{}
	case ClusterCheckAction, NodeCheckAction:
		return &CheckInputs{}
	case ClusterRecoverAction, NodeRecoverAction:
		return &RecoverInputs{}
	case ClusterAttachPolicyAction:
		return &ClusterAttachPolicyInputs{}
	case ClusterUpdatePolicyAction:
		return &ClusterUpdatePolicyInputs{}
	case ClusterDetachPolicyAction:
		return &ClusterDetachPolicyInputs{}
	case NodeCreateAction:
		return &NodeCreateInputs{}
	case NodeDeleteAction:
		return &NodeDeleteInputs{}
	case NodeUpdateAction:
		return &NodeUpdateInputs{}
	case NodeOperationAction:
		return &OperationInputs{}
	case ClusterOperationAction:
		return &ClusterOperationInputs{}
	case ClusterStartAction, ClusterStopAction, ClusterRestartAction, ClusterRefreshAction:
		return &ClusterRunInputs{}
	case ClusterFreezeAction, ClusterThawAction, ClusterClearAction,
		ClusterExpectStartAction, ClusterExpectStopAction, ClusterSwitchAction, ClusterGivebackAction:
		return &InstanceCommandInputs{}
	}
	return nil
}

// Keys of Action.Data that policies fill for the handlers (Senlin's
// action.data keys).
const (
	DataDeletion  = "deletion"
	DataCreation  = "creation"
	DataPlacement = "placement"
	// DataUpdate is where a batch policy leaves its plan (Senlin's
	// data.update). The rolling update keeps its progress under the same
	// key, so the handler moves the plan to DataBatchPlan before it starts.
	DataUpdate = "update"
	// DataHooks is where a deletion policy leaves its lifecycle hook
	// (Senlin's data.hooks).
	DataHooks = "hooks"
	// DataBatchPlan is where a cluster update keeps the batch policy's
	// plan while its progress takes data.update.
	DataBatchPlan = "batch_plan"
)

// DeletionData is what a deletion policy decided (data.deletion): which
// nodes leave, how many, and how.
type DeletionData struct {
	Candidates []string `json:"candidates,omitzero"`
	Count      int      `json:"count,omitzero"`
	// DestroyAfterDeletion is true when unset: removed nodes are deleted.
	DestroyAfterDeletion *bool `json:"destroy_after_deletion,omitzero"`
	GracePeriod          int   `json:"grace_period,omitzero"`
	// ReduceDesiredCapacity is true when unset.
	ReduceDesiredCapacity *bool `json:"reduce_desired_capacity,omitzero"`
	// Zones and Regions are a placement policy's plan (how many nodes
	// leave each availability zone or region), kept for the user: the
	// candidates carry it out.
	Zones   map[string]int `json:"zones,omitzero"`
	Regions map[string]int `json:"regions,omitzero"`
}

// Destroy reports whether removed nodes are deleted (true unless the policy
// said otherwise).
func (d DeletionData) Destroy() bool { return d.DestroyAfterDeletion == nil || *d.DestroyAfterDeletion }

// Reduce reports whether desired_capacity follows the removal (true unless
// the policy said otherwise).
func (d DeletionData) Reduce() bool {
	return d.ReduceDesiredCapacity == nil || *d.ReduceDesiredCapacity
}

// CreationData is what a policy decided about a scale-out (data.creation).
type CreationData struct {
	Count *int `json:"count,omitzero"`
	// Zones and Regions are a placement policy's plan (how many new nodes
	// go to each availability zone or region), kept for the user: each
	// node's data.placement carries it out.
	Zones   map[string]int `json:"zones,omitzero"`
	Regions map[string]int `json:"regions,omitzero"`
}

// HooksData is a deletion policy's lifecycle hook (data.hooks): before
// the nodes it removes are deleted, the hook's webhook is told of each,
// and each removal waits for complete_lifecycle, at most Timeout seconds
// (0: as long as the action may run).
type HooksData struct {
	Type   string `json:"type"`
	Params struct {
		Queue string `json:"queue,omitzero"`
		URL   string `json:"url,omitzero"`
	} `json:"params"`
	Timeout int `json:"timeout"`
}

// Webhook reports whether the hook is a webhook with a URL, the one type
// Grove implements.
func (h HooksData) Webhook() bool { return h.Type == "webhook" && h.Params.URL != "" }

// HealthRegistry is a health policy's registry entry, which its attach
// leaves in the binding's data under "health" (Senlin's health registry):
// how the health loop detects the cluster's dead nodes and recovers them.
type HealthRegistry struct {
	// Interval is the seconds between two checks of the cluster.
	Interval int `json:"interval"`
	// NodeUpdateTimeout is the seconds after a node's last update during
	// which polling failures are forgiven.
	NodeUpdateTimeout int `json:"node_update_timeout"`
	// RecoveryConditional is ANY_FAILED or ALL_FAILED.
	RecoveryConditional string       `json:"recovery_conditional"`
	DetectionModes      []HealthMode `json:"detection_modes"`
	// RecoverAction is REBOOT, REBUILD or RECREATE, with its parameters.
	RecoverAction     string         `json:"recover_action"`
	RecoverParams     map[string]any `json:"recover_params"`
	NodeDeleteTimeout int            `json:"node_delete_timeout"`
	NodeForceRecreate bool           `json:"node_force_recreate"`
}

// HealthMode is a detection mode of a health policy.
type HealthMode struct {
	Type    string `json:"type"`
	Options struct {
		PollURL                     string `json:"poll_url"`
		PollURLSSLVerify            bool   `json:"poll_url_ssl_verify"`
		PollURLConnErrorAsUnhealthy bool   `json:"poll_url_conn_error_as_unhealthy"`
		PollURLHealthyResponse      string `json:"poll_url_healthy_response"`
		PollURLRetryLimit           int    `json:"poll_url_retry_limit"`
		PollURLRetryInterval        int    `json:"poll_url_retry_interval"`
	} `json:"options"`
}

// UpdateData is what a batch policy decided about a cluster update
// (data.update): the node ids of each batch, in order, and the seconds to
// pause between batches.
type UpdateData struct {
	PauseTime int        `json:"pause_time"`
	Plan      [][]string `json:"plan"`
}

// PlacementData is what a placement policy decided (data.placement): one
// entry per node to create, in order, kept in the node's data.
type PlacementData struct {
	// Count is how many entries the policy decided (Senlin's shape); the
	// entries are what is used.
	Count      *int             `json:"count,omitempty"`
	Placements []map[string]any `json:"placements"`
}
