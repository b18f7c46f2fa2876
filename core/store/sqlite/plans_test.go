package sqlite_test

import (
	"cmp"
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/grovehq/grove/core/model"
	"github.com/grovehq/grove/core/store"
	"github.com/grovehq/grove/core/store/sqlite"
)

// TestHotQueryPlans: the queries behind the reads users page through and
// the engine's claims walk an index in the order they return, so none
// sorts its whole match in a temporary B-tree on SQLite. A later change to
// a query or an index that brings the sort back fails here, naming the
// query and its plan.
func TestHotQueryPlans(t *testing.T) {
	ctx := context.Background()
	s := tempStore(t)
	now := time.Now()
	cl := &model.Cluster{ID: "c1", Name: "c1", ProfileID: "p", Project: "p1", InitAt: now, MaxSize: -1, Status: "ACTIVE"}
	if err := s.CreateCluster(ctx, cl); err != nil {
		t.Fatal(err)
	}
	n := &model.Node{ID: "n1", Name: "n1", ClusterID: "c1", ProfileID: "p", Project: "p1", InitAt: now, Status: "ACTIVE", Data: map[string]any{}}
	a := &model.Action{ID: "a1", Name: "a1", Action: "NODE_CREATE", Target: "n1", Status: model.ActionSucceeded, Cause: model.CauseDerived, CreatedAt: now, Inputs: map[string]any{},
		ParentID: "p1", Project: "p1"}
	ev := &model.Event{ID: "e1", Timestamp: now, OID: "n1", OType: "NODE", ClusterID: "c1", Project: "p1", Action: "NODE_CREATE", Level: model.LevelInfo}
	if err := s.CreateNodes(ctx, []*model.Node{n}); err != nil {
		t.Fatal(err)
	}
	if err := s.CreateActions(ctx, []*model.Action{a}); err != nil {
		t.Fatal(err)
	}
	if err := s.CreateEvents(ctx, []*model.Event{ev}); err != nil {
		t.Fatal(err)
	}

	countedFrom := map[string]string{
		"a cluster's nodes by status":     "node_counts",
		"an action's children counted":    "action_counts",
		"an action's children summarised": "action_counts",
	}
	type traced struct {
		q    string
		args []any
	}
	var seen []traced
	s.TraceQueries(func(q string, args []any) { seen = append(seen, traced{q, args}) })
	defer s.TraceQueries(nil)
	page := func(o store.ListOpts) store.ListOpts { o.Limit = 100; return o }
	byCluster := map[string][]string{"cluster_id": {"c1"}}
	for name, call := range map[string]func() error{
		"nodes":                func() error { _, err := s.ListNodes(ctx, page(store.ListOpts{})); return err },
		"nodes of a project":   func() error { _, err := s.ListNodes(ctx, page(store.ListOpts{Project: "p1"})); return err },
		"nodes of a cluster":   func() error { _, err := s.ListNodes(ctx, page(store.ListOpts{Filters: byCluster})); return err },
		"nodes after a marker": func() error { _, err := s.ListNodes(ctx, page(store.ListOpts{Marker: "n1"})); return err },
		"cluster nodes after marker": func() error {
			_, err := s.ListNodes(ctx, page(store.ListOpts{Filters: byCluster, Marker: "n1"}))
			return err
		},
		"actions":                     func() error { _, err := s.ListActions(ctx, page(store.ListOpts{})); return err },
		"actions after a marker":      func() error { _, err := s.ListActions(ctx, page(store.ListOpts{Marker: "a1"})); return err },
		"events":                      func() error { _, err := s.ListEvents(ctx, page(store.ListOpts{})); return err },
		"events of a cluster":         func() error { _, err := s.ListEvents(ctx, page(store.ListOpts{Filters: byCluster})); return err },
		"clusters":                    func() error { _, err := s.ListClusters(ctx, page(store.ListOpts{})); return err },
		"a cluster's nodes":           func() error { _, err := s.ClusterNodes(ctx, "c1"); return err },
		"a cluster's node ids":        func() error { _, err := s.ClusterNodeIDs(ctx, "c1", 1001); return err },
		"a cluster's nodes to check":  func() error { _, err := s.CheckNodes(ctx, "c1"); return err },
		"a cluster's nodes by status": func() error { _, err := s.CountNodesByStatus(ctx, "c1"); return err },
		"a cluster's nodes by index after a marker": func() error {
			_, err := s.ListNodes(ctx, page(store.ListOpts{Filters: byCluster, Sort: []store.SortKey{{Key: "index"}}, Marker: "n1"}))
			return err
		},
		"an action's child ids":           func() error { _, err := s.ChildIDs(ctx, "p1", 1001); return err },
		"an action's children counted":    func() error { _, err := s.CountChildren(ctx, "p1"); return err },
		"an action's children summarised": func() error { _, err := s.SummarizeChildren(ctx, "p1"); return err },
		"an action's children after a marker": func() error {
			_, err := s.ListActions(ctx, page(store.ListOpts{Project: "p1", Filters: map[string][]string{"parent_id": {"p1"}}, Marker: "a1"}))
			return err
		},
		"top-level claim":  func() error { _, err := s.ClaimActions(ctx, "e", "h1", now.Add(time.Minute), false, 10); return err },
		"node-level claim": func() error { _, err := s.ClaimActions(ctx, "e", "h1", now.Add(time.Minute), true, 10); return err },
	} {
		seen = seen[:0]
		if err := call(); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if len(seen) == 0 {
			t.Fatalf("%s ran no traced query", name)
		}
		for _, q := range seen {
			if !strings.Contains(q.q, "ORDER BY") && !strings.Contains(q.q, "GROUP BY") {
				continue
			}
			p := explain(t, s, q.q, q.args)
			if strings.Contains(p, "TEMP B-TREE") {
				t.Errorf("%s sorts in a temporary B-tree:\n  %s\n  plan: %s", name, q.q, p)
			}
			// Counts read the kept counts (migration 0013), a row per
			// status, never the nodes' or children's index entries.
			if table := countedFrom[name]; table != "" && (!strings.Contains(p, "SEARCH "+table+" ") || strings.Contains(p, " nodes ") || strings.Contains(p, " actions ")) {
				t.Errorf("%s does not read only %s by its key:\n  %s\n  plan: %s", name, table, q.q, p)
			}
		}
	}
}

// TestHostNodesPlan: the health round's look for a cluster's nodes on a
// host walks the nodes_host index, so a cluster without such nodes costs
// an empty range rather than a read of every row it has.
func TestHostNodesPlan(t *testing.T) {
	ctx := context.Background()
	s := tempStore(t)
	var q string
	var args []any
	s.TraceQueries(func(query string, a []any) { q, args = query, a })
	if _, err := s.ClusterHostNodes(ctx, "c1"); err != nil {
		t.Fatal(err)
	}
	s.TraceQueries(nil)
	if p := explain(t, s, q, args); !strings.Contains(p, "INDEX nodes_host") {
		t.Errorf("ClusterHostNodes does not walk nodes_host:\n  %s\n  plan: %s", q, p)
	}
}

// TestPhysicalHoldersPlan: the check of a driver's batch of physical ids
// against the nodes holding them walks the node_physical_id index and
// looks each node up by id; without them every batch of results read the
// whole nodes table, and a create of n nodes cost n².
func TestPhysicalHoldersPlan(t *testing.T) {
	ctx := context.Background()
	s := tempStore(t)
	var q string
	var args []any
	s.TraceQueries(func(query string, a []any) { q, args = query, a })
	if _, err := s.PhysicalHolders(ctx, []string{"vm-1", "vm-2"}); err != nil {
		t.Fatal(err)
	}
	s.TraceQueries(nil)
	if p := explain(t, s, q, args); !strings.Contains(p, "INDEX node_physical_id") || strings.Contains(p, "SCAN ") {
		t.Errorf("PhysicalHolders does not walk node_physical_id:\n  %s\n  plan: %s", q, p)
	}
}

// TestWritesByIDLookUpTheirIDs: the statements that name the actions they
// claim, renew or finish by id look those ids up, whatever else they
// check. Without statistics SQLite preferred the index of the status they
// also check, and read every READY action in each claim: creating n nodes
// cost n². The batch is as large as the engine's.
func TestWritesByIDLookUpTheirIDs(t *testing.T) {
	ctx := context.Background()
	s := tempStore(t)
	now := time.Now()
	const ready = 600
	actions := make([]*model.Action, ready)
	for i := range actions {
		actions[i] = &model.Action{ID: fmt.Sprintf("a%04d", i), Name: "a", Action: "NODE_CREATE", Target: fmt.Sprintf("n%04d", i), Status: model.ActionReady,
			Cause: model.CauseDerived, CreatedAt: now.Add(time.Duration(i)), Inputs: map[string]any{}, ParentID: "parent", Project: "p1"}
	}
	if err := s.CreateActions(ctx, actions); err != nil {
		t.Fatal(err)
	}
	var seen []string
	var args [][]any
	s.TraceQueries(func(q string, a []any) { seen, args = append(seen, q), append(args, a) })
	claimed, err := s.ClaimActions(ctx, "e", "h1", now.Add(time.Minute), true, 250)
	if err != nil || len(claimed) != 250 {
		t.Fatalf("claim: %d actions, %v", len(claimed), err)
	}
	for i := 1; i < len(claimed); i++ {
		if claimed[i].CreatedAt.Before(claimed[i-1].CreatedAt) {
			t.Fatalf("claimed actions out of creation order at %d", i)
		}
	}
	ids := make([]string, len(claimed))
	for i, a := range claimed {
		ids[i] = a.ID
	}
	if err := s.RenewLeases(ctx, "e", ids, now.Add(2*time.Minute)); err != nil {
		t.Fatal(err)
	}
	if err := s.FinishActions(ctx, ids, model.ActionSucceeded, "done", now); err != nil {
		t.Fatal(err)
	}
	s.TraceQueries(nil)
	checked := 0
	for i, q := range seen {
		if !strings.Contains(q, "id IN (") {
			continue
		}
		checked++
		p := explain(t, s, q, args[i])
		if !strings.Contains(p, "sqlite_autoindex_actions_1 (id=?)") || strings.Contains(p, "TEMP B-TREE") {
			t.Errorf("a statement naming actions by id does not look them up by id:\n  %s\n  plan: %s", q, p)
		}
	}
	if checked < 3 {
		t.Errorf("%d statements naming actions by id traced, want the claim's, the renewal's and the finish's", checked)
	}
}

// TestPendingActionsPlans: what looks for actions that wait or run (the
// claims, the reclaim of expired leases, the metrics' counts) reads
// migration 0015's partial indexes, which hold only those actions, and a
// node's actions are found through actions_target. A query that lost the
// partial index's condition, or stated it with a parameter, would read
// every action ever kept.
func TestPendingActionsPlans(t *testing.T) {
	ctx := context.Background()
	s := tempStore(t)
	now := time.Now()
	child := &model.Action{ID: "a1", Name: "a1", Action: "NODE_CREATE", Target: "n1", Status: model.ActionReady, Cause: model.CauseDerived,
		CreatedAt: now, Inputs: map[string]any{}, ParentID: "p1", Project: "p1"}
	if err := s.CreateActions(ctx, []*model.Action{child}); err != nil {
		t.Fatal(err)
	}
	for name, c := range map[string]struct {
		call  func() error
		index []string // the indexes its statements read, in order
	}{
		"node-level claim": {func() error { _, err := s.ClaimActions(ctx, "e", "h1", now.Add(time.Minute), true, 250); return err },
			[]string{"actions_pending", "actions_ready", "sqlite_autoindex_actions_1"}},
		"top-level claim": {func() error { _, err := s.ClaimActions(ctx, "e", "h1", now.Add(time.Minute), false, 1); return err },
			[]string{"actions_ready"}},
		"reclaim":                {func() error { _, err := s.ReclaimActions(ctx, "e", now); return err }, []string{"actions_pending"}},
		"metrics' action counts": {func() error { _, err := s.ActionCounts(ctx); return err }, []string{"actions_pending"}},
		"a node's active actions": {func() error { _, err := s.ActiveActions(ctx, "n1"); return err },
			[]string{"actions_target"}},
	} {
		qs, args, err := traced(s, c.call)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		plans := make([]string, len(qs))
		for i, q := range qs {
			plans[i] = q + "\n  plan: " + explain(t, s, q, args[i])
		}
		if len(plans) != len(c.index) {
			t.Fatalf("%s ran %d statements, want %d:\n%s", name, len(plans), len(c.index), strings.Join(plans, "\n"))
		}
		for i, p := range plans {
			if !strings.Contains(p, "SEARCH actions USING INDEX "+c.index[i]+" ") {
				t.Errorf("%s does not read %s:\n  %s", name, c.index[i], p)
			}
		}
	}
}

// TestChildrenByStatusPlans: what looks for a parent's children in one
// status finds them through an index, though no index holds a parent's
// children by status any more (migration 0016): a parent's first failed
// child, which GET /v1/actions/{id} shows, reads actions_failed, and the
// rare writes that cancel or release a parent's waiting children
// read actions_pending or the parent's children, never the whole table.
func TestChildrenByStatusPlans(t *testing.T) {
	ctx := context.Background()
	s := tempStore(t)
	now := time.Now()
	failed := &model.Action{ID: "a1", Name: "a1", Action: "NODE_CREATE", Target: "n1", Status: model.ActionFailed, StatusReason: "boom",
		Cause: model.CauseDerived, CreatedAt: now, Inputs: map[string]any{}, ParentID: "p1", Project: "p1"}
	if err := s.CreateActions(ctx, []*model.Action{failed}); err != nil {
		t.Fatal(err)
	}
	for name, c := range map[string]struct {
		call  func() error
		index string // the index the statement on actions must read, "" for any
	}{
		"a parent's first failed child": {func() error {
			sum, err := s.SummarizeChildren(ctx, "p1")
			if err == nil && sum.FirstFailure != "boom" {
				err = fmt.Errorf("first failure %q, want boom", sum.FirstFailure)
			}
			return err
		}, "actions_failed"},
		"a cancel of a parent's children":    {func() error { return s.SignalChildren(ctx, "p1", model.SignalCancel, now) }, ""},
		"a release of a lifecycle hook wait": {func() error { _, err := s.ReleaseLifecycle(ctx, "p1", "", "done", now); return err }, ""},
	} {
		qs, args, err := traced(s, c.call)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		checked := 0
		for i, q := range qs {
			if !strings.Contains(q, "FROM actions") && !strings.HasPrefix(q, "UPDATE actions") {
				continue
			}
			checked++
			p := explain(t, s, q, args[i])
			if !strings.Contains(p, "SEARCH actions USING INDEX "+c.index) || strings.Contains(p, "SCAN actions") {
				t.Errorf("%s does not search actions through %q:\n  %s\n  plan: %s", name, cmp.Or(c.index, "an index"), q, p)
			}
		}
		if checked == 0 {
			t.Errorf("%s ran no traced statement on actions", name)
		}
	}
}

// traced runs call and returns the queries the store traced meanwhile,
// with their arguments, and call's error.
func traced(s *store.SQL, call func() error) (qs []string, args [][]any, err error) {
	s.TraceQueries(func(q string, a []any) { qs, args = append(qs, q), append(args, a) })
	defer s.TraceQueries(nil)
	err = call()
	return qs, args, err
}

// tempStore opens a new SQLite store in the test's temporary directory,
// closed when the test ends.
func tempStore(t *testing.T) *store.SQL {
	t.Helper()
	s, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "grove.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// explain returns SQLite's plan of q, its steps joined by "; ".
func explain(t *testing.T, s *store.SQL, q string, args []any) string {
	t.Helper()
	rows, err := s.DB().QueryContext(context.Background(), "EXPLAIN QUERY PLAN "+q, args...)
	if err != nil {
		t.Fatalf("explain %s: %v", q, err)
	}
	defer rows.Close()
	var plan []string
	for rows.Next() {
		var id, parent, unused int
		var detail string
		if err := rows.Scan(&id, &parent, &unused, &detail); err != nil {
			t.Fatal(err)
		}
		plan = append(plan, detail)
	}
	return strings.Join(plan, "; ")
}
