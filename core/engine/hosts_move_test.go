package engine

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/grovehq/grove/core/model"
	"github.com/grovehq/grove/core/store/sqlite"
)

// TestMoveOffHostsRechecksTheDrain: a health round reads the hosts before
// it checks its clusters, so by the time it decides to move a drained
// host's nodes the host may have been undrained and an action may have put
// new nodes on it and ended. The move is stored only if, in its own
// transaction, each node is still on its host and the host still drains:
// with the host undrained no CLUSTER_MOVE_NODES is stored; still draining,
// one is.
func TestMoveOffHostsRechecksTheDrain(t *testing.T) {
	ctx := context.Background()
	s, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "grove.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	e := New(s, nil, hclog.NewNullLogger(), Config{})
	now := time.Now()
	setHost := func(name, avail string) {
		t.Helper()
		if err := s.ReportHost(ctx, &model.Host{Name: name, Kind: model.HostAgent, State: model.HostUp, Heartbeat: now}); err != nil {
			t.Fatal(err)
		}
		if err := s.UpdateHost(ctx, &model.Host{Name: name, Availability: avail, UpdatedAt: &now}); err != nil {
			t.Fatal(err)
		}
	}
	setHost("a", model.HostActive)
	setHost("b", model.HostActive)
	if err := s.CreateProfile(ctx, &model.Profile{ID: "p", Name: "p", Type: "local.process", Version: "1.0", CreatedAt: now}); err != nil {
		t.Fatal(err)
	}
	cl := &model.Cluster{ID: "c", Name: "c", ProfileID: "p", InitAt: now, DesiredCapacity: 1, MaxSize: -1, Status: model.ClusterActive}
	if err := s.CreateCluster(ctx, cl); err != nil {
		t.Fatal(err)
	}
	// The node a scale-out placed on a after it was undrained.
	if err := s.CreateNodes(ctx, []*model.Node{{ID: "n", Name: "n", ClusterID: "c", ProfileID: "p", Host: "a", Status: model.NodeActive, InitAt: now}}); err != nil {
		t.Fatal(err)
	}
	// What the round read before: a draining.
	stale := map[string]*model.Host{
		"a": {Name: "a", Kind: model.HostAgent, State: model.HostUp, Availability: model.HostDrain},
		"b": {Name: "b", Kind: model.HostAgent, State: model.HostUp, Availability: model.HostActive},
	}
	if err := e.moveOffHosts(ctx, cl, stale); err != nil {
		t.Fatalf("move with a stale read of the hosts: %v", err)
	}
	if busy, err := s.ActiveActions(ctx, cl.ID); err != nil || len(busy) != 0 {
		t.Fatalf("host a was undrained, yet the round stored %d actions (%v); want none", len(busy), err)
	}

	setHost("a", model.HostDrain)
	if err := e.moveOffHosts(ctx, cl, stale); err != nil {
		t.Fatalf("move off a draining host: %v", err)
	}
	busy, err := s.ActiveActions(ctx, cl.ID)
	if err != nil || len(busy) != 1 || busy[0].Action != model.ClusterMoveNodesAction {
		t.Fatalf("host a drains: actions %v (%v), want one %s", busy, err, model.ClusterMoveNodesAction)
	}
}

// TestMoveReason: a node on a down or unknown host is lost, one on an up
// draining host is drained, any other stays.
func TestMoveReason(t *testing.T) {
	for _, c := range []struct {
		host *model.Host
		want string
	}{
		{nil, moveLost},
		{&model.Host{State: model.HostDown, Availability: model.HostActive}, moveLost},
		{&model.Host{State: model.HostDown, Availability: model.HostDrain}, moveLost},
		{&model.Host{State: model.HostUp, Availability: model.HostDrain}, moveDrained},
		{&model.Host{State: model.HostMaintenance, Availability: model.HostDrain}, ""},
		{&model.Host{State: model.HostUp, Availability: model.HostActive}, ""},
		{&model.Host{State: model.HostUp, Availability: model.HostPause}, ""},
	} {
		if got := moveReason(c.host); got != c.want {
			t.Errorf("moveReason(%+v) = %q, want %q", c.host, got, c.want)
		}
	}
}
