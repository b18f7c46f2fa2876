package haproxy

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/grovehq/grove/internal/haproxytest"
	"github.com/grovehq/grove/plugins/sdk"
)

// server is a node's HTTP server answering its name; with release not
// nil, /slow holds the request until release is closed.
func server(t *testing.T, name string, release chan struct{}) *httptest.Server {
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/slow" && release != nil {
			<-release
		}
		fmt.Fprint(w, name)
	}))
	t.Cleanup(s.Close)
	return s
}

func spec(h *haproxytest.HAProxy, props map[string]any) sdk.Spec {
	p := map[string]any{"socket": h.Socket, "backend": haproxytest.Backend, "weight": int64(1), "check": true, "drain_timeout": int64(10), "port": int64(0)}
	for k, v := range props {
		p[k] = v
	}
	return sdk.Spec{ID: "pol", Name: "lb", Type: TypeName, Version: "1.0", Properties: p}
}

func clusterOf(servers map[string]*httptest.Server) sdk.Cluster {
	c := sdk.Cluster{ID: "0123456789abcdef", DesiredCapacity: len(servers), MaxSize: -1}
	ids := make([]string, 0, len(servers))
	for id := range servers {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	for i, id := range ids {
		c.Nodes = append(c.Nodes, sdk.ClusterNode{ID: id, Status: "ACTIVE", Index: i + 1, CreatedAt: int64(i + 1),
			Data: map[string]any{"address": strings.TrimPrefix(servers[id].URL, "http://")}})
	}
	return c
}

func serverNames(t *testing.T, h *haproxytest.HAProxy) map[string]Server {
	t.Helper()
	rt, err := ParseSocket(h.Socket)
	if err != nil {
		t.Fatal(err)
	}
	ss, err := rt.Servers(context.Background(), haproxytest.Backend)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]Server{}
	for _, s := range ss {
		out[s.Name] = s
	}
	return out
}

// reached sends requests through the frontend until every name in want
// answered or the deadline passes, and returns who answered.
func reached(t *testing.T, h *haproxytest.HAProxy, want ...string) map[string]bool {
	t.Helper()
	seen := map[string]bool{}
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		resp, err := http.Get("http://" + h.Frontend + "/")
		if err == nil {
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode == 200 {
				seen[string(b)] = true
			}
		}
		all := true
		for _, w := range want {
			all = all && seen[w]
		}
		if all {
			break
		}
	}
	return seen
}

// TestPolicyFollowsActionsOnRealHAProxy attaches to a real HAProxy, scales
// out, scales in with a request in flight on a victim (drained, then
// removed once it ended), readdresses a recovered node and detaches,
// leaving the backend's own server alone.
func TestPolicyFollowsActionsOnRealHAProxy(t *testing.T) {
	h := haproxytest.Start(t, "server static 127.0.0.1:1 disabled")
	release := make(chan struct{})
	servers := map[string]*httptest.Server{}
	for _, id := range []string{"n1", "n2", "n3"} {
		servers[id] = server(t, id, nil)
	}
	ctx := context.Background()
	p := Type().Policy
	sp := spec(h, nil)
	c := clusterOf(servers)
	if _, err := p.Attach(ctx, sp, c); err != nil {
		t.Fatal(err)
	}
	prefix := ServerPrefix(c.ID)
	if got := serverNames(t, h); len(got) != 4 || !got[prefix+"n1"].Ready() {
		t.Fatalf("after attach: %+v", got)
	}
	if seen := reached(t, h, "n1", "n2", "n3"); len(seen) != 3 {
		t.Fatalf("through the frontend after attach: %v", seen)
	}

	// Scale out: two nodes, one not yet healthy, which joins in
	// maintenance and takes no traffic.
	servers["n4"], servers["n5"] = server(t, "n4", release), server(t, "n5", release)
	c = clusterOf(servers)
	c.Nodes[4].Status = "CREATING"
	res, err := p.Check(ctx, sdk.CheckRequest{Policy: sp, Phase: "AFTER", Action: sdk.Action{Name: "CLUSTER_SCALE_OUT", Data: map[string]any{}}, Cluster: c})
	if err != nil || res.Refuse != "" {
		t.Fatal(err, res.Refuse)
	}
	got := serverNames(t, h)
	if !got[prefix+"n4"].Ready() || got[prefix+"n5"].Ready() {
		t.Fatalf("n4 must be ready and n5 (not ACTIVE) in maintenance: %+v", got)
	}
	if seen := reached(t, h, "n1", "n2", "n3", "n4"); seen["n5"] || len(seen) != 4 {
		t.Fatalf("through the frontend after scale-out: %v", seen)
	}
	c.Nodes[4].Status = "ACTIVE"
	if res, err := p.Check(ctx, sdk.CheckRequest{Policy: sp, Phase: "AFTER", Action: sdk.Action{Name: "CLUSTER_SCALE_OUT", Data: map[string]any{}}, Cluster: c}); err != nil || res.Refuse != "" {
		t.Fatal(err, res.Refuse)
	}
	if seen := reached(t, h, "n1", "n2", "n3", "n4", "n5"); len(seen) != 5 {
		t.Fatalf("through the frontend once n5 is healthy: %v", seen)
	}

	// Scale in of n4 and n5 while a request to one of them is in flight:
	// the check returns only after the request ended.
	var inflight sync.WaitGroup
	slowOn := make(chan string, 1)
	inflight.Add(1)
	go func() {
		defer inflight.Done()
		for {
			resp, err := http.Get("http://" + h.Frontend + "/slow")
			if err != nil {
				slowOn <- "error: " + err.Error()
				return
			}
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if string(b) == "n4" || string(b) == "n5" {
				slowOn <- string(b)
				return
			}
		}
	}()
	// Wait until a /slow request is held by n4 or n5.
	waitFor(t, func() bool {
		for _, s := range serverNames(t, h) {
			if (s.Name == prefix+"n4" || s.Name == prefix+"n5") && s.Sessions > 0 {
				return true
			}
		}
		return false
	})
	checked := make(chan sdk.CheckResult, 1)
	go func() {
		r, err := p.Check(ctx, sdk.CheckRequest{Policy: sp, Phase: "BEFORE",
			Action: sdk.Action{Name: "CLUSTER_SCALE_IN", Inputs: map[string]any{"count": 2}, Data: map[string]any{"deletion": map[string]any{"candidates": []any{"n4", "n5"}, "count": 2}}}, Cluster: c})
		if err != nil {
			r.Refuse = err.Error()
		}
		checked <- r
	}()
	select {
	case r := <-checked:
		t.Fatalf("the scale-in check returned before the in-flight request ended: %+v", r)
	case <-time.After(500 * time.Millisecond):
	}
	if s := serverNames(t, h)[prefix+"n4"]; s.Admin&AdminForcedDrain == 0 {
		t.Fatalf("n4 is not draining: %+v", s)
	}
	close(release)
	if r := <-checked; r.Refuse != "" {
		t.Fatal(r.Refuse)
	}
	inflight.Wait()
	if who := <-slowOn; who != "n4" && who != "n5" {
		t.Fatalf("the in-flight request failed: %s", who)
	}
	got = serverNames(t, h)
	if _, ok := got[prefix+"n4"]; ok || len(got) != 4 {
		t.Fatalf("after scale-in: %+v", got)
	}

	// n1 recreated elsewhere: its server is readdressed.
	delete(servers, "n4")
	delete(servers, "n5")
	old := servers["n1"]
	servers["n1"] = server(t, "n1-new", nil)
	old.Close()
	c = clusterOf(servers)
	if res, err := p.Check(ctx, sdk.CheckRequest{Policy: sp, Phase: "AFTER", Action: sdk.Action{Name: "NODE_RECOVER", Target: "n1", Data: map[string]any{}}, Cluster: c}); err != nil || res.Refuse != "" {
		t.Fatal(err, res.Refuse)
	}
	if a := serverNames(t, h)[prefix+"n1"].Addr; a != strings.TrimPrefix(servers["n1"].URL, "http://") {
		t.Fatalf("n1 is at %s, want %s", a, servers["n1"].URL)
	}
	if seen := reached(t, h, "n1-new", "n2", "n3"); len(seen) != 3 {
		t.Fatalf("after recovery: %v", seen)
	}

	if err := p.Detach(ctx, sp, c, nil); err != nil {
		t.Fatal(err)
	}
	if got := serverNames(t, h); len(got) != 1 || got["static"].Name == "" {
		t.Fatalf("detach must leave only the configured server: %+v", got)
	}
}

func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal("condition not met within 10s")
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestAttachRefusals: a backend HAProxy does not have, and a socket
// nothing answers on, refuse the attach with the reason.
func TestAttachRefusals(t *testing.T) {
	h := haproxytest.Start(t)
	p := Type().Policy
	_, err := p.Attach(context.Background(), spec(h, map[string]any{"backend": "nope"}), sdk.Cluster{ID: "c"})
	if err == nil || !strings.Contains(err.Error(), "Can't find backend") {
		t.Fatalf("missing backend: %v", err)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	_, err = p.Attach(context.Background(), spec(h, map[string]any{"socket": addr}), sdk.Cluster{ID: "c"})
	if err == nil || !strings.Contains(err.Error(), "does not answer") {
		t.Fatalf("dead socket: %v", err)
	}
}

func TestValidate(t *testing.T) {
	ds := Type().Validate(context.Background(), sdk.Spec{Properties: map[string]any{"socket": "relative/path", "backend": "be;del server x/y"}})
	if len(ds) != 2 || ds[0].Field != "properties.socket" || ds[1].Field != "properties.backend" {
		t.Fatalf("diagnostics: %+v", ds)
	}
}

// TestRefusedServerMarksNodeWarning: a server HAProxy refuses (a port out
// of range) fails the action with Senlin's reason and names the node under
// sdk.DataNodeWarnings, so the engine marks it WARNING.
func TestRefusedServerMarksNodeWarning(t *testing.T) {
	h := haproxytest.Start(t)
	c := sdk.Cluster{ID: "0123456789abcdef", Nodes: []sdk.ClusterNode{{ID: "bad", Status: "ACTIVE", Data: map[string]any{"address": "127.0.0.1:70000"}}}}
	res, err := Type().Policy.Check(context.Background(), sdk.CheckRequest{Policy: spec(h, nil), Phase: "AFTER",
		Action: sdk.Action{Name: "NODE_CREATE", Target: "bad", Data: map[string]any{}}, Cluster: c})
	if err != nil {
		t.Fatal(err)
	}
	warn, _ := res.Data[sdk.DataNodeWarnings].(map[string]any)
	if !strings.HasPrefix(res.Refuse, ReasonAdd+" Node bad: ") || warn["bad"] != ReasonAdd {
		t.Fatalf("refuse %q, data %v", res.Refuse, res.Data)
	}
}
