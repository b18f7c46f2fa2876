// Package model holds Grove's domain types (Senlin's object model: profiles,
// policies, clusters, nodes, actions, events, bindings), their statuses and
// the validation rules that do not need the store.
package model

import (
	"encoding/json"
	"fmt"
	"regexp"
	"time"
	"unicode"

	"github.com/grovehq/grove/api"
)

// Cluster statuses (seed 004).
const (
	ClusterInit       = "INIT"
	ClusterActive     = "ACTIVE"
	ClusterCreating   = "CREATING"
	ClusterUpdating   = "UPDATING"
	ClusterResizing   = "RESIZING"
	ClusterDeleting   = "DELETING"
	ClusterChecking   = "CHECKING"
	ClusterRecovering = "RECOVERING"
	ClusterCritical   = "CRITICAL"
	ClusterError      = "ERROR"
	ClusterWarning    = "WARNING"
	ClusterOperating  = "OPERATING"
)

// Node statuses.
const (
	NodeInit       = "INIT"
	NodeActive     = "ACTIVE"
	NodeError      = "ERROR"
	NodeWarning    = "WARNING"
	NodeCreating   = "CREATING"
	NodeUpdating   = "UPDATING"
	NodeDeleting   = "DELETING"
	NodeRecovering = "RECOVERING"
	NodeOperating  = "OPERATING"
)

// Action statuses.
const (
	ActionInit      = "INIT"
	ActionWaiting   = "WAITING"
	ActionReady     = "READY"
	ActionRunning   = "RUNNING"
	ActionSucceeded = "SUCCEEDED"
	ActionFailed    = "FAILED"
	ActionCancelled = "CANCELLED"
	// ActionWaitingLifecycle is a node removal a deletion policy's
	// lifecycle hook holds until complete_lifecycle or the hook's timeout
	// releases it (READY); workers do not claim it.
	ActionWaitingLifecycle = "WAITING_LIFECYCLE_COMPLETION"
)

// Action signals stored in Action.Control.
const (
	SignalCancel = "CANCEL"
)

// Action causes.
const (
	CauseRPC     = "RPC Request"
	CauseDerived = "Derived Action"
	// CauseDerivedLifecycle is a node removal under a lifecycle hook.
	CauseDerivedLifecycle = "Derived Action with Lifecycle Hook"
)

// Action names.
const (
	ClusterCreateAction       = "CLUSTER_CREATE"
	ClusterDeleteAction       = "CLUSTER_DELETE"
	ClusterUpdateAction       = "CLUSTER_UPDATE"
	ClusterAddNodesAction     = "CLUSTER_ADD_NODES"
	ClusterDelNodesAction     = "CLUSTER_DEL_NODES"
	ClusterReplaceNodesAction = "CLUSTER_REPLACE_NODES"
	ClusterResizeAction       = "CLUSTER_RESIZE"
	ClusterScaleOutAction     = "CLUSTER_SCALE_OUT"
	ClusterScaleInAction      = "CLUSTER_SCALE_IN"
	ClusterCheckAction        = "CLUSTER_CHECK"
	ClusterRecoverAction      = "CLUSTER_RECOVER"
	ClusterAttachPolicyAction = "CLUSTER_ATTACH_POLICY"
	ClusterDetachPolicyAction = "CLUSTER_DETACH_POLICY"
	ClusterUpdatePolicyAction = "CLUSTER_UPDATE_POLICY"
	NodeCreateAction          = "NODE_CREATE"
	NodeDeleteAction          = "NODE_DELETE"
	NodeUpdateAction          = "NODE_UPDATE"
	NodeCheckAction           = "NODE_CHECK"
	NodeRecoverAction         = "NODE_RECOVER"
	NodeOperationAction       = "NODE_OPERATION"
	ClusterOperationAction    = "CLUSTER_OPERATION"
	ClusterStartAction        = "CLUSTER_START"
	ClusterStopAction         = "CLUSTER_STOP"
	ClusterRestartAction      = "CLUSTER_RESTART"
	ClusterRefreshAction      = "CLUSTER_REFRESH"
	// ClusterFreezeAction, ClusterThawAction and ClusterClearAction are
	// the operator's monitor commands on a failover or flex cluster's
	// instances (docs/failover.md).
	ClusterFreezeAction = "CLUSTER_FREEZE"
	ClusterThawAction   = "CLUSTER_THAW"
	ClusterClearAction  = "CLUSTER_CLEAR"
	// ClusterExpectStartAction, ClusterExpectStopAction,
	// ClusterSwitchAction and ClusterGivebackAction set a failover or flex
	// cluster's expectation (start, stop, switch to a host, giveback),
	// which its instance monitors honour until it is reached
	// (docs/failover.md). The operator's start and stop of a cluster the
	// monitors run are these, not CLUSTER_START and CLUSTER_STOP.
	ClusterExpectStartAction = "CLUSTER_EXPECT_START"
	ClusterExpectStopAction  = "CLUSTER_EXPECT_STOP"
	ClusterSwitchAction      = "CLUSTER_SWITCH"
	ClusterGivebackAction    = "CLUSTER_GIVEBACK"
	// ClusterMoveNodesAction moves host-local nodes off hosts that are
	// down or draining; the engine starts it, never a request.
	ClusterMoveNodesAction = "CLUSTER_MOVE_NODES"
	// ClusterGlobalSyncAction brings a global cluster to one node per
	// eligible host; the engine starts it, never a request.
	ClusterGlobalSyncAction = "CLUSTER_GLOBAL_SYNC"
)

// Event levels, stored as Python logging's numbers as Senlin does.
const (
	LevelDebug    = 10
	LevelInfo     = 20
	LevelWarning  = 30
	LevelError    = 40
	LevelCritical = 50
)

// LevelName returns Senlin's string for an event level.
func LevelName(l int) string {
	switch {
	case l >= LevelCritical:
		return "CRITICAL"
	case l >= LevelError:
		return "ERROR"
	case l >= LevelWarning:
		return "WARNING"
	case l >= LevelInfo:
		return "INFO"
	}
	return "DEBUG"
}

// Profile is a typed template for nodes.
type Profile struct {
	ID      string
	Name    string
	Type    string // e.g. local.process
	Version string // e.g. 1.0
	// Spec is the spec as submitted; Properties are validated with defaults.
	Spec       map[string]any
	Properties map[string]any
	Metadata   map[string]any
	User       string
	Project    string
	Domain     string
	CreatedAt  time.Time
	UpdatedAt  *time.Time
}

// FullType is Senlin's "type-version" string.
func (p *Profile) FullType() string { return p.Type + "-" + p.Version }

// Policy is a typed rule set evaluated around actions.
type Policy struct {
	ID         string
	Name       string
	Type       string
	Version    string
	Spec       map[string]any
	Properties map[string]any
	Data       map[string]any
	User       string
	Project    string
	Domain     string
	CreatedAt  time.Time
	UpdatedAt  *time.Time
}

// FullType is Senlin's "type-version" string.
func (p *Policy) FullType() string { return p.Type + "-" + p.Version }

// Cluster is a set of nodes made from one profile.
type Cluster struct {
	ID              string
	Name            string
	ProfileID       string
	User            string
	Project         string
	Domain          string
	InitAt          time.Time
	CreatedAt       *time.Time
	UpdatedAt       *time.Time
	MinSize         int
	MaxSize         int
	DesiredCapacity int
	NextIndex       int
	Timeout         int
	Status          string
	StatusReason    string
	Metadata        map[string]any
	Data            map[string]any
	Config          map[string]any
	Dependents      map[string]any
}

// Node is one cluster member, or an orphan node.
type Node struct {
	ID           string
	Name         string
	ClusterID    string
	PhysicalID   string
	ProfileID    string
	User         string
	Project      string
	Domain       string
	Index        int
	Role         string
	InitAt       time.Time
	CreatedAt    *time.Time
	UpdatedAt    *time.Time
	Status       string
	StatusReason string
	Tainted      bool
	Data         map[string]any
	Metadata     map[string]any
	Dependents   map[string]any
	// State is the driver's opaque state, handed back on every call.
	State []byte
	// Host is the host a node of a host-local type (local.process) runs
	// on: its agent's host_name. Empty for other types, whose driver
	// places the node.
	Host string
}

// NodeView is a node as the API shows it: without the driver's state,
// which the API never shows, and with data, metadata and dependents as
// the JSON objects the store holds, so a page of nodes is not decoded
// into maps only to be encoded again for the response.
type NodeView struct {
	ID, Name, ClusterID, PhysicalID, ProfileID, User, Project, Domain string
	Index                                                             int
	Role                                                              string
	InitAt                                                            time.Time
	CreatedAt, UpdatedAt                                              *time.Time
	Status, StatusReason                                              string
	Tainted                                                           bool
	// Data, Metadata and Dependents are JSON objects, never empty: "{}"
	// where the node has none.
	Data, Metadata, Dependents json.RawMessage
	Host                       string
}

// CheckNode is a node as a health check reads it: what a driver's check
// gets, with data and metadata as the JSON documents the store holds
// (undecoded), so a round over a large cluster does not decode every
// node's documents only to encode them again for the driver.
type CheckNode struct {
	ID, Name, ClusterID, PhysicalID, ProfileID, Status, Host string
	Index                                                    int
	// Data and Metadata are JSON objects (nil when empty).
	Data, Metadata []byte
	State          []byte
}

// PlacedNode is a node of a cluster as placement counts it (the store's
// PlacedNodes): on the host Host, or, when Host is empty, on the one its
// Data records (a driver's report, a placement's choice).
type PlacedNode struct {
	ClusterID, Name, Status, Host string
	// Data is the node's data, read only when Host is empty.
	Data map[string]any
}

// PhysicalHolder is a node that holds a physical id (the store's
// PhysicalHolders), with the type of its profile: "" when the profile is
// gone.
type PhysicalHolder struct {
	NodeID, Name, Project, PhysicalID, ProfileType string
}

// Action is a persisted unit of work.
type Action struct {
	ID           string
	Name         string
	ClusterID    string
	Target       string
	Action       string
	Cause        string
	Owner        string
	LeaseExpires time.Time
	StartTime    float64
	EndTime      float64
	Timeout      int
	Status       string
	StatusReason string
	Control      string
	Inputs       map[string]any
	Outputs      map[string]any
	Data         map[string]any
	ParentID     string
	User         string
	Project      string
	CreatedAt    time.Time
	UpdatedAt    *time.Time
}

// Terminal reports whether the action has ended.
func (a *Action) Terminal() bool {
	return a.Status == ActionSucceeded || a.Status == ActionFailed || a.Status == ActionCancelled
}

// IsNodeAction reports whether the action targets a node.
func (a *Action) IsNodeAction() bool { return len(a.Action) > 5 && a.Action[:5] == "NODE_" }

// Binding attaches a policy to a cluster.
type Binding struct {
	ID        string
	ClusterID string
	PolicyID  string
	Enabled   bool
	Priority  int
	Data      map[string]any
	LastOp    *time.Time
}

// Event is an append-only record of what happened to a cluster or node.
type Event struct {
	ID           string
	Timestamp    time.Time
	OID          string
	OName        string
	OType        string // CLUSTER, NODE or MILESTONE
	ClusterID    string
	User         string
	Project      string
	Action       string
	Status       string
	StatusReason string
	Level        int
	MetaData     map[string]any
}

var nameRE = regexp.MustCompile(api.NamePattern)

// ValidateName applies Senlin's rule for object names; field names the field
// in the error.
func ValidateName(field, name string) error {
	if name == "" {
		return fmt.Errorf("%s is required.", field)
	}
	if !nameRE.MatchString(name) {
		return fmt.Errorf("%s %q is not valid: use 1 to 255 characters of letters, digits, '.', '_', '~' and '-'.", field, name)
	}
	// Senlin's pattern lets these through, but an object named so cannot
	// be addressed: a URL path drops the segment (/v1/profiles/.. is
	// /v1/), so its show, update and delete would reach something else.
	if name == "." || name == ".." {
		return fmt.Errorf("%s %q is not valid: \".\" and \"..\" cannot be looked up, since a URL path drops them; add a letter or digit.", field, name)
	}
	return nil
}

// ValidateNodeRole checks a node's role, which is free text (Senlin's rule)
// but is shown in listings and terminals and filtered on: a control
// character (NUL, ESC, a newline) would corrupt what shows it, so none is
// allowed. field names the field in the error.
func ValidateNodeRole(field, role string) error {
	for _, r := range role {
		if unicode.IsControl(r) {
			return fmt.Errorf("%s %q is not valid: a role cannot contain control characters such as NUL, ESC or a newline.", field, role)
		}
	}
	return nil
}
