package engine

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/grovehq/grove/core/model"
	"github.com/grovehq/grove/core/store/sqlite"
	"github.com/grovehq/grove/plugins/sdk"
)

// TestPlaceOnHosts: a host-local node goes to the host its placement data
// names when that host takes nodes, otherwise to the up and active agent
// host with the fewest nodes; down, maintenance, paused and draining hosts
// take none; with no agent host recorded nodes get none.
func TestPlaceOnHosts(t *testing.T) {
	ctx := context.Background()
	s, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "grove.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	e := &Engine{}
	free := []*model.Node{{ID: "x", Data: map[string]any{}}}
	if err := e.placeOnHosts(ctx, s, free); err != nil || free[0].Host != "" {
		t.Fatalf("without agent hosts: host %q, %v; want none", free[0].Host, err)
	}
	now := time.Now()
	for _, h := range []struct{ name, state, avail string }{
		{"busy", model.HostUp, model.HostActive},
		{"idle", model.HostUp, model.HostActive},
		{"dead", model.HostDown, model.HostActive},
		{"fixing", model.HostMaintenance, model.HostActive},
		{"paused", model.HostUp, model.HostPause},
		{"draining", model.HostUp, model.HostDrain},
	} {
		if err := s.ReportHost(ctx, &model.Host{Name: h.name, Kind: model.HostAgent, State: model.HostUp, Heartbeat: now}); err != nil {
			t.Fatal(err)
		}
		if err := s.SetHostState(ctx, h.name, h.state, now); err != nil {
			t.Fatal(err)
		}
		if err := s.UpdateHost(ctx, &model.Host{Name: h.name, Availability: h.avail, UpdatedAt: &now}); err != nil {
			t.Fatal(err)
		}
	}
	// A container engine a driver reported is no agent: never a host for
	// local.process.
	if err := s.ReportHost(ctx, &model.Host{Name: "engine", Kind: model.HostContainerEngine, State: model.HostUp, Heartbeat: now}); err != nil {
		t.Fatal(err)
	}
	if err := s.CreateNodes(ctx, []*model.Node{{ID: "old1", Name: "old1", Host: "busy", InitAt: now}, {ID: "old2", Name: "old2", Host: "busy", InitAt: now}}); err != nil {
		t.Fatal(err)
	}
	hinted := func(host string) *model.Node {
		return &model.Node{ID: host, Data: map[string]any{"placement": map[string]any{"host": host}}}
	}
	nodes := []*model.Node{{ID: "n1", Data: map[string]any{}}, {ID: "n2", Data: map[string]any{}}, {ID: "n3", Data: map[string]any{}},
		hinted("busy"), hinted("paused"), hinted("dead")}
	if err := e.placeOnHosts(ctx, s, nodes); err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, n := range nodes {
		got = append(got, n.Host)
	}
	// idle has none, busy two: n1, n2 go to idle; then a tie at two goes
	// to the first by name (busy); a hint to busy is followed; hints to
	// a paused or down host are not (the fewest-nodes rule decides).
	if want := "[idle idle busy busy idle idle]"; fmt.Sprint(got) != want {
		t.Errorf("hosts %v, want %s", got, want)
	}
	for _, name := range []string{"busy", "idle"} {
		if err := s.UpdateHost(ctx, &model.Host{Name: name, Availability: model.HostPause, UpdatedAt: &now}); err != nil {
			t.Fatal(err)
		}
	}
	err = e.placeOnHosts(ctx, s, []*model.Node{{ID: "late", Data: map[string]any{}}})
	if err == nil || err.Error() != "No host can take a new node: every agent host is down, in maintenance, paused or draining." {
		t.Errorf("with no host open: %v", err)
	}
}

// TestRecordDriverHosts: what a driver's Hosts hook reports is recorded as
// hosts of its kind, with its attributes as labels, those that break the
// label rules (and those past the most a host may carry) left out; a host
// it could not ask is down; an agent's host of the same name is left
// alone.
func TestRecordDriverHosts(t *testing.T) {
	ctx := context.Background()
	s, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "grove.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	now := time.Now()
	if err := s.ReportHost(ctx, &model.Host{Name: "me", Kind: model.HostAgent, State: model.HostUp, Heartbeat: now}); err != nil {
		t.Fatal(err)
	}
	e := &Engine{store: s, cfg: Config{Now: time.Now}, log: hclog.NewNullLogger()}
	many := map[string]string{}
	for i := range model.MaxHostLabels + 5 {
		many[fmt.Sprintf("k%03d", i)] = "v"
	}
	err = e.RecordDriverHosts(ctx, "container.docker", []sdk.Host{
		{Name: "podman", Attributes: map[string]string{"os": "linux", "bad key": "x", "esc": "\x1b[31m", "utf8": "\xff", "long": strings.Repeat("v", 256)},
			Load: map[string]float64{"containers": 3}},
		{Name: "crowded", Attributes: many},
		{Name: "gone", Err: "connection refused"},
		{Name: "me", Attributes: map[string]string{"x": "y"}},
	})
	if err != nil {
		t.Fatal(err)
	}
	hosts, err := s.ListHosts(ctx)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, h := range hosts {
		if h.Name == "crowded" {
			// The first MaxHostLabels by key are kept.
			if len(h.Labels) != model.MaxHostLabels || h.Labels["k000"] != "v" || h.Labels[fmt.Sprintf("k%03d", model.MaxHostLabels)] != "" {
				t.Errorf("host crowded has %d labels %v; want k000 to k%03d", len(h.Labels), h.Labels, model.MaxHostLabels-1)
			}
			continue
		}
		got[h.Name] = fmt.Sprintf("%s %s %s %v %v", h.Kind, h.Driver, h.State, h.Labels, h.Load)
	}
	want := map[string]string{
		"podman": "container-engine container.docker up map[os:linux] map[containers:3]",
		"gone":   "container-engine container.docker down map[] map[]",
		"me":     "agent  up map[] map[]",
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("hosts\n%v\nwant\n%v", got, want)
	}
}
