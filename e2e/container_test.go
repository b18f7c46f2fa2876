package e2e

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/moby/moby/client"

	"github.com/grovehq/grove/api"
	"github.com/grovehq/grove/internal/containertest"
	"github.com/grovehq/grove/plugins/builtin/container"
)

// engine returns a client for the test's container engine, failing in CI
// and skipping elsewhere when none can be started.
func engine(t *testing.T) *client.Client {
	t.Helper()
	c, err := client.New(client.WithHost(containertest.Require(t)))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// containersOf lists the containers Grove made for a cluster, running or not.
func containersOf(t *testing.T, c *client.Client, clusterID string) map[string]string {
	t.Helper()
	items, err := containertest.ClusterContainers(context.Background(), c, clusterID)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, s := range items {
		out[s.Labels["grove.node"]] = s.Image + " " + string(s.State)
	}
	return out
}

func removeContainersOf(c *client.Client, clusterID string) {
	if clusterID == "" {
		return
	}
	items, _ := containertest.ClusterContainers(context.Background(), c, clusterID)
	for _, s := range items {
		_, _ = c.ContainerRemove(context.Background(), s.ID, client.ContainerRemoveOptions{Force: true})
	}
}

// TestContainerCluster runs a cluster of containers on a real engine
// (Podman's Docker API in CI): they serve HTTP, scale with a deletion
// policy, are recovered when killed behind Grove's back, roll to a new
// image one at a time and leave nothing behind when deleted.
func TestContainerCluster(t *testing.T) {
	eng := engine(t)
	dir := t.TempDir()
	// Registered before the agent so it runs after the agent has stopped:
	// nothing can be creating containers any more.
	var clusterID string
	t.Cleanup(func() { removeContainersOf(eng, clusterID) })
	a := startAgent(t, dir, "-config", fastConfig(t, dir, ""))
	for _, img := range []string{container.DemoImage, containertest.DemoImageV2} {
		a.mustDo(http.MethodPost, "/v1/profiles", map[string]any{"profile": map[string]any{"name": img[strings.LastIndex(img, ":")+1:],
			"spec": map[string]any{"type": "container.docker", "version": "1.0", "properties": map[string]any{
				"image": img, "stop_timeout": 1, "memory": 64}}}}, nil)
	}
	update := map[string]any{"parallelism": 1, "monitor": "500ms"}
	restart := map[string]any{"condition": "any", "delay": "0s", "max_attempts": 5, "window": "5m"}
	act := a.waitAction(a.createCluster("boxes", "latest", 3, map[string]any{"config": map[string]any{"grove.update": update, "grove.restart": restart}}))
	if act.Status != "SUCCEEDED" {
		t.Fatalf("create: %s %s\n%s", act.Status, act.StatusReason, tail(a.logText(), 40))
	}
	cl := a.cluster("boxes")
	clusterID = cl.ID
	for _, n := range a.nodes(cl.ID) {
		nodeAnswers(t, n)
	}
	if got := containersOf(t, eng, cl.ID); len(got) != 3 {
		t.Fatalf("3 containers expected, the engine has %v", got)
	}

	// The driver reports its engine as a host, with Grove's load on it.
	var hosts struct {
		Hosts []api.Host `json:"hosts"`
	}
	a.mustDo(http.MethodGet, "/v1/profile-types/container.docker/hosts", nil, &hosts)
	if len(hosts.Hosts) != 1 || hosts.Hosts[0].Name != "default" || hosts.Hosts[0].Error != "" ||
		hosts.Hosts[0].Load["containers"] < 3 || hosts.Hosts[0].Load["memory_mib"] < 3*64 || hosts.Hosts[0].Attributes["ncpu"] == "" {
		t.Errorf("hosts of container.docker: %+v", hosts.Hosts)
	}
	if out, errOut, code := a.grove("profile", "hosts", "container.docker"); code != 0 || !strings.Contains(out, "default") || !strings.Contains(out, "containers=") {
		t.Errorf("grove profile hosts: %d\n%s%s", code, out, errOut)
	}
	a.mustDo(http.MethodGet, "/v1/profile-types/local.process/hosts", nil, &hosts)
	if len(hosts.Hosts) != 0 {
		t.Errorf("local.process has no hosts, got %+v", hosts.Hosts)
	}
	if _, err := a.do(http.MethodGet, "/v1/profile-types/nope/hosts", nil); err == nil || !strings.Contains(err.Error(), "could not be found") {
		t.Errorf("hosts of an unknown type: %v", err)
	}

	// Scale out to 5, then in to 2 with a deletion policy: the youngest go.
	a.waitAction(a.clusterAction("boxes", "scale_out", map[string]any{"count": 2}))
	if got := containersOf(t, eng, cl.ID); len(got) != 5 {
		t.Fatalf("after scale_out: %v", got)
	}
	a.mustDo(http.MethodPost, "/v1/policies", map[string]any{"policy": map[string]any{"name": "youngest",
		"spec": map[string]any{"type": "senlin.policy.deletion", "version": "1.1", "properties": map[string]any{"criteria": "YOUNGEST_FIRST"}}}}, nil)
	a.waitAction(a.clusterAction("boxes", "policy_attach", map[string]any{"policy_id": "youngest"}))
	act = a.waitAction(a.clusterAction("boxes", "scale_in", map[string]any{"count": 3}))
	if act.Status != "SUCCEEDED" {
		t.Fatalf("scale_in: %s %s", act.Status, act.StatusReason)
	}
	nodes := a.nodes(cl.ID)
	got := containersOf(t, eng, cl.ID)
	if len(nodes) != 2 || len(got) != 2 {
		t.Fatalf("after scale_in to 2: %d nodes, containers %v", len(nodes), got)
	}
	for _, n := range nodes {
		if n.Index > 2 {
			t.Errorf("YOUNGEST_FIRST kept node %s (index %d)", n.Name, n.Index)
		}
		if _, ok := got[n.ID]; !ok {
			t.Errorf("node %s has no container", n.Name)
		}
	}

	// A container killed outside Grove is found and brought back.
	victim := nodes[0]
	if _, err := eng.ContainerKill(context.Background(), "grove-"+victim.ID, client.ContainerKillOptions{Signal: "KILL"}); err != nil {
		t.Fatal(err)
	}
	eventually(t, 30*time.Second, "the killed container to be recovered", func() (bool, string) {
		n, err := a.client.GetNode(context.Background(), victim.ID)
		if err != nil {
			return false, err.Error()
		}
		return n.Status == "ACTIVE" && restarts(*n) >= 1 && strings.HasSuffix(containersOf(t, eng, cl.ID)[victim.ID], "running"),
			n.Status + " " + n.StatusReason + " " + containersOf(t, eng, cl.ID)[victim.ID] + fmt.Sprint(n.Data)
	})
	back, _ := a.client.GetNode(context.Background(), victim.ID)
	nodeAnswers(t, *back)

	// An image change rolls through the nodes one at a time, keeping each
	// node's identity, and never takes more than one down.
	r := a.mustDo(http.MethodPatch, "/v1/clusters/boxes", map[string]any{"cluster": map[string]any{"profile_id": "v2"}}, nil)
	lowest := 2
	for {
		act, err := a.client.GetAction(t.Context(), r.ActionID())
		if err != nil {
			t.Fatal(err)
		}
		if n := activeNodes(a, cl.ID); n < lowest {
			lowest = n
		}
		if act.Terminal() {
			if act.Status != "SUCCEEDED" {
				t.Fatalf("image update: %s %s", act.Status, act.StatusReason)
			}
			break
		}
		time.Sleep(20 * time.Millisecond) // polling interval, not synchronisation
	}
	if lowest < 1 {
		t.Errorf("the update took both nodes down at once")
	}
	after := a.nodes(cl.ID)
	got = containersOf(t, eng, cl.ID)
	for _, n := range after {
		if !slices.ContainsFunc(nodes, func(o api.Node) bool { return o.ID == n.ID }) {
			t.Errorf("node %s is new; an update keeps node identity", n.Name)
		}
		if got[n.ID] != containertest.DemoImageV2+" running" {
			t.Errorf("node %s container after the update: %q", n.Name, got[n.ID])
		}
		nodeAnswers(t, n)
	}

	// Deleting the cluster leaves no container behind.
	r = a.mustDo(http.MethodDelete, "/v1/clusters/boxes", nil, nil)
	if act := a.waitAction(r.ActionID()); act.Status != "SUCCEEDED" {
		t.Fatalf("delete: %s %s", act.Status, act.StatusReason)
	}
	if got := containersOf(t, eng, cl.ID); len(got) != 0 {
		t.Fatalf("containers left after deleting the cluster: %v", got)
	}
}

// TestHCLContainers applies examples/hcl/containers with the grove CLI,
// changes its image and destroys it.
func TestHCLContainers(t *testing.T) {
	eng := engine(t)
	var clusterID string
	t.Cleanup(func() { removeContainersOf(eng, clusterID) })
	a := startAgent(t, t.TempDir())
	ex := "../examples/hcl/containers"
	out, errOut, code := a.grove("apply", "-auto-approve", "-var", "nodes=2", ex)
	if code != 0 || !strings.Contains(out, "Apply complete!") {
		t.Fatalf("apply: %d\n%s\n%s", code, out, errOut)
	}
	cl := a.cluster("containers")
	clusterID = cl.ID
	for _, n := range a.nodes(cl.ID) {
		nodeAnswers(t, n)
	}
	out, errOut, code = a.grove("apply", "-auto-approve", "-var", "nodes=2", "-var", "image="+containertest.DemoImageV2, ex)
	if code != 0 {
		t.Fatalf("apply a new image: %d\n%s\n%s", code, out, errOut)
	}
	for id, c := range containersOf(t, eng, cl.ID) {
		if c != containertest.DemoImageV2+" running" {
			t.Errorf("node %s after the image change: %s", id, c)
		}
	}
	if out, errOut, code = a.grove("destroy", "-auto-approve", ex); code != 0 {
		t.Fatalf("destroy: %d\n%s\n%s", code, out, errOut)
	}
	if got := containersOf(t, eng, cl.ID); len(got) != 0 {
		t.Fatalf("containers left after destroy: %v", got)
	}
}

// TestContainersAcrossCrashes kills the plugin process, then the agent,
// while they create a container cluster: after the restarts the cluster has
// exactly its nodes, each with one running container, and no container is
// left that belongs to no node.
func TestContainersAcrossCrashes(t *testing.T) {
	eng := engine(t)
	dir := t.TempDir()
	var clusterID string
	t.Cleanup(func() { removeContainersOf(eng, clusterID) })
	a := startAgent(t, dir, "-config", slowConfig(t, dir))
	a.mustDo(http.MethodPost, "/v1/profiles", map[string]any{"profile": map[string]any{"name": "box",
		"spec": map[string]any{"type": "container.docker", "version": "1.0", "properties": map[string]any{"image": container.DemoImage, "stop_timeout": 1}}}}, nil)
	var plugins struct {
		Plugins []api.PluginStatus `json:"plugins"`
	}
	a.mustDo(http.MethodGet, "/v1/plugins", nil, &plugins)
	pid := plugins.Plugins[0].PID
	const want = 8
	a.createCluster("crashy", "box", want, nil)
	clusterID = a.cluster("crashy").ID
	eventually(t, 60*time.Second, "the first container nodes to become ACTIVE", func() (bool, string) {
		n := activeNodes(a, clusterID)
		return n >= 2, fmt.Sprint(n)
	})
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	eventually(t, 60*time.Second, "more nodes after the plugin restarted", func() (bool, string) {
		n := activeNodes(a, clusterID)
		return n >= 4, fmt.Sprint(n)
	})
	a.kill()

	a = startAgent(t, dir, "-config", slowConfig(t, dir))
	eventually(t, 120*time.Second, "the cluster to be ACTIVE with all its nodes", func() (bool, string) {
		cl := a.cluster("crashy")
		return cl.Status == "ACTIVE" && activeNodes(a, clusterID) == want, cl.Status + " " + fmt.Sprint(activeNodes(a, clusterID))
	})
	nodes := a.nodes(clusterID)
	eventually(t, 30*time.Second, "one running container per node and no other", func() (bool, string) {
		got := containersOf(t, eng, clusterID)
		if len(got) != want {
			return false, fmt.Sprint(got)
		}
		for _, n := range nodes {
			if got[n.ID] != container.DemoImage+" running" {
				return false, n.Name + ": " + got[n.ID]
			}
		}
		return true, ""
	})
	for _, n := range nodes {
		nodeAnswers(t, n)
	}
}
