package engine_test

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/grovehq/grove/core/model"
	"github.com/grovehq/grove/core/store"
)

// crashStore stands between an engine and its store and can die: from the
// call it dies at, every call fails, so what an engine does after that
// moment never reaches the store, as if its process had been killed there.
// A test arms it to die at the nth call of a method (the moment a handler
// has done one step and not the next) or kills it outright, then stops the
// engine and starts another on the store.
//
// The methods below only forward; they are written out because Go has no
// other way to stand between an interface and its implementation.
type crashStore struct {
	store.Store
	c *crashState
}

// crashState is shared by a crashStore and the transactions it opens.
type crashState struct {
	mu     sync.Mutex
	dead   bool
	method string // the method to die at, when armed
	left   int    // calls of method before the one it dies at
	died   chan struct{}
}

// errCrashed is what every call to a dead store returns.
var errCrashed = errors.New("the store is gone: the test killed the engine")

func newCrashStore(s store.Store) *crashStore {
	return &crashStore{Store: s, c: &crashState{died: make(chan struct{})}}
}

// dieAt arms the store to die at the nth call of method from now on.
func (s *crashStore) dieAt(method string, n int) {
	s.c.mu.Lock()
	s.c.method, s.c.left = method, n-1
	s.c.mu.Unlock()
}

// kill makes the store dead at once.
func (s *crashStore) kill() {
	s.c.mu.Lock()
	s.c.die()
	s.c.mu.Unlock()
}

func (c *crashState) die() {
	if !c.dead {
		c.dead = true
		close(c.died)
	}
}

// hit is called on each call: it fails the call when the store is dead or
// dies at it.
func (s *crashStore) hit(method string) error {
	s.c.mu.Lock()
	defer s.c.mu.Unlock()
	if !s.c.dead && s.c.method == method {
		if s.c.left == 0 {
			s.c.die()
		}
		s.c.left--
	}
	if s.c.dead {
		return errCrashed
	}
	return nil
}

// InTx runs fn with the transaction behind a crashStore too, so a store
// that dies inside a transaction rolls it back.
func (s *crashStore) InTx(ctx context.Context, fn func(tx store.Store) error) error {
	if err := s.hit("InTx"); err != nil {
		return err
	}
	return s.Store.InTx(ctx, func(tx store.Store) error {
		return fn(&crashStore{Store: tx, c: s.c})
	})
}

func (s *crashStore) CreateProfile(ctx context.Context, p *model.Profile) error {
	if err := s.hit("CreateProfile"); err != nil {
		return err
	}
	return s.Store.CreateProfile(ctx, p)
}

func (s *crashStore) GetProfile(ctx context.Context, id string) (*model.Profile, error) {
	if err := s.hit("GetProfile"); err != nil {
		return nil, err
	}
	return s.Store.GetProfile(ctx, id)
}

func (s *crashStore) FindProfile(ctx context.Context, project, ident string) (*model.Profile, error) {
	if err := s.hit("FindProfile"); err != nil {
		return nil, err
	}
	return s.Store.FindProfile(ctx, project, ident)
}

func (s *crashStore) ListProfiles(ctx context.Context, o store.ListOpts) ([]*model.Profile, error) {
	if err := s.hit("ListProfiles"); err != nil {
		return nil, err
	}
	return s.Store.ListProfiles(ctx, o)
}

func (s *crashStore) UpdateProfile(ctx context.Context, p *model.Profile) error {
	if err := s.hit("UpdateProfile"); err != nil {
		return err
	}
	return s.Store.UpdateProfile(ctx, p)
}

func (s *crashStore) DeleteProfile(ctx context.Context, id string) error {
	if err := s.hit("DeleteProfile"); err != nil {
		return err
	}
	return s.Store.DeleteProfile(ctx, id)
}

func (s *crashStore) ProfileInUse(ctx context.Context, id string) (bool, error) {
	if err := s.hit("ProfileInUse"); err != nil {
		return false, err
	}
	return s.Store.ProfileInUse(ctx, id)
}

func (s *crashStore) CreatePolicy(ctx context.Context, p *model.Policy) error {
	if err := s.hit("CreatePolicy"); err != nil {
		return err
	}
	return s.Store.CreatePolicy(ctx, p)
}

func (s *crashStore) GetPolicy(ctx context.Context, id string) (*model.Policy, error) {
	if err := s.hit("GetPolicy"); err != nil {
		return nil, err
	}
	return s.Store.GetPolicy(ctx, id)
}

func (s *crashStore) FindPolicy(ctx context.Context, project, ident string) (*model.Policy, error) {
	if err := s.hit("FindPolicy"); err != nil {
		return nil, err
	}
	return s.Store.FindPolicy(ctx, project, ident)
}

func (s *crashStore) ListPolicies(ctx context.Context, o store.ListOpts) ([]*model.Policy, error) {
	if err := s.hit("ListPolicies"); err != nil {
		return nil, err
	}
	return s.Store.ListPolicies(ctx, o)
}

func (s *crashStore) UpdatePolicy(ctx context.Context, p *model.Policy) error {
	if err := s.hit("UpdatePolicy"); err != nil {
		return err
	}
	return s.Store.UpdatePolicy(ctx, p)
}

func (s *crashStore) DeletePolicy(ctx context.Context, id string) error {
	if err := s.hit("DeletePolicy"); err != nil {
		return err
	}
	return s.Store.DeletePolicy(ctx, id)
}

func (s *crashStore) PolicyInUse(ctx context.Context, id string) (bool, error) {
	if err := s.hit("PolicyInUse"); err != nil {
		return false, err
	}
	return s.Store.PolicyInUse(ctx, id)
}

func (s *crashStore) CreateCluster(ctx context.Context, c *model.Cluster) error {
	if err := s.hit("CreateCluster"); err != nil {
		return err
	}
	return s.Store.CreateCluster(ctx, c)
}

func (s *crashStore) GetCluster(ctx context.Context, id string) (*model.Cluster, error) {
	if err := s.hit("GetCluster"); err != nil {
		return nil, err
	}
	return s.Store.GetCluster(ctx, id)
}

func (s *crashStore) FindCluster(ctx context.Context, project, ident string) (*model.Cluster, error) {
	if err := s.hit("FindCluster"); err != nil {
		return nil, err
	}
	return s.Store.FindCluster(ctx, project, ident)
}

func (s *crashStore) ListClusters(ctx context.Context, o store.ListOpts) ([]*model.Cluster, error) {
	if err := s.hit("ListClusters"); err != nil {
		return nil, err
	}
	return s.Store.ListClusters(ctx, o)
}

func (s *crashStore) UpdateCluster(ctx context.Context, c *model.Cluster) error {
	if err := s.hit("UpdateCluster"); err != nil {
		return err
	}
	return s.Store.UpdateCluster(ctx, c)
}

func (s *crashStore) DeleteCluster(ctx context.Context, id string) error {
	if err := s.hit("DeleteCluster"); err != nil {
		return err
	}
	return s.Store.DeleteCluster(ctx, id)
}

func (s *crashStore) CreateNodes(ctx context.Context, nodes []*model.Node) error {
	if err := s.hit("CreateNodes"); err != nil {
		return err
	}
	return s.Store.CreateNodes(ctx, nodes)
}

func (s *crashStore) GetNode(ctx context.Context, id string) (*model.Node, error) {
	if err := s.hit("GetNode"); err != nil {
		return nil, err
	}
	return s.Store.GetNode(ctx, id)
}

func (s *crashStore) FindNode(ctx context.Context, project, ident string) (*model.Node, error) {
	if err := s.hit("FindNode"); err != nil {
		return nil, err
	}
	return s.Store.FindNode(ctx, project, ident)
}

func (s *crashStore) ListNodes(ctx context.Context, o store.ListOpts) ([]*model.Node, error) {
	if err := s.hit("ListNodes"); err != nil {
		return nil, err
	}
	return s.Store.ListNodes(ctx, o)
}

func (s *crashStore) ClusterNodes(ctx context.Context, clusterID string) ([]*model.Node, error) {
	if err := s.hit("ClusterNodes"); err != nil {
		return nil, err
	}
	return s.Store.ClusterNodes(ctx, clusterID)
}

func (s *crashStore) GetNodes(ctx context.Context, ids []string) ([]*model.Node, error) {
	if err := s.hit("GetNodes"); err != nil {
		return nil, err
	}
	return s.Store.GetNodes(ctx, ids)
}

func (s *crashStore) UpdateNodes(ctx context.Context, nodes []*model.Node) error {
	if err := s.hit("UpdateNodes"); err != nil {
		return err
	}
	return s.Store.UpdateNodes(ctx, nodes)
}

func (s *crashStore) RecordNodeResults(ctx context.Context, nodes []*model.Node) error {
	if err := s.hit("RecordNodeResults"); err != nil {
		return err
	}
	return s.Store.RecordNodeResults(ctx, nodes)
}

func (s *crashStore) SetNodeStatus(ctx context.Context, ids []string, status, reason string) error {
	if err := s.hit("SetNodeStatus"); err != nil {
		return err
	}
	return s.Store.SetNodeStatus(ctx, ids, status, reason)
}

func (s *crashStore) DeleteNodes(ctx context.Context, ids []string) error {
	if err := s.hit("DeleteNodes"); err != nil {
		return err
	}
	return s.Store.DeleteNodes(ctx, ids)
}

func (s *crashStore) CountNodes(ctx context.Context, clusterID string) (int, error) {
	if err := s.hit("CountNodes"); err != nil {
		return 0, err
	}
	return s.Store.CountNodes(ctx, clusterID)
}

func (s *crashStore) CreateActions(ctx context.Context, actions []*model.Action) error {
	if err := s.hit("CreateActions"); err != nil {
		return err
	}
	return s.Store.CreateActions(ctx, actions)
}

func (s *crashStore) GetAction(ctx context.Context, id string) (*model.Action, error) {
	if err := s.hit("GetAction"); err != nil {
		return nil, err
	}
	return s.Store.GetAction(ctx, id)
}

func (s *crashStore) FindAction(ctx context.Context, project, ident string) (*model.Action, error) {
	if err := s.hit("FindAction"); err != nil {
		return nil, err
	}
	return s.Store.FindAction(ctx, project, ident)
}

func (s *crashStore) ListActions(ctx context.Context, o store.ListOpts) ([]*model.Action, error) {
	if err := s.hit("ListActions"); err != nil {
		return nil, err
	}
	return s.Store.ListActions(ctx, o)
}

func (s *crashStore) UpdateActions(ctx context.Context, actions []*model.Action) error {
	if err := s.hit("UpdateActions"); err != nil {
		return err
	}
	return s.Store.UpdateActions(ctx, actions)
}

func (s *crashStore) FinishActions(ctx context.Context, ids []string, status, reason string, at time.Time) error {
	if err := s.hit("FinishActions"); err != nil {
		return err
	}
	return s.Store.FinishActions(ctx, ids, status, reason, at)
}

func (s *crashStore) ClaimActions(ctx context.Context, owner, host string, until time.Time, nodeLevel bool, max int) ([]*model.Action, error) {
	if err := s.hit("ClaimActions"); err != nil {
		return nil, err
	}
	return s.Store.ClaimActions(ctx, owner, host, until, nodeLevel, max)
}

func (s *crashStore) RenewLeases(ctx context.Context, owner string, ids []string, until time.Time) error {
	if err := s.hit("RenewLeases"); err != nil {
		return err
	}
	return s.Store.RenewLeases(ctx, owner, ids, until)
}

func (s *crashStore) ReclaimActions(ctx context.Context, owner string, now time.Time) (int, error) {
	if err := s.hit("ReclaimActions"); err != nil {
		return 0, err
	}
	return s.Store.ReclaimActions(ctx, owner, now)
}

func (s *crashStore) Children(ctx context.Context, parentID string) ([]*model.Action, error) {
	if err := s.hit("Children"); err != nil {
		return nil, err
	}
	return s.Store.Children(ctx, parentID)
}

func (s *crashStore) SummarizeChildren(ctx context.Context, parentID string) (store.ChildSummary, error) {
	if err := s.hit("SummarizeChildren"); err != nil {
		var zero store.ChildSummary
		return zero, err
	}
	return s.Store.SummarizeChildren(ctx, parentID)
}

func (s *crashStore) ActiveActions(ctx context.Context, target string) ([]*model.Action, error) {
	if err := s.hit("ActiveActions"); err != nil {
		return nil, err
	}
	return s.Store.ActiveActions(ctx, target)
}

func (s *crashStore) SignalChildren(ctx context.Context, parentID, control string, now time.Time) error {
	if err := s.hit("SignalChildren"); err != nil {
		return err
	}
	return s.Store.SignalChildren(ctx, parentID, control, now)
}

func (s *crashStore) DeleteActions(ctx context.Context, ids []string) error {
	if err := s.hit("DeleteActions"); err != nil {
		return err
	}
	return s.Store.DeleteActions(ctx, ids)
}

func (s *crashStore) ClaimHealth(ctx context.Context, clusterIDs []string, owner string, now, until time.Time) ([]string, error) {
	if err := s.hit("ClaimHealth"); err != nil {
		return nil, err
	}
	return s.Store.ClaimHealth(ctx, clusterIDs, owner, now, until)
}

func (s *crashStore) TakeHealth(ctx context.Context, clusterID, owner string, until time.Time) error {
	if err := s.hit("TakeHealth"); err != nil {
		return err
	}
	return s.Store.TakeHealth(ctx, clusterID, owner, until)
}

func (s *crashStore) ReleaseHealth(ctx context.Context, owner string) error {
	if err := s.hit("ReleaseHealth"); err != nil {
		return err
	}
	return s.Store.ReleaseHealth(ctx, owner)
}

func (s *crashStore) CreateBinding(ctx context.Context, b *model.Binding) error {
	if err := s.hit("CreateBinding"); err != nil {
		return err
	}
	return s.Store.CreateBinding(ctx, b)
}

func (s *crashStore) GetBinding(ctx context.Context, clusterID, policyID string) (*model.Binding, error) {
	if err := s.hit("GetBinding"); err != nil {
		return nil, err
	}
	return s.Store.GetBinding(ctx, clusterID, policyID)
}

func (s *crashStore) ListBindings(ctx context.Context, clusterID string) ([]*model.Binding, error) {
	if err := s.hit("ListBindings"); err != nil {
		return nil, err
	}
	return s.Store.ListBindings(ctx, clusterID)
}

func (s *crashStore) UpdateBinding(ctx context.Context, b *model.Binding) error {
	if err := s.hit("UpdateBinding"); err != nil {
		return err
	}
	return s.Store.UpdateBinding(ctx, b)
}

func (s *crashStore) DeleteBinding(ctx context.Context, clusterID, policyID string) error {
	if err := s.hit("DeleteBinding"); err != nil {
		return err
	}
	return s.Store.DeleteBinding(ctx, clusterID, policyID)
}

func (s *crashStore) CreateEvents(ctx context.Context, events []*model.Event) error {
	if err := s.hit("CreateEvents"); err != nil {
		return err
	}
	return s.Store.CreateEvents(ctx, events)
}

func (s *crashStore) GetEvent(ctx context.Context, id string) (*model.Event, error) {
	if err := s.hit("GetEvent"); err != nil {
		return nil, err
	}
	return s.Store.GetEvent(ctx, id)
}

func (s *crashStore) ListEvents(ctx context.Context, o store.ListOpts) ([]*model.Event, error) {
	if err := s.hit("ListEvents"); err != nil {
		return nil, err
	}
	return s.Store.ListEvents(ctx, o)
}

func (s *crashStore) AcquireClusterLock(ctx context.Context, clusterID, actionID string, scope int) (bool, error) {
	if err := s.hit("AcquireClusterLock"); err != nil {
		return false, err
	}
	return s.Store.AcquireClusterLock(ctx, clusterID, actionID, scope)
}

func (s *crashStore) ReleaseClusterLock(ctx context.Context, clusterID, actionID string) error {
	if err := s.hit("ReleaseClusterLock"); err != nil {
		return err
	}
	return s.Store.ReleaseClusterLock(ctx, clusterID, actionID)
}

func (s *crashStore) AcquireNodeLock(ctx context.Context, nodeID, actionID string) (bool, error) {
	if err := s.hit("AcquireNodeLock"); err != nil {
		return false, err
	}
	return s.Store.AcquireNodeLock(ctx, nodeID, actionID)
}

func (s *crashStore) ReleaseNodeLock(ctx context.Context, nodeID, actionID string) error {
	if err := s.hit("ReleaseNodeLock"); err != nil {
		return err
	}
	return s.Store.ReleaseNodeLock(ctx, nodeID, actionID)
}

func (s *crashStore) CrowdedTargets(ctx context.Context, clusterID string, keep int) ([]string, error) {
	if err := s.hit("CrowdedTargets"); err != nil {
		return nil, err
	}
	return s.Store.CrowdedTargets(ctx, clusterID, keep)
}

func (s *crashStore) CrowdedEventObjects(ctx context.Context, clusterID string, keep int) ([]string, error) {
	if err := s.hit("CrowdedEventObjects"); err != nil {
		return nil, err
	}
	return s.Store.CrowdedEventObjects(ctx, clusterID, keep)
}

func (s *crashStore) ActionStamps(ctx context.Context, target string) ([]store.Stamp, error) {
	if err := s.hit("ActionStamps"); err != nil {
		return nil, err
	}
	return s.Store.ActionStamps(ctx, target)
}

func (s *crashStore) EventStamps(ctx context.Context, oid string) ([]store.Stamp, error) {
	if err := s.hit("EventStamps"); err != nil {
		return nil, err
	}
	return s.Store.EventStamps(ctx, oid)
}

func (s *crashStore) DeleteEvents(ctx context.Context, ids []string) error {
	if err := s.hit("DeleteEvents"); err != nil {
		return err
	}
	return s.Store.DeleteEvents(ctx, ids)
}

func (s *crashStore) SetObjects(ctx context.Context, project, set string) ([]store.SetObject, error) {
	if err := s.hit("SetObjects"); err != nil {
		return nil, err
	}
	return s.Store.SetObjects(ctx, project, set)
}

func (s *crashStore) OwnerOf(ctx context.Context, kind, id string) (*store.SetObject, error) {
	if err := s.hit("OwnerOf"); err != nil {
		return nil, err
	}
	return s.Store.OwnerOf(ctx, kind, id)
}

func (s *crashStore) PutSetObject(ctx context.Context, o store.SetObject) error {
	if err := s.hit("PutSetObject"); err != nil {
		return err
	}
	return s.Store.PutSetObject(ctx, o)
}

func (s *crashStore) DeleteSetObject(ctx context.Context, kind, id string) error {
	if err := s.hit("DeleteSetObject"); err != nil {
		return err
	}
	return s.Store.DeleteSetObject(ctx, kind, id)
}

func (s *crashStore) ReportHost(ctx context.Context, h *model.Host) error {
	if err := s.hit("ReportHost"); err != nil {
		return err
	}
	return s.Store.ReportHost(ctx, h)
}

func (s *crashStore) SetHostState(ctx context.Context, name, state string, at time.Time) error {
	if err := s.hit("SetHostState"); err != nil {
		return err
	}
	return s.Store.SetHostState(ctx, name, state, at)
}

func (s *crashStore) MarkHostsDown(ctx context.Context, before, at time.Time) ([]string, error) {
	if err := s.hit("MarkHostsDown"); err != nil {
		return nil, err
	}
	return s.Store.MarkHostsDown(ctx, before, at)
}

func (s *crashStore) ListHosts(ctx context.Context) ([]*model.Host, error) {
	if err := s.hit("ListHosts"); err != nil {
		return nil, err
	}
	return s.Store.ListHosts(ctx)
}

func (s *crashStore) HostClusters(ctx context.Context, host string) ([]string, error) {
	if err := s.hit("HostClusters"); err != nil {
		return nil, err
	}
	return s.Store.HostClusters(ctx, host)
}
