package octaviatest_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gophercloud/gophercloud/v2"
	"github.com/gophercloud/gophercloud/v2/openstack/loadbalancer/v2/listeners"
	"github.com/gophercloud/gophercloud/v2/openstack/loadbalancer/v2/loadbalancers"
	"github.com/gophercloud/gophercloud/v2/openstack/loadbalancer/v2/monitors"
	"github.com/gophercloud/gophercloud/v2/openstack/loadbalancer/v2/pools"

	"github.com/grovehq/grove/internal/octaviatest"
	"github.com/grovehq/grove/internal/proctest"
	"github.com/grovehq/grove/internal/pyharness"
)

// createLB creates a load balancer, waits for it to be ACTIVE and deletes
// it, cascading, when the test ends.
func createLB(t *testing.T, o *octaviatest.Octavia, c *gophercloud.ServiceClient, opts loadbalancers.CreateOpts) *loadbalancers.LoadBalancer {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	lb, err := loadbalancers.Create(ctx, c, opts).Extract()
	if err != nil {
		t.Fatalf("create load balancer %s: %v", opts.Name, err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		// A test that failed half-way may leave it PENDING_*; a delete is
		// refused until it settles.
		_, _ = octaviatest.WaitLoadBalancer(ctx, c, lb.ID, "ACTIVE", "ERROR", "DELETED")
		err := loadbalancers.Delete(ctx, c, lb.ID, loadbalancers.DeleteOpts{Cascade: true}).ExtractErr()
		if err != nil && !gophercloud.ResponseCodeIs(err, 404) {
			t.Errorf("delete load balancer %s: %v", lb.ID, err)
		}
	})
	if lb.ProvisioningStatus != "PENDING_CREATE" {
		t.Errorf("a new load balancer is %s, want PENDING_CREATE", lb.ProvisioningStatus)
	}
	return active(t, ctx, c, lb.ID)
}

// active waits for a load balancer to be ACTIVE and fails on ERROR.
func active(t *testing.T, ctx context.Context, c *gophercloud.ServiceClient, id string) *loadbalancers.LoadBalancer {
	t.Helper()
	lb, err := octaviatest.WaitLoadBalancer(ctx, c, id, "ACTIVE", "ERROR")
	if err != nil {
		t.Fatal(err)
	}
	if lb.ProvisioningStatus != "ACTIVE" {
		t.Fatalf("load balancer %s is %s, want ACTIVE", id, lb.ProvisioningStatus)
	}
	return lb
}

// pendingUpdate checks that a change to a child put its load balancer in
// PENDING_UPDATE, which the API does before it answers.
func pendingUpdate(t *testing.T, ctx context.Context, c *gophercloud.ServiceClient, id, what string) {
	t.Helper()
	lb, err := loadbalancers.Get(ctx, c, id).Extract()
	if err != nil {
		t.Fatal(err)
	}
	if lb.ProvisioningStatus != "PENDING_UPDATE" && lb.ProvisioningStatus != "ACTIVE" {
		t.Fatalf("after %s the load balancer is %s, want PENDING_UPDATE (or ACTIVE when the worker was quick)", what, lb.ProvisioningStatus)
	}
}

func memberAddresses(t *testing.T, ctx context.Context, c *gophercloud.ServiceClient, poolID string) map[string]pools.Member {
	t.Helper()
	pages, err := pools.ListMembers(c, poolID, nil).AllPages(ctx)
	if err != nil {
		t.Fatal(err)
	}
	ms, err := pools.ExtractMembers(pages)
	if err != nil {
		t.Fatal(err)
	}
	byAddr := map[string]pools.Member{}
	for _, m := range ms {
		byAddr[m.Address] = m
	}
	return byAddr
}

func sortedKeys[V any](m map[string]V) []string {
	var ks []string
	for k := range m {
		ks = append(ks, k)
	}
	slices.Sort(ks)
	return ks
}

// The path a load-balancing policy takes, one step at a time: every change
// to a child goes through the controller worker, the load balancer is
// PENDING_UPDATE meanwhile, and ACTIVE again when it is done.
func TestContractLoadBalancerLifecycle(t *testing.T) {
	o := octaviatest.Shared(t)
	c := o.LoadBalancer()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()

	lb := createLB(t, o, c, loadbalancers.CreateOpts{Name: "contract-lifecycle", VipSubnetID: o.SubnetID})
	if lb.VipAddress != o.VIPAddress || lb.VipSubnetID != o.SubnetID || lb.Provider != "amphora" || lb.ProjectID != o.ProjectID {
		t.Errorf("load balancer: vip %s on %s, provider %s, project %s; want %s on %s, amphora, %s",
			lb.VipAddress, lb.VipSubnetID, lb.Provider, lb.ProjectID, o.VIPAddress, o.SubnetID, o.ProjectID)
	}

	l, err := listeners.Create(ctx, c, listeners.CreateOpts{Name: "contract-http", LoadbalancerID: lb.ID,
		Protocol: listeners.ProtocolHTTP, ProtocolPort: 80}).Extract()
	if err != nil {
		t.Fatalf("create listener: %v", err)
	}
	pendingUpdate(t, ctx, c, lb.ID, "a listener create")
	active(t, ctx, c, lb.ID)
	if l, err := listeners.Get(ctx, c, l.ID).Extract(); err != nil || l.ProvisioningStatus != "ACTIVE" {
		t.Fatalf("listener: %+v, %v; want ACTIVE", l, err)
	}

	p, err := pools.Create(ctx, c, pools.CreateOpts{Name: "contract-pool", ListenerID: l.ID,
		LBMethod: pools.LBMethodRoundRobin, Protocol: pools.ProtocolHTTP}).Extract()
	if err != nil {
		t.Fatalf("create pool: %v", err)
	}
	active(t, ctx, c, lb.ID)

	m, err := monitors.Create(ctx, c, monitors.CreateOpts{PoolID: p.ID, Type: monitors.TypeHTTP,
		Delay: 5, Timeout: 3, MaxRetries: 2, URLPath: "/healthz", ExpectedCodes: "200"}).Extract()
	if err != nil {
		t.Fatalf("create health monitor: %v", err)
	}
	active(t, ctx, c, lb.ID)
	if m, err := monitors.Get(ctx, c, m.ID).Extract(); err != nil || m.ProvisioningStatus != "ACTIVE" {
		t.Fatalf("health monitor: %+v, %v; want ACTIVE", m, err)
	}

	for i := 1; i <= 3; i++ {
		_, err := pools.CreateMember(ctx, c, p.ID, pools.CreateMemberOpts{Name: fmt.Sprintf("m%d", i),
			Address: fmt.Sprintf("10.0.0.%d", i), ProtocolPort: 8080, SubnetID: o.SubnetID}).Extract()
		if err != nil {
			t.Fatalf("create member %d: %v", i, err)
		}
		active(t, ctx, c, lb.ID)
	}
	got := memberAddresses(t, ctx, c, p.ID)
	if want := []string{"10.0.0.1", "10.0.0.2", "10.0.0.3"}; !slices.Equal(sortedKeys(got), want) {
		t.Fatalf("members %v, want %v", sortedKeys(got), want)
	}
	for a, m := range got {
		if m.ProvisioningStatus != "ACTIVE" || m.ProtocolPort != 8080 {
			t.Errorf("member %s: %s on port %d, want ACTIVE on 8080", a, m.ProvisioningStatus, m.ProtocolPort)
		}
	}

	// A batch update makes the pool's members exactly these: .1 stays with
	// a new weight, .2 and .3 go, .4 comes.
	weight := 5
	err = pools.BatchUpdateMembers(ctx, c, p.ID, []pools.BatchUpdateMemberOpts{
		{Address: "10.0.0.1", ProtocolPort: 8080, Weight: &weight},
		{Address: "10.0.0.4", ProtocolPort: 8080, SubnetID: &o.SubnetID},
	}).ExtractErr()
	if err != nil {
		t.Fatalf("batch update members: %v", err)
	}
	active(t, ctx, c, lb.ID)
	got = memberAddresses(t, ctx, c, p.ID)
	if want := []string{"10.0.0.1", "10.0.0.4"}; !slices.Equal(sortedKeys(got), want) {
		t.Fatalf("after the batch update members are %v, want %v", sortedKeys(got), want)
	}
	if got["10.0.0.1"].Weight != 5 || got["10.0.0.4"].Weight != 1 {
		t.Errorf("weights: .1 %d, .4 %d; want 5 and the default 1", got["10.0.0.1"].Weight, got["10.0.0.4"].Weight)
	}

	if err := pools.DeleteMember(ctx, c, p.ID, got["10.0.0.4"].ID).ExtractErr(); err != nil {
		t.Fatalf("delete member: %v", err)
	}
	active(t, ctx, c, lb.ID)
	got = memberAddresses(t, ctx, c, p.ID)
	if want := []string{"10.0.0.1"}; !slices.Equal(sortedKeys(got), want) {
		t.Fatalf("after the delete members are %v, want %v", sortedKeys(got), want)
	}

	tree, err := loadbalancers.GetStatuses(ctx, c, lb.ID).Extract()
	if err != nil {
		t.Fatal(err)
	}
	if tree.Loadbalancer == nil || tree.Loadbalancer.ProvisioningStatus != "ACTIVE" || len(tree.Loadbalancer.Listeners) != 1 {
		t.Fatalf("status tree: %+v", tree.Loadbalancer)
	}
	tl := tree.Loadbalancer.Listeners[0]
	if tl.ID != l.ID || len(tl.Pools) != 1 || tl.Pools[0].ID != p.ID || len(tl.Pools[0].Members) != 1 ||
		tl.Pools[0].Members[0].Address != "10.0.0.1" || tl.Pools[0].Members[0].ProvisioningStatus != "ACTIVE" {
		t.Fatalf("status tree's listener: %+v", tl)
	}
	// No health manager runs: nothing ever reports the members up.
	if tree.Loadbalancer.OperatingStatus != "OFFLINE" {
		t.Errorf("operating status %s, want OFFLINE (no health manager)", tree.Loadbalancer.OperatingStatus)
	}

	// A delete without cascade is refused while children exist; with it,
	// everything goes.
	err = loadbalancers.Delete(ctx, c, lb.ID, nil).ExtractErr()
	if !gophercloud.ResponseCodeIs(err, 400) {
		t.Errorf("a delete without cascade of a load balancer with a listener gave %v, want a 400", err)
	}
	if err := loadbalancers.Delete(ctx, c, lb.ID, loadbalancers.DeleteOpts{Cascade: true}).ExtractErr(); err != nil {
		t.Fatalf("cascade delete: %v", err)
	}
	if _, err := octaviatest.WaitLoadBalancer(ctx, c, lb.ID, "DELETED"); err != nil {
		t.Fatal(err)
	}
	if _, err := pools.Get(ctx, c, p.ID).Extract(); !gophercloud.ResponseCodeIs(err, 404) {
		t.Errorf("the pool after a cascade delete: %v, want a 404", err)
	}
	if _, err := listeners.Get(ctx, c, l.ID).Extract(); !gophercloud.ResponseCodeIs(err, 404) {
		t.Errorf("the listener after a cascade delete: %v, want a 404", err)
	}
}

// Octavia's status tree names a pool's monitor "health_monitor";
// gophercloud v2.15.0 decodes it from "healthmonitor", so the monitor
// GetStatuses returns is always empty. A policy reading monitor status
// must read the raw body. When either side changes, this test says so.
func TestContractStatusesHealthMonitorKey(t *testing.T) {
	o := octaviatest.Shared(t)
	c := o.LoadBalancer()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	// Step by step: a single-call create leaves the children
	// PENDING_CREATE (TestContractSingleCallCreateLeavesChildrenPending).
	lb := createLB(t, o, c, loadbalancers.CreateOpts{Name: "contract-statuses", VipSubnetID: o.SubnetID})
	l, err := listeners.Create(ctx, c, listeners.CreateOpts{LoadbalancerID: lb.ID, Protocol: listeners.ProtocolHTTP, ProtocolPort: 80}).Extract()
	if err != nil {
		t.Fatal(err)
	}
	active(t, ctx, c, lb.ID)
	p, err := pools.Create(ctx, c, pools.CreateOpts{ListenerID: l.ID, LBMethod: pools.LBMethodRoundRobin, Protocol: pools.ProtocolHTTP}).Extract()
	if err != nil {
		t.Fatal(err)
	}
	active(t, ctx, c, lb.ID)
	if _, err := monitors.Create(ctx, c, monitors.CreateOpts{PoolID: p.ID, Type: monitors.TypeHTTP, Delay: 5, Timeout: 3, MaxRetries: 2}).Extract(); err != nil {
		t.Fatal(err)
	}
	active(t, ctx, c, lb.ID)
	if _, err := pools.CreateMember(ctx, c, p.ID, pools.CreateMemberOpts{Address: "10.0.1.1", ProtocolPort: 80}).Extract(); err != nil {
		t.Fatal(err)
	}
	active(t, ctx, c, lb.ID)

	resp, err := c.Get(ctx, c.ServiceURL("lbaas", "loadbalancers", lb.ID, "status"), nil, &gophercloud.RequestOpts{KeepResponseBody: true})
	if err != nil {
		t.Fatal(err)
	}
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		t.Fatal(err)
	}
	var raw struct {
		Statuses struct {
			Loadbalancer struct {
				Listeners []struct {
					Pools []map[string]json.RawMessage `json:"pools"`
				} `json:"listeners"`
			} `json:"loadbalancer"`
		} `json:"statuses"`
	}
	if err := json.Unmarshal(body, &raw); err != nil {
		t.Fatalf("%v: %s", err, body)
	}
	ls := raw.Statuses.Loadbalancer.Listeners
	if len(ls) != 1 || len(ls[0].Pools) != 1 {
		t.Fatalf("status tree has no listener with one pool: %s", body)
	}
	pool := ls[0].Pools[0]
	var hm struct {
		ID                 string `json:"id"`
		Type               string `json:"type"`
		ProvisioningStatus string `json:"provisioning_status"`
	}
	if err := json.Unmarshal(pool["health_monitor"], &hm); err != nil || hm.ID == "" || hm.Type != "HTTP" || hm.ProvisioningStatus != "ACTIVE" {
		t.Errorf("Octavia's pool status has no ACTIVE HTTP health_monitor (%v): %s", err, body)
	}
	if _, ok := pool["healthmonitor"]; ok {
		t.Errorf("Octavia now also sends healthmonitor in the status tree: %s", body)
	}

	tree, err := loadbalancers.GetStatuses(ctx, c, lb.ID).Extract()
	if err != nil {
		t.Fatal(err)
	}
	tp := tree.Loadbalancer.Listeners[0].Pools[0]
	if len(tp.Members) != 1 || tp.Members[0].Address != "10.0.1.1" {
		t.Errorf("gophercloud's status tree lost the member: %+v", tp.Members)
	}
	if tp.Monitor.ID != "" {
		t.Errorf("gophercloud now decodes the status tree's monitor (%s): the key mismatch is fixed, update this test and its callers", tp.Monitor.ID)
	}
}

// Octavia 11.0.0 with the jobboard off drops the listeners of a
// single-call create from the controller's flow (ControllerWorker.run_flow
// calls func(*args) without its keyword arguments): the load balancer goes
// ACTIVE and its children stay PENDING_CREATE until each is updated. A
// policy must create children one at a time. When a fixed Octavia is packaged,
// this test says so.
func TestContractSingleCallCreateLeavesChildrenPending(t *testing.T) {
	o := octaviatest.Shared(t)
	c := o.LoadBalancer()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	// Octavia wants the pools of a single-call create named.
	lb := createLB(t, o, c, loadbalancers.CreateOpts{Name: "contract-single-call", VipSubnetID: o.SubnetID,
		Listeners: []listeners.CreateOpts{{Name: "l", Protocol: listeners.ProtocolHTTP, ProtocolPort: 80,
			DefaultPool: &pools.CreateOpts{Name: "p", LBMethod: pools.LBMethodRoundRobin, Protocol: pools.ProtocolHTTP,
				Members: []pools.CreateMemberOpts{{Address: "10.0.2.1", ProtocolPort: 80}}}}}})
	if len(lb.Listeners) != 1 {
		t.Fatalf("the load balancer has listeners %+v, want one", lb.Listeners)
	}
	l, err := listeners.Get(ctx, c, lb.Listeners[0].ID).Extract()
	if err != nil {
		t.Fatal(err)
	}
	if l.ProvisioningStatus == "ACTIVE" {
		t.Fatal("a single-call create's listener is ACTIVE: the packaged Octavia is fixed; say so in the package doc and drop this test")
	}
	if l.ProvisioningStatus != "PENDING_CREATE" {
		t.Fatalf("a single-call create's listener is %s, want PENDING_CREATE", l.ProvisioningStatus)
	}
	// Octavia locks on the load balancer's status, which is ACTIVE: an
	// update of the listener is accepted.
	name := "renamed"
	if _, err = listeners.Update(ctx, c, l.ID, listeners.UpdateOpts{Name: &name}).Extract(); err != nil {
		t.Fatalf("update the PENDING_CREATE listener: %v", err)
	}
	active(t, ctx, c, lb.ID)
	l, err = listeners.Get(ctx, c, l.ID).Extract()
	if err != nil {
		t.Fatal(err)
	}
	p, err := pools.Get(ctx, c, l.DefaultPoolID).Extract()
	if err != nil {
		t.Fatal(err)
	}
	// The update's flow marks the listener, and only it, ACTIVE.
	if l.ProvisioningStatus != "ACTIVE" || p.ProvisioningStatus != "PENDING_CREATE" {
		t.Errorf("after an update of the listener: listener %s, pool %s; want ACTIVE and still PENDING_CREATE", l.ProvisioningStatus, p.ProvisioningStatus)
	}
}

// Under noauth Octavia takes the project from X-Project-Id and refuses a
// create without one. The harness, like keystonemiddleware in a real
// cloud, fills it in from a USER:PROJECT token.
func TestContractProjectFromHeaderOrToken(t *testing.T) {
	o := octaviatest.Shared(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()

	bare := &gophercloud.ServiceClient{ProviderClient: &gophercloud.ProviderClient{}, Endpoint: o.Endpoint, ResourceBase: o.Endpoint + "v2/"}
	_, err := loadbalancers.Create(ctx, bare, loadbalancers.CreateOpts{Name: "contract-noproject", VipSubnetID: o.SubnetID}).Extract()
	if !gophercloud.ResponseCodeIs(err, 400) || !strings.Contains(err.Error(), "Missing project ID") {
		t.Fatalf("a create with neither X-Project-Id nor a token gave %v, want a 400 Missing project ID", err)
	}

	withToken := &gophercloud.ProviderClient{}
	withToken.SetToken(o.Token)
	tc := &gophercloud.ServiceClient{ProviderClient: withToken, Endpoint: o.Endpoint, ResourceBase: o.Endpoint + "v2/"}
	lb := createLB(t, o, tc, loadbalancers.CreateOpts{Name: "contract-token", VipSubnetID: o.SubnetID})
	if lb.ProjectID != o.ProjectID {
		t.Errorf("a load balancer made with token %s is in project %q, want %q", o.Token, lb.ProjectID, o.ProjectID)
	}
}

// A second harness asked for the port of a running one refuses to start.
func TestHarnessRefusesTakenPort(t *testing.T) {
	o := octaviatest.Shared(t)
	_, port, err := net.SplitHostPort(strings.TrimSuffix(strings.TrimPrefix(o.Endpoint, "http://"), "/"))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	second, err := octaviatest.StartWith(ctx, t.TempDir(), octaviatest.Options{Listen: "127.0.0.1:" + port})
	if err == nil {
		second.Stop()
		t.Fatal("a second harness started on a taken port")
	}
	if !strings.Contains(err.Error(), "cannot listen on 127.0.0.1:"+port) {
		t.Fatalf("error %q does not say the port is taken", err)
	}
}

// Each start is a fresh cloud: the database is recreated.
func TestHarnessStartsEmpty(t *testing.T) {
	octaviatest.Need(t)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	dir := t.TempDir()
	o, err := octaviatest.Start(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	c := o.LoadBalancer()
	lb, err := loadbalancers.Create(ctx, c, loadbalancers.CreateOpts{Name: "left-behind", VipSubnetID: o.SubnetID}).Extract()
	if err != nil {
		o.Stop()
		t.Fatal(err)
	}
	active(t, ctx, c, lb.ID)
	o.Stop()

	o, err = octaviatest.Start(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	defer o.Stop()
	pages, err := loadbalancers.List(o.LoadBalancer(), nil).AllPages(ctx)
	if err != nil {
		t.Fatal(err)
	}
	all, err := loadbalancers.ExtractLoadBalancers(pages)
	if err != nil {
		t.Fatal(err)
	}
	if len(all) != 0 {
		t.Fatalf("a restarted harness lists %d load balancers, want none", len(all))
	}
}

// The harness exits, and removes its directory, when the process that
// started it is gone, and stops on SIGTERM.
func TestHarnessDiesWithParentAndStops(t *testing.T) {
	octaviatest.Need(t)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()

	o, err := octaviatest.Start(ctx, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	pid := o.Pid()
	o.Stop()
	if proctest.Live(pid) {
		t.Fatalf("harness %d still runs after Stop", pid)
	}

	// A shell starts the harness in the background and is then killed.
	script, err := octaviatest.WriteHarness(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	pyharness.CheckDiesWithParent(ctx, t, script)
}

// scripts/octavia.sh up starts the harness in the background and prints
// the variables a client needs; with the local Nova running its clouds.yaml
// gains a cloud with both; a second up reuses it; down stops it.
func TestOctaviaScriptUpDown(t *testing.T) {
	octaviatest.Need(t)
	dir := t.TempDir()
	// A stand-in for scripts/nova.sh's directory: a live pid (this test's)
	// and the clouds.yaml the Nova harness writes.
	novaDir := t.TempDir()
	if err := os.WriteFile(filepath.Join(novaDir, "nova.pid"), []byte(strconv.Itoa(os.Getpid())), 0o644); err != nil {
		t.Fatal(err)
	}
	novaYAML := `# The local Nova harness (internal/novatest/nova_harness.py).
{"clouds": {"grove-nova": {"auth_type": "admin_token",
  "auth": {"endpoint": "http://127.0.0.1:1/v2.1/", "token": "admin:admin"},
  "compute_endpoint_override": "http://127.0.0.1:1/v2.1/", "image_endpoint_override": "http://127.0.0.1:1/image/"}}}
`
	if err := os.WriteFile(filepath.Join(novaDir, "clouds.yaml"), []byte(novaYAML), 0o644); err != nil {
		t.Fatal(err)
	}
	run := func(arg string) string {
		t.Helper()
		cmd := exec.Command("../../scripts/octavia.sh", arg)
		cmd.Env = append(os.Environ(), "GROVE_OCTAVIA_DIR="+dir, "GROVE_NOVA_DIR="+novaDir)
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("octavia.sh %s: %v\n%s", arg, err, out)
		}
		return string(out)
	}
	t.Cleanup(func() { run("down") })
	vars := map[string]string{}
	for _, line := range strings.Split(strings.TrimSpace(run("up")), "\n") {
		k, v, ok := strings.Cut(line, "=")
		if !ok {
			t.Fatalf("octavia.sh up printed %q, not KEY=VALUE", line)
		}
		vars[k] = v
	}
	for k, want := range map[string]string{"GROVE_OCTAVIA_PROJECT_ID": "admin", "GROVE_OCTAVIA_TOKEN": "admin:admin",
		"GROVE_OCTAVIA_CLOUDS_YAML": filepath.Join(dir, "clouds.yaml")} {
		if vars[k] != want {
			t.Errorf("%s=%q, want %q", k, vars[k], want)
		}
	}
	ep := vars["GROVE_OCTAVIA_ENDPOINT"]
	if !strings.HasPrefix(ep, "http://127.0.0.1:") || !strings.HasSuffix(ep, "/") || strings.HasSuffix(ep, "v2/") {
		t.Errorf("GROVE_OCTAVIA_ENDPOINT=%q, want http://127.0.0.1:PORT/", ep)
	}
	if vars["GROVE_OCTAVIA_SUBNET_ID"] == "" {
		t.Error("no GROVE_OCTAVIA_SUBNET_ID")
	}
	var clouds struct {
		Clouds map[string]map[string]any `json:"clouds"`
	}
	b, err := os.ReadFile(vars["GROVE_OCTAVIA_CLOUDS_YAML"])
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal([]byte(strings.SplitN(string(b), "\n", 2)[1]), &clouds); err != nil {
		t.Fatalf("clouds.yaml: %v\n%s", err, b)
	}
	both := clouds.Clouds["grove-openstack"]
	if both["load_balancer_endpoint_override"] != ep || both["compute_endpoint_override"] != "http://127.0.0.1:1/v2.1/" || both["auth_type"] != "admin_token" {
		t.Errorf("clouds.yaml's grove-openstack is not the Nova cloud with this Octavia: %v", both)
	}
	if clouds.Clouds["grove-octavia"]["load_balancer_endpoint_override"] != ep {
		t.Errorf("clouds.yaml's grove-octavia: %v", clouds.Clouds["grove-octavia"])
	}
	pid, _ := strconv.Atoi(vars["GROVE_OCTAVIA_PID"])
	if !proctest.Live(pid) {
		t.Fatalf("harness %d is not running after up", pid)
	}
	// The API answers with the project printed.
	req, _ := http.NewRequest("GET", ep+"v2/lbaas/loadbalancers", nil)
	req.Header.Set("X-Project-Id", vars["GROVE_OCTAVIA_PROJECT_ID"])
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || !strings.Contains(string(body), `"loadbalancers": []`) {
		t.Errorf("GET loadbalancers: %s %s", resp.Status, body)
	}
	if again := run("up"); !strings.Contains(again, "GROVE_OCTAVIA_ENDPOINT="+ep) {
		t.Errorf("a second up printed another endpoint:\n%s", again)
	}
	run("down")
	if proctest.Live(pid) {
		t.Errorf("harness %d still runs after down", pid)
	}
}
