package engine_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/grovehq/grove/core/engine"
	"github.com/grovehq/grove/core/model"
	"github.com/grovehq/grove/core/store"
)

// lateBeats is a store whose heartbeat, once armed, waits for the test,
// and whose heartbeat cut short by its context is applied later, as a
// database applies a statement the client has given up on.
type lateBeats struct {
	store.Store
	mu      sync.Mutex
	armed   bool
	entered chan struct{}
	release chan struct{}
	late    []*model.Host
}

func (s *lateBeats) ReportHost(ctx context.Context, h *model.Host) error {
	s.mu.Lock()
	armed := s.armed
	s.armed = false
	s.mu.Unlock()
	if !armed {
		return s.Store.ReportHost(ctx, h)
	}
	close(s.entered)
	<-s.release
	// Stop cancels the engine's context at once; a second is far more
	// than it takes.
	select {
	case <-ctx.Done():
		s.mu.Lock()
		s.late = append(s.late, h)
		s.mu.Unlock()
		return ctx.Err()
	case <-time.After(time.Second):
		return s.Store.ReportHost(ctx, h)
	}
}

// TestStopLeavesTheHostInMaintenance: an agent stopping while a heartbeat
// is being written leaves its host in maintenance. Were the heartbeat cut
// by the stop, the database could apply it after the maintenance and bring
// the host back up with a heartbeat soon old: its peers would take it for
// down and take its failover clusters over (seen once in an e2e run under
// load, TestFailoverMaintenance).
func TestStopLeavesTheHostInMaintenance(t *testing.T) {
	h := newIdleHarness(t, nil)
	beats := &lateBeats{Store: h.store, entered: make(chan struct{}), release: make(chan struct{})}
	cfg := engine.Config{EngineID: "stopping", CheckInterval: -1, Poll: 20 * time.Millisecond, Now: h.clock.Now, SecretsKey: testSecretsKey,
		HostName: "h-stop", HeartbeatInterval: 10 * time.Millisecond, HostDownTimeout: 10 * time.Second}
	e := engine.New(beats, h.plugins, hclog.NewNullLogger(), cfg)
	if err := e.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	beats.mu.Lock()
	beats.armed = true
	beats.mu.Unlock()
	select {
	case <-beats.entered:
	case <-time.After(10 * time.Second):
		t.Fatal("no heartbeat within 10s")
	}
	stopped := make(chan struct{})
	go func() { e.Stop(); close(stopped) }()
	close(beats.release)
	select {
	case <-stopped:
	case <-time.After(30 * time.Second):
		t.Fatal("the engine did not stop within 30s")
	}
	// What the database applies late lands now.
	for _, late := range beats.late {
		if err := h.store.ReportHost(context.Background(), late); err != nil {
			t.Fatal(err)
		}
	}
	host, err := h.store.GetHost(context.Background(), "h-stop")
	if err != nil {
		t.Fatal(err)
	}
	if host.State != model.HostMaintenance {
		t.Errorf("host after a clean stop is %s, want %s (heartbeats applied after the stop: %d)", host.State, model.HostMaintenance, len(beats.late))
	}
}
