package e2e

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/gophercloud/gophercloud/v2"
	"github.com/gophercloud/gophercloud/v2/openstack/loadbalancer/v2/listeners"
	"github.com/gophercloud/gophercloud/v2/openstack/loadbalancer/v2/loadbalancers"
	"github.com/gophercloud/gophercloud/v2/openstack/loadbalancer/v2/monitors"
	"github.com/gophercloud/gophercloud/v2/openstack/loadbalancer/v2/pools"

	"github.com/grovehq/grove/internal/novatest"
	"github.com/grovehq/grove/internal/octaviatest"
)

// groveMembers are the pool's members named by the policy, by node id.
func groveMembers(t *testing.T, c *gophercloud.ServiceClient, pool string) map[string]pools.Member {
	t.Helper()
	pages, err := pools.ListMembers(c, pool, pools.ListMembersOpts{}).AllPages(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	ms, err := pools.ExtractMembers(pages)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]pools.Member{}
	for _, m := range ms {
		if strings.HasPrefix(m.Name, "grove-") {
			out[m.Name[len(m.Name)-36:]] = m
		}
	}
	return out
}

func nodeIDs(a *agentProc, cluster string) []string {
	var out []string
	for _, n := range a.nodes(cluster) {
		out = append(out, n.ID)
	}
	slices.Sort(out)
	return out
}

func memberNodes(m map[string]pools.Member) []string {
	var out []string
	for id := range m {
		out = append(out, id)
	}
	slices.Sort(out)
	return out
}

func lbPolicy(a *agentProc, name string, props map[string]any) string {
	a.t.Helper()
	var out struct {
		Policy struct {
			ID string `json:"id"`
		} `json:"policy"`
	}
	a.mustDo(http.MethodPost, "/v1/policies", map[string]any{"policy": map[string]any{"name": name,
		"spec": map[string]any{"type": "senlin.policy.loadbalance", "version": "1.3", "properties": props}}}, &out)
	return out.Policy.ID
}

// TestOctaviaLoadBalancePolicy: senlin.policy.loadbalance against a real
// Octavia (Debian's, amphora provider on no-op drivers) in front of a
// 3-node os.nova.server cluster on a real Nova, logged in through the
// profile's cloud as the Nova driver does. Attach creates the load
// balancer, listener, pool and health monitor with 3 members and shows the
// VIP in the cluster's data; a scale-out to 5 adds 2 members; a scale-in
// to 2 removes exactly the victims' members; a recreated node's member is
// replaced; detach deletes what the policy created. A pre-existing load
// balancer is adopted and left in place on detach.
func TestOctaviaLoadBalancePolicy(t *testing.T) {
	n := novatest.Shared(t)
	octaviatest.Need(t)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	o, err := octaviatest.StartWith(ctx, t.TempDir(), octaviatest.Options{NovaCloudsYAML: n.CloudsYAML})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(o.Stop)
	lbc := o.LoadBalancer()
	a := startAgentWith(t, agentOptions{env: append(n.Env(), "OS_CLIENT_CONFIG_FILE="+o.CloudsYAML)}, t.TempDir())
	novaProfile(a, n, "lb-prof", map[string]any{"context": map[string]any{"cloud": "grove-openstack"}, "networks": []any{map[string]any{"network": "private"}}})
	a.waitAction(a.createCluster("lbc", "lb-prof", 3, nil))
	// A listener Octavia refuses (TERMINATED_HTTPS without a certificate)
	// fails the attach, and the load balancer made for it goes again.
	lbPolicy(a, "broken", map[string]any{"pool": map[string]any{"subnet": o.SubnetID},
		"vip": map[string]any{"subnet": o.SubnetID, "protocol": "TERMINATED_HTTPS", "protocol_port": 443}, "lb_status_timeout": 60})
	refused := a.waitFailed(a.clusterAction("lbc", "policy_attach", map[string]any{"policy_id": "broken"}))
	if !strings.Contains(refused.StatusReason, "Failed in creating loadbalancer") {
		t.Fatalf("attach with a refused listener: %s", refused.StatusReason)
	}
	eventually(t, time.Minute, "the half-made load balancer to be deleted", func() (bool, string) {
		pages, err := loadbalancers.List(lbc, loadbalancers.ListOpts{Name: "grove-lbc"}).AllPages(ctx)
		if err != nil {
			return false, err.Error()
		}
		lbs, err := loadbalancers.ExtractLoadBalancers(pages)
		return err == nil && len(lbs) == 0, fmt.Sprintf("%d left", len(lbs))
	})
	props := map[string]any{"pool": map[string]any{"subnet": o.SubnetID, "protocol_port": 8080},
		"vip": map[string]any{"subnet": o.SubnetID}, "lb_status_timeout": 60}
	polID := lbPolicy(a, "lb", props)
	a.waitAction(a.clusterAction("lbc", "policy_attach", map[string]any{"policy_id": "lb"}))

	bd := a.binding("lbc", "lb").Data
	lbID, _ := bd["loadbalancer"].(string)
	poolID, _ := bd["pool"].(string)
	lis, _ := bd["listener"].(string)
	hm, _ := bd["healthmonitor"].(string)
	if lbID == "" || poolID == "" || lis == "" || hm == "" || bd["preexisting"] != false {
		t.Fatalf("binding data: %v", bd)
	}
	lb, err := loadbalancers.Get(ctx, lbc, lbID).Extract()
	if err != nil || lb.ProvisioningStatus != "ACTIVE" || lb.VipSubnetID != o.SubnetID {
		t.Fatalf("load balancer: %+v %v", lb, err)
	}
	if l, err := listeners.Get(ctx, lbc, lis).Extract(); err != nil || l.ProtocolPort != 80 || l.Protocol != "HTTP" {
		t.Fatalf("listener: %+v %v", l, err)
	}
	if p, err := pools.Get(ctx, lbc, poolID).Extract(); err != nil || p.LBMethod != "ROUND_ROBIN" {
		t.Fatalf("pool: %+v %v", p, err)
	}
	if m, err := monitors.Get(ctx, lbc, hm).Extract(); err != nil || m.Type != "PING" || m.Delay != 10 || m.MaxRetries != 3 {
		t.Fatalf("health monitor: %+v %v", m, err)
	}
	members := groveMembers(t, lbc, poolID)
	if got, want := memberNodes(members), nodeIDs(a, "lbc"); !slices.Equal(got, want) {
		t.Fatalf("members after attach: %v, want the nodes %v", got, want)
	}
	for _, nd := range a.nodes("lbc") {
		if m := members[nd.ID]; m.Address == "" || m.ProtocolPort != 8080 {
			t.Errorf("member of %s: %q:%d", nd.Name, m.Address, m.ProtocolPort)
		}
	}
	vips, _ := a.cluster("lbc").Data["loadbalancers"].(map[string]any)
	if v, _ := vips[polID].(map[string]any); v["vip_address"] != o.VIPAddress {
		t.Fatalf("cluster data loadbalancers: %v, want %s for policy %s", vips, o.VIPAddress, polID)
	}

	a.waitAction(a.clusterAction("lbc", "scale_out", map[string]any{"count": 2}))
	if got, want := memberNodes(groveMembers(t, lbc, poolID)), nodeIDs(a, "lbc"); len(got) != 5 || !slices.Equal(got, want) {
		t.Fatalf("members after scale-out: %v, want %v", got, want)
	}

	before := nodeIDs(a, "lbc")
	act := a.waitAction(a.clusterAction("lbc", "scale_in", map[string]any{"count": 3}))
	after := nodeIDs(a, "lbc")
	if got := memberNodes(groveMembers(t, lbc, poolID)); len(got) != 2 || !slices.Equal(got, after) {
		t.Fatalf("members after scale-in: %v, want the remaining nodes %v (action data %v)", got, after, act.Data)
	}
	if len(before) != 5 {
		t.Fatalf("before the scale-in: %v", before)
	}

	// A recreated node's member is replaced.
	target := a.nodes("lbc")[0]
	oldMember := groveMembers(t, lbc, poolID)[target.ID].ID
	r := a.mustDo(http.MethodPost, "/v1/nodes/"+target.ID+"/actions", map[string]any{"recover": map[string]any{"operation": "RECREATE"}}, nil)
	a.waitAction(r.ActionID())
	ms := groveMembers(t, lbc, poolID)
	if m, ok := ms[target.ID]; !ok || m.ID == oldMember || len(ms) != 2 {
		t.Fatalf("after recreating %s: members %+v (old member %s)", target.ID, ms, oldMember)
	}

	a.waitAction(a.clusterAction("lbc", "policy_detach", map[string]any{"policy_id": "lb"}))
	if _, err := loadbalancers.Get(ctx, lbc, lbID).Extract(); !gophercloud.ResponseCodeIs(err, 404) {
		t.Fatalf("detach left the load balancer it created: %v", err)
	}
	if _, ok := a.cluster("lbc").Data["loadbalancers"]; ok {
		t.Errorf("detach left the VIP in the cluster's data: %v", a.cluster("lbc").Data)
	}

	// A pre-existing load balancer, listener and pool are adopted and
	// left in place.
	pre, err := loadbalancers.Create(ctx, lbc, loadbalancers.CreateOpts{Name: "shared", VipSubnetID: o.SubnetID}).Extract()
	if err != nil {
		t.Fatal(err)
	}
	wait := func() {
		t.Helper()
		if _, err := octaviatest.WaitLoadBalancer(ctx, lbc, pre.ID, "ACTIVE"); err != nil {
			t.Fatal(err)
		}
	}
	wait()
	pl, err := listeners.Create(ctx, lbc, listeners.CreateOpts{LoadbalancerID: pre.ID, Protocol: "HTTP", ProtocolPort: 80}).Extract()
	if err != nil {
		t.Fatal(err)
	}
	wait()
	pp, err := pools.Create(ctx, lbc, pools.CreateOpts{ListenerID: pl.ID, Protocol: "HTTP", LBMethod: "ROUND_ROBIN"}).Extract()
	if err != nil {
		t.Fatal(err)
	}
	wait()
	pm, err := monitors.Create(ctx, lbc, monitors.CreateOpts{PoolID: pp.ID, Type: "TCP", Delay: 5, Timeout: 3, MaxRetries: 2}).Extract()
	if err != nil {
		t.Fatal(err)
	}
	wait()
	lbPolicy(a, "shared-lb", map[string]any{"loadbalancer": pre.ID, "pool": map[string]any{"subnet": o.SubnetID, "id": pp.ID},
		"vip": map[string]any{"subnet": o.SubnetID}, "lb_status_timeout": 60})
	a.waitAction(a.clusterAction("lbc", "policy_attach", map[string]any{"policy_id": "shared-lb"}))
	bd = a.binding("lbc", "shared-lb").Data
	// The monitor is found in Octavia's status tree, under the key
	// Octavia sends (health_monitor).
	if bd["preexisting"] != true || bd["loadbalancer"] != pre.ID || bd["pool"] != pp.ID || bd["healthmonitor"] != pm.ID {
		t.Fatalf("binding data of the adopted load balancer: %v (monitor %s)", bd, pm.ID)
	}
	if got := memberNodes(groveMembers(t, lbc, pp.ID)); !slices.Equal(got, nodeIDs(a, "lbc")) {
		t.Fatalf("members of the adopted pool: %v", got)
	}
	a.waitAction(a.clusterAction("lbc", "policy_detach", map[string]any{"policy_id": "shared-lb"}))
	still, err := loadbalancers.Get(ctx, lbc, pre.ID).Extract()
	if err != nil || still.ProvisioningStatus != "ACTIVE" {
		t.Fatalf("detach must leave the adopted load balancer: %+v %v", still, err)
	}
	if got := groveMembers(t, lbc, pp.ID); len(got) != 0 {
		t.Fatalf("detach left members in the adopted pool: %v", got)
	}
	if _, err := monitors.Get(ctx, lbc, pm.ID).Extract(); err != nil {
		t.Fatalf("detach must leave the adopted pool's monitor: %v", err)
	}
}
