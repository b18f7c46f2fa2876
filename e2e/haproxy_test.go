package e2e

import (
	"context"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/moby/moby/client"

	"github.com/grovehq/grove/api"
	"github.com/grovehq/grove/internal/haproxytest"
	"github.com/grovehq/grove/plugins/builtin/container"
	"github.com/grovehq/grove/plugins/builtin/haproxy"
)

// frontendNames sends requests through HAProxy's frontend until every
// wanted node name answered or the deadline passes; it returns the names
// that answered ("hello from NAME ...").
func frontendNames(t *testing.T, h *haproxytest.HAProxy, want []string) map[string]bool {
	t.Helper()
	c := http.Client{Timeout: 2 * time.Second}
	seen := map[string]bool{}
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) {
		if resp, err := c.Get("http://" + h.Frontend + "/"); err == nil {
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if name, ok := strings.CutPrefix(string(b), "hello from "); ok {
				seen[strings.Fields(name)[0]] = true
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

func nodeNames(a *agentProc, cluster string) []string {
	var out []string
	for _, n := range a.nodes(cluster) {
		out = append(out, n.Name)
	}
	return out
}

// groveServers are the backend's servers grove.policy.haproxy added.
func groveServers(t *testing.T, h *haproxytest.HAProxy) []haproxy.Server {
	t.Helper()
	rt, err := haproxy.ParseSocket(h.Socket)
	if err != nil {
		t.Fatal(err)
	}
	ss, err := rt.Servers(context.Background(), haproxytest.Backend)
	if err != nil {
		t.Fatal(err)
	}
	var out []haproxy.Server
	for _, s := range ss {
		if strings.HasPrefix(s.Name, "grove-") {
			out = append(out, s)
		}
	}
	return out
}

// TestHAProxyFollowsProcessCluster: a real HAProxy in front of a
// local.process cluster of the demo HTTP server, kept in step by
// grove.policy.haproxy (haproxyScenario).
func TestHAProxyFollowsProcessCluster(t *testing.T) {
	h := haproxytest.Start(t)
	dir := t.TempDir()
	a := startAgent(t, dir, "-config", fastConfig(t, dir, ""))
	t.Cleanup(func() { killProcessesOf("lbweb") })
	a.webProfile("web")
	haproxyScenario(t, h, a, "web", func(n api.Node) { killNodeProcess(t, n) }, nil)
}

// TestHAProxyFollowsContainerCluster: the same with container.docker
// nodes of the demo image on the test's container engine (Podman's Docker
// API in CI), host networking, each container on its allocated port.
func TestHAProxyFollowsContainerCluster(t *testing.T) {
	eng := engine(t)
	h := haproxytest.Start(t)
	dir := t.TempDir()
	var clusterID string
	t.Cleanup(func() { removeContainersOf(eng, clusterID) })
	a := startAgent(t, dir, "-config", fastConfig(t, dir, ""))
	a.mustDo(http.MethodPost, "/v1/profiles", map[string]any{"profile": map[string]any{"name": "boxes",
		"spec": map[string]any{"type": "container.docker", "version": "1.0", "properties": map[string]any{
			"image": container.DemoImage, "stop_timeout": 1, "memory": 64}}}}, nil)
	haproxyScenario(t, h, a, "boxes", func(n api.Node) {
		if _, err := eng.ContainerKill(context.Background(), "grove-"+n.ID, client.ContainerKillOptions{Signal: "KILL"}); err != nil {
			t.Fatal(err)
		}
	}, &clusterID)
}

// haproxyScenario: attach adds the three nodes of a new cluster of the
// profile, a scale-out's two answer, a scale-in from 5 to 2 under a
// request loop loses no request (victims drained before their processes
// stop), a killed node restarted by the supervisor serves again, and
// detach removes every server Grove added. The cluster's id goes to
// clusterID, when given, as soon as it is created (for the test's cleanup).
func haproxyScenario(t *testing.T, h *haproxytest.HAProxy, a *agentProc, profile string, kill func(api.Node), clusterID *string) {
	restart := map[string]any{"condition": "any", "delay": "0s", "max_attempts": 3, "window": "1m"}
	created := a.createCluster("lbweb", profile, 3, map[string]any{"config": map[string]any{"grove.restart": restart}})
	if clusterID != nil {
		*clusterID = a.cluster("lbweb").ID
	}
	a.waitAction(created)
	a.mustDo(http.MethodPost, "/v1/policies", map[string]any{"policy": map[string]any{"name": "front",
		"spec": map[string]any{"type": "grove.policy.haproxy", "version": "1.0",
			"properties": map[string]any{"socket": h.Socket, "backend": haproxytest.Backend, "drain_timeout": 10}}}}, nil)
	a.waitAction(a.clusterAction("lbweb", "policy_attach", map[string]any{"policy_id": "front"}))
	if got := groveServers(t, h); len(got) != 3 {
		t.Fatalf("after attach the backend has %d Grove servers, want 3: %+v", len(got), got)
	}
	want := nodeNames(a, "lbweb")
	if seen := frontendNames(t, h, want); len(seen) != 3 {
		t.Fatalf("through HAProxy after attach: %v, want %v", seen, want)
	}

	a.waitAction(a.clusterAction("lbweb", "scale_out", map[string]any{"count": 2}))
	want = nodeNames(a, "lbweb")
	if seen := frontendNames(t, h, want); len(seen) != 5 {
		t.Fatalf("through HAProxy after scale-out: %v, want %v", seen, want)
	}

	// Scale in to 2 while a client loops requests over a kept-alive
	// connection: none fails.
	load := h.StartLoad(1)
	a.waitAction(a.clusterAction("lbweb", "scale_in", map[string]any{"count": 3}))
	// Keep the loop going a little after the victims stopped.
	n := load.Sent()
	eventually(t, 10*time.Second, "more requests after the scale-in", func() (bool, string) { return load.Sent() > n+50, "" })
	load.Stop()
	if load.Failed() != 0 {
		t.Fatalf("%d of %d requests failed during the scale-in; first: %v\nagent log: %s", load.Failed(), load.Sent(), load.FirstError(), tail(a.logText(), 20))
	}
	t.Logf("scale-in from 5 to 2: %d requests, none failed", load.Sent())
	if got := groveServers(t, h); len(got) != 2 {
		t.Fatalf("after scale-in the backend has %d Grove servers, want 2: %+v", len(got), got)
	}
	want = nodeNames(a, "lbweb")
	if seen := frontendNames(t, h, want); len(seen) != 2 {
		t.Fatalf("through HAProxy after scale-in: %v, want %v", seen, want)
	}

	// A node killed is restarted by the supervisor on its port and
	// serves through HAProxy again.
	victim := a.nodes("lbweb")[0]
	kill(victim)
	eventually(t, 30*time.Second, "the killed node to be restarted", func() (bool, string) {
		for _, n := range a.nodes("lbweb") {
			if n.ID == victim.ID {
				return restarts(n) == 1 && n.Status == "ACTIVE", n.Status
			}
		}
		return false, "node gone"
	})
	if seen := frontendNames(t, h, want); !seen[victim.Name] {
		t.Fatalf("the restarted node %s does not answer through HAProxy: %v", victim.Name, seen)
	}

	a.waitAction(a.clusterAction("lbweb", "policy_detach", map[string]any{"policy_id": "front"}))
	if got := groveServers(t, h); len(got) != 0 {
		t.Fatalf("detach left Grove's servers: %+v", got)
	}
}
