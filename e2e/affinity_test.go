package e2e

import (
	"context"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/gophercloud/gophercloud/v2"
	"github.com/gophercloud/gophercloud/v2/openstack/compute/v2/servergroups"

	"github.com/grovehq/grove/api"
	"github.com/grovehq/grove/internal/containertest"
	"github.com/grovehq/grove/internal/novatest"
	"github.com/grovehq/grove/internal/vcsimtest"
	"github.com/grovehq/grove/plugins/builtin/container"
	"github.com/grovehq/grove/plugins/builtin/vsphere"
)

// novaProfile creates an os.nova.server profile on the harness's image.
func novaProfile(a *agentProc, n *novatest.Nova, name string, extra map[string]any) {
	a.t.Helper()
	props := map[string]any{"flavor": "m1.tiny", "image": n.ImageName}
	for k, v := range extra {
		props[k] = v
	}
	a.mustDo(http.MethodPost, "/v1/profiles", map[string]any{"profile": map[string]any{"name": name,
		"spec": map[string]any{"type": "os.nova.server", "version": "1.0", "properties": props}}}, nil)
}

func affinityPolicy(a *agentProc, name string, props map[string]any) {
	a.t.Helper()
	a.mustDo(http.MethodPost, "/v1/policies", map[string]any{"policy": map[string]any{"name": name,
		"spec": map[string]any{"type": "senlin.policy.affinity", "version": "1.0", "properties": props}}}, nil)
}

func (a *agentProc) binding(cluster, policy string) api.ClusterPolicy {
	a.t.Helper()
	var b struct {
		ClusterPolicy api.ClusterPolicy `json:"cluster_policy"`
	}
	a.mustDo(http.MethodGet, "/v1/clusters/"+cluster+"/policies/"+policy, nil, &b)
	return b.ClusterPolicy
}

// waitFailed waits for an action that must fail and returns it.
func (a *agentProc) waitFailed(id string) *api.Action {
	a.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	_, _ = a.client.WaitAction(ctx, id, nil)
	act, err := a.client.GetAction(ctx, id)
	if err != nil || act.Status != "FAILED" {
		a.t.Fatalf("action %s: %+v, %v; want FAILED", id, act, err)
	}
	return act
}

func groupExists(t *testing.T, n *novatest.Nova, id string) bool {
	t.Helper()
	_, err := servergroups.Get(context.Background(), n.Compute("2.56"), id).Extract()
	if err != nil && !gophercloud.ResponseCodeIs(err, 404) {
		t.Fatal(err)
	}
	return err == nil
}

// TestNovaAffinityPolicy runs Senlin's affinity scenarios through the API
// against the real Nova (three hosts, one named with drs):
//   - S2 anti-affinity: attach creates the group, three servers land on
//     three hosts, a fourth fails with NoValidHost as its node's reason, a
//     shrinking resize passes untouched, detach deletes the group;
//   - S1 affinity: the profile's group is inherited, a node created into
//     the cluster and a scale-out's land on one host, detach leaves it;
//   - S3: the DRS extension sends every server to host-drs-1.
func TestNovaAffinityPolicy(t *testing.T) {
	n := novatest.Shared(t)
	a := startAgentWith(t, agentOptions{env: n.Env()}, t.TempDir())
	compute := n.Compute("2.56")

	// S2, anti-affinity.
	novaProfile(a, n, "aa-prof", nil)
	a.waitAction(a.createCluster("aa", "aa-prof", 0, nil))
	// With the CLI, as docs/policies.md shows it.
	spec := filepath.Join(t.TempDir(), "spread.yaml")
	if err := os.WriteFile(spec, []byte("type: senlin.policy.affinity\nversion: 1.0\nproperties:\n  servergroup:\n    name: aa-spread\n    policies: anti-affinity\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{{"policy", "create", "-spec-file", spec, "spread"}, {"cluster", "policy-attach", "-wait", "aa", "spread"},
		{"cluster", "scale-out", "-wait", "-count", "3", "aa"}} {
		if out, errOut, code := a.grove(args...); code != 0 {
			t.Fatalf("grove %v: %d\n%s\n%s", args, code, out, errOut)
		}
	}
	b := a.binding("aa", "spread")
	gid, _ := b.Data["servergroup_id"].(string)
	if gid == "" || b.Data["inherited_group"] != false || b.Priority != 300 {
		t.Fatalf("binding %+v, want a created group at priority 300", b)
	}
	if g, err := servergroups.Get(context.Background(), compute, gid).Extract(); err != nil || g.Name != "aa-spread" || g.Policies[0] != "anti-affinity" {
		t.Fatalf("the created group: %+v, %v", g, err)
	}
	var acts struct {
		Actions []api.Action `json:"actions"`
	}
	a.mustDo(http.MethodGet, "/v1/actions?action=CLUSTER_SCALE_OUT&target="+a.cluster("aa").ID, nil, &acts)
	if len(acts.Actions) != 1 || acts.Actions[0].Status != "SUCCEEDED" {
		t.Fatalf("the scale-out's action: %+v", acts.Actions)
	}
	act := &acts.Actions[0]
	if pl, _ := act.Data["placement"].(map[string]any); pl["count"] != float64(3) || len(pl["placements"].([]any)) != 3 {
		t.Errorf("scale-out's placement %v", act.Data["placement"])
	}
	hosts := map[string]bool{}
	for _, nd := range a.nodes(a.cluster("aa").ID) {
		hosts[nd.Data["host"].(string)] = true
		if pl, _ := nd.Data["placement"].(map[string]any); pl["servergroup"] != gid {
			t.Errorf("node %s placement %v", nd.Name, nd.Data["placement"])
		}
	}
	if len(hosts) != 3 {
		t.Errorf("three servers on hosts %v, want three", hosts)
	}
	a.waitFailed(a.clusterAction("aa", "scale_out", map[string]any{"count": 1}))
	var failed []api.Node
	for _, nd := range a.nodes(a.cluster("aa").ID) {
		if nd.Status == "ERROR" {
			failed = append(failed, nd)
		}
	}
	if len(failed) != 1 || !strings.Contains(failed[0].StatusReason, "No valid host") {
		t.Errorf("the fourth node: %+v; want one ERROR node failed by Nova's NoValidHost", failed)
	}
	act = a.waitAction(a.clusterAction("aa", "resize", map[string]any{"adjustment_type": "CHANGE_IN_CAPACITY", "number": -1}))
	if _, ok := act.Data["placement"]; ok {
		t.Errorf("a shrinking resize got placement data %v", act.Data["placement"])
	}
	a.waitAction(a.clusterAction("aa", "policy_detach", map[string]any{"policy_id": "spread"}))
	if groupExists(t, n, gid) {
		t.Error("detach left the group the policy created")
	}

	// S1, affinity, the profile's group.
	g, err := servergroups.Create(context.Background(), compute, servergroups.CreateOpts{Name: "s1-together", Policies: []string{"affinity"}}).Extract()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = servergroups.Delete(context.Background(), compute, g.ID).ExtractErr() })
	novaProfile(a, n, "s1-prof", map[string]any{"scheduler_hints": map[string]any{"group": "s1-together"}})
	a.waitAction(a.createCluster("s1", "s1-prof", 0, nil))
	affinityPolicy(a, "apart", nil)
	refused := a.waitFailed(a.clusterAction("s1", "policy_attach", map[string]any{"policy_id": "apart"}))
	if !strings.Contains(refused.StatusReason, "'s1-together'") || !strings.Contains(refused.StatusReason, "do not match") {
		t.Errorf("an anti-affinity policy on an affinity group: %q", refused.StatusReason)
	}
	affinityPolicy(a, "together", map[string]any{"servergroup": map[string]any{"policies": "affinity"}})
	a.waitAction(a.clusterAction("s1", "policy_attach", map[string]any{"policy_id": "together"}))
	if b := a.binding("s1", "together"); b.Data["servergroup_id"] != g.ID || b.Data["inherited_group"] != true {
		t.Fatalf("binding %+v, want the inherited group", b.Data)
	}
	r := a.mustDo(http.MethodPost, "/v1/nodes", map[string]any{"node": map[string]any{"name": "s1-first", "profile_id": "s1-prof", "cluster_id": "s1"}}, nil)
	a.waitAction(r.ActionID())
	a.waitAction(a.clusterAction("s1", "scale_out", map[string]any{"count": 2}))
	hosts = map[string]bool{}
	for _, nd := range a.nodes(a.cluster("s1").ID) {
		hosts[nd.Data["host"].(string)] = true
		if pl, _ := nd.Data["placement"].(map[string]any); pl["servergroup"] != g.ID {
			t.Errorf("node %s placement %v", nd.Name, nd.Data["placement"])
		}
	}
	if len(hosts) != 1 {
		t.Errorf("three servers on hosts %v, want one", hosts)
	}
	a.waitAction(a.clusterAction("s1", "policy_detach", map[string]any{"policy_id": "together"}))
	if !groupExists(t, n, g.ID) {
		t.Error("detach deleted the inherited group")
	}

	// S3, the DRS extension.
	novaProfile(a, n, "drs-prof", nil)
	a.waitAction(a.createCluster("drs", "drs-prof", 0, nil))
	affinityPolicy(a, "drs", map[string]any{"enable_drs_extension": true, "servergroup": map[string]any{"policies": "soft-anti-affinity"}})
	a.waitAction(a.clusterAction("drs", "policy_attach", map[string]any{"policy_id": "drs"}))
	act = a.waitAction(a.clusterAction("drs", "scale_out", map[string]any{"count": 2}))
	for _, p := range act.Data["placement"].(map[string]any)["placements"].([]any) {
		if p.(map[string]any)["zone"] != "nova:host-drs-1" {
			t.Errorf("placement %v, want zone nova:host-drs-1", p)
		}
	}
	for _, nd := range a.nodes(a.cluster("drs").ID) {
		if nd.Data["hypervisor_hostname"] != "host-drs-1" {
			t.Errorf("node %s on %v, want host-drs-1", nd.Name, nd.Data["hypervisor_hostname"])
		}
	}
	drsGroup := a.binding("drs", "drs").Data["servergroup_id"].(string)
	a.waitAction(a.clusterAction("drs", "policy_detach", map[string]any{"policy_id": "drs"}))
	if groupExists(t, n, drsGroup) {
		t.Error("detach left the DRS cluster's group")
	}
	for _, c := range []string{"aa", "s1", "drs"} {
		id := a.cluster(c).ID
		r := a.mustDo(http.MethodDelete, "/v1/clusters/"+c, nil, nil)
		a.waitAction(r.ActionID())
		if left := novaServers(t, n, id); len(left) != 0 {
			t.Errorf("cluster %s left %d servers", c, len(left))
		}
	}
}

// TestContainerAffinityPolicy runs the policy through the API on a
// container.docker cluster over two Podman services of the test's own
// (GROVE_DOCKER_HOSTS): hard anti-affinity puts two containers on the two
// engines and fails the third node with the policy's reason; a soft
// anti-affinity cluster spreads four over both evenly.
func TestContainerAffinityPolicy(t *testing.T) {
	hosts := containertest.StartEngines(t, 2)
	a := startAgentWith(t, agentOptions{env: []string{"GROVE_DOCKER_HOSTS=e1=" + hosts[0] + ",e2=" + hosts[1]}}, t.TempDir())
	a.mustDo(http.MethodPost, "/v1/profiles", map[string]any{"profile": map[string]any{"name": "web",
		"spec": map[string]any{"type": "container.docker", "version": "1.0",
			"properties": map[string]any{"image": container.DemoImage, "network": "host", "stop_timeout": 1}}}}, nil)

	a.waitAction(a.createCluster("apart", "web", 0, nil))
	affinityPolicy(a, "one-per-engine", nil)
	a.waitAction(a.clusterAction("apart", "policy_attach", map[string]any{"policy_id": "one-per-engine"}))
	a.waitFailed(a.clusterAction("apart", "scale_out", map[string]any{"count": 3}))
	on := map[string]int{}
	var refused []string
	for _, nd := range a.nodes(a.cluster("apart").ID) {
		switch nd.Status {
		case "ACTIVE":
			on[nd.Data["host"].(string)]++
		case "ERROR":
			refused = append(refused, nd.StatusReason)
		}
	}
	if on["e1"] != 1 || on["e2"] != 1 || len(refused) != 1 || !strings.Contains(refused[0], "Hard anti-affinity") {
		t.Errorf("containers per engine %v, refused %q; want one on each and the third refused", on, refused)
	}

	a.waitAction(a.createCluster("spread", "web", 0, nil))
	affinityPolicy(a, "even", map[string]any{"servergroup": map[string]any{"policies": "soft-anti-affinity"}})
	a.waitAction(a.clusterAction("spread", "policy_attach", map[string]any{"policy_id": "even"}))
	a.waitAction(a.clusterAction("spread", "scale_out", map[string]any{"count": 4}))
	on = map[string]int{}
	for _, nd := range a.nodes(a.cluster("spread").ID) {
		on[nd.Data["host"].(string)]++
	}
	if on["e1"] != 2 || on["e2"] != 2 {
		t.Errorf("containers per engine %v, want two on each", on)
	}
	for _, c := range []string{"apart", "spread"} {
		a.waitAction(a.mustDo(http.MethodDelete, "/v1/clusters/"+c, nil, nil).ActionID())
	}
}

// TestVSphereAffinityPolicy runs the policy through the API on a vsphere.vm
// cluster in the simulator: a scale-out puts three VMs on the compute
// cluster's three ESXi hosts and makes a mandatory anti-affinity DRS rule
// of them, read back from vCenter; a scale-in takes the removed VM out of
// the rule, and detach deletes it.
func TestVSphereAffinityPolicy(t *testing.T) {
	_, finder := vcsim(t)
	a := startAgent(t, t.TempDir())
	a.mustDo(http.MethodPost, "/v1/profiles", map[string]any{"profile": map[string]any{"name": "vm",
		"spec": map[string]any{"type": "vsphere.vm", "version": "1.0",
			"properties": map[string]any{"cluster": vcsimtest.Cluster, "template": vcsimtest.Template, "num_cpus": 1, "memory_mb": 128}}}}, nil)
	a.waitAction(a.createCluster("vms", "vm", 0, nil))
	affinityPolicy(a, "apart", nil)
	a.waitAction(a.clusterAction("vms", "policy_attach", map[string]any{"policy_id": "apart"}))
	a.waitAction(a.clusterAction("vms", "scale_out", map[string]any{"count": 3}))
	id := a.cluster("vms").ID
	cl, err := finder.ClusterComputeResource(context.Background(), vcsimtest.Cluster)
	if err != nil {
		t.Fatal(err)
	}
	rule := func() *vsphere.Rule {
		t.Helper()
		rs, err := vsphere.Rules(context.Background(), cl, id)
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
	vms := func() []string {
		var out []string
		for _, nd := range a.nodes(id) {
			out = append(out, nd.Data["moid"].(string))
		}
		slices.Sort(out)
		return out
	}
	hosts := map[string]bool{}
	for _, nd := range a.nodes(id) {
		hosts[nd.Data["host"].(string)] = true
	}
	if len(hosts) != 3 {
		t.Errorf("three VMs on hosts %v, want three", hosts)
	}
	r := rule()
	if r == nil || r.Type != vsphere.AntiAffinity || !r.Mandatory || !slices.Equal(sorted(r.VMs), vms()) {
		t.Fatalf("rule %+v, want a mandatory anti-affinity rule of %v", r, vms())
	}
	a.waitAction(a.clusterAction("vms", "scale_in", map[string]any{"count": 1}))
	if r := rule(); r == nil || !slices.Equal(sorted(r.VMs), vms()) || len(r.VMs) != 2 {
		t.Errorf("after a scale-in: rule %+v, want %v", r, vms())
	}
	a.waitAction(a.clusterAction("vms", "policy_detach", map[string]any{"policy_id": "apart"}))
	if r := rule(); r != nil {
		t.Errorf("detach left rule %+v", r)
	}
	a.waitAction(a.mustDo(http.MethodDelete, "/v1/clusters/vms", nil, nil).ActionID())
}

func sorted(s []string) []string {
	out := slices.Clone(s)
	slices.Sort(out)
	return out
}
