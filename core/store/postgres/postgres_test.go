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
		s, err := postgres.Open(context.Background(), newDB(t, srv, fmt.Sprintf("conf%d", n)))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		return s
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
	s, err := postgres.Open(ctx, newDB(t, srv, "fold"))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
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
