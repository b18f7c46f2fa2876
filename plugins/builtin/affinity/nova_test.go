package affinity_test

import (
	"context"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/gophercloud/gophercloud/v2"
	"github.com/gophercloud/gophercloud/v2/openstack/compute/v2/servergroups"

	"github.com/grovehq/grove/internal/novatest"
	"github.com/grovehq/grove/plugins/builtin/affinity"
	"github.com/grovehq/grove/plugins/builtin/nova"
	"github.com/grovehq/grove/plugins/sdk"
)

type novaEnv struct {
	n *novatest.Nova
	c *gophercloud.ServiceClient
}

// setupNova points the policy and the driver at the shared real Nova, as an
// agent started with scripts/nova.sh's variables would.
func setupNova(t *testing.T) *novaEnv {
	t.Helper()
	n := novatest.Shared(t)
	for _, k := range nova.EnvNames() {
		t.Setenv(k, "")
	}
	for _, kv := range n.Env() {
		k, v, _ := strings.Cut(kv, "=")
		t.Setenv(k, v)
	}
	return &novaEnv{n: n, c: n.Compute("2.56")}
}

func ctxT(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	t.Cleanup(cancel)
	return ctx
}

func (e *novaEnv) profile(id string, props map[string]any) sdk.Spec {
	p := map[string]any{"flavor": "m1.tiny", "image": e.n.ImageName}
	for k, v := range props {
		p[k] = v
	}
	return sdk.Spec{ID: id, Name: id, Type: nova.TypeName, Version: "1.0", Properties: p}
}

func policySpec(props map[string]any) sdk.Spec {
	return sdk.Spec{ID: "pol", Name: "aff", Type: affinity.TypeName, Version: "1.0", Properties: props}
}

func cluster(id string, prof sdk.Spec) sdk.Cluster {
	return sdk.Cluster{ID: id + "-cid", Name: id, ProfileID: prof.ID, ProfileType: prof.Type + "-1.0", DesiredCapacity: 0, MaxSize: -1, Profile: prof}
}

func scaleOut(c sdk.Cluster, pol sdk.Spec, binding map[string]any, count int) sdk.CheckRequest {
	return sdk.CheckRequest{Policy: pol, Phase: "BEFORE", Cluster: c, BindingData: binding,
		Action: sdk.Action{ID: "act", Name: "CLUSTER_SCALE_OUT", Inputs: map[string]any{"count": count}, Data: map[string]any{}}}
}

// nodesFor are count nodes of the cluster carrying the placements of a
// check's data, as the engine makes them.
func nodesFor(t *testing.T, c sdk.Cluster, data map[string]any, from int) []sdk.Node {
	t.Helper()
	pl, _ := data["placement"].(map[string]any)
	ps, _ := pl["placements"].([]any)
	if pl["count"] != len(ps) {
		t.Fatalf("placement %v: count and placements differ", pl)
	}
	out := make([]sdk.Node, len(ps))
	for i := range ps {
		name := c.Name + "-" + string(rune('a'+from+i))
		out[i] = sdk.Node{ID: name + "-id", Name: name, Index: from + i + 1, ClusterID: c.ID, ClusterName: c.Name,
			Data: map[string]any{"placement": ps[i]}}
	}
	return out
}

func (e *novaEnv) groupGone(t *testing.T, id string) bool {
	_, err := servergroups.Get(context.Background(), e.c, id).Extract()
	return gophercloud.ResponseCodeIs(err, 404)
}

// TestNovaAntiAffinityCreatedGroup is Senlin's S2 with anti-affinity on
// the real Nova's three hosts: attach creates the group, each server of a
// scale-out lands on its own host, a fourth fails with Nova's NoValidHost
// as its node's reason, and detach deletes the group.
func TestNovaAntiAffinityCreatedGroup(t *testing.T) {
	e := setupNova(t)
	ctx := ctxT(t)
	pt := affinity.Type()
	pol := policySpec(map[string]any{"servergroup": map[string]any{"name": "aa-web", "policies": "anti-affinity"}})
	c := cluster("aa", e.profile("aa-prof", nil))
	binding, err := pt.Policy.Attach(ctx, pol, c)
	if err != nil {
		t.Fatal(err)
	}
	gid, _ := binding["servergroup_id"].(string)
	if gid == "" || binding["inherited_group"] != false {
		t.Fatalf("binding data %v, want a created group", binding)
	}
	g, err := servergroups.Get(ctx, e.c, gid).Extract()
	if err != nil || g.Name != "aa-web" || !reflect.DeepEqual(g.Policies, []string{"anti-affinity"}) {
		t.Fatalf("group %+v, %v", g, err)
	}

	d := nova.New()
	hosts := len(e.n.Hosts)
	res, err := pt.Policy.Check(ctx, scaleOut(c, pol, binding, hosts))
	if err != nil || res.Refuse != "" {
		t.Fatalf("check: %+v, %v", res, err)
	}
	want := map[string]any{"count": hosts, "placements": []any{}}
	for range hosts {
		want["placements"] = append(want["placements"].([]any), map[string]any{"servergroup": gid})
	}
	if !reflect.DeepEqual(res.Data["placement"], want) {
		t.Fatalf("placement %v, want %v", res.Data["placement"], want)
	}
	ns := nodesFor(t, c, res.Data, 0)
	prof := c.Profile
	t.Cleanup(func() { d.Delete(context.Background(), prof, ns) })
	on := map[string]bool{}
	for i, r := range d.Create(ctx, prof, ns) {
		if r.Err != nil {
			t.Fatalf("node %s: %v", ns[i].Name, r.Err)
		}
		ns[i].PhysicalID, ns[i].State, ns[i].Data = r.PhysicalID, r.State, r.Data
		on[r.Data["host"].(string)] = true
	}
	if len(on) != hosts {
		t.Errorf("%d servers on hosts %v, want each on its own", hosts, on)
	}
	for i := range ns {
		c.Nodes = append(c.Nodes, sdk.ClusterNode{ID: ns[i].ID, Status: "ACTIVE", Data: ns[i].Data})
	}

	res, err = pt.Policy.Check(ctx, scaleOut(c, pol, binding, 1))
	if err != nil || res.Refuse != "" {
		t.Fatalf("check: %+v, %v", res, err)
	}
	fourth := nodesFor(t, c, res.Data, hosts)
	t.Cleanup(func() { d.Delete(context.Background(), prof, fourth) })
	r := d.Create(ctx, prof, fourth)[0]
	if r.Err == nil || !strings.Contains(r.Err.Error(), "No valid host") || sdk.IsRetryable(r.Err) {
		t.Errorf("the fourth server: %v; want Nova's NoValidHost, not retryable", r.Err)
	}

	d.Delete(ctx, prof, ns)
	if err := pt.Policy.Detach(ctx, pol, c, binding); err != nil {
		t.Fatal(err)
	}
	if !e.groupGone(t, gid) {
		t.Error("detach left the group it created")
	}
}

// TestNovaAffinity: an affinity policy's group keeps all servers on one
// host; the group's name is generated when the spec gives none.
func TestNovaAffinity(t *testing.T) {
	e := setupNova(t)
	ctx := ctxT(t)
	pt := affinity.Type()
	pol := policySpec(map[string]any{"servergroup": map[string]any{"policies": "affinity"}})
	c := cluster("af", e.profile("af-prof", nil))
	binding, err := pt.Policy.Attach(ctx, pol, c)
	if err != nil {
		t.Fatal(err)
	}
	gid := binding["servergroup_id"].(string)
	t.Cleanup(func() { _ = servergroups.Delete(context.Background(), e.c, gid).ExtractErr() })
	g, err := servergroups.Get(ctx, e.c, gid).Extract()
	if err != nil || !strings.HasPrefix(g.Name, "server_group_") || g.Policies[0] != "affinity" {
		t.Fatalf("group %+v, %v", g, err)
	}
	res, err := pt.Policy.Check(ctx, scaleOut(c, pol, binding, 3))
	if err != nil || res.Refuse != "" {
		t.Fatalf("check: %+v, %v", res, err)
	}
	d := nova.New()
	ns := nodesFor(t, c, res.Data, 0)
	t.Cleanup(func() { d.Delete(context.Background(), c.Profile, ns) })
	on := map[string]bool{}
	for i, r := range d.Create(ctx, c.Profile, ns) {
		if r.Err != nil {
			t.Fatalf("node %s: %v", ns[i].Name, r.Err)
		}
		on[r.Data["host"].(string)] = true
	}
	if len(on) != 1 {
		t.Errorf("servers on hosts %v, want one", on)
	}
}

// TestNovaInheritedGroup is Senlin's S1: the profile's scheduler_hints.group
// names the group; attach checks it exists with the policy's policy,
// records it as inherited, and detach leaves it.
func TestNovaInheritedGroup(t *testing.T) {
	e := setupNova(t)
	ctx := ctxT(t)
	pt := affinity.Type()
	g, err := servergroups.Create(ctx, e.c, servergroups.CreateOpts{Name: "s1-group", Policies: []string{"soft-anti-affinity"}}).Extract()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = servergroups.Delete(context.Background(), e.c, g.ID).ExtractErr() })
	c := cluster("s1", e.profile("s1-prof", map[string]any{"scheduler_hints": map[string]any{"group": "s1-group"}}))

	pol := policySpec(map[string]any{"servergroup": map[string]any{"policies": "soft-anti-affinity"}})
	binding, err := pt.Policy.Attach(ctx, pol, c)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(binding, map[string]any{"servergroup_id": g.ID, "inherited_group": true}) {
		t.Errorf("binding data %v", binding)
	}
	res, err := pt.Policy.Check(ctx, scaleOut(c, pol, binding, 2))
	if err != nil || res.Refuse != "" {
		t.Fatalf("check: %+v, %v", res, err)
	}
	if pl := res.Data["placement"].(map[string]any); pl["count"] != 2 || pl["placements"].([]any)[1].(map[string]any)["servergroup"] != g.ID {
		t.Errorf("placement %v", pl)
	}
	if err := pt.Policy.Detach(ctx, pol, c, binding); err != nil {
		t.Fatal(err)
	}
	if e.groupGone(t, g.ID) {
		t.Error("detach deleted the inherited group")
	}

	// The default policy (anti-affinity) does not match a soft one.
	_, err = pt.Policy.Attach(ctx, policySpec(nil), c)
	if err == nil || !strings.Contains(err.Error(), "'s1-group'") || !strings.Contains(err.Error(), "do not match") {
		t.Errorf("mismatch: %v", err)
	}
	missing := cluster("s1m", e.profile("s1m-prof", map[string]any{"scheduler_hints": map[string]any{"group": "no-such-group"}}))
	_, err = pt.Policy.Attach(ctx, pol, missing)
	if err == nil || !strings.Contains(err.Error(), "'no-such-group'") || !strings.Contains(err.Error(), "does not exist") {
		t.Errorf("missing group: %v", err)
	}
}

// TestNovaDRS is Senlin's S3: the zone defaults to nova and the servers go
// to the first hypervisor whose name has "drs"; a zone given without DRS
// passes through; a non-admin is refused at attach.
func TestNovaDRS(t *testing.T) {
	e := setupNova(t)
	ctx := ctxT(t)
	pt := affinity.Type()
	pol := policySpec(map[string]any{"enable_drs_extension": true, "servergroup": map[string]any{"policies": "soft-affinity"}})
	c := cluster("drs", e.profile("drs-prof", nil))
	binding, err := pt.Policy.Attach(ctx, pol, c)
	if err != nil {
		t.Fatal(err)
	}
	gid := binding["servergroup_id"].(string)
	res, err := pt.Policy.Check(ctx, scaleOut(c, pol, binding, 2))
	if err != nil || res.Refuse != "" {
		t.Fatalf("check: %+v, %v", res, err)
	}
	entry := map[string]any{"servergroup": gid, "zone": "nova:host-drs-1"}
	if want := map[string]any{"count": 2, "placements": []any{entry, entry}}; !reflect.DeepEqual(res.Data["placement"], want) {
		t.Fatalf("placement %v, want %v", res.Data["placement"], want)
	}
	d := nova.New()
	ns := nodesFor(t, c, res.Data, 0)
	t.Cleanup(func() { d.Delete(context.Background(), c.Profile, ns) })
	for i, r := range d.Create(ctx, c.Profile, ns) {
		if r.Err != nil {
			t.Fatalf("node %s: %v", ns[i].Name, r.Err)
		}
		if r.Data["hypervisor_hostname"] != "host-drs-1" {
			t.Errorf("node %s on hypervisor %v, want host-drs-1", ns[i].Name, r.Data["hypervisor_hostname"])
		}
	}
	d.Delete(ctx, c.Profile, ns)
	if err := pt.Policy.Detach(ctx, pol, c, binding); err != nil || !e.groupGone(t, gid) {
		t.Errorf("detach: %v", err)
	}

	zoned := policySpec(map[string]any{"availability_zone": "nova_1"})
	res, err = pt.Policy.Check(ctx, scaleOut(c, zoned, map[string]any{"servergroup_id": "g1"}, 1))
	if err != nil || !reflect.DeepEqual(res.Data["placement"], map[string]any{"count": 1, "placements": []any{map[string]any{"servergroup": "g1", "zone": "nova_1"}}}) {
		t.Errorf("a zone without DRS: %+v, %v", res, err)
	}

	// noauth2 makes a token "user:project" whose user is no admin.
	t.Setenv("OS_TOKEN", "demo:"+e.n.ProjectID)
	_, err = affinity.Type().Policy.Attach(ctx, pol, cluster("drs-user", e.profile("drs-user-prof", nil)))
	if err == nil || !strings.Contains(err.Error(), "only an administrator may") {
		t.Errorf("a non-admin's DRS attach: %v", err)
	}
}
