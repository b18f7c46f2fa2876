// Package storetest is the conformance suite every Store implementation
// passes. Run it from each backend's tests with a fresh store per call.
package storetest

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/grovehq/grove/core/model"
	"github.com/grovehq/grove/core/store"
)

// Run runs the suite; open returns a fresh, empty store.
func Run(t *testing.T, open func(t *testing.T) store.Store) {
	tests := []struct {
		name string
		fn   func(t *testing.T, s store.Store)
	}{
		{"ProfileCRUDAndFind", testProfiles},
		{"ProfileLocksAndUse", testProfileLocks},
		{"ListFilterSortPage", testList},
		{"ClusterAndNodes", testClusterNodes},
		{"ClaimBatchesNodeActions", testClaim},
		{"LeasesAndReclaim", testLeases},
		{"ChildrenAndCancel", testChildren},
		{"LifecycleHolds", testLifecycle},
		{"Locks", testLocks},
		{"StaleLocks", testStaleLocks},
		{"BindingsAndEvents", testBindingsEvents},
		{"TransactionRollback", testTx},
		{"DefinitionSets", testSets},
		{"ReaperQueries", testReap},
		{"HealthClaims", testHealthClaims},
		{"LiteralLookups", testLiteralLookups},
		{"ClusterNamesUnique", testUniqueNames},
		{"ReplaceSpec", testReplaceSpec},
		{"Tokens", testTokens},
		{"Grants", testGrants},
		{"CountsForMetrics", testCounts},
		{"Receivers", testReceivers},
		{"DependenciesAndMilestones", testDependencies},
		{"Hosts", testHosts},
		{"HostsMarkedDownOnce", testHostsDownOnce},
		{"InstancesVersioned", testInstances},
		{"ExpectationsVersioned", testExpectations},
		{"ClaimsFollowNodeHosts", testClaimHosts},
		{"IDsAndCountsWithoutRows", testIDsAndCounts},
		{"CountsFollowEveryWrite", testCountsFollowWrites},
		{"CountsUnderConcurrentWriters", testCountsConcurrent},
		{"CheckNodesAndHostNodes", testCheckNodes},
		{"PlacedNodes", testPlacedNodes},
		{"PhysicalHolders", testPhysicalHolders},
		{"NodeChangesFollowEveryWrite", testNodeChanges},
		{"NodeViewsAsNodes", testNodeViews},
		{"RecordNodeResultsLeavesTheRest", testRecordNodeResults},
		{"BatchWritesKeepAwkwardValues", testAwkwardValues},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := open(t)
			tc.fn(t, s)
		})
	}
}

var t0 = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

func profile(name string, at time.Time) *model.Profile {
	return &model.Profile{ID: uuid.NewString(), Name: name, Type: "local.process", Version: "1.0",
		Spec: map[string]any{"type": "local.process"}, Properties: map[string]any{"command": []any{"sleep"}},
		Project: "p1", User: "u", CreatedAt: at}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func testProfiles(t *testing.T, s store.Store) {
	ctx := context.Background()
	a := profile("web", t0)
	a.ID = "abcd0010-0000-4000-8000-000000000001"
	b := profile("db", t0.Add(time.Second))
	b.ID = "abcd0020-0000-4000-8000-000000000002"
	must(t, s.CreateProfile(ctx, a))
	must(t, s.CreateProfile(ctx, b))
	got, err := s.GetProfile(ctx, a.ID)
	must(t, err)
	if got.Name != "web" || got.Properties["command"].([]any)[0] != "sleep" || !got.CreatedAt.Equal(t0) {
		t.Fatalf("round trip lost data: %+v", got)
	}
	for ident, want := range map[string]string{a.ID: a.ID, "db": b.ID, "abcd001": a.ID, "ABCD001": a.ID, strings.ToUpper(b.ID): b.ID} {
		p, err := s.FindProfile(ctx, "p1", ident)
		if err != nil || p.ID != want {
			t.Errorf("find %q = %v, %v; want %s", ident, p, err, want)
		}
	}
	var amb *store.AmbiguousError
	if _, err := s.FindProfile(ctx, "p1", "abcd00"); !errors.As(err, &amb) {
		t.Errorf("a prefix of two ids must be ambiguous, got %v", err)
	}
	if _, err := s.FindProfile(ctx, "p1", "nope"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("unknown name must be not found, got %v", err)
	}
	if _, err := s.FindProfile(ctx, "other-project", "web"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("find must stay within the project, got %v", err)
	}
	dup := profile("web", t0)
	must(t, s.CreateProfile(ctx, dup))
	if _, err := s.FindProfile(ctx, "p1", "web"); !errors.As(err, &amb) {
		t.Errorf("a name used twice must be ambiguous, got %v", err)
	}
	now := t0.Add(time.Hour)
	a.Name, a.UpdatedAt = "web2", &now
	must(t, s.UpdateProfile(ctx, a))
	got, _ = s.GetProfile(ctx, a.ID)
	if got.Name != "web2" || got.UpdatedAt == nil {
		t.Errorf("update lost: %+v", got)
	}
	must(t, s.DeleteProfile(ctx, a.ID))
	if _, err := s.GetProfile(ctx, a.ID); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("deleted profile still there: %v", err)
	}
}

// testProfileLocks: a deletion's exclusive LockSpec waits for a
// transaction that holds the profile shared, and its ProfileInUse then
// sees the cluster that transaction wrote; a shared lock that waited for a
// deletion finds the profile gone. An action under way that names the
// profile in its inputs uses it.
func testProfileLocks(t *testing.T, s store.Store) {
	ctx := context.Background()
	// wontEnd fails the test if ch yields within a fifth of a second: the
	// transaction behind it should be waiting for a lock.
	wontEnd := func(what string, ch <-chan error) {
		t.Helper()
		select {
		case err := <-ch:
			t.Fatalf("%s ended (%v) while another transaction held the profile", what, err)
		case <-time.After(200 * time.Millisecond):
		}
	}
	deleteUnused := func(id string, used *bool) func(tx store.Store) error {
		return func(tx store.Store) error {
			if err := tx.LockSpec(ctx, "profile", id, true); err != nil {
				return err
			}
			var err error
			if *used, err = tx.ProfileInUse(ctx, id); err != nil || *used {
				return err
			}
			return tx.DeleteProfile(ctx, id)
		}
	}

	p := profile("web", t0)
	must(t, s.CreateProfile(ctx, p))
	holding, release := make(chan struct{}), make(chan struct{})
	created := make(chan error, 1)
	go func() {
		created <- s.InTx(ctx, func(tx store.Store) error {
			if err := tx.LockSpec(ctx, "profile", p.ID, false); err != nil {
				return err
			}
			close(holding)
			<-release
			return tx.CreateCluster(ctx, &model.Cluster{ID: uuid.NewString(), Name: "c", ProfileID: p.ID, Project: "p1", InitAt: t0, MaxSize: -1, Status: "INIT"})
		})
	}()
	<-holding
	var used bool
	deleted := make(chan error, 1)
	go func() { deleted <- s.InTx(ctx, deleteUnused(p.ID, &used)) }()
	wontEnd("the deletion", deleted)
	close(release)
	must(t, <-created)
	must(t, <-deleted)
	if !used {
		t.Fatal("the deletion did not see the cluster written by the transaction it waited for")
	}
	if _, err := s.GetProfile(ctx, p.ID); err != nil {
		t.Fatalf("a profile in use was deleted: %v", err)
	}

	q := profile("db", t0)
	must(t, s.CreateProfile(ctx, q))
	holding, release = make(chan struct{}), make(chan struct{})
	go func() {
		deleted <- s.InTx(ctx, func(tx store.Store) error {
			if err := deleteUnused(q.ID, &used)(tx); err != nil {
				return err
			}
			close(holding)
			<-release
			return nil
		})
	}()
	<-holding
	go func() {
		created <- s.InTx(ctx, func(tx store.Store) error { return tx.LockSpec(ctx, "profile", q.ID, false) })
	}()
	wontEnd("the shared lock", created)
	close(release)
	must(t, <-deleted)
	if err := <-created; !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("a shared lock taken after the deletion: %v, want not found", err)
	}

	r := profile("cache", t0)
	must(t, s.CreateProfile(ctx, r))
	a := &model.Action{ID: uuid.NewString(), Name: "update", Action: "CLUSTER_UPDATE", Target: "t", Status: model.ActionRunning,
		Inputs: map[string]any{"new_profile_id": r.ID}, Project: "p1", CreatedAt: t0}
	must(t, s.CreateActions(ctx, []*model.Action{a}))
	if used, err := s.ProfileInUse(ctx, r.ID); err != nil || !used {
		t.Errorf("a profile named by an action under way: in use %v, %v; want true", used, err)
	}
	a.Status = model.ActionSucceeded
	must(t, s.UpdateActions(ctx, []*model.Action{a}))
	if used, err := s.ProfileInUse(ctx, r.ID); err != nil || used {
		t.Errorf("a profile named only by an ended action: in use %v, %v; want false", used, err)
	}

	// Policies: the same lock, and an attach under way uses the policy.
	pol := &model.Policy{ID: uuid.NewString(), Name: "batches", Type: "senlin.policy.batch", Version: "1.0", Project: "p1", CreatedAt: t0}
	must(t, s.CreatePolicy(ctx, pol))
	must(t, s.InTx(ctx, func(tx store.Store) error { return tx.LockSpec(ctx, "policy", pol.ID, true) }))
	if err := s.InTx(ctx, func(tx store.Store) error { return tx.LockSpec(ctx, "policy", uuid.NewString(), false) }); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("locking a policy that does not exist: %v, want not found", err)
	}
	if err := s.InTx(ctx, func(tx store.Store) error { return tx.LockSpec(ctx, "cluster", pol.ID, false) }); err == nil {
		t.Error("LockSpec took a kind other than profile or policy")
	}
	at := &model.Action{ID: uuid.NewString(), Name: "attach", Action: "CLUSTER_ATTACH_POLICY", Target: "t", Status: model.ActionReady,
		Inputs: map[string]any{"policy_id": pol.ID}, Project: "p1", CreatedAt: t0}
	must(t, s.CreateActions(ctx, []*model.Action{at}))
	if used, err := s.PolicyInUse(ctx, pol.ID); err != nil || !used {
		t.Errorf("a policy being attached: in use %v, %v; want true", used, err)
	}
}

func testList(t *testing.T, s store.Store) {
	ctx := context.Background()
	var ids []string
	for i := 0; i < 5; i++ {
		c := &model.Cluster{ID: uuid.NewString(), Name: fmt.Sprintf("c%d", i), ProfileID: "p", Project: "p1", InitAt: t0.Add(time.Duration(i) * time.Second),
			MaxSize: -1, Status: []string{"ACTIVE", "ERROR"}[i%2]}
		must(t, s.CreateCluster(ctx, c))
		ids = append(ids, c.ID)
	}
	all, err := s.ListClusters(ctx, store.ListOpts{})
	must(t, err)
	if len(all) != 5 || all[0].ID != ids[0] || all[4].ID != ids[4] {
		t.Fatalf("default order is by init_at: got %d", len(all))
	}
	act, _ := s.ListClusters(ctx, store.ListOpts{Filters: map[string][]string{"status": {"ACTIVE"}}})
	if len(act) != 3 {
		t.Errorf("status filter: got %d, want 3", len(act))
	}
	both, _ := s.ListClusters(ctx, store.ListOpts{Filters: map[string][]string{"status": {"ACTIVE", "ERROR"}}})
	if len(both) != 5 {
		t.Errorf("repeated filter values are OR: got %d", len(both))
	}
	desc, _ := s.ListClusters(ctx, store.ListOpts{Sort: []store.SortKey{{Key: "name", Desc: true}}, Limit: 2})
	if len(desc) != 2 || desc[0].Name != "c4" || desc[1].Name != "c3" {
		t.Errorf("sort name:desc limit 2 = %v", names(desc))
	}
	page, _ := s.ListClusters(ctx, store.ListOpts{Sort: []store.SortKey{{Key: "name", Desc: true}}, Limit: 2, Marker: desc[1].ID})
	if len(page) != 2 || page[0].Name != "c2" || page[1].Name != "c1" {
		t.Errorf("second page after marker = %v", names(page))
	}
	other, _ := s.ListClusters(ctx, store.ListOpts{Project: "p2"})
	if len(other) != 0 {
		t.Errorf("project scoping leaked %d clusters", len(other))
	}
	// Walking the pages by marker gives the whole list, in order, for any
	// sort: one key or several, each way, with ties (status) broken by id.
	for _, sorts := range [][]store.SortKey{nil, {{Key: "status"}}, {{Key: "status", Desc: true}, {Key: "name"}},
		{{Key: "status"}, {Key: "name", Desc: true}}, {{Key: "init_at", Desc: true}}} {
		whole, err := s.ListClusters(ctx, store.ListOpts{Sort: sorts})
		must(t, err)
		var walked []string
		marker := ""
		for range 10 {
			page, err := s.ListClusters(ctx, store.ListOpts{Sort: sorts, Limit: 2, Marker: marker})
			must(t, err)
			if len(page) == 0 {
				break
			}
			walked = append(walked, names(page)...)
			marker = page[len(page)-1].ID
		}
		if got, want := strings.Join(walked, ","), strings.Join(names(whole), ","); got != want || len(whole) != 5 {
			t.Errorf("sort %v: pages walked %s, the whole list %s", sorts, got, want)
		}
	}
	if page, err := s.ListClusters(ctx, store.ListOpts{Limit: 2, Marker: ids[0], Project: "p2"}); err != nil || len(page) != 0 {
		t.Errorf("a marker outside the listed project gave %d clusters (%v)", len(page), err)
	}
}

func names(cs []*model.Cluster) []string {
	var out []string
	for _, c := range cs {
		out = append(out, c.Name)
	}
	return out
}

func testClusterNodes(t *testing.T, s store.Store) {
	ctx := context.Background()
	c := &model.Cluster{ID: uuid.NewString(), Name: "big", ProfileID: "p", InitAt: t0, MaxSize: -1, Status: model.ClusterInit,
		Metadata: map[string]any{"k": "v"}}
	must(t, s.CreateCluster(ctx, c))
	var nodes []*model.Node
	for i := 0; i < 1200; i++ {
		nodes = append(nodes, &model.Node{ID: uuid.NewString(), Name: fmt.Sprintf("n%d", i), ClusterID: c.ID, Index: i + 1, InitAt: t0,
			Status: model.NodeInit, State: []byte{0, 1, 2, byte(i)}, Data: map[string]any{"port": float64(9000 + i)}})
	}
	must(t, s.CreateNodes(ctx, nodes))
	n, err := s.CountNodes(ctx, c.ID)
	must(t, err)
	if n != 1200 {
		t.Fatalf("batch insert: %d nodes", n)
	}
	got, _ := s.ClusterNodes(ctx, c.ID)
	if len(got) != 1200 || got[0].Index != 1 || got[1199].Index != 1200 || got[5].State[3] != 5 || got[5].Data["port"].(float64) != 9005 {
		t.Fatalf("nodes did not round trip")
	}
	got[0].Status, got[0].PhysicalID = model.NodeActive, "pid-1"
	must(t, s.UpdateNodes(ctx, got[:1]))
	one, _ := s.GetNode(ctx, got[0].ID)
	if one.Status != model.NodeActive || one.PhysicalID != "pid-1" {
		t.Errorf("node update lost: %+v", one)
	}
	ids := make([]string, 0, 600)
	for _, n := range got[:600] {
		ids = append(ids, n.ID)
	}
	sub, _ := s.GetNodes(ctx, ids)
	if len(sub) != 600 {
		t.Errorf("GetNodes across chunks: %d", len(sub))
	}
	must(t, s.DeleteNodes(ctx, ids))
	n, _ = s.CountNodes(ctx, c.ID)
	if n != 600 {
		t.Errorf("after delete: %d", n)
	}
	got2, _ := s.GetCluster(ctx, c.ID)
	if got2.Metadata["k"] != "v" {
		t.Errorf("cluster metadata lost")
	}
}

// testPhysicalHolders: PhysicalHolders finds the nodes of every project
// holding any of the ids asked, each with its profile's type ("" once the
// profile is gone); an empty id, held by every node waiting for its
// create, finds nothing, and a repeated id counts once.
func testPhysicalHolders(t *testing.T, s store.Store) {
	ctx := context.Background()
	web := profile("web", t0)
	must(t, s.CreateProfile(ctx, web))
	node := func(name, project, profileID, physical string) *model.Node {
		return &model.Node{ID: uuid.NewString(), Name: name, ProfileID: profileID, Project: project, Index: -1, InitAt: t0,
			Status: model.NodeActive, PhysicalID: physical, Data: map[string]any{}}
	}
	a, b := node("a", "p1", web.ID, "vm-1"), node("b", "p2", "gone-profile", "vm-2")
	waiting := node("w", "p1", web.ID, "")
	must(t, s.CreateNodes(ctx, []*model.Node{a, b, waiting, node("c", "p1", web.ID, "vm-3")}))
	got, err := s.PhysicalHolders(ctx, []string{"vm-2", "", "vm-1", "vm-1", "vm-9"})
	must(t, err)
	want := []model.PhysicalHolder{
		{NodeID: a.ID, Name: "a", Project: "p1", PhysicalID: "vm-1", ProfileType: web.Type},
		{NodeID: b.ID, Name: "b", Project: "p2", PhysicalID: "vm-2", ProfileType: ""},
	}
	if !slices.Equal(got, want) {
		t.Errorf("holders %+v, want %+v", got, want)
	}
	for _, ids := range [][]string{nil, {""}} {
		if got, err := s.PhysicalHolders(ctx, ids); err != nil || len(got) != 0 {
			t.Errorf("holders of %q: %+v, %v; want none", ids, got, err)
		}
	}
	// Inside a transaction too (PostgreSQL takes a lock per id there).
	must(t, s.InTx(ctx, func(tx store.Store) error {
		got, err := tx.PhysicalHolders(ctx, []string{"vm-3", "vm-1"})
		if err == nil && len(got) != 2 {
			t.Errorf("holders in a transaction: %+v", got)
		}
		return err
	}))
	// Every write that gives a node an id is followed: a result, an
	// update (a recreate's new resource), and the old id is held no more;
	// a deleted node holds nothing.
	waiting.PhysicalID, waiting.Status = "vm-4", model.NodeActive
	must(t, s.RecordNodeResults(ctx, []*model.Node{waiting}))
	a.PhysicalID = "vm-5"
	must(t, s.UpdateNodes(ctx, []*model.Node{a}))
	must(t, s.DeleteNodes(ctx, []string{b.ID}))
	got, err = s.PhysicalHolders(ctx, []string{"vm-1", "vm-2", "vm-4", "vm-5"})
	must(t, err)
	if len(got) != 2 || got[0].NodeID != waiting.ID || got[0].PhysicalID != "vm-4" || got[1].NodeID != a.ID || got[1].PhysicalID != "vm-5" {
		t.Errorf("holders after a result, an update and a delete: %+v; want w on vm-4 and a on vm-5", got)
	}
	// A node that gives its id up and takes it back holds it again.
	a.PhysicalID = ""
	must(t, s.UpdateNodes(ctx, []*model.Node{a}))
	if got, _ := s.PhysicalHolders(ctx, []string{"vm-5"}); len(got) != 0 {
		t.Errorf("a node without a physical id still holds vm-5: %+v", got)
	}
	a.PhysicalID = "vm-5"
	must(t, s.UpdateNodes(ctx, []*model.Node{a}))
	if got, _ := s.PhysicalHolders(ctx, []string{"vm-5"}); len(got) != 1 || got[0].NodeID != a.ID {
		t.Errorf("holders of vm-5 after it was taken back: %+v", got)
	}
}

// testPlacedNodes: PlacedNodes lists the clusters' nodes with a host
// column, with the data of those without one whose data holds a "host"
// key at any depth, in creation order; nodes placed nowhere and nodes
// outside any cluster are left out.
func testPlacedNodes(t *testing.T, s store.Store) {
	ctx := context.Background()
	c := &model.Cluster{ID: uuid.NewString(), Name: "placed", ProfileID: "p", InitAt: t0, MaxSize: -1, Status: model.ClusterActive}
	must(t, s.CreateCluster(ctx, c))
	node := func(i int, cluster, host string, data map[string]any) *model.Node {
		return &model.Node{ID: uuid.NewString(), Name: fmt.Sprintf("p%d", i), ClusterID: cluster, ProfileID: "p", Index: i,
			InitAt: t0.Add(time.Duration(i) * time.Second), Status: model.NodeActive, Host: host, Data: data}
	}
	nodes := []*model.Node{
		node(0, c.ID, "", map[string]any{"port": float64(9000)}),                            // placed nowhere
		node(1, c.ID, "h1", map[string]any{"host": "ignored: the column wins"}),             // the agent's host
		node(2, c.ID, "", map[string]any{"host": "compute-1"}),                              // a driver's report
		node(3, c.ID, "", map[string]any{"placement": map[string]any{"host": "compute-2"}}), // a placement's record
		node(4, "", "h1", map[string]any{"host": "h1"}),                                     // outside any cluster
		node(5, c.ID, "", map[string]any{"note": "a \"host\" word in a value, not a key"}),  // no host, read anyway
		node(6, c.ID, "", map[string]any{"HOST": "compute-3", "hosts": []any{"h"}}),         // not the key, maybe read
		node(7, c.ID, "h2", nil), // the column alone
	}
	must(t, s.CreateNodes(ctx, nodes))
	got, err := s.PlacedNodes(ctx)
	must(t, err)
	var names []string
	for _, n := range got {
		if n.ClusterID != c.ID {
			t.Errorf("PlacedNodes returned %s of cluster %q, outside the one cluster made", n.Name, n.ClusterID)
		}
		names = append(names, n.Name)
		switch n.Name {
		case "p1", "p7":
			if want := map[string]string{"p1": "h1", "p7": "h2"}[n.Name]; n.Host != want || n.Data != nil {
				t.Errorf("%s: host %q, data %v; want host %q and its data left unread", n.Name, n.Host, n.Data, want)
			}
		case "p2":
			if n.Host != "" || n.Data["host"] != "compute-1" {
				t.Errorf("p2: host %q, data %v; want the data's host", n.Host, n.Data)
			}
		case "p3":
			if pl, _ := n.Data["placement"].(map[string]any); n.Host != "" || pl["host"] != "compute-2" {
				t.Errorf("p3: host %q, data %v; want the placement's host in the data", n.Host, n.Data)
			}
		}
		if n.Status != model.NodeActive {
			t.Errorf("%s: status %q, want %s", n.Name, n.Status, model.NodeActive)
		}
	}
	// p5 and p6 may be read (the filter is a superset), never p0 or p4.
	var required []string
	for _, name := range names {
		if name != "p5" && name != "p6" {
			required = append(required, name)
		}
	}
	if fmt.Sprint(required) != "[p1 p2 p3 p7]" {
		t.Errorf("PlacedNodes = %v, want p1, p2, p3 and p7 in creation order (p5 and p6 allowed)", names)
	}
}

// testCheckNodes: CheckNodes returns every node of the cluster by index
// with the fields a check sends and its documents as JSON that decodes to
// what ClusterNodes decodes (nil for an empty one); ClusterHostNodes only the nodes on a host.
func testCheckNodes(t *testing.T, s store.Store) {
	ctx := context.Background()
	c := &model.Cluster{ID: uuid.NewString(), Name: "c", ProfileID: "p", InitAt: t0, MaxSize: -1, Status: model.ClusterActive}
	must(t, s.CreateCluster(ctx, c))
	other := &model.Cluster{ID: uuid.NewString(), Name: "other", ProfileID: "p", InitAt: t0, MaxSize: -1, Status: model.ClusterActive}
	must(t, s.CreateCluster(ctx, other))
	var nodes []*model.Node
	for i := range 5 {
		n := &model.Node{ID: uuid.NewString(), Name: fmt.Sprintf("n%d", i), ClusterID: c.ID, ProfileID: "p", Index: 5 - i, InitAt: t0,
			PhysicalID: fmt.Sprintf("phys-%d", i), Status: model.NodeActive}
		switch i {
		case 1:
			n.Data, n.Metadata, n.State = map[string]any{"pid": float64(42), "tags": []any{"a"}}, map[string]any{"k": "v"}, []byte{0, 1, 255}
			n.Status, n.Host = model.NodeError, "h1"
		case 3:
			n.Host = "h2"
		}
		nodes = append(nodes, n)
	}
	nodes = append(nodes, &model.Node{ID: uuid.NewString(), Name: "elsewhere", ClusterID: other.ID, ProfileID: "p", Index: 1, InitAt: t0, Host: "h1"})
	must(t, s.CreateNodes(ctx, nodes))
	got, err := s.CheckNodes(ctx, c.ID)
	must(t, err)
	if len(got) != 5 {
		t.Fatalf("CheckNodes: %d nodes, want 5", len(got))
	}
	for i, g := range got {
		want := nodes[4-i]
		data, meta := map[string]any{}, map[string]any{}
		for _, d := range []struct {
			raw []byte
			to  *map[string]any
		}{{g.Data, &data}, {g.Metadata, &meta}} {
			if d.raw != nil {
				must(t, json.Unmarshal(d.raw, d.to))
			}
		}
		if g.ID != want.ID || g.Name != want.Name || g.ClusterID != c.ID || g.PhysicalID != want.PhysicalID || g.ProfileID != "p" ||
			g.Index != want.Index || g.Status != want.Status || g.Host != want.Host || !bytes.Equal(g.State, want.State) {
			t.Errorf("CheckNodes[%d] = %+v, want node %+v", i, g, want)
		}
		if fmt.Sprint(data) != fmt.Sprint(orEmpty(want.Data)) || fmt.Sprint(meta) != fmt.Sprint(orEmpty(want.Metadata)) {
			t.Errorf("CheckNodes[%d] documents %s %s, want %v %v", i, g.Data, g.Metadata, want.Data, want.Metadata)
		}
	}
	on, err := s.ClusterHostNodes(ctx, c.ID)
	must(t, err)
	if len(on) != 2 || on[0].ID != nodes[3].ID || on[1].ID != nodes[1].ID || on[1].Data["pid"] != float64(42) {
		t.Errorf("ClusterHostNodes: %+v, want nodes n3 and n1", on)
	}
}

// testRecordNodeResults: RecordNodeResults writes a driver's results and
// keeps what else the store holds of the node, even when the caller's copy
// is stale; it moves the cluster's counts and generation, and skips a node
// deleted meanwhile.
func testRecordNodeResults(t *testing.T, s store.Store) {
	ctx := context.Background()
	c := &model.Cluster{ID: uuid.NewString(), Name: "c", ProfileID: "p", InitAt: t0, MaxSize: -1, Status: model.ClusterActive}
	must(t, s.CreateCluster(ctx, c))
	n := &model.Node{ID: uuid.NewString(), Name: "n1", ClusterID: c.ID, ProfileID: "p", Index: 1, InitAt: t0, Role: "web",
		Status: model.NodeCreating, Data: map[string]any{"placement": "h1"}, Metadata: map[string]any{"k": "v"}, Host: "h1"}
	gone := &model.Node{ID: uuid.NewString(), Name: "gone", ClusterID: c.ID, ProfileID: "p", Index: 2, InitAt: t0, Status: model.NodeCreating}
	must(t, s.CreateNodes(ctx, []*model.Node{n, gone}))
	must(t, s.DeleteNodes(ctx, []string{gone.ID}))
	gen, err := s.NodeChanges(ctx, c.ID)
	must(t, err)

	// The caller's copy is stale: the node was renamed since it was read.
	stale := *n
	renamed := *n
	renamed.Name, renamed.Role = "renamed", "db"
	must(t, s.UpdateNodes(ctx, []*model.Node{&renamed}))
	later := t0.Add(time.Minute)
	stale.PhysicalID, stale.Status, stale.StatusReason = "phys-1", model.NodeActive, "Creation succeeded"
	stale.CreatedAt, stale.UpdatedAt = &later, &later
	stale.Data = map[string]any{"placement": "h1", "ip": "127.0.0.1"}
	stale.State = []byte("driver state")
	stale.Name, stale.Host, stale.Index = "stale name", "h2", 9
	must(t, s.RecordNodeResults(ctx, []*model.Node{&stale, gone}))

	got, err := s.GetNode(ctx, n.ID)
	must(t, err)
	if got.PhysicalID != "phys-1" || got.Status != model.NodeActive || got.StatusReason != "Creation succeeded" ||
		got.CreatedAt == nil || !got.CreatedAt.Equal(later) || got.UpdatedAt == nil || !got.UpdatedAt.Equal(later) ||
		got.Data["ip"] != "127.0.0.1" || string(got.State) != "driver state" {
		t.Errorf("results not written: %+v", got)
	}
	if got.Name != "renamed" || got.Role != "db" || got.Host != "h1" || got.Index != 1 || got.ClusterID != c.ID || got.Metadata["k"] != "v" {
		t.Errorf("RecordNodeResults wrote more than the results: name %q role %q host %q index %d cluster %q metadata %v",
			got.Name, got.Role, got.Host, got.Index, got.ClusterID, got.Metadata)
	}
	if _, err := s.GetNode(ctx, gone.ID); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("a deleted node's results brought it back: %v", err)
	}
	counts, err := s.CountNodesByStatus(ctx, c.ID)
	must(t, err)
	if counts[model.NodeActive] != 1 || counts[model.NodeCreating] != 0 {
		t.Errorf("counts by status after the results: %v, want one ACTIVE", counts)
	}
	if g, err := s.NodeChanges(ctx, c.ID); err != nil || g <= gen+1 {
		t.Errorf("generation %d → %d (%v); want it moved by the rename and again by the results", gen, g, err)
	}
}

// awkward are values that mean something inside an array literal or to a
// parser: PostgreSQL's batch writes pass their rows as arrays.
var awkward = []string{"", "NULL", "null", "{}", "{a,b}", `"quoted"`, `back\slash`, "comma,here", "it's", "ünïcødé ✓", "line\nbreak", " spaced "}

// testAwkwardValues: nodes, actions and events written in batches, and a
// batch's results, read back exactly as written, whatever their strings
// hold; ids that look like NULL or a literal are looked up as themselves.
func testAwkwardValues(t *testing.T, s store.Store) {
	ctx := context.Background()
	c := &model.Cluster{ID: uuid.NewString(), Name: "c", ProfileID: "p", InitAt: t0, MaxSize: -1, Status: model.ClusterActive}
	must(t, s.CreateCluster(ctx, c))
	var nodes []*model.Node
	var actions []*model.Action
	var events []*model.Event
	for i, v := range awkward {
		id := "NULL"
		if i > 0 {
			id = fmt.Sprintf("{%d,%q}", i, v)
		}
		nodes = append(nodes, &model.Node{ID: id, Name: "n" + v, ClusterID: c.ID, ProfileID: v, Project: v, Index: i + 1, InitAt: t0, Role: v,
			Status: model.NodeCreating, StatusReason: v, Data: map[string]any{v: v}, Metadata: map[string]any{"k": v}, Host: v})
		a := action("a"+v, "parent", t0.Add(time.Duration(i)))
		a.ID, a.Target, a.Cause, a.User, a.Project, a.StatusReason = id, id, v, v, v, v
		actions = append(actions, a)
		events = append(events, &model.Event{ID: id, Timestamp: t0, OID: id, OName: v, OType: "NODE", ClusterID: c.ID, Project: v,
			Action: v, Status: v, StatusReason: v, Level: 20, MetaData: map[string]any{"v": v}})
	}
	must(t, s.CreateNodes(ctx, nodes))
	must(t, s.CreateActions(ctx, actions))
	must(t, s.CreateEvents(ctx, events))
	ids := make([]string, len(nodes))
	for i, n := range nodes {
		ids[i] = n.ID
		n.PhysicalID, n.Status, n.StatusReason, n.State = "phys "+awkward[i], model.NodeActive, awkward[len(awkward)-1-i], []byte(awkward[i])
		n.CreatedAt, n.UpdatedAt = &t0, nil
	}
	must(t, s.RecordNodeResults(ctx, nodes))
	got, err := s.GetNodes(ctx, append(slices.Clone(ids), "missing"))
	must(t, err)
	if len(got) != len(nodes) {
		t.Fatalf("GetNodes found %d of %d nodes", len(got), len(nodes))
	}
	byID := map[string]*model.Node{}
	for _, n := range got {
		byID[n.ID] = n
	}
	for i, want := range nodes {
		n := byID[want.ID]
		switch {
		case n == nil:
			t.Errorf("node %q not found", want.ID)
		case n.Name != want.Name || n.ProfileID != want.ProfileID || n.Project != want.Project || n.Role != want.Role || n.Host != want.Host ||
			n.PhysicalID != want.PhysicalID || n.StatusReason != want.StatusReason || string(n.State) != awkward[i] ||
			n.Data[awkward[i]] != awkward[i] || n.Metadata["k"] != awkward[i] || n.CreatedAt == nil || !n.CreatedAt.Equal(t0) || n.UpdatedAt != nil:
			t.Errorf("node %q read back as %+v, want %+v", want.ID, n, want)
		}
	}
	for i, want := range actions {
		a, err := s.GetAction(ctx, want.ID)
		must(t, err)
		if a.Target != want.ID || a.Cause != awkward[i] || a.User != awkward[i] || a.Project != awkward[i] || a.StatusReason != awkward[i] || a.Name != want.Name {
			t.Errorf("action %q read back as %+v", want.ID, a)
		}
		e, err := s.GetEvent(ctx, want.ID)
		must(t, err)
		if e.OName != awkward[i] || e.Action != awkward[i] || e.StatusReason != awkward[i] || e.MetaData["v"] != awkward[i] {
			t.Errorf("event %q read back as %+v", want.ID, e)
		}
	}
	must(t, s.FinishActions(ctx, ids, model.ActionSucceeded, "done", t0))
	must(t, s.DeleteNodes(ctx, ids[:3]))
	if left, err := s.GetNodes(ctx, ids); err != nil || len(left) != len(ids)-3 {
		t.Errorf("after deleting 3 nodes by id %d are left (%v), want %d", len(left), err, len(ids)-3)
	}
	for _, id := range ids {
		if a, err := s.GetAction(ctx, id); err != nil || a.Status != model.ActionSucceeded {
			t.Errorf("action %q after its end: %+v, %v", id, a, err)
		}
	}
}

// testNodeChanges: a cluster's node generation moves with every write of
// one of its nodes, through every store call that writes nodes (a health
// round keeps what it read while it stays put), and with nothing else;
// a node moving between clusters moves both; the generation goes with its
// cluster.
func testNodeChanges(t *testing.T, s store.Store) {
	ctx := context.Background()
	a := &model.Cluster{ID: uuid.NewString(), Name: "a", ProfileID: "p", InitAt: t0, MaxSize: -1, Status: model.ClusterActive}
	b := &model.Cluster{ID: uuid.NewString(), Name: "b", ProfileID: "p", InitAt: t0, MaxSize: -1, Status: model.ClusterActive}
	must(t, s.CreateCluster(ctx, a))
	must(t, s.CreateCluster(ctx, b))
	gen := func(c *model.Cluster) int64 {
		t.Helper()
		g, err := s.NodeChanges(ctx, c.ID)
		must(t, err)
		return g
	}
	if g := gen(a); g != 0 {
		t.Fatalf("generation of a cluster without nodes = %d, want 0", g)
	}
	n1 := &model.Node{ID: uuid.NewString(), Name: "n1", ClusterID: a.ID, ProfileID: "p", Index: 1, InitAt: t0, Status: model.NodeActive}
	n2 := &model.Node{ID: uuid.NewString(), Name: "n2", ClusterID: a.ID, ProfileID: "p", Index: 2, InitAt: t0, Status: model.NodeActive}
	orphan := &model.Node{ID: uuid.NewString(), Name: "orphan", ProfileID: "p", InitAt: t0, Status: model.NodeActive}
	must(t, s.CreateNodes(ctx, []*model.Node{n1, n2, orphan}))
	ga, gb := gen(a), gen(b)
	if ga == 0 || gb != 0 {
		t.Fatalf("after creating a's nodes: a %d, b %d; want a moved, b 0", ga, gb)
	}
	steps := []struct {
		name       string
		write      func() error
		movesA     bool
		movesB     bool
		unchangedA bool
	}{
		{"reads", func() error { _, err := s.CheckNodes(ctx, a.ID); return err }, false, false, true},
		{"a write of a node outside any cluster", func() error { orphan.StatusReason = "x"; return s.UpdateNodes(ctx, []*model.Node{orphan}) }, false, false, true},
		{"UpdateNodes", func() error { n1.PhysicalID = "phys"; return s.UpdateNodes(ctx, []*model.Node{n1}) }, true, false, false},
		{"SetNodeStatus", func() error { return s.SetNodeStatus(ctx, []string{n2.ID}, model.NodeError, "down") }, true, false, false},
		{"a move from a to b", func() error { n2.ClusterID = b.ID; return s.UpdateNodes(ctx, []*model.Node{n2}) }, true, true, false},
		{"DeleteNodes", func() error { return s.DeleteNodes(ctx, []string{n1.ID}) }, true, false, false},
	}
	for _, st := range steps {
		must(t, st.write())
		na, nb := gen(a), gen(b)
		if (na != ga) != st.movesA || (nb != gb) != st.movesB {
			t.Errorf("%s: a %d → %d, b %d → %d; want a moved %v, b moved %v", st.name, ga, na, gb, nb, st.movesA, st.movesB)
		}
		if na < ga || nb < gb {
			t.Errorf("%s: a generation went back (a %d → %d, b %d → %d)", st.name, ga, na, gb, nb)
		}
		ga, gb = na, nb
	}

	// Writers moving nodes both ways between a and b at once, each
	// transaction writing nodes of both: on PostgreSQL they queue for the
	// two counter rows and must not deadlock.
	const writers = 4
	var wg sync.WaitGroup
	errs := make(chan error, writers)
	for w := range writers {
		mine := make([]*model.Node, 6)
		for i := range mine {
			home := a.ID
			if (w+i)%2 == 1 {
				home = b.ID
			}
			mine[i] = &model.Node{ID: uuid.NewString(), Name: fmt.Sprintf("w%d-%d", w, i), ClusterID: home, ProfileID: "p", InitAt: t0, Status: model.NodeActive}
		}
		must(t, s.CreateNodes(ctx, mine))
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 15 {
				err := s.InTx(ctx, func(tx store.Store) error {
					for _, n := range mine {
						if n.ClusterID == a.ID {
							n.ClusterID = b.ID
						} else {
							n.ClusterID = a.ID
						}
					}
					if err := tx.UpdateNodes(ctx, mine[:3]); err != nil {
						return err
					}
					return tx.SetNodeStatus(ctx, []string{mine[4].ID, mine[5].ID}, model.NodeActive, "")
				})
				if err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Errorf("writers moving nodes between two clusters: %v", err)
	}
	if na, nb := gen(a), gen(b); na <= ga || nb <= gb {
		t.Errorf("after the writers: a %d → %d, b %d → %d; want both moved", ga, na, gb, nb)
	}

	must(t, s.DeleteNodes(ctx, []string{n2.ID}))
	must(t, s.DeleteCluster(ctx, b.ID))
	if g := gen(b); g != 0 {
		t.Errorf("generation of a deleted cluster = %d, want 0", g)
	}
}

// testNodeViews: ListNodeViews lists what ListNodes lists, in the same
// order, for filters, sorts, projects and pages reached by marker, with the
// same fields and, as JSON, the same documents ({} for an empty one);
// FindNodeView finds what FindNode finds and refuses what it refuses.
func testNodeViews(t *testing.T, s store.Store) {
	ctx := context.Background()
	c := &model.Cluster{ID: uuid.NewString(), Name: "c", ProfileID: "p", Project: "p1", InitAt: t0, MaxSize: -1, Status: model.ClusterActive}
	must(t, s.CreateCluster(ctx, c))
	later := t0.Add(time.Hour)
	var nodes []*model.Node
	for i := range 30 {
		n := &model.Node{ID: uuid.NewString(), Name: fmt.Sprintf("n%02d", i), ClusterID: c.ID, ProfileID: "p", Project: []string{"p1", "p2"}[i%7/6],
			User: "u", Domain: "d", Index: i + 1, Role: "r", InitAt: t0.Add(time.Duration(i%10) * time.Second), CreatedAt: &t0,
			Status: []string{model.NodeActive, model.NodeError, model.NodeInit}[i%3], StatusReason: "why", Tainted: i%4 == 0,
			PhysicalID: fmt.Sprintf("phys-%d", i), State: []byte{byte(i), 0, 255}}
		if i%2 == 0 {
			n.UpdatedAt, n.Host = &later, "h1"
			n.Data = map[string]any{"port": float64(9000 + i), "tags": []any{"a", "<b>"}, "nested": map[string]any{"z": true, "a": nil}}
		}
		if i%3 == 0 {
			n.Metadata = map[string]any{"k": "v", "n": float64(i)}
		}
		if i%5 == 0 {
			n.Dependents = map[string]any{"nodes": []any{"x"}}
		} else if i%5 == 1 {
			n.Dependents = map[string]any{}
		}
		nodes = append(nodes, n)
	}
	must(t, s.CreateNodes(ctx, nodes))

	same := func(what string, old []*model.Node, lean []*model.NodeView) {
		t.Helper()
		if len(old) != len(lean) {
			t.Errorf("%s: ListNodeViews gave %d nodes, ListNodes %d", what, len(lean), len(old))
			return
		}
		for i, o := range old {
			v := lean[i]
			got := model.Node{ID: v.ID, Name: v.Name, ClusterID: v.ClusterID, PhysicalID: v.PhysicalID, ProfileID: v.ProfileID, User: v.User,
				Project: v.Project, Domain: v.Domain, Index: v.Index, Role: v.Role, InitAt: v.InitAt, CreatedAt: v.CreatedAt, UpdatedAt: v.UpdatedAt,
				Status: v.Status, StatusReason: v.StatusReason, Tainted: v.Tainted, Host: v.Host}
			want := *o
			want.Data, want.Metadata, want.Dependents, want.State = nil, nil, nil, nil
			if fmt.Sprintf("%+v", got) != fmt.Sprintf("%+v", want) {
				t.Errorf("%s [%d]: view %+v, node %+v", what, i, got, want)
			}
			for _, d := range []struct {
				name string
				raw  []byte
				want map[string]any
			}{{"data", v.Data, o.Data}, {"metadata", v.Metadata, o.Metadata}, {"dependents", v.Dependents, o.Dependents}} {
				var m map[string]any
				if err := json.Unmarshal(d.raw, &m); err != nil || m == nil {
					t.Errorf("%s [%d] %s: %q is not a JSON object (%v)", what, i, d.name, d.raw, err)
					continue
				}
				if fmt.Sprint(m) != fmt.Sprint(orEmpty(d.want)) {
					t.Errorf("%s [%d] %s: %s, want %v", what, i, d.name, d.raw, d.want)
				}
			}
		}
	}
	for _, o := range []store.ListOpts{{}, {Project: "p1"}, {Project: "p2"}, {Filters: map[string][]string{"status": {model.NodeError}}},
		{Filters: map[string][]string{"cluster_id": {c.ID}}, Sort: []store.SortKey{{Key: "index"}}, Limit: 7},
		{Sort: []store.SortKey{{Key: "name", Desc: true}}}, {Sort: []store.SortKey{{Key: "status"}, {Key: "init_at", Desc: true}}}} {
		old, err := s.ListNodes(ctx, o)
		must(t, err)
		lean, err := s.ListNodeViews(ctx, o)
		must(t, err)
		same(fmt.Sprintf("%+v", o), old, lean)
		// The same pages, walked by marker.
		o.Limit = 4
		for page := 0; ; page++ {
			old, err := s.ListNodes(ctx, o)
			must(t, err)
			lean, err := s.ListNodeViews(ctx, o)
			must(t, err)
			same(fmt.Sprintf("%+v page %d", o, page), old, lean)
			if len(old) == 0 || page > 10 {
				break
			}
			o.Marker = old[len(old)-1].ID
		}
	}

	for _, ident := range []string{nodes[3].ID, nodes[3].Name, nodes[3].ID[:8]} {
		old, err := s.FindNode(ctx, "p1", ident)
		must(t, err)
		lean, err := s.FindNodeView(ctx, "p1", ident)
		must(t, err)
		same("find "+ident, []*model.Node{old}, []*model.NodeView{lean})
	}
	for _, ident := range []string{nodes[6].Name, "nobody", "n%"} {
		_, oldErr := s.FindNode(ctx, "p1", ident)
		_, leanErr := s.FindNodeView(ctx, "p1", ident)
		if oldErr == nil || leanErr == nil || oldErr.Error() != leanErr.Error() {
			t.Errorf("find %s in p1: FindNodeView %v, FindNode %v", ident, leanErr, oldErr)
		}
	}
}

func orEmpty(m map[string]any) map[string]any {
	if m == nil {
		return map[string]any{}
	}
	return m
}

func action(name, parent string, at time.Time) *model.Action {
	return &model.Action{ID: uuid.NewString(), Name: name, Action: name, Target: "t", ParentID: parent, Status: model.ActionReady,
		Cause: model.CauseDerived, CreatedAt: at, Inputs: map[string]any{}}
}

func testClaim(t *testing.T, s store.Store) {
	ctx := context.Background()
	parent := action(model.ClusterCreateAction, "", t0)
	var kids []*model.Action
	for i := 0; i < 7; i++ {
		kids = append(kids, action(model.NodeCreateAction, parent.ID, t0.Add(time.Duration(i)*time.Millisecond)))
	}
	other := action(model.NodeDeleteAction, parent.ID, t0.Add(time.Second))
	must(t, s.CreateActions(ctx, append(append([]*model.Action{parent}, kids...), other)))
	until := time.Now().Add(time.Minute)
	top, err := s.ClaimActions(ctx, "e1", "", until, false, 10)
	must(t, err)
	if len(top) != 1 || top[0].ID != parent.ID || top[0].Status != model.ActionRunning || top[0].Owner != "e1" {
		t.Fatalf("top-level claim: %+v", top)
	}
	again, _ := s.ClaimActions(ctx, "e2", "", until, false, 10)
	if len(again) != 0 {
		t.Fatalf("a claimed action must not be claimed twice")
	}
	b1, _ := s.ClaimActions(ctx, "e1", "", until, true, 5)
	b2, _ := s.ClaimActions(ctx, "e2", "", until, true, 5)
	b3, _ := s.ClaimActions(ctx, "e2", "", until, true, 5)
	if len(b1) != 5 || len(b2) != 2 || len(b3) != 1 || b3[0].Action != model.NodeDeleteAction {
		t.Fatalf("node batches must group one parent and one action name: %d %d %d", len(b1), len(b2), len(b3))
	}
	for _, a := range b1 {
		if a.Action != model.NodeCreateAction || a.StartTime == 0 {
			t.Errorf("claimed action not started: %+v", a)
		}
	}
}

func testLeases(t *testing.T, s store.Store) {
	ctx := context.Background()
	a := action(model.ClusterCreateAction, "", t0)
	b := action(model.ClusterDeleteAction, "", t0.Add(time.Second))
	must(t, s.CreateActions(ctx, []*model.Action{a, b}))
	now := time.Now()
	ca, _ := s.ClaimActions(ctx, "dead", "", now.Add(-time.Second), false, 1)
	cb, _ := s.ClaimActions(ctx, "alive", "", now.Add(time.Hour), false, 1)
	if len(ca) != 1 || len(cb) != 1 {
		t.Fatal("claims failed")
	}
	must(t, s.RenewLeases(ctx, "alive", []string{b.ID}, now.Add(2*time.Hour)))
	n, err := s.ReclaimActions(ctx, "", now)
	must(t, err)
	if n != 1 {
		t.Fatalf("only the expired lease is reclaimed, got %d", n)
	}
	got, _ := s.GetAction(ctx, a.ID)
	if got.Status != model.ActionReady || got.Owner != "" {
		t.Errorf("reclaimed action: %+v", got)
	}
	n, _ = s.ReclaimActions(ctx, "alive", now)
	if n != 1 {
		t.Errorf("actions of a restarted owner are reclaimed at once, got %d", n)
	}
}

func testChildren(t *testing.T, s store.Store) {
	ctx := context.Background()
	p := action(model.ClusterCreateAction, "", t0)
	k1, k2, k3 := action(model.NodeCreateAction, p.ID, t0), action(model.NodeCreateAction, p.ID, t0), action(model.NodeCreateAction, p.ID, t0)
	k1.Status = model.ActionSucceeded
	k2.Status, k2.StatusReason = model.ActionFailed, "boom"
	must(t, s.CreateActions(ctx, []*model.Action{p, k1, k2, k3}))
	sum, err := s.SummarizeChildren(ctx, p.ID)
	must(t, err)
	if sum.Total != 3 || sum.Pending != 1 || sum.Failed != 1 || sum.FirstFailure != "boom" {
		t.Fatalf("summary: %+v", sum)
	}
	must(t, s.SignalChildren(ctx, p.ID, model.SignalCancel, time.Now()))
	got, _ := s.GetAction(ctx, k3.ID)
	if got.Status != model.ActionCancelled || got.Control != model.SignalCancel {
		t.Errorf("a ready child is cancelled at once: %+v", got)
	}
	kids, _ := s.Children(ctx, p.ID)
	if len(kids) != 3 {
		t.Errorf("children: %d", len(kids))
	}
	active, _ := s.ActiveActions(ctx, "t")
	if len(active) != 1 || active[0].ID != p.ID {
		t.Errorf("active actions on target: %d", len(active))
	}
}

// testLifecycle: children a lifecycle hook holds are not claimed, count as
// active and pending, are released one by one or all at once (a released
// one is not released again), and are cancelled with their parent.
func testLifecycle(t *testing.T, s store.Store) {
	ctx := context.Background()
	p := action(model.ClusterScaleInAction, "", t0)
	k1, k2, k3 := action(model.NodeDeleteAction, p.ID, t0), action(model.NodeDeleteAction, p.ID, t0), action(model.NodeDeleteAction, p.ID, t0)
	for _, k := range []*model.Action{k1, k2, k3} {
		k.Status, k.Target = model.ActionWaitingLifecycle, "n-"+k.ID
	}
	p.Status = model.ActionRunning
	must(t, s.CreateActions(ctx, []*model.Action{p, k1, k2, k3}))
	if got, _ := s.ClaimActions(ctx, "me", "", time.Now().Add(time.Hour), true, 10); len(got) != 0 {
		t.Fatalf("held children were claimed: %d", len(got))
	}
	if active, _ := s.ActiveActions(ctx, k1.Target); len(active) != 1 {
		t.Errorf("a held child is not active on its node: %d", len(active))
	}
	if sum, _ := s.SummarizeChildren(ctx, p.ID); sum.Pending != 3 {
		t.Errorf("held children pending: %+v", sum)
	}
	n, err := s.ReleaseLifecycle(ctx, p.ID, k1.ID, "Lifecycle completed.", time.Now())
	must(t, err)
	if got, _ := s.GetAction(ctx, k1.ID); n != 1 || got.Status != model.ActionReady || got.StatusReason != "Lifecycle completed." {
		t.Errorf("release one: %d, %+v", n, got)
	}
	if n, _ := s.ReleaseLifecycle(ctx, p.ID, k1.ID, "again", time.Now()); n != 0 {
		t.Errorf("a released child was released again: %d", n)
	}
	must(t, s.SignalChildren(ctx, p.ID, model.SignalCancel, time.Now()))
	if got, _ := s.GetAction(ctx, k2.ID); got.Status != model.ActionCancelled {
		t.Errorf("a held child is cancelled with its parent: %+v", got)
	}
	if n, _ := s.ReleaseLifecycle(ctx, p.ID, "", "timeout", time.Now()); n != 0 {
		t.Errorf("released cancelled children: %d", n)
	}
}

func testLocks(t *testing.T, s store.Store) {
	ctx := context.Background()
	// The holders are running actions: a lock held by an action that has
	// ended, or does not exist, is free (testStaleLocks).
	var running []*model.Action
	for _, id := range []string{"a1", "a2", "a3", "n1", "n2"} {
		a := action(model.ClusterScaleOutAction, "", t0)
		a.ID, a.Status = id, model.ActionRunning
		running = append(running, a)
	}
	must(t, s.CreateActions(ctx, running))
	ok, err := s.AcquireClusterLock(ctx, "c", "a1", store.LockCluster)
	must(t, err)
	if !ok {
		t.Fatal("free lock not acquired")
	}
	if ok, _ := s.AcquireClusterLock(ctx, "c", "a1", store.LockCluster); !ok {
		t.Error("the holder re-acquires")
	}
	if ok, _ := s.AcquireClusterLock(ctx, "c", "a2", store.LockNode); ok {
		t.Error("a node-scope lock must not share an exclusive one")
	}
	must(t, s.ReleaseClusterLock(ctx, "c", "a1"))
	if ok, _ := s.AcquireClusterLock(ctx, "c", "n1", store.LockNode); !ok {
		t.Error("node scope after release")
	}
	if ok, _ := s.AcquireClusterLock(ctx, "c", "n2", store.LockNode); !ok {
		t.Error("node scopes share")
	}
	if ok, _ := s.AcquireClusterLock(ctx, "c", "a3", store.LockCluster); ok {
		t.Error("exclusive while shared")
	}
	must(t, s.ReleaseClusterLock(ctx, "c", "n1"))
	must(t, s.ReleaseClusterLock(ctx, "c", "n2"))
	if ok, _ := s.AcquireClusterLock(ctx, "c", "a3", store.LockCluster); !ok {
		t.Error("exclusive after all shared holders left")
	}
	if ok, _ := s.AcquireNodeLock(ctx, "n", "a1"); !ok {
		t.Error("node lock")
	}
	if ok, _ := s.AcquireNodeLock(ctx, "n", "a2"); ok {
		t.Error("node lock is exclusive")
	}
	must(t, s.ReleaseNodeLock(ctx, "n", "a1"))
	if ok, _ := s.AcquireNodeLock(ctx, "n", "a2"); !ok {
		t.Error("node lock after release")
	}
}

// testStaleLocks: an action that ended without releasing its locks (its
// agent died between recording the end and the release) does not hold its
// cluster or node for ever; a running one still does.
func testStaleLocks(t *testing.T, s store.Store) {
	ctx := context.Background()
	mk := func(status string) *model.Action {
		a := action(model.ClusterScaleOutAction, "", t0)
		a.Status = status
		must(t, s.CreateActions(ctx, []*model.Action{a}))
		return a
	}
	ended, running, next := mk(model.ActionSucceeded), mk(model.ActionRunning), mk(model.ActionRunning)
	lock := func(id string, scope int) bool {
		t.Helper()
		ok, err := s.AcquireClusterLock(ctx, "c", id, scope)
		must(t, err)
		return ok
	}
	if !lock(ended.ID, store.LockCluster) {
		t.Fatal("free lock not acquired")
	}
	if !lock(next.ID, store.LockCluster) {
		t.Error("a cluster lock held by a SUCCEEDED action is not taken over")
	}
	if lock(running.ID, store.LockCluster) {
		t.Error("a cluster lock held by a RUNNING action was taken over")
	}
	must(t, s.ReleaseClusterLock(ctx, "c", next.ID))

	// Shared holders: the ended one's share goes, the running one's stays.
	for _, id := range []string{ended.ID, running.ID} {
		if !lock(id, store.LockNode) {
			t.Fatalf("shared lock for %s not acquired", id)
		}
	}
	if lock(next.ID, store.LockCluster) {
		t.Error("an exclusive lock was granted while a RUNNING action shares the cluster")
	}
	must(t, s.ReleaseClusterLock(ctx, "c", running.ID))
	if !lock(next.ID, store.LockCluster) {
		t.Error("the share of an ended action kept the cluster locked after the running one left")
	}
	must(t, s.ReleaseClusterLock(ctx, "c", next.ID))

	// A holder that no longer exists (reaped) frees the lock too.
	if !lock("gone", store.LockCluster) || !lock(next.ID, store.LockCluster) {
		t.Error("a cluster lock held by an action that does not exist is not taken over")
	}

	ok, err := s.AcquireNodeLock(ctx, "n", ended.ID)
	must(t, err)
	if !ok {
		t.Fatal("free node lock not acquired")
	}
	if ok, _ := s.AcquireNodeLock(ctx, "n", next.ID); !ok {
		t.Error("a node lock held by a SUCCEEDED action is not taken over")
	}
	if ok, _ := s.AcquireNodeLock(ctx, "n", running.ID); ok {
		t.Error("a node lock held by a RUNNING action was taken over")
	}
}

func testBindingsEvents(t *testing.T, s store.Store) {
	ctx := context.Background()
	b1 := &model.Binding{ID: uuid.NewString(), ClusterID: "c", PolicyID: "p1", Enabled: true, Priority: 400, Data: map[string]any{"x": "y"}}
	b2 := &model.Binding{ID: uuid.NewString(), ClusterID: "c", PolicyID: "p2", Enabled: false, Priority: 100}
	must(t, s.CreateBinding(ctx, b1))
	must(t, s.CreateBinding(ctx, b2))
	if err := s.CreateBinding(ctx, &model.Binding{ID: uuid.NewString(), ClusterID: "c", PolicyID: "p1"}); err == nil {
		t.Error("a policy binds to a cluster once")
	}
	bs, _ := s.ListBindings(ctx, "c")
	if len(bs) != 2 || bs[0].PolicyID != "p2" {
		t.Errorf("bindings ordered by priority: %v", bs)
	}
	now := time.Now().UTC().Truncate(time.Microsecond)
	b1.LastOp, b1.Enabled = &now, false
	must(t, s.UpdateBinding(ctx, b1))
	got, _ := s.GetBinding(ctx, "c", "p1")
	if got.Enabled || got.LastOp == nil || !got.LastOp.Equal(now) || got.Data["x"] != "y" {
		t.Errorf("binding update: %+v", got)
	}
	inUse, _ := s.PolicyInUse(ctx, "p1")
	if !inUse {
		t.Error("bound policy is in use")
	}
	must(t, s.DeleteBinding(ctx, "c", "p1"))
	if _, err := s.GetBinding(ctx, "c", "p1"); !errors.Is(err, store.ErrNotFound) {
		t.Error("binding not deleted")
	}
	var evs []*model.Event
	for i := 0; i < 3; i++ {
		evs = append(evs, &model.Event{ID: uuid.NewString(), Timestamp: t0.Add(time.Duration(i) * time.Second), OID: "o", OType: "NODE",
			Level: model.LevelInfo, Action: "NODE_CREATE", Status: "end", Project: "p1"})
	}
	must(t, s.CreateEvents(ctx, evs))
	list, _ := s.ListEvents(ctx, store.ListOpts{Sort: []store.SortKey{{Key: "timestamp", Desc: true}}})
	if len(list) != 3 || list[0].ID != evs[2].ID {
		t.Errorf("events by timestamp desc")
	}
	since, _ := s.ListEvents(ctx, store.ListOpts{Since: t0.Add(time.Second)})
	if len(since) != 2 || since[0].ID != evs[1].ID || since[1].ID != evs[2].ID {
		t.Errorf("events since the second one's time, oldest first: got %d", len(since))
	}
}

func testCounts(t *testing.T, s store.Store) {
	ctx := context.Background()
	c := &model.Cluster{ID: uuid.NewString(), Name: "web", Project: "p1", ProfileID: "p", InitAt: t0, MaxSize: -1, Status: model.ClusterActive}
	must(t, s.CreateCluster(ctx, c))
	var nodes []*model.Node
	for i, st := range []string{model.NodeActive, model.NodeActive, model.NodeError} {
		nodes = append(nodes, &model.Node{ID: uuid.NewString(), Name: fmt.Sprintf("n%d", i), ClusterID: c.ID, Project: "p1", Index: i + 1, InitAt: t0, Status: st})
	}
	nodes = append(nodes, &model.Node{ID: uuid.NewString(), Name: "orphan", Project: "p2", InitAt: t0, Status: model.NodeActive})
	must(t, s.CreateNodes(ctx, nodes))
	got, err := s.NodeCounts(ctx)
	must(t, err)
	want := map[store.NodeCount]bool{
		{Project: "p1", Cluster: "web", Status: model.NodeActive, Count: 2}: true,
		{Project: "p1", Cluster: "web", Status: model.NodeError, Count: 1}:  true,
		{Project: "p2", Cluster: "", Status: model.NodeActive, Count: 1}:    true,
	}
	if len(got) != len(want) {
		t.Errorf("NodeCounts = %+v, want %d rows", got, len(want))
	}
	for _, g := range got {
		if !want[g] {
			t.Errorf("NodeCounts has %+v, not among %v", g, want)
		}
	}
	done := action(model.ClusterCreateAction, "", t0)
	done.Status = model.ActionSucceeded
	must(t, s.CreateActions(ctx, []*model.Action{action(model.NodeCreateAction, "", t0), action(model.NodeCreateAction, "", t0), done}))
	acts, err := s.ActionCounts(ctx)
	must(t, err)
	if len(acts) != 1 || acts[0] != (store.ActionCount{Action: model.NodeCreateAction, Status: model.ActionReady, Count: 2}) {
		t.Errorf("ActionCounts = %+v, want 2 READY NODE_CREATE and no ended action", acts)
	}
}

func testTx(t *testing.T, s store.Store) {
	ctx := context.Background()
	p := profile("tx", t0)
	err := s.InTx(ctx, func(tx store.Store) error {
		if err := tx.CreateProfile(ctx, p); err != nil {
			return err
		}
		return errors.New("abort")
	})
	if err == nil {
		t.Fatal("InTx must return fn's error")
	}
	if _, err := s.GetProfile(ctx, p.ID); !errors.Is(err, store.ErrNotFound) {
		t.Error("a failed transaction wrote its profile")
	}
}

func testSets(t *testing.T, s store.Store) {
	ctx := context.Background()
	c := &model.Cluster{ID: uuid.NewString(), Name: "owned", ProfileID: "p", InitAt: t0, MaxSize: -1, Status: model.ClusterActive}
	must(t, s.CreateCluster(ctx, c))
	must(t, s.PutSetObject(ctx, store.SetObject{Project: "a", Set: "web", Kind: "cluster", Name: "front", ID: c.ID}))
	must(t, s.PutSetObject(ctx, store.SetObject{Project: "a", Set: "web", Kind: "profile", Name: "p", ID: "pid"}))
	must(t, s.PutSetObject(ctx, store.SetObject{Project: "b", Set: "web", Kind: "profile", Name: "p", ID: "pid-b"}))
	objs, err := s.SetObjects(ctx, "a", "web")
	must(t, err)
	if len(objs) != 2 || objs[0].Kind != "cluster" || objs[0].Name != "front" || objs[0].Project != "a" {
		t.Fatalf("set objects: %+v", objs)
	}
	if objs, _ := s.SetObjects(ctx, "b", "web"); len(objs) != 1 || objs[0].ID != "pid-b" {
		t.Fatalf("a set of the same name in another project is another set: %+v", objs)
	}
	o, err := s.OwnerOf(ctx, "cluster", c.ID)
	if err != nil || o == nil || o.Set != "web" || o.Project != "a" {
		t.Fatalf("owner: %+v %v", o, err)
	}
	must(t, s.PutSetObject(ctx, store.SetObject{Set: "other", Kind: "cluster", Name: "front", ID: c.ID}))
	if o, _ := s.OwnerOf(ctx, "cluster", c.ID); o.Set != "other" {
		t.Fatalf("an object has one owner: %+v", o)
	}
	must(t, s.DeleteCluster(ctx, c.ID))
	if o, _ := s.OwnerOf(ctx, "cluster", c.ID); o != nil {
		t.Fatalf("deleting an object forgets its owner: %+v", o)
	}
	if none, _ := s.OwnerOf(ctx, "policy", "nope"); none != nil {
		t.Fatal("unowned objects have no owner")
	}
}

func testReap(t *testing.T, s store.Store) {
	ctx := context.Background()
	parent := action(model.ClusterCreateAction, "", t0)
	parent.ClusterID, parent.Target, parent.Status = "c", "c", model.ActionRunning
	var all []*model.Action
	all = append(all, parent)
	for i := 0; i < 4; i++ {
		a := action(model.NodeCheckAction, "", t0.Add(time.Duration(i)*time.Second))
		a.ClusterID, a.Target, a.Status = "c", "n1", model.ActionSucceeded
		all = append(all, a)
	}
	kid := action(model.NodeCreateAction, parent.ID, t0)
	kid.ClusterID, kid.Target, kid.Status = "c", "n1", model.ActionSucceeded
	all = append(all, kid)
	must(t, s.CreateActions(ctx, all))
	targets, err := s.CrowdedTargets(ctx, "c", 3)
	must(t, err)
	if len(targets) != 1 || targets[0] != "n1" {
		t.Fatalf("crowded targets: %v", targets)
	}
	stamps, err := s.ActionStamps(ctx, "n1")
	must(t, err)
	if len(stamps) != 5 {
		t.Fatalf("stamps: %d", len(stamps))
	}
	for _, st := range stamps {
		if st.ID == kid.ID && st.Terminal {
			t.Error("a finished child of a running parent is not reapable")
		}
	}
	var evs []*model.Event
	for i := 0; i < 3; i++ {
		evs = append(evs, &model.Event{ID: uuid.NewString(), Timestamp: t0.Add(time.Duration(i) * time.Second), OID: "n1", ClusterID: "c", OType: "NODE"})
	}
	must(t, s.CreateEvents(ctx, evs))
	objs, _ := s.CrowdedEventObjects(ctx, "c", 2)
	if len(objs) != 1 {
		t.Fatalf("crowded event objects: %v", objs)
	}
	must(t, s.DeleteEvents(ctx, []string{evs[0].ID}))
	left, _ := s.EventStamps(ctx, "n1")
	if len(left) != 2 {
		t.Fatalf("events left: %d", len(left))
	}
}

func testHealthClaims(t *testing.T, s store.Store) {
	ctx := context.Background()
	claim := func(cluster, owner string, now time.Time) bool {
		t.Helper()
		got, err := s.ClaimHealth(ctx, []string{cluster}, owner, now, now.Add(10*time.Second))
		must(t, err)
		return len(got) == 1 && got[0] == cluster
	}
	if !claim("c1", "a", t0) {
		t.Fatal("a free cluster is claimed")
	}
	if claim("c1", "b", t0.Add(5*time.Second)) {
		t.Fatal("another agent takes a claim that has not expired")
	}
	if !claim("c1", "a", t0.Add(9*time.Second)) {
		t.Fatal("the owner renews its claim")
	}
	if claim("c1", "b", t0.Add(15*time.Second)) {
		t.Fatal("the renewal counts: the claim runs until 19s")
	}
	if !claim("c1", "b", t0.Add(20*time.Second)) {
		t.Fatal("an expired claim is taken over")
	}
	if claim("c1", "a", t0.Add(21*time.Second)) {
		t.Fatal("the old owner does not get it back while the new claim holds")
	}
	if !claim("c2", "a", t0.Add(21*time.Second)) {
		t.Fatal("claims are per cluster")
	}
	must(t, s.ReleaseHealth(ctx, "b"))
	if !claim("c1", "a", t0.Add(22*time.Second)) {
		t.Fatal("a released claim is free at once")
	}
	if claim("c2", "b", t0.Add(22*time.Second)) {
		t.Fatal("releasing b's claims leaves a's alone")
	}
	// Many clusters in one call (more than one statement's worth): only
	// the free ones and the caller's own come back.
	var many []string
	for i := range 700 {
		many = append(many, fmt.Sprintf("m%03d", i))
	}
	many = append(many, "c1", "c2")
	got, err := s.ClaimHealth(ctx, many, "a", t0.Add(22*time.Second), t0.Add(32*time.Second))
	must(t, err)
	if len(got) != 702 {
		t.Fatalf("a claims %d of 702 clusters, want all (free or its own)", len(got))
	}
	got, err = s.ClaimHealth(ctx, many, "b", t0.Add(23*time.Second), t0.Add(33*time.Second))
	must(t, err)
	if len(got) != 0 {
		t.Fatalf("b claims %d clusters a holds", len(got))
	}
	must(t, s.TakeHealth(ctx, "c2", "b", t0.Add(40*time.Second)))
	if claim("c2", "a", t0.Add(23*time.Second)) {
		t.Fatal("a claim taken over is lost to its old owner")
	}
	if !claim("c2", "b", t0.Add(23*time.Second)) {
		t.Fatal("the agent that took the claim over holds it")
	}
}

// testLiteralLookups: a reference is an id, a name or a short id of at least
// store.MinShortID characters, compared literally. SQL LIKE's '_' and '%'
// once matched any object.
func testLiteralLookups(t *testing.T, s store.Store) {
	ctx := context.Background()
	c := &model.Cluster{ID: "5a7e0000-0000-4000-8000-000000000001", Name: "a_b", ProfileID: "p", Project: "p1", InitAt: t0, MaxSize: -1, Status: "ACTIVE"}
	must(t, s.CreateCluster(ctx, c))
	for _, ident := range []string{c.ID, "a_b", c.ID[:store.MinShortID], strings.ToUpper(c.ID[:8])} {
		t.Run("found/"+ident, func(t *testing.T) {
			got, err := s.FindCluster(ctx, "p1", ident)
			if err != nil || got.ID != c.ID {
				t.Errorf("FindCluster(%q) = %v, %v; want %s", ident, got, err, c.ID)
			}
		})
	}
	notFound := []string{"_", "__", "a_", "a__", "axb", "A_B", "______", "5a7e_", "5a7e0_", `5a7e\`, `\`, "[5a]", "5a7e0", "5a7e-", c.ID[:store.MinShortID-1], c.ID + "0"}
	for _, ident := range notFound {
		t.Run("not found/"+ident, func(t *testing.T) {
			got, err := s.FindCluster(ctx, "p1", ident)
			if !errors.Is(err, store.ErrNotFound) {
				t.Errorf("FindCluster(%q) = %v, %v; want not found", ident, got, err)
			}
		})
	}
	for _, ident := range []string{"", "%", "%%", "5a7e%", "a%b", "*", "5a7e*", "?", "a?b"} {
		t.Run("refused/"+ident, func(t *testing.T) {
			got, err := s.FindCluster(ctx, "p1", ident)
			var bad *store.InvalidRefError
			if !errors.As(err, &bad) || !errors.Is(err, store.ErrInvalidRef) || bad.Kind != "cluster" {
				t.Errorf("FindCluster(%q) = %v, %v; want an InvalidRefError", ident, got, err)
			}
		})
	}
	// The same rules for every kind of object.
	p := profile("only", t0)
	must(t, s.CreateProfile(ctx, p))
	for _, ident := range []string{"", "%", "_"} {
		if got, err := s.FindProfile(ctx, "p1", ident); err == nil {
			t.Errorf("FindProfile(%q) = %s; a wildcard must not pick the only profile", ident, got.ID)
		}
	}
}

// testUniqueNames: a cluster name is unique within a project, enforced by
// the database so that concurrent creates cannot both succeed.
func testUniqueNames(t *testing.T, s store.Store) {
	ctx := context.Background()
	cluster := func(name, project string) *model.Cluster {
		return &model.Cluster{ID: uuid.NewString(), Name: name, ProfileID: "p", Project: project, InitAt: t0, MaxSize: -1, Status: "INIT"}
	}
	must(t, s.CreateCluster(ctx, cluster("web", "p1")))
	err := s.CreateCluster(ctx, cluster("web", "p1"))
	var dup *store.DuplicateError
	if !errors.As(err, &dup) || !errors.Is(err, store.ErrDuplicate) || dup.Kind != "cluster" || dup.Name != "web" {
		t.Fatalf("second cluster named web: %v; want a DuplicateError", err)
	}
	if want := `A cluster named "web" already exists; names must be unique within a project.`; err.Error() != want {
		t.Errorf("message %q, want %q", err, want)
	}
	must(t, s.CreateCluster(ctx, cluster("web", "p2")))
	other := cluster("db", "p1")
	must(t, s.CreateCluster(ctx, other))
	other.Name = "web"
	if err := s.UpdateCluster(ctx, other); !errors.As(err, &dup) {
		t.Errorf("renaming a cluster to a taken name: %v; want a DuplicateError", err)
	}
	// In a transaction, as the engine writes, and all at once.
	const n = 10
	errs := make([]error, n)
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			errs[i] = s.InTx(ctx, func(tx store.Store) error { return tx.CreateCluster(ctx, cluster("race", "p1")) })
		}()
	}
	close(start)
	wg.Wait()
	created := 0
	for _, err := range errs {
		switch {
		case err == nil:
			created++
		case !errors.As(err, &dup):
			t.Errorf("concurrent create: %v; want success or a DuplicateError", err)
		}
	}
	if created != 1 {
		t.Errorf("%d of %d concurrent creates of one name succeeded; want 1", created, n)
	}
	all, err := s.ListClusters(ctx, store.ListOpts{Project: "p1", Filters: map[string][]string{"name": {"race"}}})
	must(t, err)
	if len(all) != 1 {
		t.Errorf("%d clusters named race; want 1", len(all))
	}
}

// testReplaceSpec: the spec and properties of a profile and of a policy are
// replaced, nothing else; an unknown id is not found.
func testReplaceSpec(t *testing.T, s store.Store) {
	ctx := context.Background()
	p := profile("web", t0)
	must(t, s.CreateProfile(ctx, p))
	pol := &model.Policy{ID: uuid.NewString(), Name: "del", Type: "senlin.policy.deletion", Version: "1.1", Spec: map[string]any{"type": "x"},
		Properties: map[string]any{"criteria": "OLDEST_FIRST"}, Data: map[string]any{}, Project: "p1", CreatedAt: t0}
	must(t, s.CreatePolicy(ctx, pol))
	must(t, s.ReplaceSpec(ctx, "profile", p.ID, map[string]any{"type": "local.process", "v": "sealed"}, map[string]any{"env": "sealed"}))
	must(t, s.ReplaceSpec(ctx, "policy", pol.ID, map[string]any{"type": "x", "v": "sealed"}, map[string]any{"criteria": "sealed"}))
	got, err := s.GetProfile(ctx, p.ID)
	must(t, err)
	if got.Spec["v"] != "sealed" || got.Properties["env"] != "sealed" || got.Properties["command"] != nil || got.Name != "web" {
		t.Errorf("profile after ReplaceSpec: %+v", got)
	}
	gp, err := s.GetPolicy(ctx, pol.ID)
	must(t, err)
	if gp.Spec["v"] != "sealed" || gp.Properties["criteria"] != "sealed" || gp.Name != "del" {
		t.Errorf("policy after ReplaceSpec: %+v", gp)
	}
	if err := s.ReplaceSpec(ctx, "profile", uuid.NewString(), nil, nil); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("ReplaceSpec of an unknown profile: %v, want not found", err)
	}
}

func testTokens(t *testing.T, s store.Store) {
	ctx := context.Background()
	exp := t0.Add(time.Hour)
	a := &model.Token{ID: uuid.NewString(), Name: "ci", Project: "p", Role: model.RoleMember, Hash: strings.Repeat("a", 64), CreatedAt: t0, ExpiresAt: &exp, CreatedBy: "bootstrap"}
	b := &model.Token{ID: uuid.NewString(), Name: "ops", Project: "default", Role: model.RoleAdmin, Hash: strings.Repeat("b", 64), CreatedAt: t0.Add(time.Second), CreatedBy: a.ID}
	must(t, s.CreateToken(ctx, a))
	must(t, s.CreateToken(ctx, b))
	if err := s.CreateToken(ctx, &model.Token{ID: uuid.NewString(), Name: "dup", Project: "p", Role: model.RoleReader, Hash: a.Hash, CreatedAt: t0, CreatedBy: a.ID}); err == nil {
		t.Error("two tokens with one hash were stored; a secret must name one token")
	}
	got, err := s.TokenByHash(ctx, a.Hash)
	must(t, err)
	if got.ID != a.ID || got.Project != "p" || got.Role != model.RoleMember || got.ExpiresAt == nil || !got.ExpiresAt.Equal(exp) || got.CreatedBy != "bootstrap" {
		t.Errorf("token by hash: %+v", got)
	}
	if _, err := s.TokenByHash(ctx, strings.Repeat("c", 64)); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("an unknown hash: %v, want not found", err)
	}
	got, err = s.GetToken(ctx, b.ID)
	must(t, err)
	if got.ExpiresAt != nil || got.Name != "ops" {
		t.Errorf("get token: %+v", got)
	}
	all, err := s.ListTokens(ctx)
	must(t, err)
	if len(all) != 2 || all[0].ID != a.ID || all[1].ID != b.ID {
		t.Fatalf("list tokens: %+v", all)
	}
	must(t, s.DeleteToken(ctx, a.ID))
	if _, err := s.TokenByHash(ctx, a.Hash); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("a revoked token is still found by its hash: %v", err)
	}
	if err := s.DeleteToken(ctx, a.ID); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("revoking a revoked token: %v, want not found", err)
	}
}

func testGrants(t *testing.T, s store.Store) {
	ctx := context.Background()
	if g, err := s.ListGrants(ctx, "p"); err != nil || len(g) != 0 {
		t.Fatalf("a new project has grants: %v %v", g, err)
	}
	must(t, s.PutGrant(ctx, "p", "local.process"))
	must(t, s.PutGrant(ctx, "p", "local.process"))
	must(t, s.PutGrant(ctx, "p", "container.docker"))
	must(t, s.PutGrant(ctx, "q", "container.docker"))
	g, err := s.ListGrants(ctx, "p")
	must(t, err)
	if strings.Join(g, ",") != "container.docker,local.process" {
		t.Errorf("grants of p: %v", g)
	}
	must(t, s.DeleteGrant(ctx, "p", "local.process"))
	must(t, s.DeleteGrant(ctx, "p", "local.process"))
	if g, _ := s.ListGrants(ctx, "p"); strings.Join(g, ",") != "container.docker" {
		t.Errorf("grants of p after a revocation: %v", g)
	}
	if g, _ := s.ListGrants(ctx, "q"); strings.Join(g, ",") != "container.docker" {
		t.Errorf("a revocation in p changed q: %v", g)
	}
}

func testReceivers(t *testing.T, s store.Store) {
	ctx := context.Background()
	c := &model.Cluster{ID: uuid.NewString(), Name: "web", ProfileID: "p", InitAt: t0, MaxSize: -1, Status: model.ClusterActive, Project: "p1"}
	must(t, s.CreateCluster(ctx, c))
	other := &model.Cluster{ID: uuid.NewString(), Name: "db", ProfileID: "p", InitAt: t0, MaxSize: -1, Status: model.ClusterActive, Project: "p1"}
	must(t, s.CreateCluster(ctx, other))
	mk := func(name, cluster, action, hash string) *model.Receiver {
		return &model.Receiver{ID: uuid.NewString(), Name: name, Type: model.ReceiverWebhook, ClusterID: cluster, Action: action,
			Actor: map[string]any{}, Params: map[string]any{"count": "1"}, Channel: map[string]any{}, Hash: hash,
			User: "u", Project: "p1", CreatedAt: t0}
	}
	up := mk("up", c.ID, model.ClusterScaleOutAction, strings.Repeat("a", 64))
	down := mk("down", c.ID, model.ClusterScaleInAction, strings.Repeat("b", 64))
	dbUp := mk("db-up", other.ID, model.ClusterScaleOutAction, strings.Repeat("c", 64))
	for _, v := range []*model.Receiver{up, down, dbUp} {
		must(t, s.CreateReceiver(ctx, v))
	}
	if err := s.CreateReceiver(ctx, mk("dup", c.ID, model.ClusterScaleOutAction, up.Hash)); err == nil {
		t.Error("two receivers with one secret hash were stored; a webhook secret must name one receiver")
	}
	got, err := s.ReceiverByHash(ctx, down.Hash)
	must(t, err)
	if got.ID != down.ID || got.Action != model.ClusterScaleInAction || got.Params["count"] != "1" || !got.CreatedAt.Equal(t0) {
		t.Errorf("receiver by hash: %+v", got)
	}
	if _, err := s.ReceiverByHash(ctx, strings.Repeat("d", 64)); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("an unknown hash: %v, want not found", err)
	}
	if got, err := s.FindReceiver(ctx, "p1", "up"); err != nil || got.ID != up.ID {
		t.Errorf("find by name: %v %v", got, err)
	}
	if _, err := s.FindReceiver(ctx, "p2", "up"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("find in another project: %v, want not found", err)
	}
	all, err := s.ListReceivers(ctx, store.ListOpts{Project: "p1"})
	must(t, err)
	if len(all) != 3 || all[0].Name != "db-up" || all[1].Name != "down" || all[2].Name != "up" {
		t.Errorf("receivers are listed by name: %v", receiverNames(all))
	}
	byCluster, err := s.ListReceivers(ctx, store.ListOpts{Project: "p1", Filters: map[string][]string{"cluster_id": {c.ID}, "action": {model.ClusterScaleOutAction}}})
	must(t, err)
	if len(byCluster) != 1 || byCluster[0].ID != up.ID {
		t.Errorf("filter by cluster and action: %v", receiverNames(byCluster))
	}
	now := t0.Add(time.Minute)
	up.Name, up.Params, up.UpdatedAt = "scale-up", map[string]any{"count": "3"}, &now
	must(t, s.UpdateReceiver(ctx, up))
	got, err = s.GetReceiver(ctx, up.ID)
	must(t, err)
	if got.Name != "scale-up" || got.Params["count"] != "3" || got.UpdatedAt == nil || !got.UpdatedAt.Equal(now) || got.Hash != up.Hash {
		t.Errorf("after update: %+v", got)
	}
	must(t, s.DeleteReceiver(ctx, down.ID))
	if err := s.DeleteReceiver(ctx, down.ID); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("deleting a deleted receiver: %v, want not found", err)
	}
	must(t, s.DeleteCluster(ctx, c.ID))
	if _, err := s.GetReceiver(ctx, up.ID); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("a deleted cluster's receiver is still there: %v", err)
	}
	if _, err := s.GetReceiver(ctx, dbUp.ID); err != nil {
		t.Errorf("deleting one cluster took another's receiver: %v", err)
	}
}

func receiverNames(vs []*model.Receiver) []string {
	out := make([]string, len(vs))
	for i, v := range vs {
		out[i] = v.Name
	}
	return out
}

// testDependencies: each cluster's declaration is replaced whole, including
// the dependents it declared on others (stored on the target, as SMF's
// import does); a group name is held once per cluster; a deleted cluster
// takes what it held and declared; milestones are named objects.
func testDependencies(t *testing.T, s store.Store) {
	ctx := context.Background()
	mkc := func(name string) *model.Cluster {
		c := &model.Cluster{ID: uuid.NewString(), Name: name, ProfileID: "p", InitAt: t0, MaxSize: -1, Status: model.ClusterActive, Project: "p1"}
		must(t, s.CreateCluster(ctx, c))
		return c
	}
	web, db, mon := mkc("web"), mkc("db"), mkc("mon")
	dep := func(holder, declarer, name string, members ...string) model.DependencyGroup {
		return model.DependencyGroup{ClusterID: holder, DeclaredBy: declarer, Name: name, Grouping: "require_all", RestartOn: "error", Members: members, CreatedAt: t0}
	}
	must(t, s.ReplaceDeclaredDependencies(ctx, web.ID, []model.DependencyGroup{
		dep(web.ID, web.ID, "database", db.ID, "path:/etc/web.conf"),
	}))
	// mon declares web a dependent ("mon must run before web"): stored as
	// a group held by web, declared by mon.
	must(t, s.ReplaceDeclaredDependencies(ctx, mon.ID, []model.DependencyGroup{dep(web.ID, mon.ID, "mon_first", mon.ID)}))
	all, err := s.ListDependencies(ctx)
	must(t, err)
	if len(all) != 2 {
		t.Fatalf("groups %+v", all)
	}
	byName := map[string]model.DependencyGroup{}
	for _, g := range all {
		byName[g.Name] = g
	}
	if g := byName["database"]; g.ClusterID != web.ID || g.Dependent() || g.Grouping != "require_all" || g.RestartOn != "error" ||
		strings.Join(g.Members, ",") != db.ID+",path:/etc/web.conf" || !g.CreatedAt.Equal(t0) {
		t.Errorf("database: %+v", g)
	}
	if g := byName["mon_first"]; g.ClusterID != web.ID || !g.Dependent() || g.DeclaredBy != mon.ID {
		t.Errorf("mon_first: %+v", g)
	}
	// web's own redeclaration leaves mon's dependent alone.
	must(t, s.ReplaceDeclaredDependencies(ctx, web.ID, []model.DependencyGroup{dep(web.ID, web.ID, "db2", db.ID)}))
	all, err = s.ListDependencies(ctx)
	must(t, err)
	if len(all) != 2 || all[0].Name != "db2" && all[1].Name != "db2" {
		t.Fatalf("after the redeclaration: %+v", all)
	}
	// A name held by web from mon's declaration cannot be taken by web's.
	err = s.ReplaceDeclaredDependencies(ctx, web.ID, []model.DependencyGroup{dep(web.ID, web.ID, "mon_first", db.ID)})
	if !errors.Is(err, store.ErrDuplicate) {
		t.Fatalf("a taken group name: %v", err)
	}
	// The refused replacement changed nothing (one transaction).
	all, _ = s.ListDependencies(ctx)
	if len(all) != 2 {
		t.Fatalf("a refused replacement changed the groups: %+v", all)
	}
	must(t, s.ReplaceDeclaredDependencies(ctx, web.ID, nil))
	all, _ = s.ListDependencies(ctx)
	if len(all) != 1 || all[0].Name != "mon_first" {
		t.Fatalf("after clearing web's: %+v", all)
	}
	// Deleting mon takes the dependent it declared on web.
	must(t, s.DeleteCluster(ctx, mon.ID))
	all, _ = s.ListDependencies(ctx)
	if len(all) != 0 {
		t.Fatalf("after deleting mon: %+v", all)
	}

	m := &model.Milestone{ID: uuid.NewString(), Name: "multi-user", Clusters: []string{web.ID, db.ID}, User: "u", Project: "p1", CreatedAt: t0}
	must(t, s.CreateMilestone(ctx, m))
	if err := s.CreateMilestone(ctx, &model.Milestone{ID: uuid.NewString(), Name: "multi-user", User: "u", Project: "p1", CreatedAt: t0}); !errors.Is(err, store.ErrDuplicate) {
		t.Errorf("a second multi-user in p1: %v", err)
	}
	must(t, s.CreateMilestone(ctx, &model.Milestone{ID: uuid.NewString(), Name: "multi-user", User: "u", Project: "p2", CreatedAt: t0}))
	got, err := s.FindMilestone(ctx, "p1", "multi-user")
	must(t, err)
	if got.ID != m.ID || strings.Join(got.Clusters, ",") != web.ID+","+db.ID || !got.CreatedAt.Equal(t0) || got.UpdatedAt != nil {
		t.Errorf("found %+v", got)
	}
	at := t0.Add(time.Hour)
	got.Clusters, got.UpdatedAt = []string{db.ID}, &at
	must(t, s.UpdateMilestone(ctx, got))
	got, err = s.GetMilestone(ctx, m.ID)
	must(t, err)
	if strings.Join(got.Clusters, ",") != db.ID || got.UpdatedAt == nil || !got.UpdatedAt.Equal(at) {
		t.Errorf("updated %+v", got)
	}
	list, err := s.ListMilestones(ctx, store.ListOpts{Project: "p1"})
	must(t, err)
	if len(list) != 1 || list[0].ID != m.ID {
		t.Errorf("list %+v", list)
	}
	must(t, s.DeleteMilestone(ctx, m.ID))
	if _, err := s.GetMilestone(ctx, m.ID); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("deleted milestone: %v", err)
	}
	if err := s.DeleteMilestone(ctx, m.ID); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("deleting twice: %v", err)
	}
}

func agentHost(name string, beat time.Time) *model.Host {
	return &model.Host{Name: name, Kind: model.HostAgent, Driver: "local.process", Labels: map[string]string{"zone": "a"},
		Load: map[string]float64{"load1": 0.5}, State: model.HostUp, Heartbeat: beat}
}

// testHosts: a heartbeat records a host and refreshes what it reports, and
// never undoes what an operator set (availability, operator labels).
func testHosts(t *testing.T, s store.Store) {
	ctx := context.Background()
	must(t, s.ReportHost(ctx, agentHost("h1", t0)))
	must(t, s.ReportHost(ctx, agentHost("h0", t0)))
	h, err := s.GetHost(ctx, "h1")
	must(t, err)
	if h.Availability != model.HostActive || h.State != model.HostUp || h.Labels["zone"] != "a" || h.Load["load1"] != 0.5 || !h.Heartbeat.Equal(t0) {
		t.Fatalf("new host: %+v", h)
	}
	h.Availability, h.OperatorLabels = model.HostDrain, map[string]string{"disk": "ssd"}
	now := t0.Add(time.Second)
	h.UpdatedAt = &now
	must(t, s.UpdateHost(ctx, h))
	beat := agentHost("h1", t0.Add(2*time.Second))
	beat.Labels, beat.Load = map[string]string{"zone": "b"}, map[string]float64{"load1": 2}
	must(t, s.ReportHost(ctx, beat))
	h, err = s.GetHost(ctx, "h1")
	must(t, err)
	if h.Availability != model.HostDrain || h.OperatorLabels["disk"] != "ssd" || h.Labels["zone"] != "b" || h.Load["load1"] != 2 {
		t.Fatalf("a heartbeat must refresh the reported fields and keep the operator's: %+v", h)
	}
	if got := h.EffectiveLabels(); got["disk"] != "ssd" || got["zone"] != "b" {
		t.Errorf("effective labels %v", got)
	}
	all, err := s.ListHosts(ctx)
	must(t, err)
	if len(all) != 2 || all[0].Name != "h0" || all[1].Name != "h1" {
		t.Fatalf("hosts listed by name: %v", all)
	}
	must(t, s.SetHostState(ctx, "h1", model.HostMaintenance, now))
	if h, _ = s.GetHost(ctx, "h1"); h.State != model.HostMaintenance {
		t.Errorf("state %q, want maintenance", h.State)
	}
	if _, err := s.GetHost(ctx, "nope"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("missing host: %v", err)
	}
	if err := s.UpdateHost(ctx, &model.Host{Name: "nope", Availability: model.HostPause}); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("updating a missing host: %v", err)
	}
	cl := &model.Cluster{ID: uuid.NewString(), Name: "c", Project: "p1", InitAt: t0}
	must(t, s.CreateCluster(ctx, cl))
	var nodes []*model.Node
	for i, host := range []string{"h1", "h1", "h0", ""} {
		nodes = append(nodes, &model.Node{ID: uuid.NewString(), Name: fmt.Sprintf("n%d", i), ClusterID: cl.ID, Index: i, Project: "p1", InitAt: t0, Host: host})
	}
	must(t, s.CreateNodes(ctx, nodes))
	counts, err := s.HostNodeCounts(ctx)
	must(t, err)
	if len(counts) != 2 || counts["h1"] != 2 || counts["h0"] != 1 {
		t.Errorf("node counts by host: %v", counts)
	}
	if got, err := s.HostClusters(ctx, "h1"); err != nil || len(got) != 1 || got[0] != cl.ID {
		t.Errorf("clusters of h1: %v, %v", got, err)
	}
	if got, _ := s.HostClusters(ctx, "h9"); len(got) != 0 {
		t.Errorf("clusters of a host without nodes: %v", got)
	}
	nodes[3].Host = "h0"
	must(t, s.UpdateNodes(ctx, nodes[3:]))
	if n, _ := s.GetNode(ctx, nodes[3].ID); n.Host != "h0" {
		t.Errorf("node host after update: %q", n.Host)
	}
}

// testHostsDownOnce: only agent hosts that are up and late go down, and of
// agents marking at the same time each host is reported to one.
func testHostsDownOnce(t *testing.T, s store.Store) {
	ctx := context.Background()
	must(t, s.ReportHost(ctx, agentHost("late", t0)))
	must(t, s.ReportHost(ctx, agentHost("fresh", t0.Add(time.Minute))))
	off := agentHost("off", t0)
	must(t, s.ReportHost(ctx, off))
	must(t, s.SetHostState(ctx, "off", model.HostMaintenance, t0))
	engine := &model.Host{Name: "engine1", Kind: model.HostContainerEngine, Driver: "container.docker", State: model.HostUp, Heartbeat: t0}
	must(t, s.ReportHost(ctx, engine))
	var wg sync.WaitGroup
	got := make([][]string, 8)
	errs := make([]error, 8)
	for i := range got {
		wg.Add(1)
		go func() {
			defer wg.Done()
			got[i], errs[i] = s.MarkHostsDown(ctx, t0.Add(30*time.Second), t0.Add(31*time.Second))
		}()
	}
	wg.Wait()
	var all []string
	for i := range got {
		must(t, errs[i])
		all = append(all, got[i]...)
	}
	if len(all) != 1 || all[0] != "late" {
		t.Fatalf("hosts marked down %v, want [late] once", all)
	}
	for name, want := range map[string]string{"late": model.HostDown, "fresh": model.HostUp, "off": model.HostMaintenance, "engine1": model.HostUp} {
		if h, _ := s.GetHost(ctx, name); h.State != want {
			t.Errorf("host %s is %s, want %s", name, h.State, want)
		}
	}
	// A heartbeat brings a down host back up.
	must(t, s.ReportHost(ctx, agentHost("late", t0.Add(time.Minute))))
	if h, _ := s.GetHost(ctx, "late"); h.State != model.HostUp {
		t.Errorf("host back after a heartbeat is %s", h.State)
	}
}

// testClaimHosts: an action on a node of another host is left to that
// host's agent, unless that host is down.
func testClaimHosts(t *testing.T, s store.Store) {
	ctx := context.Background()
	must(t, s.ReportHost(ctx, agentHost("a", t0)))
	must(t, s.ReportHost(ctx, agentHost("b", t0)))
	mk := func(host string) *model.Node {
		return &model.Node{ID: uuid.NewString(), Name: "n-" + host, Project: "p1", InitAt: t0, Host: host}
	}
	na, nb, free := mk("a"), mk("b"), mk("")
	must(t, s.CreateNodes(ctx, []*model.Node{na, nb, free}))
	parent := action(model.ClusterCheckAction, "", t0)
	kid := func(target string, at time.Duration) *model.Action {
		a := action(model.NodeCheckAction, parent.ID, t0.Add(at))
		a.Target = target
		return a
	}
	ka, kb, kf := kid(na.ID, time.Millisecond), kid(nb.ID, 2*time.Millisecond), kid(free.ID, 3*time.Millisecond)
	must(t, s.CreateActions(ctx, []*model.Action{ka, kb, kf}))
	until := time.Now().Add(time.Minute)
	got, err := s.ClaimActions(ctx, "eb", "b", until, true, 10)
	must(t, err)
	if len(got) != 2 || got[0].ID != kb.ID || got[1].ID != kf.ID {
		t.Fatalf("host b claimed %v, want its node's action and the hostless one", actionTargets(got))
	}
	if got, _ := s.ClaimActions(ctx, "none", "", until, true, 10); len(got) != 0 {
		t.Fatalf("an agent without a host claimed %v", actionTargets(got))
	}
	del := action(model.NodeDeleteAction, "", t0.Add(time.Second))
	del.Target = na.ID
	must(t, s.CreateActions(ctx, []*model.Action{del}))
	if got, _ := s.ClaimActions(ctx, "eb", "b", until, false, 1); len(got) != 0 {
		t.Fatalf("host b claimed the deletion of host a's node while a is up")
	}
	if _, err := s.MarkHostsDown(ctx, t0.Add(time.Second), t0.Add(time.Second)); err != nil {
		t.Fatal(err)
	}
	must(t, s.ReportHost(ctx, agentHost("b", t0.Add(time.Minute))))
	got, err = s.ClaimActions(ctx, "eb", "b", until, false, 1)
	must(t, err)
	if len(got) != 1 || got[0].ID != del.ID {
		t.Fatalf("the deletion of a down host's node must be claimable by any host: %v", actionTargets(got))
	}
	got, err = s.ClaimActions(ctx, "eb", "b", until, true, 10)
	must(t, err)
	if len(got) != 1 || got[0].ID != ka.ID {
		t.Fatalf("host b claimed %v, want the check of down host a's node, which nothing else would run", actionTargets(got))
	}
}

func actionTargets(as []*model.Action) []string {
	var out []string
	for _, a := range as {
		out = append(out, a.Target)
	}
	return out
}

// testIDsAndCounts: the ids and counts the API shows of a large cluster
// or action come in the order the matching list pages them, bounded by
// the limit, and count every member.
func testIDsAndCounts(t *testing.T, s store.Store) {
	ctx := context.Background()
	c := &model.Cluster{ID: uuid.NewString(), Name: "counted", ProfileID: "p", InitAt: t0, MaxSize: -1, Status: model.ClusterActive}
	must(t, s.CreateCluster(ctx, c))
	var nodes []*model.Node
	for i, idx := range []int{3, 1, 2} {
		st := model.NodeActive
		if i == 0 {
			st = model.NodeError
		}
		nodes = append(nodes, &model.Node{ID: uuid.NewString(), Name: fmt.Sprintf("c%d", idx), ClusterID: c.ID, Index: idx, InitAt: t0, Status: st})
	}
	must(t, s.CreateNodes(ctx, nodes))
	ids, err := s.ClusterNodeIDs(ctx, c.ID, 2)
	must(t, err)
	if len(ids) != 2 || ids[0] != nodes[1].ID || ids[1] != nodes[2].ID {
		t.Errorf("ClusterNodeIDs(limit 2) = %v, want the nodes of index 1 and 2", ids)
	}
	byStatus, err := s.CountNodesByStatus(ctx, c.ID)
	must(t, err)
	if len(byStatus) != 2 || byStatus[model.NodeActive] != 2 || byStatus[model.NodeError] != 1 {
		t.Errorf("CountNodesByStatus = %v, want 2 ACTIVE and 1 ERROR", byStatus)
	}

	p := action(model.ClusterCreateAction, "", t0)
	k1, k2, k3 := action(model.NodeCreateAction, p.ID, t0.Add(3*time.Second)), action(model.NodeCreateAction, p.ID, t0.Add(time.Second)),
		action(model.NodeDeleteAction, p.ID, t0.Add(2*time.Second))
	k1.Status = model.ActionSucceeded
	must(t, s.CreateActions(ctx, []*model.Action{p, k1, k2, k3}))
	kids, err := s.ChildIDs(ctx, p.ID, 2)
	must(t, err)
	if len(kids) != 2 || kids[0] != k2.ID || kids[1] != k3.ID {
		t.Errorf("ChildIDs(limit 2) = %v, want the first two children by creation", kids)
	}
	counts, err := s.CountChildren(ctx, p.ID)
	must(t, err)
	got := map[string]int{}
	for _, n := range counts {
		got[n.Action+"/"+n.Status] += n.N
	}
	want := map[string]int{model.NodeCreateAction + "/" + model.ActionSucceeded: 1, model.NodeCreateAction + "/" + model.ActionReady: 1,
		model.NodeDeleteAction + "/" + model.ActionReady: 1}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("CountChildren = %v, want %v", got, want)
	}
}

// testInstances: an instance is written new once, then only by a writer
// that read its latest version, and goes with its cluster.
func testInstances(t *testing.T, s store.Store) {
	ctx := context.Background()
	x := &model.Instance{ClusterID: "c1", Host: "h1", State: "idle", Since: t0, UpdatedAt: t0}
	must(t, s.PutInstance(ctx, x))
	if x.Version != 1 {
		t.Fatalf("version after insert %d, want 1", x.Version)
	}
	again := &model.Instance{ClusterID: "c1", Host: "h1", State: "ready", Since: t0, UpdatedAt: t0}
	if err := s.PutInstance(ctx, again); !errors.Is(err, store.ErrConflict) {
		t.Fatalf("a second insert of the same instance: %v, want a conflict", err)
	}
	stale := *x
	x.State, x.Frozen, x.Restarts, x.Outcome, x.Reason, x.Since = "ready", true, 2, "failed", "leader", t0.Add(time.Second)
	must(t, s.PutInstance(ctx, x))
	if err := s.PutInstance(ctx, &stale); !errors.Is(err, store.ErrConflict) {
		t.Fatalf("a write from a stale read: %v, want a conflict", err)
	}
	must(t, s.PutInstance(ctx, &model.Instance{ClusterID: "c1", Host: "h0", State: "idle", Since: t0, UpdatedAt: t0}))
	must(t, s.PutInstance(ctx, &model.Instance{ClusterID: "c2", Host: "h1", State: "idle", Since: t0, UpdatedAt: t0}))
	got, err := s.ListInstances(ctx, "c1")
	must(t, err)
	if len(got) != 2 || got[0].Host != "h0" || got[1].Host != "h1" {
		t.Fatalf("instances of c1 by host: %+v", got)
	}
	if g := got[1]; g.State != "ready" || !g.Frozen || g.Restarts != 2 || g.Outcome != "failed" || g.Reason != "leader" || !g.Since.Equal(t0.Add(time.Second)) || g.Version != 2 {
		t.Fatalf("instance read back: %+v", g)
	}
	must(t, s.DeleteInstance(ctx, "c1", "h0"))
	must(t, s.DeleteInstance(ctx, "c1", "h0"))
	if got, _ = s.ListInstances(ctx, "c1"); len(got) != 1 {
		t.Fatalf("after delete: %+v", got)
	}
}

// testExpectations: a cluster's expectation is read back as written, is
// written over only by a writer that read its latest version (the command
// setting it and a monitor round clearing it), and goes with its cluster.
func testExpectations(t *testing.T, s store.Store) {
	ctx := context.Background()
	if x, err := s.GetExpectation(ctx, "c1"); err != nil || x != nil {
		t.Fatalf("no expectation yet: %+v %v", x, err)
	}
	x := &model.Expectation{ClusterID: "c1", Kind: "switch", Host: "h2", Since: t0, ActionID: "a1", UpdatedAt: t0}
	must(t, s.PutExpectation(ctx, x))
	if err := s.PutExpectation(ctx, &model.Expectation{ClusterID: "c1", Kind: "stop", Since: t0, UpdatedAt: t0}); !errors.Is(err, store.ErrConflict) {
		t.Fatalf("a second insert: %v, want a conflict", err)
	}
	stale := *x
	x.Kind, x.Host, x.Reason, x.Since = "", "", "reached: up on h2", t0.Add(time.Second)
	must(t, s.PutExpectation(ctx, x))
	if err := s.PutExpectation(ctx, &stale); !errors.Is(err, store.ErrConflict) {
		t.Fatalf("a write from a stale read: %v, want a conflict", err)
	}
	got, err := s.GetExpectation(ctx, "c1")
	must(t, err)
	if got.Kind != "" || got.Host != "" || got.ActionID != "a1" || got.Reason != "reached: up on h2" || !got.Since.Equal(t0.Add(time.Second)) || got.Version != 2 {
		t.Fatalf("read back: %+v", got)
	}
	must(t, s.CreateCluster(ctx, &model.Cluster{ID: "cx", Name: "cx", ProfileID: "p", InitAt: t0, MaxSize: -1, Status: model.ClusterActive}))
	must(t, s.PutExpectation(ctx, &model.Expectation{ClusterID: "cx", Kind: "start", Since: t0, UpdatedAt: t0}))
	must(t, s.DeleteCluster(ctx, "cx"))
	if got, err := s.GetExpectation(ctx, "cx"); err != nil || got != nil {
		t.Fatalf("after the cluster's delete: %+v %v", got, err)
	}
}

// wantNodeCounts counts a cluster's nodes by status from their rows, the
// GROUP BY the kept counts must equal.
func wantNodeCounts(t *testing.T, s store.Store, clusterID string) map[string]int {
	t.Helper()
	nodes, err := s.ClusterNodes(context.Background(), clusterID)
	must(t, err)
	out := map[string]int{}
	for _, n := range nodes {
		out[n.Status]++
	}
	return out
}

// wantChildCounts counts an action's children by kind and status from
// their rows.
func wantChildCounts(t *testing.T, s store.Store, parentID string) map[string]int {
	t.Helper()
	kids, err := s.Children(context.Background(), parentID)
	must(t, err)
	out := map[string]int{}
	for _, a := range kids {
		out[a.Action+"/"+a.Status]++
	}
	return out
}

func gotChildCounts(t *testing.T, s store.Store, parentID string) map[string]int {
	t.Helper()
	counts, err := s.CountChildren(context.Background(), parentID)
	must(t, err)
	out := map[string]int{}
	for _, c := range counts {
		if c.N <= 0 {
			t.Errorf("CountChildren of %s holds %s/%s = %d; a kept count is positive", parentID, c.Action, c.Status, c.N)
		}
		out[c.Action+"/"+c.Status] += c.N
	}
	return out
}

// checkCounts compares the kept counts of the clusters and parents with
// the rows, and SummarizeChildren with the children.
func checkCounts(t *testing.T, s store.Store, when string, clusters, parents []string) {
	t.Helper()
	ctx := context.Background()
	for _, c := range clusters {
		got, err := s.CountNodesByStatus(ctx, c)
		must(t, err)
		if want := wantNodeCounts(t, s, c); fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("%s: CountNodesByStatus(%s) = %v, the nodes' rows count %v", when, c, got, want)
		}
	}
	for _, p := range parents {
		want := wantChildCounts(t, s, p)
		if got := gotChildCounts(t, s, p); fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("%s: CountChildren(%s) = %v, the children's rows count %v", when, p, got, want)
		}
		sum, err := s.SummarizeChildren(ctx, p)
		must(t, err)
		total, failed, pending := 0, 0, 0
		for k, n := range want {
			total += n
			switch k[strings.Index(k, "/")+1:] {
			case model.ActionSucceeded:
			case model.ActionFailed, model.ActionCancelled:
				failed += n
			default:
				pending += n
			}
		}
		if sum.Total != total || sum.Failed != failed || sum.Pending != pending {
			t.Errorf("%s: SummarizeChildren(%s) = %+v, want total %d, failed %d, pending %d", when, p, sum, total, failed, pending)
		}
	}
}

// testCountsFollowWrites: the counts of nodes by status and of children by
// kind and status (migration 0013) equal a GROUP BY of the rows after a
// random mix of every write the store makes to nodes and actions: inserts,
// whole-row updates (status, cluster and parent moves), batch status
// changes, claims, reclaims, cancels, lifecycle releases and deletes,
// alone and inside transactions, some rolled back.
func testCountsFollowWrites(t *testing.T, s store.Store) {
	ctx := context.Background()
	rng := rand.New(rand.NewPCG(24, 13))
	clusters := []string{uuid.NewString(), uuid.NewString()}
	for i, id := range clusters {
		must(t, s.CreateCluster(ctx, &model.Cluster{ID: id, Name: fmt.Sprintf("counted%d", i), ProfileID: "p", InitAt: t0, MaxSize: -1, Status: model.ClusterActive}))
	}
	parents := []*model.Action{action(model.ClusterCreateAction, "", t0), action(model.ClusterScaleOutAction, "", t0)}
	must(t, s.CreateActions(ctx, parents))
	parentIDs := []string{parents[0].ID, parents[1].ID}
	nodeStatuses := []string{model.NodeInit, model.NodeCreating, model.NodeActive, model.NodeError, model.NodeDeleting}
	actionStatuses := []string{model.ActionInit, model.ActionReady, model.ActionRunning, model.ActionWaiting, model.ActionWaitingLifecycle,
		model.ActionSucceeded, model.ActionFailed}
	kinds := []string{model.NodeCreateAction, model.NodeDeleteAction}
	pick := func(xs []string) string { return xs[rng.IntN(len(xs))] }
	var nodes []*model.Node
	var kids []*model.Action
	seq := 0
	newNodes := func(k int) []*model.Node {
		var out []*model.Node
		for range k {
			seq++
			cl := pick(clusters)
			if rng.IntN(10) == 0 {
				cl = "" // an orphan node is not counted
			}
			out = append(out, &model.Node{ID: uuid.NewString(), Name: fmt.Sprintf("n%d", seq), ClusterID: cl, Index: seq, InitAt: t0, Status: pick(nodeStatuses)})
		}
		return out
	}
	newKids := func(k int) []*model.Action {
		var out []*model.Action
		for range k {
			seq++
			a := action(pick(kinds), pick(parentIDs), t0.Add(time.Duration(seq)*time.Millisecond))
			a.Status = pick(actionStatuses)
			out = append(out, a)
		}
		return out
	}
	someIDs := func(ids []string) []string {
		var out []string
		for _, id := range ids {
			if rng.IntN(3) == 0 {
				out = append(out, id)
			}
		}
		return out
	}
	nodeIDs := func() []string {
		var ids []string
		for _, n := range nodes {
			ids = append(ids, n.ID)
		}
		return ids
	}
	kidIDs := func() []string {
		var ids []string
		for _, a := range kids {
			ids = append(ids, a.ID)
		}
		return ids
	}
	// reload keeps the test's copies equal to the rows after a write that
	// the store made by statement rather than from the copies.
	reload := func() {
		nodes, kids = nodes[:0], kids[:0]
		for _, c := range clusters {
			ns, err := s.ClusterNodes(ctx, c)
			must(t, err)
			nodes = append(nodes, ns...)
		}
		for _, p := range parentIDs {
			ks, err := s.Children(ctx, p)
			must(t, err)
			kids = append(kids, ks...)
		}
	}
	errRollback := errors.New("roll back")
	for step := range 300 {
		switch op := rng.IntN(13); op {
		case 0:
			ns := newNodes(1 + rng.IntN(20))
			must(t, s.CreateNodes(ctx, ns))
		case 1:
			ks := newKids(1 + rng.IntN(20))
			must(t, s.CreateActions(ctx, ks))
		case 2: // whole-row node updates: status, and now and then the cluster
			var ch []*model.Node
			for _, n := range nodes {
				if rng.IntN(4) == 0 {
					n.Status = pick(nodeStatuses)
					if rng.IntN(5) == 0 {
						n.ClusterID = pick(append([]string{""}, clusters...))
					}
					ch = append(ch, n)
				}
			}
			must(t, s.UpdateNodes(ctx, ch))
		case 3:
			must(t, s.SetNodeStatus(ctx, someIDs(nodeIDs()), pick(nodeStatuses), "changed"))
		case 4:
			must(t, s.DeleteNodes(ctx, someIDs(nodeIDs())))
		case 5: // whole-row action updates: status, kind, and the parent
			var ch []*model.Action
			for _, a := range kids {
				if rng.IntN(4) == 0 {
					a.Status = pick(actionStatuses)
					if rng.IntN(5) == 0 {
						a.ParentID = pick(parentIDs)
					}
					ch = append(ch, a)
				}
			}
			must(t, s.UpdateActions(ctx, ch))
		case 6:
			must(t, s.FinishActions(ctx, someIDs(kidIDs()), pick([]string{model.ActionSucceeded, model.ActionFailed, model.ActionCancelled}), "done", t0))
		case 7:
			_, err := s.ClaimActions(ctx, "w1", "h1", t0.Add(time.Hour), true, 1+rng.IntN(10))
			must(t, err)
		case 8:
			_, err := s.ReclaimActions(ctx, "w1", t0)
			must(t, err)
		case 9:
			must(t, s.SignalChildren(ctx, pick(parentIDs), model.SignalCancel, t0))
		case 10:
			_, err := s.ReleaseLifecycle(ctx, pick(parentIDs), "", "released", t0)
			must(t, err)
		case 11:
			must(t, s.DeleteActions(ctx, someIDs(kidIDs())))
		case 12: // a transaction of several writes, committed or rolled back
			undo := rng.IntN(2) == 0
			err := s.InTx(ctx, func(tx store.Store) error {
				if err := tx.CreateNodes(ctx, newNodes(3)); err != nil {
					return err
				}
				if err := tx.SetNodeStatus(ctx, someIDs(nodeIDs()), pick(nodeStatuses), "in a transaction"); err != nil {
					return err
				}
				if err := tx.CreateActions(ctx, newKids(3)); err != nil {
					return err
				}
				if err := tx.FinishActions(ctx, someIDs(kidIDs()), model.ActionSucceeded, "done", t0); err != nil {
					return err
				}
				// Counts read inside the transaction see its own writes.
				if got, err := tx.CountNodesByStatus(ctx, clusters[0]); err != nil {
					return err
				} else if want := wantNodeCounts(t, tx, clusters[0]); fmt.Sprint(got) != fmt.Sprint(want) {
					t.Errorf("step %d, inside a transaction: CountNodesByStatus = %v, rows count %v", step, got, want)
				}
				if undo {
					return errRollback
				}
				return nil
			})
			if undo && !errors.Is(err, errRollback) || !undo && err != nil {
				t.Fatalf("step %d: transaction: %v", step, err)
			}
		}
		reload()
		if step%10 == 9 {
			checkCounts(t, s, fmt.Sprintf("step %d", step), clusters, parentIDs)
			if t.Failed() {
				return
			}
		}
	}
	checkCounts(t, s, "after the mix", clusters, parentIDs)
	// Nodes and children all gone: nothing is counted.
	must(t, s.DeleteNodes(ctx, nodeIDs()))
	must(t, s.DeleteActions(ctx, kidIDs()))
	for _, c := range clusters {
		if got, err := s.CountNodesByStatus(ctx, c); err != nil || len(got) != 0 {
			t.Errorf("CountNodesByStatus(%s) after deleting every node = %v, %v; want none", c, got, err)
		}
	}
	for _, p := range parentIDs {
		if got := gotChildCounts(t, s, p); len(got) != 0 {
			t.Errorf("CountChildren(%s) after deleting every child = %v; want none", p, got)
		}
	}
}

// testCountsConcurrent: writers moving one cluster's nodes and one
// action's children between statuses at once, with readers counting (and
// on PostgreSQL folding the counts' deltas) meanwhile, leave counts equal
// to the rows. On PostgreSQL each writer is its own connection, as several
// agents are.
func testCountsConcurrent(t *testing.T, s store.Store) {
	ctx := context.Background()
	c := &model.Cluster{ID: uuid.NewString(), Name: "contended", ProfileID: "p", InitAt: t0, MaxSize: -1, Status: model.ClusterActive}
	must(t, s.CreateCluster(ctx, c))
	p := action(model.ClusterCreateAction, "", t0)
	must(t, s.CreateActions(ctx, []*model.Action{p}))
	const writers, each = 4, 40
	var nodes [writers][]*model.Node
	var kids [writers][]*model.Action
	for w := range writers {
		for i := range each {
			nodes[w] = append(nodes[w], &model.Node{ID: uuid.NewString(), Name: fmt.Sprintf("w%dn%d", w, i), ClusterID: c.ID, Index: w*each + i, InitAt: t0, Status: model.NodeInit})
			k := action(model.NodeCreateAction, p.ID, t0.Add(time.Duration(w*each+i)*time.Millisecond))
			k.Status = model.ActionInit
			kids[w] = append(kids[w], k)
		}
	}
	statuses := []string{model.NodeCreating, model.NodeActive, model.NodeError, model.NodeUpdating}
	kidStatuses := []string{model.ActionReady, model.ActionRunning, model.ActionSucceeded, model.ActionFailed}
	stop := make(chan struct{})
	var readers, wg sync.WaitGroup
	for range 2 {
		readers.Add(1)
		go func() {
			defer readers.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				if _, err := s.CountNodesByStatus(ctx, c.ID); err != nil {
					t.Errorf("count nodes while writers run: %v", err)
					return
				}
				if _, err := s.CountChildren(ctx, p.ID); err != nil {
					t.Errorf("count children while writers run: %v", err)
					return
				}
			}
		}()
	}
	errs := make(chan error, writers)
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(uint64(w), 24))
			if err := s.CreateNodes(ctx, nodes[w]); err != nil {
				errs <- err
				return
			}
			if err := s.CreateActions(ctx, kids[w]); err != nil {
				errs <- err
				return
			}
			for round := range 25 {
				err := s.InTx(ctx, func(tx store.Store) error {
					var ns []*model.Node
					for _, n := range nodes[w] {
						if rng.IntN(3) == 0 {
							n.Status = statuses[rng.IntN(len(statuses))]
							ns = append(ns, n)
						}
					}
					if err := tx.UpdateNodes(ctx, ns); err != nil {
						return err
					}
					var ids []string
					for _, k := range kids[w] {
						if rng.IntN(3) == 0 {
							ids = append(ids, k.ID)
						}
					}
					return tx.FinishActions(ctx, ids, kidStatuses[rng.IntN(len(kidStatuses))], "round", t0)
				})
				if err != nil {
					errs <- fmt.Errorf("writer %d, round %d: %w", w, round, err)
					return
				}
			}
		}()
	}
	wg.Wait()
	close(stop)
	readers.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	checkCounts(t, s, "after concurrent writers", []string{c.ID}, []string{p.ID})
	total := 0
	got, err := s.CountNodesByStatus(ctx, c.ID)
	must(t, err)
	for _, n := range got {
		total += n
	}
	if total != writers*each {
		t.Errorf("counted %d nodes, want %d", total, writers*each)
	}
}
