// Package store defines Grove's persistence interface and its one SQL
// implementation, written for both SQLite and PostgreSQL. The sqlite and
// postgres sub-packages open a database and pick the dialect; storetest holds
// the conformance suite both pass.
package store

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/grovehq/grove/core/model"
)

// ErrNotFound is returned (wrapped) when an object does not exist.
var ErrNotFound = errors.New("not found")

// AmbiguousError is returned when a name or short id matches several objects.
type AmbiguousError struct {
	Kind  string
	Ident string
}

func (e *AmbiguousError) Error() string {
	return fmt.Sprintf("Multiple %ss have been found matching %q; use the full id.", e.Kind, e.Ident)
}

// NotFoundError names what was not found.
type NotFoundError struct {
	Kind  string
	Ident string
}

func (e *NotFoundError) Error() string {
	return fmt.Sprintf("The %s '%s' could not be found.", e.Kind, e.Ident)
}

// Unwrap lets errors.Is(err, ErrNotFound) match.
func (e *NotFoundError) Unwrap() error { return ErrNotFound }

// ErrInvalidRef is returned (wrapped) when an id, name or short id cannot
// name any object: it is empty or holds a wildcard character.
var ErrInvalidRef = errors.New("invalid reference")

// MinShortID is the shortest id prefix a lookup tries as a short id. Shorter
// references are looked up only as names, so a one- or two-character
// reference never picks an object by chance.
const MinShortID = 6

// InvalidRefError names a reference that cannot name any object and why.
type InvalidRefError struct {
	Kind  string
	Ident string
	// Rule is the broken rule, as a sentence.
	Rule string
}

func (e *InvalidRefError) Error() string {
	if e.Ident == "" {
		return fmt.Sprintf("A %s id, name or short id is required; %s", e.Kind, e.Rule)
	}
	return fmt.Sprintf("The %s id, name or short id %q is not valid: %s", e.Kind, e.Ident, e.Rule)
}

// Unwrap lets errors.Is(err, ErrInvalidRef) match.
func (e *InvalidRefError) Unwrap() error { return ErrInvalidRef }

// ErrDuplicate is returned (wrapped) when a write would give a second object
// of a kind a name that must be unique within a project.
var ErrDuplicate = errors.New("duplicate name")

// DuplicateError names the object a unique constraint refused. Its message is
// the one the engine's check before the write gives, so a client sees the same
// answer whichever of two concurrent requests lost.
type DuplicateError struct {
	Kind string
	Name string
}

func (e *DuplicateError) Error() string {
	return fmt.Sprintf("A %s named %q already exists; names must be unique within a project.", e.Kind, e.Name)
}

// Unwrap lets errors.Is(err, ErrDuplicate) match.
func (e *DuplicateError) Unwrap() error { return ErrDuplicate }

// ErrNotGrove is returned (wrapped) when a store is opened on a database that
// is not Grove's: an empty, damaged or foreign file, or a PostgreSQL database
// holding other tables.
var ErrNotGrove = errors.New("not a Grove store")

// SortKey is one sort key of a list.
type SortKey struct {
	Key  string
	Desc bool
}

// ListOpts filters and orders a list. Filter and sort keys are API names;
// the caller validates them against what the resource allows.
type ListOpts struct {
	// Project limits the list to one project; empty lists all projects.
	Project string
	Filters map[string][]string
	Sort    []SortKey
	Limit   int
	// Marker is the id of the last item of the previous page.
	Marker string
	// Since, when set, keeps only events stamped at or after it: the
	// follow stream's window. Lists of other tables ignore it.
	Since time.Time
}

// NodeCount is how many nodes of one cluster are in one status.
type NodeCount struct {
	Project string
	// Cluster is the cluster's name, "" for nodes in no cluster.
	Cluster string
	Status  string
	Count   int
}

// ActionCount is how many actions of one kind are in one status.
type ActionCount struct {
	Action string
	Status string
	Count  int
}

// Lock scopes, as Senlin's.
const (
	LockCluster = -1 // exclusive
	LockNode    = 1  // shared, for node-level actions
)

// ChildSummary tells a parent action where its children stand.
type ChildSummary struct {
	Total   int
	Pending int // not yet terminal
	Failed  int
	// FirstFailure is the status reason of one failed or cancelled child.
	FirstFailure string
}

// Reader is a Store with a separate pool for reads.
type Reader interface {
	// Reads returns a Store whose reads wait for no write: on SQLite a
	// pool of read-only connections beside the one writer, which in WAL
	// mode read the last committed state while a write transaction is
	// open. Writes through it fail.
	Reads() Store
}

// ReadsOf returns the store the API's top-level reads use: s's read pool
// where it has one, else s.
func ReadsOf(s Store) Store {
	if r, ok := s.(Reader); ok {
		return r.Reads()
	}
	return s
}

// ChildCount is how many children of an action have one kind and status.
type ChildCount struct {
	Action string
	Status string
	N      int
}

// Store is everything the engine and the API persist.
type Store interface {
	// InTx runs fn in one transaction; nested calls join the outer one.
	InTx(ctx context.Context, fn func(tx Store) error) error
	Close() error
	// Dialect names the backend: "sqlite" or "postgres".
	Dialect() string

	CreateProfile(ctx context.Context, p *model.Profile) error
	GetProfile(ctx context.Context, id string) (*model.Profile, error)
	FindProfile(ctx context.Context, project, ident string) (*model.Profile, error)
	ListProfiles(ctx context.Context, o ListOpts) ([]*model.Profile, error)
	UpdateProfile(ctx context.Context, p *model.Profile) error
	DeleteProfile(ctx context.Context, id string) error
	// ProfileInUse reports whether a cluster, a node or an action under way
	// references the profile.
	ProfileInUse(ctx context.Context, id string) (bool, error)

	CreatePolicy(ctx context.Context, p *model.Policy) error
	GetPolicy(ctx context.Context, id string) (*model.Policy, error)
	FindPolicy(ctx context.Context, project, ident string) (*model.Policy, error)
	ListPolicies(ctx context.Context, o ListOpts) ([]*model.Policy, error)
	UpdatePolicy(ctx context.Context, p *model.Policy) error
	DeletePolicy(ctx context.Context, id string) error
	// PolicyInUse reports whether a binding or an action under way (an
	// attach) references the policy.
	PolicyInUse(ctx context.Context, id string) (bool, error)
	// LockSpec, in a transaction, keeps a profile or policy (kind
	// "profile" or "policy") from changing hands until the transaction
	// ends, and returns a NotFoundError when it is gone. A transaction that
	// writes a reference to it takes it shared; a deletion takes it
	// exclusive, then checks ProfileInUse or PolicyInUse: the two wait for
	// each other, so either the deletion sees the reference and refuses,
	// or the reference finds the object gone.
	LockSpec(ctx context.Context, kind, id string, exclusive bool) error
	// ReplaceSpec rewrites the spec and properties of a profile or policy
	// (kind "profile" or "policy"); the engine uses it only to encrypt
	// sensitive values stored in plain text.
	ReplaceSpec(ctx context.Context, kind, id string, spec, properties map[string]any) error

	CreateCluster(ctx context.Context, c *model.Cluster) error
	GetCluster(ctx context.Context, id string) (*model.Cluster, error)
	FindCluster(ctx context.Context, project, ident string) (*model.Cluster, error)
	ListClusters(ctx context.Context, o ListOpts) ([]*model.Cluster, error)
	UpdateCluster(ctx context.Context, c *model.Cluster) error
	DeleteCluster(ctx context.Context, id string) error

	CreateNodes(ctx context.Context, nodes []*model.Node) error
	GetNode(ctx context.Context, id string) (*model.Node, error)
	FindNode(ctx context.Context, project, ident string) (*model.Node, error)
	ListNodes(ctx context.Context, o ListOpts) ([]*model.Node, error)
	// ListNodeViews is ListNodes as the API shows nodes: the same rows in
	// the same order, without the driver state and with the JSON
	// documents undecoded.
	ListNodeViews(ctx context.Context, o ListOpts) ([]*model.NodeView, error)
	// FindNodeView is FindNode as the API shows a node (see ListNodeViews).
	FindNodeView(ctx context.Context, project, ident string) (*model.NodeView, error)
	// ClusterNodes returns a cluster's nodes ordered by index.
	ClusterNodes(ctx context.Context, clusterID string) ([]*model.Node, error)
	GetNodes(ctx context.Context, ids []string) ([]*model.Node, error)
	// PhysicalHolders returns the nodes, of any project, that hold one of
	// the physical ids, with their profiles' types, through an index of
	// the ids held (a driver's batch of results is checked with one read).
	// Inside a transaction on PostgreSQL it first takes a transaction lock
	// keyed by each id, so two transactions that check an id before
	// recording a node with it run one after the other (SQLite's
	// transactions already do: they begin immediate).
	PhysicalHolders(ctx context.Context, physicalIDs []string) ([]model.PhysicalHolder, error)
	// CheckNodes returns a cluster's nodes as a health check reads them,
	// ordered by index: the fields a driver's check gets, with data and
	// metadata left as the JSON the store holds, so a round does not decode
	// (and re-encode) every node's documents.
	CheckNodes(ctx context.Context, clusterID string) ([]*model.CheckNode, error)
	// NodeChanges returns the generation of a cluster's nodes: it moves
	// whenever one of them is created, changed, deleted or moved to
	// another cluster, and 0 means none is known (read the nodes). A
	// reader that reads it, then the nodes, may keep what it read for as
	// long as the generation stays the same.
	NodeChanges(ctx context.Context, clusterID string) (int64, error)
	// PlacedNodes returns, in creation order, the nodes of clusters that
	// may be on a host: those with a host (nodes.host) and those whose
	// data holds a "host" key, a superset the caller narrows. Only the
	// latter's data is read. Placement reads these every monitor round,
	// and a store of many nodes placed nowhere must not cost a decode of
	// every node's documents.
	PlacedNodes(ctx context.Context) ([]*model.PlacedNode, error)
	// ClusterHostNodes returns a cluster's nodes that are on a host
	// (nodes.host set), ordered by index.
	ClusterHostNodes(ctx context.Context, clusterID string) ([]*model.Node, error)
	UpdateNodes(ctx context.Context, nodes []*model.Node) error
	// RecordNodeResults writes what a driver call decides of each node
	// (physical id, status and reason, creation and update times, data
	// and state) and leaves the rest as stored: the columns that place a
	// node (cluster, name, index, host) and its indexes are not touched.
	// A node deleted meanwhile is skipped.
	RecordNodeResults(ctx context.Context, nodes []*model.Node) error
	// SetNodeStatus sets status and reason of many nodes in one statement.
	SetNodeStatus(ctx context.Context, ids []string, status, reason string) error
	DeleteNodes(ctx context.Context, ids []string) error
	CountNodes(ctx context.Context, clusterID string) (int, error)
	// ClusterNodeIDs returns the ids of up to limit of a cluster's nodes
	// ordered by index, then id (ListNodes' order with sort=index), read
	// from an index without decoding the rows.
	ClusterNodeIDs(ctx context.Context, clusterID string, limit int) ([]string, error)
	// CountNodesByStatus counts a cluster's nodes by status.
	CountNodesByStatus(ctx context.Context, clusterID string) (map[string]int, error)

	CreateActions(ctx context.Context, actions []*model.Action) error
	GetAction(ctx context.Context, id string) (*model.Action, error)
	FindAction(ctx context.Context, project, ident string) (*model.Action, error)
	ListActions(ctx context.Context, o ListOpts) ([]*model.Action, error)
	UpdateActions(ctx context.Context, actions []*model.Action) error
	// FinishActions ends many actions with one status and reason.
	FinishActions(ctx context.Context, ids []string, status, reason string, at time.Time) error
	// ClaimActions moves up to max READY actions to RUNNING under owner with
	// a lease until the given time. nodeLevel picks derived node actions,
	// which are claimed in batches of one parent and one action name;
	// otherwise one top-level action is claimed.
	//
	// host is the claiming agent's host: an action on a node of another
	// host (nodes.host set and different) is left for that host's agent,
	// unless that host is down or gone: then any agent may take it (the
	// engine forgets a deleted node and fails its other actions without
	// a driver call).
	ClaimActions(ctx context.Context, owner, host string, until time.Time, nodeLevel bool, max int) ([]*model.Action, error)
	RenewLeases(ctx context.Context, owner string, ids []string, until time.Time) error
	// ReclaimActions makes RUNNING actions READY again when their lease has
	// expired before now, or when they belong to owner (pass "" for none).
	ReclaimActions(ctx context.Context, owner string, now time.Time) (int, error)
	Children(ctx context.Context, parentID string) ([]*model.Action, error)
	// ChildIDs returns the ids of up to limit children of parentID in
	// creation order (the order ListActions pages them by parent_id), read
	// from an index without decoding the rows.
	ChildIDs(ctx context.Context, parentID string, limit int) ([]string, error)
	// CountChildren counts parentID's children by kind and status.
	CountChildren(ctx context.Context, parentID string) ([]ChildCount, error)
	SummarizeChildren(ctx context.Context, parentID string) (ChildSummary, error)
	// ActiveActions lists non-terminal actions on a target.
	ActiveActions(ctx context.Context, target string) ([]*model.Action, error)
	// SignalChildren sets control on the pending children of parentID and
	// cancels those that have not started.
	SignalChildren(ctx context.Context, parentID, control string, now time.Time) error
	// ReleaseLifecycle makes parentID's children that a lifecycle hook
	// holds (WAITING_LIFECYCLE_COMPLETION) READY with the reason: the one
	// with the given id, or all of them when id is empty. It returns how
	// many it released; an action no longer held is left as it is.
	ReleaseLifecycle(ctx context.Context, parentID, id, reason string, now time.Time) (int, error)
	// DeleteActions removes terminal actions by id.
	DeleteActions(ctx context.Context, ids []string) error

	// ClaimHealth makes owner the agent that checks the clusters' health
	// until the given time, except clusters another agent holds a claim on
	// that has not expired by now. It returns the clusters owner holds.
	ClaimHealth(ctx context.Context, clusterIDs []string, owner string, now, until time.Time) ([]string, error)
	// TakeHealth gives owner the health claim of a cluster whoever holds it.
	TakeHealth(ctx context.Context, clusterID, owner string, until time.Time) error
	// ReleaseHealth gives up owner's health claims, so other agents take
	// them over at once.
	ReleaseHealth(ctx context.Context, owner string) error

	CreateBinding(ctx context.Context, b *model.Binding) error
	GetBinding(ctx context.Context, clusterID, policyID string) (*model.Binding, error)
	ListBindings(ctx context.Context, clusterID string) ([]*model.Binding, error)
	UpdateBinding(ctx context.Context, b *model.Binding) error
	DeleteBinding(ctx context.Context, clusterID, policyID string) error

	CreateEvents(ctx context.Context, events []*model.Event) error
	// NodeCounts counts every project's nodes by cluster and status, for
	// the metrics.
	NodeCounts(ctx context.Context) ([]NodeCount, error)
	// ActionCounts counts the actions not yet ended (INIT, WAITING, READY,
	// RUNNING) by kind and status, for the metrics.
	ActionCounts(ctx context.Context) ([]ActionCount, error)
	GetEvent(ctx context.Context, id string) (*model.Event, error)
	ListEvents(ctx context.Context, o ListOpts) ([]*model.Event, error)

	// AcquireClusterLock takes the cluster lock in a scope for an action.
	// It succeeds if free, already held by the action, or (node scope) shared
	// with other node-scope holders.
	AcquireClusterLock(ctx context.Context, clusterID, actionID string, scope int) (bool, error)
	ReleaseClusterLock(ctx context.Context, clusterID, actionID string) error
	AcquireNodeLock(ctx context.Context, nodeID, actionID string) (bool, error)
	ReleaseNodeLock(ctx context.Context, nodeID, actionID string) error

	CrowdedTargets(ctx context.Context, clusterID string, keep int) ([]string, error)
	CrowdedEventObjects(ctx context.Context, clusterID string, keep int) ([]string, error)
	ActionStamps(ctx context.Context, target string) ([]Stamp, error)
	EventStamps(ctx context.Context, oid string) ([]Stamp, error)
	DeleteEvents(ctx context.Context, ids []string) error

	// SetObjects lists what a project's definition set owns.
	SetObjects(ctx context.Context, project, set string) ([]SetObject, error)
	// OwnerOf returns the set owning an object, whichever its project, or nil.
	OwnerOf(ctx context.Context, kind, id string) (*SetObject, error)
	PutSetObject(ctx context.Context, o SetObject) error
	DeleteSetObject(ctx context.Context, kind, id string) error

	// CreateToken stores a token's record (its hash, never its secret).
	CreateToken(ctx context.Context, t *model.Token) error
	GetToken(ctx context.Context, id string) (*model.Token, error)
	// TokenByHash finds the token whose secret has this SHA-256 (hex).
	TokenByHash(ctx context.Context, hash string) (*model.Token, error)
	ListTokens(ctx context.Context) ([]*model.Token, error)
	// DeleteToken revokes a token; a missing one is a NotFoundError.
	DeleteToken(ctx context.Context, id string) error

	// CreateReceiver stores a receiver (its webhook secret's hash, never
	// the secret).
	CreateReceiver(ctx context.Context, v *model.Receiver) error
	GetReceiver(ctx context.Context, id string) (*model.Receiver, error)
	FindReceiver(ctx context.Context, project, ident string) (*model.Receiver, error)
	// ReceiverByHash finds the receiver whose webhook secret has this
	// SHA-256 (hex).
	ReceiverByHash(ctx context.Context, hash string) (*model.Receiver, error)
	ListReceivers(ctx context.Context, o ListOpts) ([]*model.Receiver, error)
	UpdateReceiver(ctx context.Context, v *model.Receiver) error
	// DeleteReceiver deletes a receiver; a missing one is a NotFoundError.
	DeleteReceiver(ctx context.Context, id string) error

	// ReplaceDeclaredDependencies replaces, in one transaction, every
	// dependency group the declarer cluster declared (its own
	// dependencies and the dependents it declared on other clusters) with
	// groups, each of which must have DeclaredBy == declarer. A group name
	// already held by the target from another declaration is an
	// ErrDuplicate.
	ReplaceDeclaredDependencies(ctx context.Context, declarer string, groups []model.DependencyGroup) error
	// ListDependencies lists every dependency group, by cluster then name:
	// the graph is evaluated whole.
	ListDependencies(ctx context.Context) ([]model.DependencyGroup, error)

	CreateMilestone(ctx context.Context, m *model.Milestone) error
	GetMilestone(ctx context.Context, id string) (*model.Milestone, error)
	FindMilestone(ctx context.Context, project, ident string) (*model.Milestone, error)
	ListMilestones(ctx context.Context, o ListOpts) ([]*model.Milestone, error)
	UpdateMilestone(ctx context.Context, m *model.Milestone) error
	// DeleteMilestone deletes a milestone; a missing one is a
	// NotFoundError.
	DeleteMilestone(ctx context.Context, id string) error

	// ReportHost records a host's heartbeat or a driver's report of it:
	// kind, driver, reported labels, load, state and heartbeat. A new
	// host starts with the given availability (active when empty); an
	// existing one keeps its availability and operator labels.
	ReportHost(ctx context.Context, h *model.Host) error
	GetHost(ctx context.Context, name string) (*model.Host, error)
	// ListHosts lists every host by name.
	ListHosts(ctx context.Context) ([]*model.Host, error)
	// UpdateHost writes what an operator sets: availability and operator
	// labels. A missing host is a NotFoundError.
	UpdateHost(ctx context.Context, h *model.Host) error
	// SetHostState sets a host's state (an agent stopping cleanly puts
	// its host in maintenance).
	SetHostState(ctx context.Context, name, state string, at time.Time) error
	// MarkHostsDown marks down the agent hosts that are up and whose last
	// heartbeat is before the given time, and returns their names. Of
	// agents racing, each host is returned to one.
	MarkHostsDown(ctx context.Context, before, at time.Time) ([]string, error)
	// HostNodeCounts counts the nodes on each host.
	HostNodeCounts(ctx context.Context) (map[string]int, error)
	// HostClusters lists the clusters with nodes on a host.
	HostClusters(ctx context.Context, host string) ([]string, error)

	// ListInstances lists a failover or flex cluster's instances by host.
	ListInstances(ctx context.Context, clusterID string) ([]*model.Instance, error)
	// PutInstance writes an instance: a new one when its Version is 0,
	// else only if the stored row still has that Version. Another writer
	// having come first is a ConflictError. On success the Version
	// counts the write.
	PutInstance(ctx context.Context, x *model.Instance) error
	// DeleteInstance deletes an instance; a missing one is no error.
	DeleteInstance(ctx context.Context, clusterID, host string) error
	// GetExpectation reads a failover or flex cluster's expectation; nil
	// when none was ever set.
	GetExpectation(ctx context.Context, clusterID string) (*model.Expectation, error)
	// PutExpectation writes a cluster's expectation with PutInstance's
	// version check: a new row when its Version is 0, else only over that
	// Version, another writer having come first being a ConflictError.
	PutExpectation(ctx context.Context, x *model.Expectation) error

	// ListGrants lists the host-access profile types granted to a project.
	ListGrants(ctx context.Context, project string) ([]string, error)
	// PutGrant grants a project a type; granting twice is not an error.
	PutGrant(ctx context.Context, project, typ string) error
	// DeleteGrant revokes a grant; revoking a missing one is not an error.
	DeleteGrant(ctx context.Context, project, typ string) error
}
