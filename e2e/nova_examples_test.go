package e2e

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/gophercloud/gophercloud/v2/openstack/compute/v2/servers"

	"github.com/grovehq/grove/internal/novatest"
)

// novaServers lists the real Nova's servers of a Grove cluster, by the
// cluster_id metadata the driver writes.
func novaServers(t *testing.T, n *novatest.Nova, clusterID string) []servers.Server {
	t.Helper()
	pages, err := servers.List(n.Compute("2.56"), servers.ListOpts{}).AllPages(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	all, err := servers.ExtractServers(pages)
	if err != nil {
		t.Fatal(err)
	}
	var out []servers.Server
	for _, s := range all {
		if s.Metadata["cluster_id"] == clusterID {
			out = append(out, s)
		}
	}
	return out
}

// TestNovaSenlinSpecAndValidation: a Senlin os.nova.server spec file is
// taken unchanged by grove profile validate and create, and an unknown
// image is refused at submit time by both `grove profile validate` and
// `grove validate`, naming the property and the value, with the agent's
// plugin reaching the real Nova through the variables scripts/nova.sh
// prints.
func TestNovaSenlinSpecAndValidation(t *testing.T) {
	n := novatest.Shared(t)
	a := startAgentWith(t, agentOptions{env: n.Env()}, t.TempDir())
	spec := "../examples/senlin/nova_server.yaml"
	if out, errOut, code := a.grove("profile", "validate", "-spec-file", spec); code != 0 {
		t.Fatalf("validate the Senlin spec: %d\n%s\n%s", code, out, errOut)
	}
	if out, errOut, code := a.grove("profile", "create", "-spec-file", spec, "senlin-server"); code != 0 {
		t.Fatalf("create a profile from the Senlin spec: %d\n%s\n%s", code, out, errOut)
	}
	b, err := os.ReadFile(spec)
	if err != nil {
		t.Fatal(err)
	}
	bad := filepath.Join(t.TempDir(), "bad.yaml")
	if err := os.WriteFile(bad, []byte(strings.Replace(string(b), "image: grove-image", "image: no-such-image", 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	out, errOut, code := a.grove("profile", "validate", "-spec-file", bad)
	if code == 0 || !strings.Contains(out+errOut, "properties.image") || !strings.Contains(out+errOut, `no image "no-such-image" was found`) {
		t.Errorf("grove profile validate with an unknown image: %d\n%s\n%s", code, out, errOut)
	}
	out, errOut, code = a.grove("validate", "-var", "image=no-such-image", "../examples/hcl/nova")
	if code == 0 || !strings.Contains(out+errOut, "properties.image") || !strings.Contains(out+errOut, `no image "no-such-image" was found`) {
		t.Errorf("grove validate with an unknown image: %d\n%s\n%s", code, out, errOut)
	}
}

// TestNovaHCL applies examples/hcl/nova with the grove CLI against the real
// Nova, changes the flavor (a resize, server by server, keeping them),
// lists the type's hosts, stops and starts a node's server through
// grove node op, and destroys it, leaving no server.
func TestNovaHCL(t *testing.T) {
	n := novatest.Shared(t)
	a := startAgentWith(t, agentOptions{env: n.Env()}, t.TempDir())
	ex := "../examples/hcl/nova"
	out, errOut, code := a.grove("apply", "-auto-approve", "-var", "nodes=2", ex)
	if code != 0 || !strings.Contains(out, "Apply complete!") {
		t.Fatalf("apply: %d\n%s\n%s", code, out, errOut)
	}
	id := a.cluster("nova").ID
	before := novaServers(t, n, id)
	if len(before) != 2 {
		t.Fatalf("%d servers after apply, want 2", len(before))
	}
	out, errOut, code = a.grove("apply", "-auto-approve", "-var", "nodes=2", "-var", "flavor=m1.small", ex)
	if code != 0 {
		t.Fatalf("apply another flavor: %d\n%s\n%s", code, out, errOut)
	}
	after := novaServers(t, n, id)
	if len(after) != 2 {
		t.Fatalf("%d servers after the flavor change, want 2", len(after))
	}
	ids := map[string]bool{before[0].ID: true, before[1].ID: true}
	for _, s := range after {
		if !ids[s.ID] || s.Flavor["original_name"] != "m1.small" || s.Status != "ACTIVE" {
			t.Errorf("server %s (%s) after the flavor change: %v, %s; want the same server resized", s.Name, s.ID, s.Flavor["original_name"], s.Status)
		}
	}
	// The profile type's hosts: the hypervisors and the zone.
	out, errOut, code = a.grove("profile", "hosts", "os.nova.server")
	if code != 0 {
		t.Fatalf("profile hosts: %d\n%s\n%s", code, out, errOut)
	}
	for _, h := range append(slices.Clone(n.Hosts), "nova") {
		if !strings.Contains(out, h) {
			t.Errorf("grove profile hosts os.nova.server names no %s:\n%s", h, out)
		}
	}
	// Senlin's operations through grove node op: a stopped server's node
	// is WARNING, a started one ACTIVE.
	target := a.nodes("nova")[0]
	for _, step := range []struct{ op, node, server string }{{"stop", "WARNING", "SHUTOFF"}, {"start", "ACTIVE", "ACTIVE"}} {
		if out, errOut, code := a.grove("node", "op", "-wait", target.Name, step.op); code != 0 {
			t.Fatalf("node op %s: %d %s %s", step.op, code, out, errOut)
		}
		got, err := a.client.GetNode(context.Background(), target.ID)
		if err != nil || got.Status != step.node {
			t.Errorf("after %s the node is %+v (%v), want %s", step.op, got, err, step.node)
		}
		if s, err := servers.Get(context.Background(), n.Compute("2.56"), target.PhysicalID).Extract(); err != nil || s.Status != step.server {
			t.Errorf("after %s the server is %v (%v), want %s", step.op, s, err, step.server)
		}
	}
	if out, errOut, code = a.grove("destroy", "-auto-approve", ex); code != 0 {
		t.Fatalf("destroy: %d\n%s\n%s", code, out, errOut)
	}
	if left := novaServers(t, n, id); len(left) != 0 {
		t.Fatalf("%d servers left after destroy", len(left))
	}
}
