package affinity_test

import (
	"context"
	"strings"
	"testing"

	"github.com/grovehq/grove/internal/containertest"
	"github.com/grovehq/grove/plugins/builtin/affinity"
	"github.com/grovehq/grove/plugins/builtin/container"
	"github.com/grovehq/grove/plugins/sdk"
)

// containersFor creates the containers of the nodes a check placed, as the
// engine would, and returns the nodes with their results.
func containersFor(t *testing.T, ctx context.Context, d sdk.Profile, c *sdk.Cluster, data map[string]any) ([]sdk.Node, []sdk.Result) {
	t.Helper()
	ns := nodesFor(t, *c, data, len(c.Nodes))
	for i := range ns {
		ns[i].ID = strings.ReplaceAll(t.Name(), "/", "-") + "-" + ns[i].ID
		ns[i].Data["port"] = containertest.Port(t)
	}
	res := d.Create(ctx, c.Profile, ns)
	t.Cleanup(func() { d.Delete(context.Background(), c.Profile, ns) })
	for i, r := range res {
		if r.Err == nil {
			ns[i].PhysicalID, ns[i].State, ns[i].Data = r.PhysicalID, r.State, r.Data
			c.Nodes = append(c.Nodes, sdk.ClusterNode{ID: ns[i].ID, Status: "ACTIVE", Data: r.Data})
		}
	}
	return ns, res
}

// TestContainersOverEngines runs the policy on container.docker clusters
// over two Podman services of the test's own: hard anti-affinity puts
// each container on its own engine and refuses the one left without an
// engine, with the reason the driver fails its node with; soft
// anti-affinity spreads evenly; affinity keeps them on one engine.
func TestContainersOverEngines(t *testing.T) {
	hosts := containertest.StartEngines(t, 2)
	t.Setenv("GROVE_DOCKER_HOSTS", "e1="+hosts[0]+",e2="+hosts[1])
	ctx := ctxT(t)
	pt := affinity.Type()
	d := container.Type().Driver
	prof := sdk.Spec{ID: "cp", Name: "cp", Type: container.TypeName, Version: "1.0",
		Properties: map[string]any{"image": container.DemoImage, "network": "host", "stop_timeout": int64(1)}}

	t.Run("anti-affinity", func(t *testing.T) {
		c := sdk.Cluster{ID: "caa-cid", Name: "caa", MaxSize: -1, Profile: prof}
		pol := policySpec(nil)
		binding, err := pt.Policy.Attach(ctx, pol, c)
		if err != nil {
			t.Fatal(err)
		}
		res, err := pt.Policy.Check(ctx, scaleOut(c, pol, binding, 3))
		if err != nil || res.Refuse != "" {
			t.Fatalf("check: %+v, %v", res, err)
		}
		ns, rs := containersFor(t, ctx, d, &c, res.Data)
		if rs[0].Err != nil || rs[1].Err != nil || ns[0].Data["host"] != "e1" || ns[1].Data["host"] != "e2" {
			t.Errorf("first two: %v %v on %v %v, want e1 and e2", rs[0].Err, rs[1].Err, ns[0].Data["host"], ns[1].Data["host"])
		}
		if err := rs[2].Err; err == nil || !strings.Contains(err.Error(), "Hard anti-affinity") || sdk.IsRetryable(err) {
			t.Errorf("the third: %v; want the policy's refusal, not retryable", err)
		}
	})

	t.Run("soft anti-affinity", func(t *testing.T) {
		c := sdk.Cluster{ID: "csa-cid", Name: "csa", MaxSize: -1, Profile: prof}
		pol := policySpec(map[string]any{"servergroup": map[string]any{"policies": "soft-anti-affinity"}})
		res, err := pt.Policy.Check(ctx, scaleOut(c, pol, map[string]any{}, 3))
		if err != nil || res.Refuse != "" {
			t.Fatalf("check: %+v, %v", res, err)
		}
		ns, rs := containersFor(t, ctx, d, &c, res.Data)
		on := map[any]int{}
		for i := range ns {
			if rs[i].Err != nil {
				t.Fatalf("node %s: %v", ns[i].Name, rs[i].Err)
			}
			on[ns[i].Data["host"]]++
		}
		if on["e1"] != 2 || on["e2"] != 1 {
			t.Errorf("containers per engine %v, want 2 and 1", on)
		}
	})

	t.Run("affinity", func(t *testing.T) {
		c := sdk.Cluster{ID: "caf-cid", Name: "caf", MaxSize: -1, Profile: prof,
			Nodes: []sdk.ClusterNode{{ID: "elsewhere", Status: "ACTIVE", Data: map[string]any{"host": "e2"}}}}
		pol := policySpec(map[string]any{"servergroup": map[string]any{"policies": "affinity"}})
		res, err := pt.Policy.Check(ctx, scaleOut(c, pol, map[string]any{}, 2))
		if err != nil || res.Refuse != "" {
			t.Fatalf("check: %+v, %v", res, err)
		}
		ns, rs := containersFor(t, ctx, d, &c, res.Data)
		for i := range ns {
			if rs[i].Err != nil || ns[i].Data["host"] != "e2" {
				t.Errorf("node %s: %v on %v, want e2 with the cluster's node", ns[i].Name, rs[i].Err, ns[i].Data["host"])
			}
		}
	})
}
