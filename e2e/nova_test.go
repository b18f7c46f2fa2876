package e2e

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/gophercloud/gophercloud/v2"
	"github.com/gophercloud/gophercloud/v2/openstack/compute/v2/instanceactions"
	"github.com/gophercloud/gophercloud/v2/openstack/compute/v2/servers"

	"github.com/grovehq/grove/api"
	"github.com/grovehq/grove/internal/novatest"
)

// novaMicroversion is what the tests read servers at: the flavor's name
// (2.47) and every admin-only attribute are there.
const novaMicroversion = "2.79"

// nova returns the test binary's real Nova (internal/novatest, as
// scripts/nova.sh runs it), with the variables it prints set for the agents
// the test starts, and a compute client on it.
func nova(t *testing.T) (*novatest.Nova, *gophercloud.ServiceClient) {
	t.Helper()
	n := novatest.Shared(t)
	for _, kv := range n.Env() {
		k, v, _ := strings.Cut(kv, "=")
		t.Setenv(k, v)
	}
	return n, n.Compute(novaMicroversion)
}

// clusterServers lists the Nova servers carrying a Grove cluster's id in
// their metadata, by node id.
func clusterServers(t *testing.T, c *gophercloud.ServiceClient, clusterID string) map[string]servers.Server {
	t.Helper()
	pages, err := servers.List(c, nil).AllPages(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	all, err := servers.ExtractServers(pages)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]servers.Server{}
	for _, s := range all {
		if s.Metadata["cluster_id"] == clusterID {
			if prev, dup := out[s.Metadata["cluster_node_id"]]; dup {
				t.Errorf("node %s has two servers: %s and %s", s.Metadata["cluster_node_id"], prev.ID, s.ID)
			}
			out[s.Metadata["cluster_node_id"]] = s
		}
	}
	return out
}

// serverActions lists Nova's record of what was done to a server (create,
// resize, confirmResize, rebuild ...), by action name.
func serverActions(t *testing.T, c *gophercloud.ServiceClient, id string) map[string]instanceactions.InstanceAction {
	t.Helper()
	pages, err := instanceactions.List(c, id, nil).AllPages(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	all, err := instanceactions.ExtractInstanceActions(pages)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]instanceactions.InstanceAction{}
	for _, a := range all {
		out[a.Action] = a
	}
	return out
}

// TestNovaCluster runs a cluster of os.nova.server nodes on the real Nova
// through a real agent and its plugin process: 3 servers ACTIVE, scaled
// out and in, a server deleted behind Grove's back found dead by check and
// recreated, a flavor change rolled out by resize one node at a time, an
// image change by rebuild, NoValidHost given as the node's and the
// action's reason, and no server left once the cluster is deleted.
func TestNovaCluster(t *testing.T) {
	nv, c := nova(t)
	dir := t.TempDir()
	a := startAgent(t, dir, "-config", fastConfig(t, dir, ""))
	profile := func(name string, props map[string]any) {
		a.mustDo(http.MethodPost, "/v1/profiles", map[string]any{"profile": map[string]any{"name": name,
			"spec": map[string]any{"type": "os.nova.server", "version": "1.0", "properties": props}}}, nil)
	}
	profile("tiny", map[string]any{"flavor": "m1.tiny", "image": nv.ImageName})
	profile("small", map[string]any{"flavor": "m1.small", "image": nv.ImageName})
	profile("small-2", map[string]any{"flavor": "m1.small", "image": nv.Image2Name})
	// m1.xlarge needs 16 GiB of memory; each fake host has 8 GiB (12 with
	// Nova's default 1.5 allocation ratio).
	profile("huge", map[string]any{"flavor": "m1.xlarge", "image": nv.ImageName})

	// Names are resolved when the profile is submitted.
	_, err := a.do(http.MethodPost, "/v1/profiles", map[string]any{"profile": map[string]any{"name": "bad",
		"spec": map[string]any{"type": "os.nova.server", "version": "1.0", "properties": map[string]any{"flavor": "m1.tiny", "image": "no-such-image"}}}})
	if err == nil || !strings.Contains(err.Error(), "properties.image") || !strings.Contains(err.Error(), "no-such-image") {
		t.Errorf("an unknown image: %v", err)
	}

	act := a.waitAction(a.createCluster("servers", "tiny", 3, map[string]any{"config": map[string]any{
		"grove.update": map[string]any{"parallelism": 1, "monitor": "200ms"}}}))
	if act.Status != "SUCCEEDED" {
		t.Fatalf("create: %s %s\n%s", act.Status, act.StatusReason, tail(a.logText(), 40))
	}
	clusterID := a.cluster("servers").ID
	t.Cleanup(func() {
		for _, s := range clusterServers(t, c, clusterID) {
			_ = servers.Delete(context.Background(), c, s.ID).ExtractErr()
		}
	})
	// matches checks that each node has its own ACTIVE server, with the
	// flavor and image given, and returns the nodes.
	matches := func(what string, want int, flavor, image string) []api.Node {
		t.Helper()
		nodes := a.nodes(clusterID)
		srv := clusterServers(t, c, clusterID)
		if len(nodes) != want || len(srv) != want {
			t.Fatalf("%s: %d nodes and %d servers, want %d", what, len(nodes), len(srv), want)
		}
		for _, n := range nodes {
			s, ok := srv[n.ID]
			switch {
			case !ok:
				t.Errorf("%s: node %s has no server", what, n.Name)
			case n.Status != "ACTIVE" || s.Status != "ACTIVE" || n.PhysicalID != s.ID || s.Name != n.Name:
				t.Errorf("%s: node %s (%s, physical id %s) has server %s %s (%s)", what, n.Name, n.Status, n.PhysicalID, s.Name, s.ID, s.Status)
			case s.Flavor["original_name"] != flavor || s.Image["id"] != image:
				t.Errorf("%s: node %s's server has flavor %v and image %v, want %s and %s", what, n.Name, s.Flavor["original_name"], s.Image["id"], flavor, image)
			case !slices.Contains(nv.Hosts, s.Host) || n.Data["host"] != s.Host:
				t.Errorf("%s: node %s's server is on host %q, node data says %v", what, n.Name, s.Host, n.Data["host"])
			}
		}
		return nodes
	}
	matches("after create", 3, "m1.tiny", nv.ImageID)

	if act := a.waitAction(a.clusterAction("servers", "scale_out", map[string]any{"count": 2})); act.Status != "SUCCEEDED" {
		t.Fatalf("scale_out: %s %s", act.Status, act.StatusReason)
	}
	matches("after scale_out", 5, "m1.tiny", nv.ImageID)
	if act := a.waitAction(a.clusterAction("servers", "scale_in", map[string]any{"count": 2})); act.Status != "SUCCEEDED" {
		t.Fatalf("scale_in: %s %s", act.Status, act.StatusReason)
	}
	nodes := matches("after scale_in", 3, "m1.tiny", nv.ImageID)

	// A server deleted behind Grove's back: check finds the node dead,
	// recover boots a new server for it.
	gone := nodes[0]
	if err := servers.Delete(context.Background(), c, gone.PhysicalID).ExtractErr(); err != nil {
		t.Fatal(err)
	}
	eventually(t, time.Minute, "Nova to delete the server", func() (bool, string) {
		_, err := servers.Get(context.Background(), c, gone.PhysicalID).Extract()
		return gophercloud.ResponseCodeIs(err, 404), fmt.Sprint(err)
	})
	ctx := t.Context()
	r := a.mustDo(http.MethodPost, "/v1/nodes/"+gone.ID+"/actions", map[string]any{"check": map[string]any{}}, nil)
	if checked, err := a.client.WaitAction(ctx, r.ActionID(), nil); err == nil || checked.Status != "FAILED" {
		t.Fatalf("the check of a node whose server is gone must fail: %v %+v", err, checked)
	}
	dead, err := a.client.GetNode(ctx, gone.ID)
	if err != nil || dead.Status != "ERROR" || !strings.Contains(dead.StatusReason, "missing") || !strings.Contains(dead.StatusReason, gone.PhysicalID) {
		t.Fatalf("the node whose server is gone: %+v %v", dead, err)
	}
	r = a.mustDo(http.MethodPost, "/v1/nodes/"+gone.ID+"/actions", map[string]any{"recover": map[string]any{"operation": "RECREATE"}}, nil)
	if act := a.waitAction(r.ActionID()); act.Status != "SUCCEEDED" {
		t.Fatalf("recover: %s %s", act.Status, act.StatusReason)
	}
	nodes = matches("after recovery", 3, "m1.tiny", nv.ImageID)
	for _, n := range nodes {
		if n.ID == gone.ID && n.PhysicalID == gone.PhysicalID {
			t.Errorf("the recovered node still names the deleted server %s", gone.PhysicalID)
		}
	}

	// A flavor change resizes each server in place, one node at a time:
	// each server's resize is confirmed before the next one's starts.
	r = a.mustDo(http.MethodPatch, "/v1/clusters/servers", map[string]any{"cluster": map[string]any{"profile_id": "small"}}, nil)
	if act := a.waitAction(r.ActionID()); act.Status != "SUCCEEDED" {
		t.Fatalf("flavor update: %s %s\n%s", act.Status, act.StatusReason, tail(a.logText(), 30))
	}
	resized := matches("after the flavor update", 3, "m1.small", nv.ImageID)
	type step struct{ resize, confirm time.Time }
	var steps []step
	for _, n := range resized {
		if old := slices.IndexFunc(nodes, func(o api.Node) bool { return o.ID == n.ID && o.PhysicalID == n.PhysicalID }); old < 0 {
			t.Errorf("node %s has a new server %s; a resize keeps the server", n.Name, n.PhysicalID)
		}
		acts := serverActions(t, c, n.PhysicalID)
		rs, ok1 := acts["resize"]
		cf, ok2 := acts["confirmResize"]
		if !ok1 || !ok2 {
			t.Fatalf("server %s was not resized and confirmed: %v", n.PhysicalID, acts)
		}
		steps = append(steps, step{rs.StartTime, cf.StartTime})
	}
	sort.Slice(steps, func(i, j int) bool { return steps[i].resize.Before(steps[j].resize) })
	for i := 1; i < len(steps); i++ {
		if steps[i].resize.Before(steps[i-1].confirm) {
			t.Errorf("a resize started at %s, before the previous node's was confirmed at %s: not node by node", steps[i].resize, steps[i-1].confirm)
		}
	}

	// An image change rebuilds each server in place.
	r = a.mustDo(http.MethodPatch, "/v1/clusters/servers", map[string]any{"cluster": map[string]any{"profile_id": "small-2"}}, nil)
	if act := a.waitAction(r.ActionID()); act.Status != "SUCCEEDED" {
		t.Fatalf("image update: %s %s\n%s", act.Status, act.StatusReason, tail(a.logText(), 30))
	}
	for _, n := range matches("after the image update", 3, "m1.small", nv.Image2ID) {
		if !slices.ContainsFunc(resized, func(o api.Node) bool { return o.ID == n.ID && o.PhysicalID == n.PhysicalID }) {
			t.Errorf("node %s has a new server %s; a rebuild keeps the server", n.Name, n.PhysicalID)
		}
		if _, ok := serverActions(t, c, n.PhysicalID)["rebuild"]; !ok {
			t.Errorf("server %s was not rebuilt", n.PhysicalID)
		}
	}

	// A server Nova cannot place: NoValidHost is the node's and the
	// action's reason, and its server is deleted.
	wctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	act, err = a.client.WaitAction(wctx, a.createCluster("huge", "huge", 1, nil), nil)
	if act == nil {
		t.Fatalf("the huge cluster's create: %v", err)
	}
	hugeID := a.cluster("huge").ID
	bad := a.nodes(hugeID)
	const noValidHost = "No valid host was found"
	if act.Status != "FAILED" || !strings.Contains(act.StatusReason, noValidHost) {
		t.Errorf("a create Nova cannot place: action %s %q, want FAILED with %q", act.Status, act.StatusReason, noValidHost)
	}
	if len(bad) != 1 || bad[0].Status != "ERROR" || !strings.Contains(bad[0].StatusReason, noValidHost) {
		t.Errorf("a node Nova cannot place: %+v, want ERROR with %q", bad, noValidHost)
	}
	if srv := clusterServers(t, c, hugeID); len(srv) != 0 {
		t.Errorf("an unplaceable server was left behind: %v", srv)
	}
	if act := a.waitAction(a.mustDo(http.MethodDelete, "/v1/clusters/huge", nil, nil).ActionID()); act.Status != "SUCCEEDED" {
		t.Errorf("delete the huge cluster: %s %s", act.Status, act.StatusReason)
	}

	// Deleting the cluster leaves no server.
	r = a.mustDo(http.MethodDelete, "/v1/clusters/servers", nil, nil)
	if act := a.waitAction(r.ActionID()); act.Status != "SUCCEEDED" {
		t.Fatalf("delete: %s %s", act.Status, act.StatusReason)
	}
	if srv := clusterServers(t, c, clusterID); len(srv) != 0 {
		t.Fatalf("servers left after deleting the cluster: %v", srv)
	}
}

// TestNovaRestartRecreates: with the restart supervisor on, a server
// deleted behind Grove's back is found by the agent's own periodic check
// and recreated without anyone asking (RECREATE, os.nova.server's first
// recovery operation).
func TestNovaRestartRecreates(t *testing.T) {
	nv, c := nova(t)
	dir := t.TempDir()
	a := startAgent(t, dir, "-config", fastConfig(t, dir, ""))
	a.mustDo(http.MethodPost, "/v1/profiles", map[string]any{"profile": map[string]any{"name": "tiny",
		"spec": map[string]any{"type": "os.nova.server", "version": "1.0", "properties": map[string]any{"flavor": "m1.tiny", "image": nv.ImageName}}}}, nil)
	restart := map[string]any{"condition": "any", "delay": "0s", "max_attempts": 3, "window": "5m"}
	if act := a.waitAction(a.createCluster("watched", "tiny", 2, map[string]any{"config": map[string]any{"grove.restart": restart}})); act.Status != "SUCCEEDED" {
		t.Fatalf("create: %s %s", act.Status, act.StatusReason)
	}
	clusterID := a.cluster("watched").ID
	t.Cleanup(func() {
		for _, s := range clusterServers(t, c, clusterID) {
			_ = servers.Delete(context.Background(), c, s.ID).ExtractErr()
		}
	})
	gone := a.nodes(clusterID)[0]
	if err := servers.Delete(context.Background(), c, gone.PhysicalID).ExtractErr(); err != nil {
		t.Fatal(err)
	}
	eventually(t, 90*time.Second, "the deleted server to be recreated", func() (bool, string) {
		n, err := a.client.GetNode(context.Background(), gone.ID)
		if err != nil {
			return false, err.Error()
		}
		s, ok := clusterServers(t, c, clusterID)[gone.ID]
		return n.Status == "ACTIVE" && restarts(*n) >= 1 && ok && s.Status == "ACTIVE" && s.ID == n.PhysicalID && s.ID != gone.PhysicalID,
			fmt.Sprintf("node %s %q restarts %d, server %v %s", n.Status, n.StatusReason, restarts(*n), ok, s.Status)
	})
	if act := a.waitAction(a.mustDo(http.MethodDelete, "/v1/clusters/watched", nil, nil).ActionID()); act.Status != "SUCCEEDED" {
		t.Fatalf("delete: %s %s", act.Status, act.StatusReason)
	}
	if srv := clusterServers(t, c, clusterID); len(srv) != 0 {
		t.Fatalf("servers left after deleting the cluster: %v", srv)
	}
}
