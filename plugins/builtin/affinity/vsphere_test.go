package affinity_test

import (
	"context"
	"slices"
	"testing"

	"github.com/grovehq/grove/internal/vcsimtest"
	"github.com/grovehq/grove/plugins/builtin/affinity"
	"github.com/grovehq/grove/plugins/builtin/vsphere"
	"github.com/grovehq/grove/plugins/sdk"
)

func vsphereProfile(sim *vcsimtest.Sim, id string) sdk.Spec {
	return sdk.Spec{ID: id, Name: id, Type: vsphere.TypeName, Version: "1.0", Properties: map[string]any{
		"connection": map[string]any{"url": sim.UserURL().String(), "insecure": true},
		"datacenter": vcsimtest.Datacenter, "cluster": vcsimtest.Cluster, "template": vcsimtest.Template,
		"num_cpus": int64(1), "memory_mb": int64(128), "power_on": true, "wait_timeout": int64(30),
	}}
}

// vmsFor creates the VMs of the nodes a check placed, as the engine would
// (one batch), and adds them to the cluster.
func vmsFor(t *testing.T, ctx context.Context, d *vsphere.Driver, c *sdk.Cluster, data map[string]any) []sdk.Node {
	t.Helper()
	ns := nodesFor(t, *c, data, len(c.Nodes))
	for i, r := range d.Create(ctx, c.Profile, ns) {
		if r.Err != nil || r.Reason != "" {
			t.Fatalf("node %s: %v %s", ns[i].Name, r.Err, r.Reason)
		}
		ns[i].PhysicalID, ns[i].State, ns[i].Data = r.PhysicalID, r.State, r.Data
		c.Nodes = append(c.Nodes, sdk.ClusterNode{ID: ns[i].ID, Name: ns[i].Name, Status: "ACTIVE", Data: r.Data})
	}
	return ns
}

func rule(t *testing.T, ctx context.Context, d *vsphere.Driver, c sdk.Cluster) *vsphere.Rule {
	t.Helper()
	rs, err := d.Rules(ctx, c.Profile, c.ID)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range rs {
		if r.Name == "affinity" {
			return &r
		}
	}
	return nil
}

func moidsOf(ns []sdk.Node) []string {
	var out []string
	for _, n := range ns {
		out = append(out, n.Data["moid"].(string))
	}
	slices.Sort(out)
	return out
}

// TestVSphereAntiAffinity: on a vsphere.vm cluster a hard anti-affinity
// policy names a distinct ESXi host per VM while the cluster has hosts
// free, and the VMs make (then join) a mandatory VM-VM anti-affinity DRS
// rule, read back from the simulator; a deleted VM leaves the rule, and
// detach deletes it.
func TestVSphereAntiAffinity(t *testing.T) {
	sim := vcsimtest.New(t)
	ctx := ctxT(t)
	pt := affinity.Type()
	d := vsphere.New()
	c := sdk.Cluster{ID: "vsaa-cid", Name: "vsaa", MaxSize: -1, Profile: vsphereProfile(sim, "vsaa-prof")}
	pol := policySpec(nil)
	binding, err := pt.Policy.Attach(ctx, pol, c)
	if err != nil {
		t.Fatal(err)
	}
	if binding["drs_rule"] != "grove-vsaa-cid-affinity" {
		t.Errorf("binding %v", binding)
	}
	if r := rule(t, ctx, d, c); r != nil {
		t.Errorf("a rule %+v before the cluster has two VMs", r)
	}
	hosts, err := d.ClusterHosts(ctx, c.Profile)
	if err != nil || len(hosts) != 3 {
		t.Fatalf("cluster hosts %v, %v", hosts, err)
	}

	res, err := pt.Policy.Check(ctx, scaleOut(c, pol, binding, 3))
	if err != nil || res.Refuse != "" {
		t.Fatalf("check: %+v, %v", res, err)
	}
	ns := vmsFor(t, ctx, d, &c, res.Data)
	t.Cleanup(func() { d.Delete(context.Background(), c.Profile, ns) })
	on := map[string]bool{}
	for _, n := range ns {
		pl := n.Data["placement"].(map[string]any)
		if pl["host"] == "" || n.Data["host"] != pl["host"] {
			t.Errorf("VM %s on %v, placed on %v", n.Name, n.Data["host"], pl["host"])
		}
		on[n.Data["host"].(string)] = true
	}
	if len(on) != 3 {
		t.Errorf("VMs on hosts %v, want three", on)
	}
	r := rule(t, ctx, d, c)
	if r == nil || r.Type != vsphere.AntiAffinity || !r.Mandatory || !r.Enabled || !slices.Equal(sortedCopy(r.VMs), moidsOf(ns)) {
		t.Fatalf("rule %+v, want a mandatory anti-affinity rule of %v", r, moidsOf(ns))
	}

	// No host is free: the fourth VM is left to DRS, bound by the rule.
	res, err = pt.Policy.Check(ctx, scaleOut(c, pol, binding, 1))
	if err != nil || res.Refuse != "" {
		t.Fatalf("check: %+v, %v", res, err)
	}
	fourth := vmsFor(t, ctx, d, &c, res.Data)
	t.Cleanup(func() { d.Delete(context.Background(), c.Profile, fourth) })
	if pl := fourth[0].Data["placement"].(map[string]any); pl["host"] != nil {
		t.Errorf("the fourth VM was placed on %v with no host free", pl["host"])
	}
	all := append(slices.Clone(ns), fourth...)
	if r := rule(t, ctx, d, c); r == nil || !slices.Equal(sortedCopy(r.VMs), moidsOf(all)) {
		t.Errorf("after the fourth: rule %+v, want %v", r, moidsOf(all))
	}

	for _, res := range d.Delete(ctx, c.Profile, fourth) {
		if res.Err != nil {
			t.Fatal(res.Err)
		}
	}
	if r := rule(t, ctx, d, c); r == nil || !slices.Equal(sortedCopy(r.VMs), moidsOf(ns)) {
		t.Errorf("after a delete: rule %+v, want %v", r, moidsOf(ns))
	}
	if err := pt.Policy.Detach(ctx, pol, c, binding); err != nil {
		t.Fatal(err)
	}
	if r := rule(t, ctx, d, c); r != nil {
		t.Errorf("detach left rule %+v", r)
	}
}

// TestVSphereSoftAffinity: a soft affinity policy attached to a cluster
// that already has two VMs makes a non-mandatory affinity rule at once,
// and new VMs go to the host the cluster's VMs run on.
func TestVSphereSoftAffinity(t *testing.T) {
	sim := vcsimtest.New(t)
	ctx := ctxT(t)
	d := vsphere.New()
	c := sdk.Cluster{ID: "vsaf-cid", Name: "vsaf", MaxSize: -1, Profile: vsphereProfile(sim, "vsaf-prof")}
	first := vmsFor(t, ctx, d, &c, map[string]any{"placement": map[string]any{"count": 2, "placements": []any{
		map[string]any{"host": vcsimtest.DRSHost}, map[string]any{"host": vcsimtest.DRSHost}}}})
	t.Cleanup(func() { d.Delete(context.Background(), c.Profile, first) })

	pt := affinity.Type()
	pol := policySpec(map[string]any{"servergroup": map[string]any{"policies": "soft-affinity"}})
	binding, err := pt.Policy.Attach(ctx, pol, c)
	if err != nil {
		t.Fatal(err)
	}
	r := rule(t, ctx, d, c)
	if r == nil || r.Type != vsphere.Affinity || r.Mandatory || !slices.Equal(sortedCopy(r.VMs), moidsOf(first)) {
		t.Fatalf("rule %+v, want a non-mandatory affinity rule of %v", r, moidsOf(first))
	}
	res, err := pt.Policy.Check(ctx, scaleOut(c, pol, binding, 2))
	if err != nil || res.Refuse != "" {
		t.Fatalf("check: %+v, %v", res, err)
	}
	more := vmsFor(t, ctx, d, &c, res.Data)
	t.Cleanup(func() { d.Delete(context.Background(), c.Profile, more) })
	for _, n := range more {
		if n.Data["host"] != vcsimtest.DRSHost {
			t.Errorf("VM %s on %v, want %s with the others", n.Name, n.Data["host"], vcsimtest.DRSHost)
		}
	}
	if r := rule(t, ctx, d, c); r == nil || len(r.VMs) != 4 {
		t.Errorf("rule %+v, want 4 VMs", r)
	}
}

func sortedCopy(s []string) []string {
	out := slices.Clone(s)
	slices.Sort(out)
	return out
}
