package postgres_test

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/grovehq/grove/core/model"
	"github.com/grovehq/grove/core/store"
	"github.com/grovehq/grove/core/store/postgres"
	"github.com/grovehq/grove/core/store/postgres/pgtest"
	"github.com/grovehq/grove/core/store/storetest"
)

// openNew opens a store on a new database name on srv, closed when the
// test ends.
func openNew(t *testing.T, srv *pgtest.Server, name string) *store.SQL {
	t.Helper()
	s, err := postgres.Open(context.Background(), newDB(t, srv, name))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// newDB creates an empty database on srv and returns its DSN.
func newDB(t *testing.T, srv *pgtest.Server, name string) string {
	t.Helper()
	admin, err := sql.Open("pgx", srv.DSN())
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close()
	if _, err := admin.Exec("CREATE DATABASE " + name); err != nil {
		t.Fatal(err)
	}
	return fmt.Sprintf("host=%s port=%d user=postgres dbname=%s sslmode=disable", srv.Dir, srv.Port, name)
}

func TestConformance(t *testing.T) {
	srv := pgtest.Start(t, 55441)
	n := 0
	storetest.Run(t, func(t *testing.T) store.Store {
		n++
		return openNew(t, srv, fmt.Sprintf("conf%d", n))
	})
}

// TestConcurrentOpen: agents starting together on a fresh database all come
// up on one schema. Before, most rounds of four concurrent opens failed with
// "relation schema_migrations already exists" or a duplicate pg_type.
func TestConcurrentOpen(t *testing.T) {
	srv := pgtest.Start(t, 55442)
	ctx := context.Background()
	latest := store.LatestSchemaVersion()
	for round := range 10 {
		dsn := newDB(t, srv, fmt.Sprintf("race%d", round))
		const agents = 4
		stores := make([]*store.SQL, agents)
		errs := make([]error, agents)
		var wg sync.WaitGroup
		start := make(chan struct{})
		for i := range agents {
			wg.Add(1)
			go func() {
				defer wg.Done()
				<-start
				stores[i], errs[i] = postgres.Open(ctx, dsn)
			}()
		}
		close(start)
		wg.Wait()
		for i, err := range errs {
			if err != nil {
				t.Errorf("round %d, open %d: %v", round, i, err)
				continue
			}
			if v := stores[i].SchemaVersion(); v != latest {
				t.Errorf("round %d, open %d: schema version %d, want %d", round, i, v, latest)
			}
		}
		var versions, applied int64
		db, err := sql.Open("pgx", dsn)
		if err != nil {
			t.Fatal(err)
		}
		if err := db.QueryRow("SELECT COUNT(*), COUNT(DISTINCT version_id) FROM grove_schema_version").Scan(&versions, &applied); err != nil {
			t.Fatal(err)
		}
		db.Close()
		if versions != latest+1 || applied != latest+1 {
			t.Errorf("round %d: %d version rows (%d distinct), want versions 0 to %d once each", round, versions, applied, latest)
		}
		for _, s := range stores {
			s.Close()
		}
	}
}

// TestUpgradeFromLegacySchema: a database migrated by Grove before goose
// keeps working.
func TestUpgradeFromLegacySchema(t *testing.T) {
	srv := pgtest.Start(t, 55443)
	dsn := newDB(t, srv, "legacy")
	db, err := sql.Open("pgx", dsn)
	if err != nil {
		t.Fatal(err)
	}
	storetest.WriteLegacy(t, db)
	db.Close()
	for range 2 {
		s, err := postgres.Open(context.Background(), dsn)
		if err != nil {
			t.Fatal(err)
		}
		storetest.CheckUpgraded(t, s)
		s.Close()
	}
}

// TestRefusesForeignDatabase: a database holding other tables but no Grove
// schema is left alone.
func TestRefusesForeignDatabase(t *testing.T) {
	srv := pgtest.Start(t, 55444)
	dsn := newDB(t, srv, "billing")
	db, err := sql.Open("pgx", dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.Exec("CREATE TABLE invoices (id INTEGER PRIMARY KEY)"); err != nil {
		t.Fatal(err)
	}
	s, err := postgres.Open(context.Background(), dsn)
	if err == nil {
		s.Close()
		t.Fatal("opened a foreign database")
	}
	if !errors.Is(err, store.ErrNotGrove) || !strings.Contains(err.Error(), `"billing"`) || !strings.Contains(err.Error(), "invoices") {
		t.Errorf("error %q does not name the database and its tables, or does not wrap ErrNotGrove", err)
	}
	var n int
	if err := db.QueryRow("SELECT COUNT(*) FROM information_schema.tables WHERE table_schema = current_schema()").Scan(&n); err != nil || n != 1 {
		t.Errorf("the refused database has %d tables (%v), want its one table only", n, err)
	}
}

// TestUnreachable: a server that is not there is an error with the cause.
func TestUnreachable(t *testing.T) {
	dir := t.TempDir()
	s, err := postgres.Open(context.Background(), fmt.Sprintf("host=%s port=1 user=postgres dbname=grove sslmode=disable connect_timeout=2", filepath.Join(dir, "none")))
	if err == nil {
		s.Close()
		t.Fatal("opened a store on no server")
	}
	if !strings.Contains(err.Error(), "connect to PostgreSQL database \"grove\"") || !strings.Contains(err.Error(), "no such file") {
		t.Errorf("error %q does not name the database and the cause", err)
	}
}

// TestCountsFold: on PostgreSQL the kept counts (migration 0013) are delta
// rows that writers append; a read that finds many folds a key's rows into
// one per status, and the counts read the same before and after.
func TestCountsFold(t *testing.T) {
	srv := pgtest.Start(t, 55445)
	ctx := context.Background()
	s := openNew(t, srv, "fold")
	t0 := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	if err := s.CreateCluster(ctx, &model.Cluster{ID: "c1", Name: "c1", ProfileID: "p", InitAt: t0, MaxSize: -1, Status: model.ClusterActive}); err != nil {
		t.Fatal(err)
	}
	var nodes []*model.Node
	for i := range 100 {
		nodes = append(nodes, &model.Node{ID: fmt.Sprintf("n%d", i), Name: fmt.Sprintf("n%d", i), ClusterID: "c1", Index: i, InitAt: t0, Status: model.NodeInit})
	}
	if err := s.CreateNodes(ctx, nodes); err != nil {
		t.Fatal(err)
	}
	// One statement per node, as the engine records a batch's results.
	for _, n := range nodes {
		n.Status = model.NodeActive
		if n.Index%10 == 0 {
			n.Status = model.NodeError
		}
	}
	if err := s.UpdateNodes(ctx, nodes); err != nil {
		t.Fatal(err)
	}
	deltas := func() int {
		var n int
		if err := s.DB().QueryRow("SELECT COUNT(*) FROM node_counts WHERE cluster_id = 'c1'").Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	if n := deltas(); n <= 100 {
		t.Fatalf("%d delta rows after 100 single-node updates; the test needs more than the fold threshold", n)
	}
	want := "map[ACTIVE:90 ERROR:10]"
	for read := range 2 {
		got, err := s.CountNodesByStatus(ctx, "c1")
		if err != nil {
			t.Fatal(err)
		}
		if fmt.Sprint(got) != want {
			t.Errorf("read %d: counts %v, want %s", read, got, want)
		}
	}
	if n := deltas(); n != 2 {
		t.Errorf("%d delta rows after a read folded them, want 2 (one per status)", n)
	}
}

// TestClaimAfterABurstReadsTheReadyIndex: after a create's fork adds
// thousands of children to one parent, beside the ended actions of an
// earlier one, the claim's selection walks a claim index (migration 0015)
// in order and stops at its limit. With the statistics taken before the
// burst the planner took the parent for one with a few children, used its
// (parent, status, action) index and sorted every child for each claim;
// with fresh statistics it walked actions_created, every action ever kept,
// filtering. The store now refreshes statistics after a large insert, and
// orders claims by an expression only the claim indexes yield.
func TestClaimAfterABurstReadsTheReadyIndex(t *testing.T) {
	srv := pgtest.Start(t, 55499)
	ctx := context.Background()
	s := openNew(t, srv, "burst")
	now := time.Now()
	mk := func(parent string, n int) []*model.Action {
		out := make([]*model.Action, n)
		for i := range out {
			out[i] = &model.Action{ID: fmt.Sprintf("%s-%05d", parent, i), Name: "a", Action: model.NodeCreateAction, Target: fmt.Sprintf("%s-n%05d", parent, i),
				Status: model.ActionReady, Cause: model.CauseDerived, CreatedAt: now.Add(time.Duration(i)), Inputs: map[string]any{}, ParentID: parent, Project: "p"}
		}
		return out
	}
	// Only the store and the test refresh the statistics here.
	if _, err := s.DB().ExecContext(ctx, "ALTER TABLE actions SET (autovacuum_enabled = false)"); err != nil {
		t.Fatal(err)
	}
	// The statistics first see an earlier create's ended children, as
	// autovacuum would have taken them before a burst.
	early := mk("early", 3000)
	for _, a := range early {
		a.Status = model.ActionSucceeded
	}
	if err := s.CreateActions(ctx, early); err != nil {
		t.Fatal(err)
	}
	if _, err := s.DB().ExecContext(ctx, "ANALYZE actions"); err != nil {
		t.Fatal(err)
	}
	// PostgreSQL's estimate of the rows of actions, which ANALYZE sets.
	estimate := func() float64 {
		var n float64
		if err := s.DB().QueryRowContext(ctx, "SELECT reltuples FROM pg_class WHERE relname = 'actions'").Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	before := estimate()
	if err := s.InTx(ctx, func(tx store.Store) error { return tx.CreateActions(ctx, mk("burst", 20000)) }); err != nil {
		t.Fatal(err)
	}
	// The insert refreshed the statistics: PostgreSQL now counts the burst.
	after := estimate()
	if before > 3500 || after < 20000 {
		t.Errorf("actions estimated at %.0f rows before the burst and %.0f after it, want about 3,000 and 23,000", before, after)
	}
	var qs []string
	var args [][]any
	s.TraceQueries(func(q string, a []any) { qs, args = append(qs, q), append(args, a) })
	claimed, err := s.ClaimActions(ctx, "e", "h1", now.Add(time.Minute), true, 250)
	s.TraceQueries(nil)
	if err != nil || len(claimed) == 0 {
		t.Fatalf("claim: %d actions, %v", len(claimed), err)
	}
	checked := 0
	for i, q := range qs {
		if !strings.Contains(q, "parent_id = $") || !strings.HasPrefix(q, "SELECT id FROM actions") {
			continue
		}
		checked++
		// The claim runs with generic plans (store.batchTx); the
		// custom plan is checked too, for a claim in a transaction that
		// does not.
		for _, p := range []string{explain(t, s, q, args[i]), explainGeneric(t, s, q, args[i])} {
			// actions_pending, walked from its oldest READY entry, serves
			// too: the parent is the one whose child is the oldest READY
			// action.
			if !strings.Contains(p, "using actions_ready on actions") && !strings.Contains(p, "using actions_pending on actions") || strings.Contains(p, "Sort") {
				t.Errorf("the claim's selection of a parent's children does not walk a claim index in order:\n  %s\n  plan: %s", q, p)
			}
		}
	}
	if checked != 1 {
		t.Fatalf("%d selections of a parent's children traced, want 1:\n%s", checked, strings.Join(qs, "\n"))
	}
	// Later inserts count together, up to as many rows as the agent had
	// inserted at the last refresh (23,000): 12,000 rows leave the
	// statistics as they were, 12,000 more refresh them.
	for i, want := range []float64{after, after + 24000} {
		batch := mk(fmt.Sprintf("more%d", i), 12000)
		if err := s.InTx(ctx, func(tx store.Store) error { return tx.CreateActions(ctx, batch) }); err != nil {
			t.Fatal(err)
		}
		if got := estimate(); got != want {
			t.Errorf("actions estimated at %.0f rows after %d later inserts, want %.0f", got, i+1, want)
		}
	}
}

// TestNodeResultsLookUpTheirNodes: recording a batch's results reads the
// batch's nodes by id, whatever the table holds. The results are joined
// to the nodes they name, and with statistics that count a large
// cluster PostgreSQL joined them to every node instead (a hash join over
// a sequential scan), so that each batch of a create read the whole
// table and a create of n nodes cost n².
func TestNodeResultsLookUpTheirNodes(t *testing.T) {
	srv := pgtest.Start(t, 55498)
	ctx := context.Background()
	s := openNew(t, srv, "results")
	now := time.Now()
	nodes := make([]*model.Node, 10000)
	for i := range nodes {
		nodes[i] = &model.Node{ID: fmt.Sprintf("n%05d", i), Name: fmt.Sprintf("n%05d", i), ClusterID: "c1", ProfileID: "p", Project: "p", Index: i + 1,
			InitAt: now, Status: model.NodeCreating, Data: map[string]any{}}
	}
	if err := s.CreateNodes(ctx, nodes); err != nil {
		t.Fatal(err)
	}
	if _, err := s.DB().ExecContext(ctx, "ANALYZE nodes"); err != nil {
		t.Fatal(err)
	}
	batch := make([]*model.Node, 250)
	for i := range batch {
		n := *nodes[5000+i]
		n.PhysicalID, n.Status, n.StatusReason, n.CreatedAt = "phys-"+n.ID, model.NodeActive, "Creation succeeded", &now
		batch[i] = &n
	}
	var qs []string
	var args [][]any
	s.TraceQueries(func(q string, a []any) { qs, args = append(qs, q), append(args, a) })
	// Explained inside a transaction that is rolled back: EXPLAIN ANALYZE
	// would run the update.
	err := s.InTx(ctx, func(tx store.Store) error {
		if err := tx.RecordNodeResults(ctx, batch); err != nil {
			return err
		}
		return errors.New("roll back")
	})
	s.TraceQueries(nil)
	if err == nil || err.Error() != "roll back" {
		t.Fatalf("record results: %v", err)
	}
	checked := 0
	for i, q := range qs {
		if !strings.Contains(q, "UPDATE nodes") {
			continue
		}
		checked++
		for _, p := range []string{explain(t, s, q, args[i]), explainGeneric(t, s, q, args[i])} {
			if strings.Contains(p, "Seq Scan on nodes") {
				t.Errorf("recording a batch's results reads every node:\n  plan: %s", p)
			}
		}
	}
	if checked != 1 {
		t.Fatalf("%d updates of nodes traced, want 1:\n%s", checked, strings.Join(qs, "\n"))
	}
	got, err := s.GetNode(ctx, batch[0].ID)
	if err != nil || got.Status != model.NodeCreating {
		t.Fatalf("after the rollback the node is %+v, %v; want it CREATING still", got, err)
	}
}

// explain returns PostgreSQL's plan of q, its lines joined by "; ".
func explain(t *testing.T, s *store.SQL, q string, args []any) string {
	t.Helper()
	rows, err := s.DB().QueryContext(context.Background(), "EXPLAIN "+q, args...)
	if err != nil {
		t.Fatal(err)
	}
	return planOf(t, rows)
}

// explainGeneric returns PostgreSQL's generic plan of q, the one planned
// for any values of its parameters, as the store's batch writes run
// (batchTx): q is prepared on a connection that forces generic plans,
// and explained executed with args written out as literals.
func explainGeneric(t *testing.T, s *store.SQL, q string, args []any) string {
	t.Helper()
	ctx := context.Background()
	conn, err := s.DB().Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	lits := make([]string, len(args))
	for i, a := range args {
		switch v := a.(type) {
		case nil:
			lits[i] = "NULL"
		case string:
			lits[i] = "'" + strings.ReplaceAll(v, "'", "''") + "'"
		case int, int64, float64:
			lits[i] = fmt.Sprint(v)
		case []string:
			lits[i] = arrayLiteral(anys(v))
		case []any:
			lits[i] = arrayLiteral(v)
		default:
			t.Fatalf("explainGeneric: argument %d is a %T", i+1, a)
		}
	}
	for _, stmt := range []string{"SET plan_cache_mode = force_generic_plan", "PREPARE generic AS " + q} {
		if _, err := conn.ExecContext(ctx, stmt); err != nil {
			t.Fatalf("%s: %v", stmt, err)
		}
	}
	rows, err := conn.QueryContext(ctx, "EXPLAIN EXECUTE generic("+strings.Join(lits, ", ")+")")
	if err != nil {
		t.Fatal(err)
	}
	plan := planOf(t, rows)
	// The connection goes back to the store's pool: as it was, or the
	// test's later statements would run with generic plans.
	for _, stmt := range []string{"DEALLOCATE generic", "RESET plan_cache_mode"} {
		if _, err := conn.ExecContext(ctx, stmt); err != nil {
			t.Fatalf("%s: %v", stmt, err)
		}
	}
	return plan
}

// arrayLiteral writes an array argument (the store's batch writes pass
// ids and columns as arrays) as an untyped array literal, which takes
// the type of the statement's parameter.
func arrayLiteral(vs []any) string {
	elems := make([]string, len(vs))
	for i, v := range vs {
		if v == nil {
			elems[i] = "NULL"
			continue
		}
		e := strings.NewReplacer(`\`, `\\`, `"`, `\"`).Replace(fmt.Sprint(v))
		elems[i] = `"` + e + `"`
	}
	return "'" + strings.ReplaceAll("{"+strings.Join(elems, ",")+"}", "'", "''") + "'"
}

// anys returns ids as arguments.
func anys(ids []string) []any {
	out := make([]any, len(ids))
	for i, id := range ids {
		out[i] = id
	}
	return out
}

// planOf joins the lines of an EXPLAIN's rows with "; ".
func planOf(t *testing.T, rows *sql.Rows) string {
	t.Helper()
	defer rows.Close()
	var plan []string
	for rows.Next() {
		var line string
		if err := rows.Scan(&line); err != nil {
			t.Fatal(err)
		}
		plan = append(plan, strings.TrimSpace(line))
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return strings.Join(plan, "; ")
}

// TestNodeUpdatesStayOnTheirPage: a create writes a node twice after its
// insert, CREATING and then the driver's results, and both updates are
// heap-only (migration 0018): no index entry is written for them. At the
// 50% fill of migration 0015 the longer second version found no room on
// a third of the pages and was written elsewhere, with an entry in every
// index of nodes.
func TestNodeUpdatesStayOnTheirPage(t *testing.T) {
	srv := pgtest.Start(t, 55496)
	ctx := context.Background()
	s := openNew(t, srv, "room")
	const n = 2000
	now := time.Now()
	id := func(i int) string { return fmt.Sprintf("%08x-7e57-4000-8000-%012x", i, i) }
	nodes := make([]*model.Node, n)
	ids := make([]string, n)
	for i := range nodes {
		// As the engine makes them (stages.go), then writes them through
		// the same store calls as a create of grove.noop nodes.
		ids[i] = id(i)
		nodes[i] = &model.Node{ID: ids[i], Name: "node-" + ids[i][:8], ClusterID: id(1 << 30), ProfileID: id(1 << 29), User: "admin", Project: "default",
			Index: i + 1, InitAt: now, Status: model.NodeInit, StatusReason: "Initializing", Data: map[string]any{}, Metadata: map[string]any{}, Dependents: map[string]any{}}
	}
	if err := s.CreateNodes(ctx, nodes); err != nil {
		t.Fatal(err)
	}
	for start := 0; start < n; start += 250 {
		if err := s.SetNodeStatus(ctx, ids[start:start+250], model.NodeCreating, "Creation in progress"); err != nil {
			t.Fatal(err)
		}
	}
	for start := 0; start < n; start += 250 {
		batch := nodes[start : start+250]
		for _, nd := range batch {
			nd.PhysicalID, nd.Status, nd.StatusReason, nd.CreatedAt, nd.UpdatedAt = "noop-"+nd.ID, model.NodeActive, "Creation succeeded", &now, &now
		}
		if err := s.RecordNodeResults(ctx, batch); err != nil {
			t.Fatal(err)
		}
	}
	// Each backend reports its counts to the statistics within seconds
	// of its transactions, not at their commit.
	var upd, hot int64
	deadline := time.Now().Add(30 * time.Second)
	for {
		err := s.DB().QueryRowContext(ctx, "SELECT n_tup_upd, n_tup_hot_upd FROM pg_stat_user_tables WHERE relname = 'nodes'").Scan(&upd, &hot)
		if err != nil {
			t.Fatal(err)
		}
		if upd >= 2*n || time.Now().After(deadline) {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	if upd != 2*n {
		t.Fatalf("the statistics counted %d updates of nodes within 30 s, want %d", upd, 2*n)
	}
	if hot != upd {
		t.Errorf("%d of %d updates of nodes were heap-only, want all: the others wrote an entry in every index of nodes", hot, upd)
	}
}

// TestBatchWritesPlanOnce: a create's batch writes (claims, results, ends)
// run with generic plans, planned once per connection instead of for each
// call's values, and the setting ends with their transaction: the
// connection goes back to the pool planning as before.
func TestBatchWritesPlanOnce(t *testing.T) {
	srv := pgtest.Start(t, 55495)
	ctx := context.Background()
	s := openNew(t, srv, "generic")
	// One connection: the store's transactions and the checks below share
	// its session, where PostgreSQL keeps the prepared statements.
	s.DB().SetMaxOpenConns(1)
	now := time.Now()
	const n = 600
	actions := make([]*model.Action, n)
	nodes := make([]*model.Node, n)
	for i := range n {
		nodes[i] = &model.Node{ID: fmt.Sprintf("n%04d", i), Name: fmt.Sprintf("n%04d", i), ClusterID: "c", ProfileID: "p", Project: "p", Index: i + 1,
			InitAt: now, Status: model.NodeCreating, Data: map[string]any{}}
		actions[i] = &model.Action{ID: fmt.Sprintf("a%04d", i), Name: "a", Action: model.NodeCreateAction, Target: nodes[i].ID, Status: model.ActionReady,
			Cause: model.CauseDerived, CreatedAt: now.Add(time.Duration(i)), Inputs: map[string]any{}, ParentID: "parent", Project: "p"}
	}
	// In two calls of different sizes: the rows go as arrays, so both
	// are one statement text.
	if err := s.CreateNodes(ctx, nodes[:400]); err != nil {
		t.Fatal(err)
	}
	if err := s.CreateNodes(ctx, nodes[400:]); err != nil {
		t.Fatal(err)
	}
	if err := s.CreateActions(ctx, actions); err != nil {
		t.Fatal(err)
	}
	// Three batches of each write, each of another size: more than one
	// call of each statement, and one text for every count of rows.
	for _, size := range []int{250, 200, 150} {
		claimed, err := s.ClaimActions(ctx, "e", "h", now.Add(time.Minute), true, size)
		if err != nil || len(claimed) != size {
			t.Fatalf("claim: %d actions, %v; want %d", len(claimed), err, size)
		}
		ids := make([]string, len(claimed))
		batch := make([]*model.Node, len(claimed))
		for i, a := range claimed {
			ids[i] = a.ID
			nd, err := s.GetNode(ctx, a.Target)
			if err != nil {
				t.Fatal(err)
			}
			nd.PhysicalID, nd.Status, nd.StatusReason = "phys-"+nd.ID, model.NodeActive, "Creation succeeded"
			batch[i] = nd
		}
		if err := s.RecordNodeResults(ctx, batch); err != nil {
			t.Fatal(err)
		}
		if err := s.FinishActions(ctx, ids, model.ActionSucceeded, "Action completed successfully.", now); err != nil {
			t.Fatal(err)
		}
	}
	writes := map[string]string{
		"the claim's selection": "SELECT id FROM actions WHERE status = 'READY' AND parent_id = $",
		"the claim's update":    "UPDATE actions SET status = $1, status_reason = $2, owner = $3",
		"the results' update":   "UPDATE nodes SET physical_id = r.physical_id",
		"the ends' update":      "UPDATE actions SET status = $1, status_reason = $2, owner = ''",
	}
	for what, prefix := range writes {
		var generic, custom int
		err := s.DB().QueryRowContext(ctx, "SELECT COALESCE(SUM(generic_plans), 0), COALESCE(SUM(custom_plans), 0) FROM pg_prepared_statements WHERE starts_with(statement, $1)", prefix).Scan(&generic, &custom)
		if err != nil {
			t.Fatal(err)
		}
		if generic == 0 || custom != 0 {
			t.Errorf("%s was planned %d times for its values and %d times generically, want 0 and at least 1", what, custom, generic)
		}
	}
	writes["the nodes' insert"] = "INSERT INTO nodes"
	for what, prefix := range writes {
		var texts int
		if err := s.DB().QueryRowContext(ctx, "SELECT count(*) FROM pg_prepared_statements WHERE starts_with(statement, $1)", prefix).Scan(&texts); err != nil {
			t.Fatal(err)
		}
		if texts != 1 {
			t.Errorf("%s was prepared as %d statement texts for batches of different sizes, want 1", what, texts)
		}
	}
	var mode string
	if err := s.DB().QueryRowContext(ctx, "SHOW plan_cache_mode").Scan(&mode); err != nil {
		t.Fatal(err)
	}
	if mode != "auto" {
		t.Errorf("after the writes the connection plans with %q, want auto: the setting outlived its transactions", mode)
	}
}
