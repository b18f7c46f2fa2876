package engine_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/grovehq/grove/core/engine"
	"github.com/grovehq/grove/core/model"
)

// TestCreateOnFullDiskLeavesClusterError fills SQLite's database to its
// limit (max_page_count: SQLite's own "database or disk is full", the error
// a full disk gives) while a cluster's nodes are created: the creation
// fails, and the cluster ends ERROR with that reason instead of staying
// INIT as if nothing had been tried.
func TestCreateOnFullDiskLeavesClusterError(t *testing.T) {
	h := newHarness(t, nil)
	h.profile("p")
	db := h.store.DB()
	var pages int
	if err := db.QueryRow("PRAGMA page_count").Scan(&pages); err != nil {
		t.Fatal(err)
	}
	// Room for the cluster and its action, not for 500 nodes.
	if _, err := db.Exec(fmt.Sprintf("PRAGMA max_page_count = %d", pages+4)); err != nil {
		t.Fatal(err)
	}
	desired := 500
	cl, a, err := h.eng.CreateCluster(h.ctx(), caller, engine.ClusterCreate{Name: "full", Profile: "p", DesiredCapacity: &desired})
	end := h.wait(a, err)
	if end.Status != model.ActionFailed || !strings.Contains(end.StatusReason, "full") {
		t.Errorf("creation on a full disk ended %s %q, want FAILED saying the disk is full", end.Status, end.StatusReason)
	}
	got := h.getCluster(cl.ID)
	if got.Status != model.ClusterError || !strings.HasPrefix(got.StatusReason, "Cluster creation failed: ") || !strings.Contains(got.StatusReason, "full") {
		t.Errorf("cluster after a creation on a full disk: %s %q, want ERROR with the reason", got.Status, got.StatusReason)
	}
}
