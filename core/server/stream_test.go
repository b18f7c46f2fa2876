package server_test

import (
	"context"
	"errors"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/hashicorp/go-hclog"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/grovehq/grove/api"
	"github.com/grovehq/grove/core/model"
	"github.com/grovehq/grove/core/server"
)

// eventOf writes an event of project p about a cluster.
func (a *authAPI) eventOf(cluster, status string) string {
	a.t.Helper()
	ev := &model.Event{ID: uuid.NewString(), Timestamp: time.Now(), OID: cluster, OType: "CLUSTER", ClusterID: cluster, Project: "p",
		Action: model.ClusterCreateAction, Status: status, Level: model.LevelInfo}
	if err := a.e.Store().CreateEvents(context.Background(), []*model.Event{ev}); err != nil {
		a.t.Fatal(err)
	}
	return ev.ID
}

// TestFollowEvents: ?follow=true sends the newest limit events first, then
// each new one that matches the filters, and nothing else; the stream ends
// when its client goes, giving its slot back.
func TestFollowEvents(t *testing.T) {
	a := newAuthAPI(t, server.Options{FollowEvery: 20 * time.Millisecond})
	c := api.New(api.Options{Address: a.url, Token: a.token("p", model.RoleReader)})
	old1 := a.eventOf("c1", "start")
	old2 := a.eventOf("c1", "end")
	a.eventOf("c2", "start")

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	got := make(chan api.Event, 10)
	done := make(chan error, 1)
	go func() {
		done <- c.FollowEvents(ctx, url.Values{"cluster_id": {"c1"}, "limit": {"1"}}, func(e api.Event) error {
			got <- e
			return nil
		})
	}()
	next := func() api.Event {
		t.Helper()
		select {
		case e := <-got:
			return e
		case err := <-done:
			t.Fatalf("the stream ended: %v", err)
		case <-time.After(10 * time.Second):
			t.Fatal("no event came within 10s")
		}
		return api.Event{}
	}
	if e := next(); e.ID != old2 {
		t.Errorf("first event %s, want the newest already written of c1 (%s), not %s", e.ID, old2, old1)
	}
	waitFor(t, 10*time.Second, "the stream is open", func() bool { return a.srv.OpenStreams() == 1 })
	a.eventOf("c2", "end")
	fresh := a.eventOf("c1", "error")
	if e := next(); e.ID != fresh || e.ClusterID != "c1" || e.Status != "error" {
		t.Errorf("streamed %+v, want the new event %s of c1", e, fresh)
	}
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Errorf("the client's end: %v, want context.Canceled", err)
	}
	waitFor(t, 10*time.Second, "the agent closes the stream", func() bool { return a.srv.OpenStreams() == 0 })
	select {
	case e := <-got:
		t.Errorf("an event of another cluster or a repeat came through: %+v", e)
	default:
	}
}

// TestFollowEventsRefusals: bad follow values, sort and marker are 400s
// naming the parameter; streams beyond MaxStreams are 503.
func TestFollowEventsRefusals(t *testing.T) {
	a := newAuthAPI(t, server.Options{MaxStreams: 1})
	admin := a.token("p", model.RoleAdmin)
	for path, want := range map[string]string{
		"/v1/events?follow=maybe":               "follow must be true or false",
		"/v1/events?follow=true&sort=timestamp": "sort and marker do not apply",
		"/v1/events?follow=true&bogus=1":        "Invalid parameter bogus",
		"/v1/agent/monitor?log_level=loud":      "log_level must be trace, debug, info, warn or error",
	} {
		if ans := a.call(admin, "GET", path, nil); ans.status != 400 || !strings.Contains(ans.body, want) {
			t.Errorf("GET %s: %d %s; want 400 %q", path, ans.status, ans.body, want)
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	c := api.New(api.Options{Address: a.url, Token: admin})
	go func() { _ = c.FollowEvents(ctx, nil, func(api.Event) error { return nil }) }()
	waitFor(t, 10*time.Second, "the first stream is open", func() bool { return a.srv.OpenStreams() == 1 })
	err := c.FollowEvents(ctx, nil, func(api.Event) error { return nil })
	var ae *api.Error
	if !errors.As(err, &ae) || ae.Status != 503 || !strings.Contains(ae.Message, "already serves 1 streams") {
		t.Errorf("a second stream: %v; want 503 naming the limit", err)
	}
}

// TestMonitor streams the agent's log lines at the level asked, even below
// the agent's own, as JSON when asked; the monitor needs an admin.
func TestMonitor(t *testing.T) {
	logs := hclog.NewInterceptLogger(&hclog.LoggerOptions{Level: hclog.Warn, Output: &strings.Builder{}})
	a := newAuthAPI(t, server.Options{Logs: logs})
	c := api.New(api.Options{Address: a.url, Token: a.token("p", model.RoleAdmin)})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	lines := make(chan string, 100)
	go func() {
		_ = c.Stream(ctx, "/v1/agent/monitor", url.Values{"log_level": {"debug"}, "log_json": {"true"}}, func(se api.StreamEvent) error {
			if se.Event == "log" {
				lines <- string(se.Data)
			}
			return nil
		})
	}()
	waitFor(t, 10*time.Second, "the monitor is open", func() bool { return a.srv.OpenStreams() == 1 })
	logs.Named("engine").Debug("a line for the monitor", "action_id", "a-1")
	select {
	case l := <-lines:
		if !strings.Contains(l, `"@message":"a line for the monitor"`) || !strings.Contains(l, `"action_id":"a-1"`) || !strings.Contains(l, `"@module":"engine"`) {
			t.Errorf("monitor line %s; want the debug line as JSON with its fields", l)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("no log line came within 10s")
	}
	reader := api.New(api.Options{Address: a.url, Token: a.token("default", model.RoleReader)})
	err := reader.Stream(ctx, "/v1/agent/monitor", nil, func(api.StreamEvent) error { return nil })
	var ae *api.Error
	if !errors.As(err, &ae) || ae.Status != 403 {
		t.Errorf("a reader's monitor: %v; want 403", err)
	}
}

// TestMetricsAccessAndRoutes: a reader of project default may scrape, a
// reader of another project may not; requests are counted by route pattern
// and code, never by raw path.
func TestMetricsAccessAndRoutes(t *testing.T) {
	reg := prometheus.NewRegistry()
	a := newAuthAPI(t, server.Options{Gatherer: reg, Metrics: server.NewMetrics(reg)})
	member := a.token("p", model.RoleMember)
	for range 2 {
		a.call(member, "GET", "/v1/clusters/"+uuid.NewString(), nil)
	}
	a.call(member, "GET", "/nowhere", nil)
	if ans := a.call(a.token("default", model.RoleReader), "GET", "/metrics", nil); ans.status != 200 || !strings.Contains(ans.body, `route="GET /v1/clusters/{id}"`) {
		t.Errorf("a reader of project default: %d %.300s; want the metrics", ans.status, ans.body)
	}
	if ans := a.call(a.token("p", model.RoleReader), "GET", "/metrics", nil); ans.status != 403 || !strings.Contains(ans.body, "project default") {
		t.Errorf("a reader of project p: %d %s; want 403 saying who may", ans.status, ans.body)
	}
	want := `
# HELP grove_api_requests_total API requests answered, by route (the route table's pattern, such as "GET /v1/clusters/{id}"; "unmatched" for none) and HTTP status code.
# TYPE grove_api_requests_total counter
grove_api_requests_total{code="200",route="GET /metrics"} 1
grove_api_requests_total{code="403",route="GET /metrics"} 1
grove_api_requests_total{code="404",route="GET /v1/clusters/{id}"} 2
grove_api_requests_total{code="404",route="unmatched"} 1
`
	if err := testutil.GatherAndCompare(reg, strings.NewReader(want), "grove_api_requests_total"); err != nil {
		t.Error(err)
	}
}
