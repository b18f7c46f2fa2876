package sqlite_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/grovehq/grove/core/model"
	"github.com/grovehq/grove/core/store"
)

// TestReadsDoNotWaitForWrites: while a write transaction is held open, a
// list through the store's read pool returns at once with the last
// committed state; the transaction's own reads see its writes; after the
// commit the read pool sees them too; and the read pool refuses writes.
// With one connection for everything the list would wait for the
// transaction and miss the deadline.
func TestReadsDoNotWaitForWrites(t *testing.T) {
	ctx := t.Context()
	s := tempStore(t)
	now := time.Now()
	node := func(id string) *model.Node {
		return &model.Node{ID: id, Name: id, ClusterID: "c1", ProfileID: "p", Project: "p1", InitAt: now, Status: "ACTIVE"}
	}
	if err := s.CreateNodes(ctx, []*model.Node{node("committed")}); err != nil {
		t.Fatal(err)
	}
	reads := store.ReadsOf(s)
	if reads == store.Store(s) {
		t.Fatal("the SQLite store has no read pool: ReadsOf returned the store itself")
	}

	inTx := make(chan error, 1)
	release := make(chan struct{})
	done := make(chan error, 1)
	go func() {
		done <- s.InTx(ctx, func(tx store.Store) error {
			if err := tx.CreateNodes(ctx, []*model.Node{node("pending")}); err != nil {
				inTx <- err
				return err
			}
			// Inside a transaction, ReadsOf is the transaction: it reads
			// its own writes.
			_, err := store.ReadsOf(tx).GetNode(ctx, "pending")
			inTx <- err
			<-release
			return err
		})
	}()
	if err := <-inTx; err != nil {
		close(release)
		t.Fatalf("the write transaction does not read its own write: %v", err)
	}

	deadline, cancel := context.WithTimeout(ctx, 5*time.Second)
	nodes, err := reads.ListNodes(deadline, store.ListOpts{Limit: 10})
	cancel()
	close(release)
	if err := <-done; err != nil {
		t.Fatalf("write transaction: %v", err)
	}
	if err != nil {
		t.Fatalf("a list through the read pool waited for the open write transaction: %v", err)
	}
	if len(nodes) != 1 || nodes[0].ID != "committed" {
		t.Errorf("the read pool listed %v during the write, want only the committed node", ids(nodes))
	}
	if _, err := reads.GetNode(ctx, "pending"); err != nil {
		t.Errorf("the read pool does not see the committed write: %v", err)
	}
	if err := reads.CreateNodes(ctx, []*model.Node{node("through-reads")}); err == nil {
		t.Error("a write through the read pool succeeded; its connections must be read-only")
	}
	var nf *store.NotFoundError
	if _, err := s.GetNode(ctx, "through-reads"); !errors.As(err, &nf) {
		t.Errorf("a write through the read pool reached the database: %v", err)
	}
}

func ids(nodes []*model.Node) []string {
	out := make([]string, len(nodes))
	for i, n := range nodes {
		out[i] = n.ID
	}
	return out
}
