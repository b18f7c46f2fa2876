// Package sdk is what a Grove plugin author imports: the interfaces of profile
// drivers and policies, the types that cross the plugin boundary, and Main,
// which serves them from one binary. It imports nothing from Grove's core.
package sdk

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/grovehq/grove/plugins/sdk/schema"
)

// Spec is a profile or policy as the engine stores it. Properties are
// validated against the component's schema, with defaults filled in, before a
// driver or policy sees them; Decode reads them into a struct.
type Spec struct {
	// ID is the stored profile's or policy's id, empty for a spec not yet
	// stored. The engine never changes the properties under an ID (a changed
	// profile is a new profile), so the host encodes them once per ID.
	ID         string
	Name       string
	Type       string
	Version    string
	Properties map[string]any
}

// Node is everything the engine knows about a node. Drivers keep no state of
// their own: whatever they need later they return in Result.State and get back
// here on every call.
type Node struct {
	ID          string
	Name        string
	Index       int
	ClusterID   string
	ClusterName string
	PhysicalID  string
	State       []byte
	Data        map[string]any
	Metadata    map[string]any
}

// Result is the outcome for one node of a batch call. Results are matched to
// nodes by ID; a node without a result is reported as failed by the engine.
type Result struct {
	ID         string
	PhysicalID string
	State      []byte
	// Data is merged into the node's data, key by key. Check may return
	// it too, only with what changed (a VM that moved host or took another
	// address): the engine records it without an event.
	Data map[string]any
	// Healthy is what Check reports.
	Healthy bool
	// Completed, with Healthy false, says the node's work ended successfully
	// (a process that exited with status 0): restart condition on-failure
	// leaves such a node alone.
	Completed bool
	// Reason explains the node's state, e.g. "process exited with status 3".
	Reason string
	// Err fails this node. Wrap with Retryable when a retry may succeed.
	Err error
}

// Profile is a profile driver: it turns nodes into real things and back. Every
// method takes a batch of nodes and must honour ctx's deadline. Delete of a
// node that does not exist succeeds. Create must be idempotent per node ID:
// after a crash the engine calls Create again for nodes whose outcome it did
// not record.
type Profile interface {
	Create(ctx context.Context, p Spec, nodes []Node) []Result
	Delete(ctx context.Context, p Spec, nodes []Node) []Result
	Check(ctx context.Context, p Spec, nodes []Node) []Result
	Update(ctx context.Context, old, new Spec, nodes []Node) []Result
	Recover(ctx context.Context, p Spec, nodes []Node, operation string, params map[string]any) []Result
}

// ProfileType registers a profile driver under a type name.
type ProfileType struct {
	Type        string
	Versions    []string
	Description string
	Schema      schema.Schema
	// Operations lists the recovery operations the driver supports
	// (RECREATE, REBOOT, REBUILD). RECREATE is assumed when empty.
	Operations []string
	Driver     Profile
	// NeedsPort asks the engine for a free 127.0.0.1 port per node, passed in
	// Node.Data["port"].
	NeedsPort bool
	// Validate runs checks the schema cannot express. Optional.
	Validate func(ctx context.Context, p Spec) schema.Diagnostics
	// Watch streams node events until ctx ends, calling send for each.
	// Optional: without it the engine relies on periodic checks.
	Watch func(ctx context.Context, send func(NodeEvent)) error
	// Hosts lists where the driver places nodes, with attributes and load.
	// Optional.
	Hosts func(ctx context.Context) ([]Host, error)
	// NodeOperations are the operations a user can run on this type's
	// nodes (Senlin's OPERATIONS): the API lists them and checks a
	// request's parameters against them before any call. A type with
	// operations has a Driver that implements Operator. Optional.
	NodeOperations []NodeOperation
}

// Operator is the optional driver hook behind NodeOperations: Operate runs
// one of them on a batch of nodes, with its parameters validated and
// defaults filled in. A node's Result.Healthy says whether it runs after
// the operation: false (a node stopped on purpose) leaves it WARNING, which
// the restart supervisor leaves alone. Profile API 2.
type Operator interface {
	Operate(ctx context.Context, p Spec, nodes []Node, operation string, params map[string]any) []Result
}

// Adopter is the optional driver hook behind node adoption (Senlin's
// do_adopt, POST /v1/nodes/adopt and adopt-preview): Adopt finds an
// existing resource by identity (a container id or name, a pid), and
// returns the profile properties that describe it and, unless
// req.Preview, the node's result (physical id, state, data) as Create
// would have returned it, so that the engine manages the resource from
// then on. A driver that cannot find or describe the resource returns an
// error saying why. Profile API 3.
type Adopter interface {
	Adopt(ctx context.Context, req AdoptRequest) (Adoption, error)
}

// AdoptRequest asks a driver to describe an existing resource.
type AdoptRequest struct {
	// Type and Version are the profile type and version asked for.
	Type, Version string
	// Identity names the resource to the driver.
	Identity string
	// Node is the node the resource becomes (its ID and Name); zero in a
	// preview.
	Node Node
	// Preview asks only for the properties: nothing is recorded.
	Preview bool
	// Snapshot is Senlin's snapshot flag: a driver that can snapshots the
	// resource first and describes the snapshot as what new nodes are made
	// from (a Nova server's image); one that cannot says so. A preview
	// creates nothing, and ignores it.
	Snapshot bool
}

// Adoption is what a driver knows of a resource it adopts.
type Adoption struct {
	// Properties are the profile properties that describe the resource.
	Properties map[string]any
	// Result is the node's physical id, state and data. In a preview only
	// its PhysicalID is read, and is optional: a driver that names it lets
	// the engine refuse a resource a node already holds before the
	// adoption changes anything.
	Result Result
}

// NodeOperation describes an operation on nodes: its name (such as "stop"
// or "power_off"), what it does, and its parameters.
type NodeOperation struct {
	Name        string        `json:"name"`
	Description string        `json:"description"`
	Parameters  schema.Schema `json:"parameters"`
}

// FindNodeOperation returns the operation called name, if ops has it.
func FindNodeOperation(ops []NodeOperation, name string) (NodeOperation, bool) {
	for _, op := range ops {
		if op.Name == name {
			return op, true
		}
	}
	return NodeOperation{}, false
}

// NodeOperationNames lists the operations' names, comma-separated, for a
// message that says which exist.
func NodeOperationNames(ops []NodeOperation) string {
	names := make([]string, len(ops))
	for i, op := range ops {
		names[i] = op.Name
	}
	return strings.Join(names, ", ")
}

// Host is a place a driver can put nodes: a container engine, a hypervisor.
type Host struct {
	Name       string
	Attributes map[string]string
	// Load is what the host carries now, such as "containers", "cpu" (cores
	// reserved) and "memory_mib".
	Load map[string]float64
	// Err says why the host could not be asked; the others are then empty.
	Err string
}

// NodeEvent is something a driver saw happen to a node.
type NodeEvent struct {
	NodeID    string
	Healthy   bool
	Reason    string
	Completed bool
}

// Target is a (phase, action) pair a policy checks.
type Target struct {
	Phase  string // BEFORE or AFTER
	Action string // e.g. CLUSTER_SCALE_IN
}

// Cluster is the snapshot a policy sees.
type Cluster struct {
	ID              string
	Name            string
	ProfileID       string
	ProfileType     string
	DesiredCapacity int
	MinSize         int
	MaxSize         int
	Nodes           []ClusterNode
	Config          map[string]any
	// Profile is the cluster's profile, for a policy that acts on the
	// backend where its nodes run (a Nova server group, a vSphere DRS
	// rule). Its sensitive values are open only to a policy served by the
	// plugin serving the profile's type; others see "(sensitive)".
	Profile Spec
}

// ClusterNode is one node in a Cluster snapshot. Times are Unix microseconds.
type ClusterNode struct {
	ID               string
	Name             string
	Status           string
	Index            int
	ProfileID        string
	CreatedAt        int64
	ProfileCreatedAt int64
	Tainted          bool
	Data             map[string]any
}

// Action is the action a policy check is about. DecodeInputs and
// DecodeData read its inputs and data into structs, such as
// ClusterResizeInputs and DeletionData.
type Action struct {
	ID     string
	Name   string // e.g. CLUSTER_SCALE_IN
	Target string
	Inputs map[string]any
	Data   map[string]any
}

// CheckRequest carries everything a policy needs to decide.
type CheckRequest struct {
	Policy      Spec
	Phase       string
	Action      Action
	Cluster     Cluster
	BindingData map[string]any
	LastOp      int64 // Unix microseconds, 0 if never
	Now         int64 // Unix microseconds
	// Hosts are the hosts of the cluster's profile type and the nodes of
	// every cluster on them, for a policy type with WantsHosts; nil for
	// the others.
	Hosts *HostSnapshot
}

// HostSnapshot is what a placement decision reads: every host the
// cluster's driver places nodes on, and the nodes of every cluster on
// them.
type HostSnapshot struct {
	Hosts     []PlacementHost
	Instances []HostInstance
	// Err says why the hosts could not be read; the lists are then empty.
	Err string
}

// PlacementHost is one host of a HostSnapshot.
type PlacementHost struct {
	Name   string
	Labels map[string]string
	// Load is the 15-minute load average, MemAvail and SwapAvail the
	// percentages of memory and swap free; nil when not reported.
	Load      *float64
	MemAvail  *float64
	SwapAvail *float64
	// State is up, down or maintenance; Availability active, pause or
	// drain.
	State        string
	Availability string
	Frozen       bool
	Overloaded   bool
}

// HostInstance is a node of some cluster on a host. State is running,
// starting, stopped or failed.
type HostInstance struct {
	Cluster string
	Node    string
	Host    string
	State   string
}

// CheckResult lets the action go on (Refuse empty), optionally with data
// merged into the action's data, or refuses it with a reason (and data
// that stays in the failed action's data, saying more of the refusal).
type CheckResult struct {
	Refuse string
	Data   map[string]any
}

// BindingClusterData is the key of the binding data Attach returns under
// which a policy publishes what users should see in the cluster's data: a
// map whose every key K and value V the engine records as the cluster's
// data.K[policy id] = V at attach, and removes at detach. Senlin's
// load-balancing policy publishes {"loadbalancers": {"vip_address": ...}}.
const BindingClusterData = "cluster_data"

// Policy is a policy plugin. Check is called once per action and phase.
type Policy interface {
	Attach(ctx context.Context, p Spec, c Cluster) (bindingData map[string]any, err error)
	Detach(ctx context.Context, p Spec, c Cluster, bindingData map[string]any) error
	Check(ctx context.Context, req CheckRequest) (CheckResult, error)
}

// PolicyType registers a policy under a type name.
type PolicyType struct {
	Type        string
	Versions    []string
	Description string
	Schema      schema.Schema
	Targets     []Target
	// Priority orders checks when a binding does not set one; lower runs first.
	Priority int
	// Singleton allows at most one policy of this type per cluster.
	Singleton bool
	// WantsHosts asks the engine for a HostSnapshot with each check
	// (CheckRequest.Hosts): reading every host and node costs, so only a
	// placement policy asks.
	WantsHosts bool
	Policy     Policy
	Validate   func(ctx context.Context, p Spec) schema.Diagnostics
}

// RetryableError marks a failure that may succeed if tried again.
type RetryableError struct{ Err error }

func (e *RetryableError) Error() string { return e.Err.Error() }
func (e *RetryableError) Unwrap() error { return e.Err }

// Retryable wraps err so the engine may retry the call.
func Retryable(err error) error {
	if err == nil {
		return nil
	}
	return &RetryableError{Err: err}
}

// IsRetryable reports whether err was marked Retryable.
func IsRetryable(err error) bool {
	var r *RetryableError
	return errors.As(err, &r)
}

// Errorf is fmt.Errorf, for symmetry with Retryable in driver code.
func Errorf(format string, args ...any) error { return fmt.Errorf(format, args...) }
