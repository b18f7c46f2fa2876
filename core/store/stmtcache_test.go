package store_test

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/grovehq/grove/core/model"
	"github.com/grovehq/grove/core/store"
	"github.com/grovehq/grove/core/store/sqlite"
)

// TestReadPoolKeepsStatementsPrepared: the read pool prepares a query
// once and runs it again, keeps no more statements than its bound, and
// answers queries past the bound (prepared each time) the same.
func TestReadPoolKeepsStatementsPrepared(t *testing.T) {
	ctx := context.Background()
	st, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "grove.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	if err := st.CreateProfile(ctx, &model.Profile{ID: "p1", Name: "web", Type: "grove.noop", Version: "1.0", CreatedAt: time.Now()}); err != nil {
		t.Fatal(err)
	}
	var nodes []*model.Node
	for i := range 3 {
		nodes = append(nodes, &model.Node{ID: fmt.Sprintf("n%d", i), Name: fmt.Sprintf("n%d", i), ProfileID: "p1", InitAt: time.Unix(int64(i), 0)})
	}
	if err := st.CreateNodes(ctx, nodes); err != nil {
		t.Fatal(err)
	}
	r := store.ReadsOf(st)
	for range 5 {
		if p, err := r.GetProfile(ctx, "p1"); err != nil || p.Name != "web" {
			t.Fatalf("GetProfile = %v, %v", p, err)
		}
	}
	if n := st.CachedStmts(); n != 1 {
		t.Errorf("after one query run five times the pool holds %d statements, want 1", n)
	}
	if _, err := r.GetProfile(ctx, "nobody"); err == nil {
		t.Error("a prepared GetProfile found a profile that does not exist")
	}
	// Each limit is a distinct text (the limit is written into it).
	for limit := 1; limit <= store.MaxCachedStmts+10; limit++ {
		ns, err := r.ListNodeViews(ctx, store.ListOpts{Limit: limit})
		if err != nil {
			t.Fatal(err)
		}
		if want := min(limit, 3); len(ns) != want || ns[0].ID != "n0" {
			t.Fatalf("limit %d: %d nodes, want %d", limit, len(ns), want)
		}
	}
	if n := st.CachedStmts(); n != store.MaxCachedStmts {
		t.Errorf("the pool holds %d statements, want its bound %d", n, store.MaxCachedStmts)
	}
}

// TestWritesKeepStatementsPrepared: SQLite's writer keeps the statements
// its transactions run prepared, though a transaction holds the writer's
// one connection and cannot prepare them for the pool: they are prepared
// once it is over, and later transactions run them again; what the
// prepared statements write is what was asked.
func TestWritesKeepStatementsPrepared(t *testing.T) {
	ctx := context.Background()
	st, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "grove.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	var nodes []*model.Node
	var ids []string
	for i := range 3 {
		nodes = append(nodes, &model.Node{ID: fmt.Sprintf("n%d", i), Name: fmt.Sprintf("n%d", i), ProfileID: "p1", InitAt: time.Unix(int64(i), 0), Status: model.NodeInit})
		ids = append(ids, nodes[i].ID)
	}
	if err := st.CreateNodes(ctx, nodes); err != nil {
		t.Fatal(err)
	}
	setTwice := func(first, second string) {
		t.Helper()
		if err := st.InTx(ctx, func(tx store.Store) error {
			if err := tx.SetNodeStatus(ctx, ids, first, "first"); err != nil {
				return err
			}
			return tx.SetNodeStatus(ctx, ids, second, "second")
		}); err != nil {
			t.Fatal(err)
		}
		got, err := st.GetNodes(ctx, ids)
		if err != nil {
			t.Fatal(err)
		}
		for _, n := range got {
			if n.Status != second || n.StatusReason != "second" {
				t.Fatalf("node %s is %s (%s), want %s (second)", n.ID, n.Status, n.StatusReason, second)
			}
		}
	}
	setTwice(model.NodeCreating, model.NodeActive)
	kept := st.CachedWriteStmts()
	if kept == 0 {
		t.Fatal("the writer kept no statement prepared after a transaction")
	}
	for range 3 {
		setTwice(model.NodeUpdating, model.NodeError)
	}
	if n := st.CachedWriteStmts(); n != kept {
		t.Errorf("the writer keeps %d statements after the same transaction ran again, want %d", n, kept)
	}
	// Outside a transaction the writer's statements run prepared too.
	if err := st.SetNodeStatus(ctx, ids, model.NodeActive, "again"); err != nil {
		t.Fatal(err)
	}
	if got, err := st.GetNode(ctx, ids[0]); err != nil || got.Status != model.NodeActive || got.StatusReason != "again" {
		t.Fatalf("after a write outside a transaction: %+v, %v", got, err)
	}
	// Long texts fill the cache's budget of text before its count: past
	// it they run unprepared, and what they write is still written.
	for size := 300; size < 340; size++ {
		batch := make([]*model.Node, size)
		for i := range batch {
			batch[i] = &model.Node{ID: fmt.Sprintf("b%d-%d", size, i), Name: "b", ProfileID: "p1", InitAt: time.Unix(0, 0)}
		}
		if err := st.InTx(ctx, func(tx store.Store) error { return tx.CreateNodes(ctx, batch) }); err != nil {
			t.Fatal(err)
		}
		if _, err := st.GetNode(ctx, batch[size-1].ID); err != nil {
			t.Fatalf("the last node of a batch of %d: %v", size, err)
		}
	}
	if text := st.CachedWriteText(); text > store.MaxCachedText || st.CachedWriteStmts() >= kept+40 {
		t.Errorf("the writer keeps %d statements of %d bytes of text, want at most %d bytes", st.CachedWriteStmts(), text, store.MaxCachedText)
	}
}
