package sqlite_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/grovehq/grove/core/model"
)

// TestCountsLeaveNoRows: on SQLite the kept counts (migration 0013) are one
// row per key and status; a status change leaves its old count at zero,
// and deleting the nodes and children of a key removes all of its rows,
// so deleted clusters and reaped actions do not accumulate counts.
func TestCountsLeaveNoRows(t *testing.T) {
	ctx := t.Context()
	s := tempStore(t)
	now := time.Now()
	rows := func(table string) int {
		var n int
		if err := s.DB().QueryRowContext(ctx, "SELECT COUNT(*) FROM "+table).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	var nodes []*model.Node
	var kids []*model.Action
	var ids, kidIDs []string
	for i := range 10 {
		nodes = append(nodes, &model.Node{ID: fmt.Sprintf("n%d", i), Name: "n", ClusterID: "c1", Index: i, InitAt: now, Status: model.NodeInit})
		kids = append(kids, &model.Action{ID: fmt.Sprintf("a%d", i), Name: "a", Action: model.NodeCreateAction, Target: nodes[i].ID, ParentID: "p1",
			Status: model.ActionReady, CreatedAt: now})
		ids, kidIDs = append(ids, nodes[i].ID), append(kidIDs, kids[i].ID)
	}
	if err := s.CreateNodes(ctx, nodes); err != nil {
		t.Fatal(err)
	}
	if err := s.CreateActions(ctx, kids); err != nil {
		t.Fatal(err)
	}
	if err := s.SetNodeStatus(ctx, ids, model.NodeActive, ""); err != nil {
		t.Fatal(err)
	}
	if err := s.FinishActions(ctx, kidIDs, model.ActionSucceeded, "", now); err != nil {
		t.Fatal(err)
	}
	if got, err := s.CountNodesByStatus(ctx, "c1"); err != nil || fmt.Sprint(got) != "map[ACTIVE:10]" {
		t.Errorf("counts after the status change: %v, %v; want 10 ACTIVE and no zero", got, err)
	}
	if n := rows("node_counts"); n != 2 {
		t.Errorf("%d node count rows after INIT -> ACTIVE, want 2 (ACTIVE and a zero INIT)", n)
	}
	if err := s.DeleteNodes(ctx, ids[:5]); err != nil {
		t.Fatal(err)
	}
	if n := rows("node_counts"); n != 1 {
		t.Errorf("%d node count rows after a delete, want 1 (the zero is dropped)", n)
	}
	if err := s.DeleteNodes(ctx, ids[5:]); err != nil {
		t.Fatal(err)
	}
	if err := s.DeleteActions(ctx, kidIDs); err != nil {
		t.Fatal(err)
	}
	if n, m := rows("node_counts"), rows("action_counts"); n != 0 || m != 0 {
		t.Errorf("%d node and %d child count rows after every node and child is deleted, want none", n, m)
	}
}
