package bench

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/grovehq/grove/api"
	"github.com/grovehq/grove/internal/haproxytest"
)

// BenchmarkHAProxyScaleIn puts a local.process cluster of grove's demo HTTP
// server behind a real HAProxy kept in step by grove.policy.haproxy, and
// per iteration, under 4 clients looping requests through the frontend:
// scales in from 5 nodes to 2 (requests lost: the target is 0), then out
// to 5 again, recording for each new node the time from its creation
// (created_at) to the first request HAProxy sends it.
func BenchmarkHAProxyScaleIn(b *testing.B) {
	h := haproxytest.Start(b)
	c, _ := startAgent(b)
	ctx := context.Background()
	must := func(r *api.Response, err error) {
		b.Helper()
		if err != nil {
			b.Fatal(err)
		}
		if id := r.ActionID(); id != "" {
			if _, err := c.WaitAction(ctx, id, nil); err != nil {
				b.Fatal(err)
			}
		}
	}
	must(c.Do(ctx, http.MethodPost, "/v1/profiles", nil, map[string]any{"profile": map[string]any{"name": "web",
		"spec": map[string]any{"type": "local.process", "version": "1.0", "properties": map[string]any{"command": []any{groveBin, "demo-http"}, "stop_timeout": 5}}}}, nil))
	must(c.Do(ctx, http.MethodPost, "/v1/clusters", nil, map[string]any{"cluster": map[string]any{"name": "lb", "profile_id": "web", "desired_capacity": 5}}, nil))
	defer func() {
		if r, err := c.Do(ctx, http.MethodDelete, "/v1/clusters/lb", nil, nil, nil); err == nil {
			c.WaitAction(ctx, r.ActionID(), nil)
		}
	}()
	must(c.Do(ctx, http.MethodPost, "/v1/policies", nil, map[string]any{"policy": map[string]any{"name": "front",
		"spec": map[string]any{"type": "grove.policy.haproxy", "version": "1.0", "properties": map[string]any{"socket": h.Socket, "backend": haproxytest.Backend, "drain_timeout": 10}}}}, nil))
	action := func(name string, params map[string]any) {
		b.Helper()
		id, err := c.ClusterAction(ctx, "lb", name, params)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := c.WaitAction(ctx, id, nil); err != nil {
			b.Fatal(err)
		}
	}
	action("policy_attach", map[string]any{"policy_id": "front"})

	load := h.StartLoad(4)
	defer load.Stop()

	var lost, requests int64
	var toTraffic []time.Duration
	for i := 0; i < b.N; i++ {
		before := load.Sent()
		lostBefore := load.Failed()
		action("scale_in", map[string]any{"count": 3})
		lost += load.Failed() - lostBefore
		requests += load.Sent() - before
		action("scale_out", map[string]any{"count": 3})
		nodes, err := c.ListNodes(ctx, map[string][]string{"cluster_id": {"lb"}})
		if err != nil || len(nodes) != 5 {
			b.Fatalf("nodes after scale-out: %d %v", len(nodes), err)
		}
		deadline := time.Now().Add(time.Minute)
		for _, n := range nodes {
			created, err := time.Parse(time.RFC3339Nano, *n.CreatedAt)
			if err != nil {
				b.Fatalf("created_at %q: %v", *n.CreatedAt, err)
			}
			for {
				seen, ok := load.FirstSeen(n.Name)
				if ok {
					if seen.After(created) {
						toTraffic = append(toTraffic, seen.Sub(created))
					}
					break
				}
				if time.Now().After(deadline) {
					b.Fatalf("node %s got no request within a minute of the scale-out", n.Name)
				}
				time.Sleep(5 * time.Millisecond)
			}
		}
	}
	b.ReportMetric(float64(lost), "lost-requests")
	b.ReportMetric(float64(requests)/float64(b.N), "requests/scale-in")
	var total, worst time.Duration
	for _, d := range toTraffic {
		total += d
		worst = max(worst, d)
	}
	if len(toTraffic) > 0 {
		b.ReportMetric(total.Seconds()/float64(len(toTraffic)), "s-to-traffic")
		b.ReportMetric(worst.Seconds(), "s-to-traffic-worst")
	}
}
