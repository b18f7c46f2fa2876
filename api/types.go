// Package api holds Grove's wire types, which follow Senlin's v1 JSON shapes,
// and a Go client for the REST API. It imports nothing from core/, so the
// CLI, the Terraform provider and tests use it without the engine.
package api

import "fmt"

// Profile is a profile as the API shows it.
type Profile struct {
	ID        string         `json:"id"`
	Name      string         `json:"name"`
	Type      string         `json:"type"`
	User      string         `json:"user"`
	Project   string         `json:"project"`
	Domain    string         `json:"domain"`
	Spec      map[string]any `json:"spec"`
	Metadata  map[string]any `json:"metadata"`
	CreatedAt *string        `json:"created_at"`
	UpdatedAt *string        `json:"updated_at"`
}

// Policy is a policy as the API shows it.
type Policy struct {
	ID        string         `json:"id"`
	Name      string         `json:"name"`
	Type      string         `json:"type"`
	User      string         `json:"user"`
	Project   string         `json:"project"`
	Domain    string         `json:"domain"`
	Spec      map[string]any `json:"spec"`
	Data      map[string]any `json:"data"`
	CreatedAt *string        `json:"created_at"`
	UpdatedAt *string        `json:"updated_at"`
}

// Cluster is a cluster as the API shows it.
type Cluster struct {
	ID              string  `json:"id"`
	Name            string  `json:"name"`
	ProfileID       string  `json:"profile_id"`
	ProfileName     string  `json:"profile_name"`
	User            string  `json:"user"`
	Project         string  `json:"project"`
	Domain          string  `json:"domain"`
	InitAt          *string `json:"init_at"`
	CreatedAt       *string `json:"created_at"`
	UpdatedAt       *string `json:"updated_at"`
	MinSize         int     `json:"min_size"`
	MaxSize         int     `json:"max_size"`
	DesiredCapacity int     `json:"desired_capacity"`
	Timeout         int     `json:"timeout"`
	Status          string  `json:"status"`
	StatusReason    string  `json:"status_reason"`
	// RunState is the cluster's state as an SMF instance has one
	// ("running", "offline", "maintenance", "uninitialized"), a Grove
	// addition Senlin clients ignore; RunReason says why it is not running.
	RunState   string         `json:"run_state"`
	RunReason  string         `json:"run_reason,omitempty"`
	Metadata   map[string]any `json:"metadata"`
	Data       map[string]any `json:"data"`
	Dependents map[string]any `json:"dependents"`
	Config     map[string]any `json:"config"`
	Nodes      []string       `json:"nodes"`
	Policies   []string       `json:"policies"`
	// NodesSummary is set when the cluster has more than MaxInlineIDs
	// nodes: Nodes then holds only the first MaxInlineIDs (by index). A
	// Grove addition Senlin clients ignore.
	NodesSummary *IDsSummary `json:"nodes_summary,omitempty"`
	// Instances are a failover cluster's instances, one per host
	// whose instance monitor recorded one (docs/failover.md); shown by a
	// cluster GET only. A Grove addition Senlin clients ignore.
	Instances []ClusterInstance `json:"instances,omitempty"`
	// Expect is a failover cluster's expectation (start, stop, switch,
	// giveback), which its instance monitors honour until it is reached,
	// or how the last one ended; shown by a cluster GET only, once an
	// operator set one. A Grove addition.
	Expect *ClusterExpect `json:"expect,omitempty"`
}

// ClusterExpect is the operator's order to a failover cluster's instance
// monitors (docs/failover.md).
type ClusterExpect struct {
	// Kind is start, stop, switch or giveback while one is pending; empty
	// once it ended (Result says how).
	Kind string `json:"kind"`
	// Host is the switch's target.
	Host string `json:"host,omitempty"`
	// Since is when it was set, or ended.
	Since *string `json:"since"`
	// Action is the id of the action that set it.
	Action string `json:"action"`
	// Result is how it ended: "reached: ...", "failed: ..." or
	// "cancelled: ..." (a freeze of every instance); empty while it is
	// pending.
	Result string `json:"result,omitempty"`
}

// ClusterInstance is one host's instance of a failover cluster:
// <status> <monitor state> <flags>, as OpenSVC shows it.
type ClusterInstance struct {
	Host string `json:"host"`
	// Status is up, down, warn or n/a (its host is down or gone).
	Status string `json:"status"`
	// State is the monitor state (idle, ready, starting, ...).
	State string `json:"state"`
	// Flags: A hard affinity violation, C constraints violation, F frozen,
	// L natural placement leader.
	Flags  string `json:"flags"`
	Frozen bool   `json:"frozen"`
	// Since is when the instance entered State.
	Since  *string `json:"since"`
	Reason string  `json:"reason,omitempty"`
}

// IDsSummary stands in for the part of a list of ids the API does not
// inline (past MaxInlineIDs): how long the whole list is, its members
// counted by status, and the request that returns the next page.
type IDsSummary struct {
	// Total counts the whole list; the response inlines its first Shown.
	Total int `json:"total"`
	Shown int `json:"shown"`
	// ByStatus counts the whole list's members by status.
	ByStatus map[string]int `json:"by_status"`
	// Next is the path and query of the list request that returns the
	// ids after the last one shown, in the same order; follow each page's
	// last id as the next marker.
	Next string `json:"next"`
}

// Node is a node as the API shows it.
type Node struct {
	ID           string         `json:"id"`
	Name         string         `json:"name"`
	ClusterID    string         `json:"cluster_id"`
	PhysicalID   string         `json:"physical_id"`
	ProfileID    string         `json:"profile_id"`
	ProfileName  string         `json:"profile_name"`
	User         string         `json:"user"`
	Project      string         `json:"project"`
	Domain       string         `json:"domain"`
	Index        int            `json:"index"`
	Role         string         `json:"role"`
	InitAt       *string        `json:"init_at"`
	CreatedAt    *string        `json:"created_at"`
	UpdatedAt    *string        `json:"updated_at"`
	Status       string         `json:"status"`
	StatusReason string         `json:"status_reason"`
	Data         map[string]any `json:"data"`
	Metadata     map[string]any `json:"metadata"`
	Dependents   map[string]any `json:"dependents"`
	Tainted      bool           `json:"tainted"`
	// Host is the host a local.process node runs on (its agent's
	// host_name); empty for nodes whose driver places them.
	Host    string         `json:"host,omitempty"`
	Details map[string]any `json:"details,omitempty"`
}

// Action is an action as the API shows it.
type Action struct {
	ID           string         `json:"id"`
	Name         string         `json:"name"`
	ClusterID    string         `json:"cluster_id"`
	Target       string         `json:"target"`
	Action       string         `json:"action"`
	Cause        string         `json:"cause"`
	Owner        *string        `json:"owner"`
	Interval     int            `json:"interval"`
	StartTime    float64        `json:"start_time"`
	EndTime      float64        `json:"end_time"`
	Timeout      int            `json:"timeout"`
	Status       string         `json:"status"`
	StatusReason string         `json:"status_reason"`
	Inputs       map[string]any `json:"inputs"`
	Outputs      map[string]any `json:"outputs"`
	DependsOn    []string       `json:"depends_on"`
	DependedBy   []string       `json:"depended_by"`
	Data         map[string]any `json:"data"`
	CreatedAt    *string        `json:"created_at"`
	UpdatedAt    *string        `json:"updated_at"`
	User         string         `json:"user"`
	Project      string         `json:"project"`
	// Progress is how far the action has come; GET /v1/actions/{id} shows
	// it, lists leave it out. Grove's addition to Senlin's action: clients
	// that do not know it ignore it.
	Progress *ActionProgress `json:"progress,omitempty"`
	// DependsOnSummary is set when the action has more than MaxInlineIDs
	// children: DependsOn then holds only the first MaxInlineIDs (by
	// creation). A Grove addition Senlin clients ignore.
	DependsOnSummary *IDsSummary `json:"depends_on_summary,omitempty"`
}

// ActionProgress is how far an action has come: the step it is at, in
// words, the nodes its work covers and how many are done or failed, and a
// rolling update's batch. A client following an action draws it.
type ActionProgress struct {
	// Step is what the action is doing now, e.g. "creating nodes",
	// "waiting for a worker" or "between batches".
	Step string `json:"step"`
	// Nodes counts the nodes the action works on: one per derived node
	// action, or a rolling update's nodes to update.
	Nodes int `json:"nodes"`
	// Done counts those whose work succeeded; Failed those whose work
	// failed or was cancelled.
	Done   int `json:"done"`
	Failed int `json:"failed"`
	// Batch and Batches are a rolling update's current batch and how many
	// it has; zero for other actions.
	Batch   int `json:"batch,omitempty"`
	Batches int `json:"batches,omitempty"`
}

// Terminal reports whether the action has ended.
func (a *Action) Terminal() bool {
	return a.Status == "SUCCEEDED" || a.Status == "FAILED" || a.Status == "CANCELLED"
}

// Event is an event as the API shows it.
type Event struct {
	ID           string         `json:"id"`
	Timestamp    string         `json:"timestamp"`
	OID          string         `json:"oid"`
	OName        string         `json:"oname"`
	OType        string         `json:"otype"`
	ClusterID    string         `json:"cluster_id"`
	User         string         `json:"user"`
	Project      string         `json:"project"`
	Action       string         `json:"action"`
	Status       string         `json:"status"`
	StatusReason string         `json:"status_reason"`
	Level        string         `json:"level"`
	MetaData     map[string]any `json:"meta_data"`
}

// ClusterPolicy is a policy binding as the API shows it.
type ClusterPolicy struct {
	ID          string         `json:"id"`
	ClusterID   string         `json:"cluster_id"`
	ClusterName string         `json:"cluster_name"`
	PolicyID    string         `json:"policy_id"`
	PolicyName  string         `json:"policy_name"`
	PolicyType  string         `json:"policy_type"`
	Enabled     bool           `json:"enabled"`
	Priority    int            `json:"priority"`
	Data        map[string]any `json:"data"`
	LastOp      *string        `json:"last_op"`
}

// TypeSummary is one entry of /v1/profile-types or /v1/policy-types.
type TypeSummary struct {
	Name          string                     `json:"name"`
	Version       string                     `json:"version"`
	SupportStatus map[string][]SupportStatus `json:"support_status"`
}

// SupportStatus is Senlin's support status of a type version.
type SupportStatus struct {
	Status string `json:"status"`
	Since  string `json:"since"`
}

// TypeDetail is /v1/profile-types/{type} or /v1/policy-types/{type}.
type TypeDetail struct {
	Name          string                     `json:"name"`
	Schema        map[string]any             `json:"schema"`
	SupportStatus map[string][]SupportStatus `json:"support_status"`
	Description   string                     `json:"description,omitempty"`
	Plugin        string                     `json:"plugin,omitempty"`
}

// Operation is one node operation of a profile type, as
// GET /v1/profile-types/{type}/ops lists it under its name.
type Operation struct {
	Description string         `json:"description"`
	Parameters  map[string]any `json:"parameters"`
}

// ErrorBody is Senlin's fault body.
type ErrorBody struct {
	Code        int    `json:"code"`
	Title       string `json:"title"`
	Explanation string `json:"explanation"`
	Error       struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
		Type    string `json:"type"`
	} `json:"error"`
}

// Error is an API failure seen by the client.
type Error struct {
	Status  int
	Type    string
	Message string
	// RetryAfter is the agent's Retry-After, in seconds, on a 503: when a
	// plugin that could not answer is worth asking again.
	RetryAfter int
	// Foreign is true when the answer did not carry Grove's error body:
	// it came from something other than the agent's API, and its status
	// says nothing about the request as the agent would judge it.
	Foreign bool
}

func (e *Error) Error() string {
	if e.Foreign {
		return e.Message // it names the status
	}
	if e.Type == "" {
		return fmt.Sprintf("%s (HTTP %d)", e.Message, e.Status)
	}
	return fmt.Sprintf("%s (%s, HTTP %d)", e.Message, e.Type, e.Status)
}

// PluginStatus is one plugin in /v1/plugins.
type PluginStatus struct {
	Name       string   `json:"name"`
	Command    []string `json:"command"`
	State      string   `json:"state"`
	PID        int      `json:"pid"`
	Restarts   int      `json:"restarts"`
	LastError  string   `json:"last_error,omitempty"`
	StartedAt  string   `json:"started_at,omitempty"`
	Components []string `json:"components"`
	// APIVersions is the API version agreed with the plugin per component
	// kind, e.g. {"profile": "1", "policy": "2"}.
	APIVersions map[string]string `json:"api_versions,omitempty"`
	// Details describes each component (GET /v1/plugins/{name} only).
	Details []PluginComponent `json:"details,omitempty"`
}

// PluginComponent is one component of a plugin with its schema.
type PluginComponent struct {
	Kind        string         `json:"kind"`
	Type        string         `json:"type"`
	Versions    []string       `json:"versions"`
	Description string         `json:"description"`
	Schema      map[string]any `json:"schema"`
}

// Set is a definition set and the objects it owns.
type Set struct {
	Name    string      `json:"name"`
	Objects []SetObject `json:"objects"`
}

// SetObject is one object a definition set owns, by the name it gives it.
type SetObject struct {
	Set  string `json:"set"`
	Kind string `json:"kind"`
	Name string `json:"name"`
	ID   string `json:"id"`
}

// Host is a place a profile type's driver can put nodes, as
// GET /v1/profile-types/{type}/hosts reports it.
type Host struct {
	Name       string             `json:"name"`
	Attributes map[string]string  `json:"attributes,omitempty"`
	Load       map[string]float64 `json:"load,omitempty"`
	// Error says why the host could not be asked.
	Error string `json:"error,omitempty"`
}
