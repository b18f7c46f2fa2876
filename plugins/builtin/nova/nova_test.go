package nova_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gophercloud/gophercloud/v2"
	"github.com/gophercloud/gophercloud/v2/openstack/compute/v2/attachinterfaces"
	"github.com/gophercloud/gophercloud/v2/openstack/compute/v2/keypairs"
	"github.com/gophercloud/gophercloud/v2/openstack/compute/v2/servergroups"
	"github.com/gophercloud/gophercloud/v2/openstack/compute/v2/servers"

	"github.com/grovehq/grove/internal/novatest"
	"github.com/grovehq/grove/plugins/builtin/nova"
	"github.com/grovehq/grove/plugins/sdk"
)

type env struct {
	n *novatest.Nova
	c *gophercloud.ServiceClient // an admin's compute client, for looking
}

// setup points the driver at the shared real Nova through the variables
// scripts/nova.sh prints (the endpoint and token form).
func setup(t *testing.T) *env {
	t.Helper()
	n := novatest.Shared(t)
	for _, k := range nova.EnvNames() {
		t.Setenv(k, "")
	}
	for _, kv := range n.Env() {
		k, v, _ := strings.Cut(kv, "=")
		t.Setenv(k, v)
	}
	return &env{n: n, c: n.Compute("2.56")}
}

func (e *env) spec(id string, props map[string]any) sdk.Spec {
	p := map[string]any{"flavor": "m1.tiny", "image": e.n.ImageName, "auto_disk_config": true}
	for k, v := range props {
		p[k] = v
	}
	return sdk.Spec{ID: id, Name: id, Type: nova.TypeName, Version: "1.0", Properties: p}
}

func nodes(cluster string, n int) []sdk.Node {
	out := make([]sdk.Node, n)
	for i := range out {
		out[i] = sdk.Node{ID: cluster + "-id-" + string(rune('a'+i)), Name: cluster + "-" + string(rune('a'+i)), Index: i + 1,
			ClusterID: cluster + "-cid", ClusterName: cluster, Data: map[string]any{}}
	}
	return out
}

func apply(t *testing.T, what string, ns []sdk.Node, res []sdk.Result) {
	t.Helper()
	if len(res) != len(ns) {
		t.Fatalf("%s: %d results for %d nodes", what, len(res), len(ns))
	}
	for i := range ns {
		if res[i].ID != ns[i].ID {
			t.Fatalf("%s: result %d is for %s, not %s", what, i, res[i].ID, ns[i].ID)
		}
		if res[i].Err != nil {
			t.Fatalf("%s: node %s: %v", what, ns[i].Name, res[i].Err)
		}
		ns[i].PhysicalID, ns[i].State, ns[i].Data = res[i].PhysicalID, res[i].State, res[i].Data
	}
}

func ctxT(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	t.Cleanup(cancel)
	return ctx
}

// ofCluster lists the servers carrying a cluster's id in their metadata.
func (e *env) ofCluster(t *testing.T, cid string) []servers.Server {
	t.Helper()
	pages, err := servers.List(e.c, servers.ListOpts{}).AllPages(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	all, err := servers.ExtractServers(pages)
	if err != nil {
		t.Fatal(err)
	}
	var out []servers.Server
	for _, s := range all {
		if s.Metadata["cluster_id"] == cid {
			out = append(out, s)
		}
	}
	return out
}

// mark is where Nova's access log ends once every request made so far is
// in it: eventlet logs a request after answering it, so the test sends a
// request of its own and waits for its line, which comes after theirs.
func (e *env) mark(t *testing.T) int64 {
	t.Helper()
	probe := fmt.Sprintf("grove-mark-%d", time.Now().UnixNano())
	c := e.n.Compute("")
	if _, err := c.Get(context.Background(), c.ServiceURL("flavors")+"?"+probe, nil, nil); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		b, err := os.ReadFile(filepath.Join(e.n.Dir, "access.log"))
		if err != nil {
			t.Fatal(err)
		}
		if i := strings.Index(string(b), probe); i >= 0 {
			if j := strings.IndexByte(string(b[i:]), '\n'); j >= 0 {
				return int64(i + j + 1)
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("Nova's access log never showed the request %s", probe)
		}
		time.Sleep(20 * time.Millisecond) // polling interval
	}
}

// requestsSince are the requests ("GET /v2.1/servers/detail?...") Nova
// logged after mark and before a new mark.
func (e *env) requestsSince(t *testing.T, mark int64) []string {
	t.Helper()
	end := e.mark(t)
	b, err := os.ReadFile(filepath.Join(e.n.Dir, "access.log"))
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, line := range strings.Split(string(b[mark:end]), "\n") {
		if _, req, ok := strings.Cut(line, `"`); ok && !strings.Contains(line, "grove-mark-") {
			req, _, _ = strings.Cut(req, `"`)
			out = append(out, req)
		}
	}
	return out
}

// cleanup deletes whatever servers of the cluster the test left.
func (e *env) cleanup(t *testing.T, d *nova.Driver, p sdk.Spec, ns []sdk.Node) {
	t.Cleanup(func() { d.Delete(context.Background(), p, ns) })
}

func TestValidateNamesPropertyAndValue(t *testing.T) {
	e := setup(t)
	d := nova.New()
	ctx := ctxT(t)
	if ds := d.Validate(ctx, e.spec("ok", map[string]any{"image": e.n.ImageID, "flavor": "1"})); len(ds) > 0 {
		t.Fatalf("a good spec by ids: %v", ds)
	}
	if ds := d.Validate(ctx, e.spec("ok2", nil)); len(ds) > 0 {
		t.Fatalf("a good spec by names: %v", ds)
	}
	cases := []struct {
		name  string
		props map[string]any
		field string
		value string
	}{
		{"image", map[string]any{"image": "no-such-image"}, "properties.image", "no-such-image"},
		{"flavor", map[string]any{"flavor": "m1.huge-nope"}, "properties.flavor", "m1.huge-nope"},
		{"key pair", map[string]any{"key_name": "nokey"}, "properties.key_name", "nokey"},
		{"network", map[string]any{"networks": []any{map[string]any{"network": "no-such-net"}}}, "properties.networks[0].network", "no-such-net"},
		{"ambiguous image", map[string]any{"image": "fakeimage123456"}, "properties.image", "fakeimage123456"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ds := d.Validate(ctx, e.spec("bad", c.props))
			if len(ds) != 1 || ds[0].Field != c.field || !strings.Contains(ds[0].Message, c.value) {
				t.Errorf("Validate = %v, want one diagnostic on %s naming %q", ds, c.field, c.value)
			}
		})
	}
	t.Setenv("OS_ENDPOINT", "http://127.0.0.1:1/v2.1/")
	if ds := nova.New().Validate(ctx, e.spec("down", nil)); len(ds) != 1 || !strings.Contains(ds[0].Message, "127.0.0.1:1") {
		t.Errorf("a cloud that does not answer: %v", ds)
	}
}

// TestCloudsYAML: the driver reaches the same Nova through the clouds.yaml
// the harness writes (cloud grove-nova), named by OS_CLOUD or by the
// profile's context.
func TestCloudsYAML(t *testing.T) {
	e := setup(t)
	for _, k := range nova.EnvNames() {
		t.Setenv(k, "")
	}
	t.Setenv("OS_CLIENT_CONFIG_FILE", e.n.CloudsYAML)
	ctx := ctxT(t)
	if ds := nova.New().Validate(ctx, e.spec("c1", map[string]any{"context": map[string]any{"cloud": "grove-nova"}})); len(ds) > 0 {
		t.Errorf("context.cloud: %v", ds)
	}
	t.Setenv("OS_CLOUD", "grove-nova")
	if ds := nova.New().Validate(ctx, e.spec("c2", map[string]any{"image": "no-such-image"})); len(ds) != 1 || ds[0].Field != "properties.image" {
		t.Errorf("OS_CLOUD: %v", ds)
	}
	// The agent hands the plugin the clouds.yaml it found.
	dir := t.TempDir()
	b, err := os.ReadFile(e.n.CloudsYAML)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(dir, "openstack"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "openstack", "clouds.yaml"), b, 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("OS_CLIENT_CONFIG_FILE", "")
	t.Setenv("XDG_CONFIG_HOME", dir)
	if got := nova.Env()["OS_CLIENT_CONFIG_FILE"]; got != filepath.Join(dir, "openstack", "clouds.yaml") {
		t.Errorf("Env passes OS_CLIENT_CONFIG_FILE=%q", got)
	}
}

func TestCreateCheckRecoverDelete(t *testing.T) {
	e := setup(t)
	d := nova.New()
	ctx := ctxT(t)
	p := e.spec("p1", map[string]any{"metadata": map[string]any{"role": "web"}})
	ns := nodes("web", 3)
	e.cleanup(t, d, p, ns)
	apply(t, "create", ns, d.Create(ctx, p, ns))
	got := e.ofCluster(t, "web-cid")
	if len(got) != 3 {
		t.Fatalf("%d servers of the cluster, want 3", len(got))
	}
	for _, n := range ns {
		s, err := servers.Get(ctx, e.c, n.PhysicalID).Extract()
		if err != nil {
			t.Fatalf("node %s's server: %v", n.Name, err)
		}
		if s.Status != "ACTIVE" || s.Name != n.Name || s.Metadata["cluster_node_id"] != n.ID || s.Metadata["cluster_id"] != "web-cid" ||
			s.Metadata["cluster_node_index"] != string(rune('0'+n.Index)) || s.Metadata["role"] != "web" {
			t.Errorf("server %s: %s %v", s.Name, s.Status, s.Metadata)
		}
		if n.Data["server_id"] != s.ID || n.Data["host"] != s.Host || s.Host == "" || n.Data["zone"] != s.AvailabilityZone || s.AvailabilityZone == "" {
			t.Errorf("node %s data %v; server on %s in %s", n.Name, n.Data, s.Host, s.AvailabilityZone)
		}
		if _, ok := n.Data["addresses"].(map[string]any); !ok {
			t.Errorf("node %s data has no addresses: %v", n.Name, n.Data)
		}
	}
	// Create again (the engine retries after a crash): the same servers.
	for i, r := range d.Create(ctx, p, ns) {
		if r.Err != nil || r.PhysicalID != ns[i].PhysicalID {
			t.Errorf("create again: %v %s, want server %s", r.Err, r.PhysicalID, ns[i].PhysicalID)
		}
	}
	if n := len(e.ofCluster(t, "web-cid")); n != 3 {
		t.Errorf("create again made servers: %d", n)
	}

	// Behind Grove's back: one stopped, one in ERROR, one deleted.
	if err := servers.Stop(ctx, e.c, ns[0].PhysicalID).ExtractErr(); err != nil {
		t.Fatal(err)
	}
	if _, err := novatest.WaitServer(ctx, e.c, ns[0].PhysicalID, "SHUTOFF"); err != nil {
		t.Fatal(err)
	}
	if err := servers.ResetState(ctx, e.c, ns[1].PhysicalID, servers.StateError).ExtractErr(); err != nil {
		t.Fatal(err)
	}
	if err := servers.Delete(ctx, e.c, ns[2].PhysicalID).ExtractErr(); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(time.Minute)
	for {
		_, err := servers.Get(ctx, e.c, ns[2].PhysicalID).Extract()
		if gophercloud.ResponseCodeIs(err, 404) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the server deleted behind Grove's back is still there: %v", err)
		}
		time.Sleep(100 * time.Millisecond) // polling interval
	}
	want := []string{"SHUTOFF", "ERROR", "missing"}
	mark := e.mark(t)
	checked := d.Check(ctx, p, ns)
	// One listing for the batch, and a read by id of the one server the
	// listing lacks (which 404s): not a read per node.
	if calls := e.requestsSince(t, mark); len(calls) != 2 || !strings.Contains(calls[0], "GET /v2.1/servers/detail") ||
		!strings.Contains(calls[1], "GET /v2.1/servers/"+ns[2].PhysicalID) {
		t.Errorf("check of 3 servers asked Nova %d times: %q", len(calls), calls)
	}
	for i, r := range checked {
		if r.Err != nil || r.Healthy || !strings.Contains(r.Reason, want[i]) {
			t.Errorf("check %s: healthy=%v reason=%q err=%v; want dead, %s", ns[i].Name, r.Healthy, r.Reason, r.Err, want[i])
		}
	}

	// REBOOT (HARD by default) starts the stopped one and boots the
	// missing one again; RECREATE replaces the one in ERROR.
	old2 := ns[2].PhysicalID
	res := d.Recover(ctx, p, []sdk.Node{ns[0], ns[2]}, "REBOOT", nil)
	apply(t, "recover by reboot", []sdk.Node{ns[0], ns[2]}, res)
	ns[0], ns[2] = sdkNode(ns[0], res[0]), sdkNode(ns[2], res[1])
	if ns[2].PhysicalID == old2 || ns[2].PhysicalID == "" {
		t.Errorf("the missing server was not booted again: %s", ns[2].PhysicalID)
	}
	old1 := ns[1].PhysicalID
	apply(t, "recover by recreate", ns[1:2], d.Recover(ctx, p, ns[1:2], "", nil))
	if ns[1].PhysicalID == old1 {
		t.Errorf("RECREATE kept server %s", old1)
	}
	if _, err := servers.Get(ctx, e.c, old1).Extract(); !gophercloud.ResponseCodeIs(err, 404) {
		t.Errorf("RECREATE left the old server %s: %v", old1, err)
	}
	for _, r := range d.Check(ctx, p, ns) {
		if !r.Healthy {
			t.Errorf("after recover: %s %s", r.ID, r.Reason)
		}
	}
	if n := len(e.ofCluster(t, "web-cid")); n != 3 {
		t.Errorf("%d servers after recovery, want 3", n)
	}

	// Delete: gone when it returns, and again without error.
	for round := 0; round < 2; round++ {
		for _, r := range d.Delete(ctx, p, ns) {
			if r.Err != nil {
				t.Fatalf("delete round %d: %v", round, r.Err)
			}
		}
	}
	if left := e.ofCluster(t, "web-cid"); len(left) != 0 {
		t.Errorf("delete left %d servers", len(left))
	}
	for _, r := range d.Check(ctx, p, ns) {
		if r.Healthy || !strings.Contains(r.Reason, "missing") {
			t.Errorf("check after delete: %+v", r)
		}
	}
}

func sdkNode(n sdk.Node, r sdk.Result) sdk.Node {
	n.PhysicalID, n.State, n.Data = r.PhysicalID, r.State, r.Data
	return n
}

// TestNoValidHostFailsTheNodeAndLeavesNothing: four servers in an
// anti-affinity group on three hosts: Nova's scheduler finds no host for
// one, which goes ERROR; its node fails with Nova's fault and the server
// is deleted. The other three run on three hosts.
func TestNoValidHostFailsTheNodeAndLeavesNothing(t *testing.T) {
	e := setup(t)
	d := nova.New()
	ctx := ctxT(t)
	sg, err := servergroups.Create(ctx, e.c, servergroups.CreateOpts{Name: "spread", Policies: []string{"anti-affinity"}}).Extract()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = servergroups.Delete(context.Background(), e.c, sg.ID).ExtractErr() })
	p := e.spec("p-aa", nil)
	ns := nodes("aa", len(e.n.Hosts)+1)
	for i := range ns {
		ns[i].Data = map[string]any{"placement": map[string]any{"servergroup": sg.ID, "zone": "nova"}}
	}
	e.cleanup(t, d, p, ns)
	// One node at a time: booted at once, Nova's scheduler may place two
	// on one host before either lands, and the compute host's late check
	// reschedules them, which makes the outcome a race.
	var res []sdk.Result
	for i := range ns {
		res = append(res, d.Create(ctx, p, ns[i:i+1])...)
	}
	hosts := map[string]bool{}
	failed := 0
	for _, r := range res {
		if r.Err != nil {
			failed++
			if msg := r.Err.Error(); !strings.Contains(msg, "went ERROR: No valid host was found") || sdk.IsRetryable(r.Err) {
				t.Errorf("the node without a host: %v; want Nova's fault, not retryable", r.Err)
			}
			continue
		}
		hosts[r.Data["host"].(string)] = true
		if pl, _ := r.Data["placement"].(map[string]any); pl["servergroup"] != sg.ID || pl["zone"] != "nova" {
			t.Errorf("placement data %v", r.Data["placement"])
		}
	}
	if failed != 1 || len(hosts) != len(e.n.Hosts) {
		t.Errorf("%d nodes failed, servers on %d hosts; want 1 and %d", failed, len(hosts), len(e.n.Hosts))
	}
	if got := len(e.ofCluster(t, "aa-cid")); got != len(e.n.Hosts) {
		t.Errorf("%d servers left in Nova, want %d (the ERROR one deleted)", got, len(e.n.Hosts))
	}
}

func TestUpdate(t *testing.T) {
	e := setup(t)
	d := nova.New()
	ctx := ctxT(t)
	p := e.spec("u1", map[string]any{"metadata": map[string]any{"v": "1"}})
	ns := nodes("up", 2)
	e.cleanup(t, d, p, ns)
	apply(t, "create", ns, d.Create(ctx, p, ns))
	ids := []string{ns[0].PhysicalID, ns[1].PhysicalID}

	step := func(id string, props map[string]any) sdk.Spec {
		t.Helper()
		np := e.spec(id, props)
		apply(t, "update to "+id, ns, d.Update(ctx, p, np, ns))
		p = np
		for i, n := range ns {
			if n.PhysicalID != ids[i] {
				t.Errorf("update to %s replaced server %s by %s", id, ids[i], n.PhysicalID)
			}
		}
		return np
	}
	step("u2", map[string]any{"name": "renamed", "metadata": map[string]any{"v": "2"}})
	for _, n := range ns {
		s, _ := servers.Get(ctx, e.c, n.PhysicalID).Extract()
		if s.Name != "renamed" || s.Metadata["v"] != "2" || s.Metadata["cluster_node_id"] != n.ID {
			t.Errorf("after rename: %s %v", s.Name, s.Metadata)
		}
	}
	step("u3", map[string]any{"name": "renamed", "metadata": map[string]any{"v": "2"}, "image": e.n.Image2Name})
	for _, n := range ns {
		s, _ := servers.Get(ctx, e.c, n.PhysicalID).Extract()
		if s.Image["id"] != e.n.Image2ID || s.Status != "ACTIVE" {
			t.Errorf("after the image change: %v %s", s.Image, s.Status)
		}
	}
	step("u4", map[string]any{"name": "renamed", "metadata": map[string]any{"v": "2"}, "image": e.n.Image2Name, "flavor": "m1.small"})
	for _, n := range ns {
		s, _ := servers.Get(ctx, e.c, n.PhysicalID).Extract()
		if s.Flavor["original_name"] != "m1.small" || s.Status != "ACTIVE" {
			t.Errorf("after the flavor change: %v %s", s.Flavor, s.Status)
		}
	}
	// Not updatable: refused, naming the property.
	for _, r := range d.Update(ctx, p, e.spec("u5", map[string]any{"name": "renamed", "metadata": map[string]any{"v": "2"}, "image": e.n.Image2Name,
		"flavor": "m1.small", "key_name": "k"}), ns) {
		if r.Err == nil || !strings.Contains(r.Err.Error(), "key_name") {
			t.Errorf("a key_name change: %v", r.Err)
		}
	}
}

func TestOperations(t *testing.T) {
	e := setup(t)
	d := nova.New()
	ctx := ctxT(t)
	p := e.spec("o1", nil)
	ns := nodes("ops", 1)
	e.cleanup(t, d, p, ns)
	apply(t, "create", ns, d.Create(ctx, p, ns))
	steps := []struct {
		op      string
		params  map[string]any
		status  string
		healthy bool
	}{
		{"stop", nil, "SHUTOFF", false},
		{"start", nil, "ACTIVE", true},
		{"pause", nil, "PAUSED", false},
		{"unpause", nil, "ACTIVE", true},
		{"suspend", nil, "SUSPENDED", false},
		{"resume", nil, "ACTIVE", true},
		{"reboot", map[string]any{"type": "HARD"}, "ACTIVE", true},
		{"reboot", nil, "ACTIVE", true},
		{"rebuild", nil, "ACTIVE", true},
		{"lock", nil, "ACTIVE", true},
		{"unlock", nil, "ACTIVE", true},
		{"change_password", map[string]any{"admin_pass": "s3cret"}, "ACTIVE", true},
		{"rescue", map[string]any{"image_ref": e.n.Image2Name}, "RESCUE", false},
		{"unrescue", nil, "ACTIVE", true},
	}
	for _, s := range steps {
		r := d.Operate(ctx, p, ns, s.op, s.params)[0]
		if r.Err != nil {
			t.Fatalf("%s: %v", s.op, r.Err)
		}
		got, err := servers.Get(ctx, e.c, ns[0].PhysicalID).Extract()
		if err != nil {
			t.Fatal(err)
		}
		if got.Status != s.status || r.Healthy != s.healthy {
			t.Errorf("after %s the server is %s (healthy=%v), want %s (%v)", s.op, got.Status, r.Healthy, s.status, s.healthy)
		}
		if s.op == "lock" && (got.Locked == nil || !*got.Locked) {
			t.Errorf("lock left the server unlocked")
		}
	}
	if r := d.Operate(ctx, p, ns, "change_password", nil)[0]; r.Err == nil || !strings.Contains(r.Err.Error(), "params.admin_pass") {
		t.Errorf("change_password without a password: %v", r.Err)
	}
	if r := d.Operate(ctx, p, ns, "rescue", map[string]any{"image_ref": "no-such-image"})[0]; r.Err == nil || !strings.Contains(r.Err.Error(), "no-such-image") {
		t.Errorf("rescue from an unknown image: %v", r.Err)
	}
	if r := d.Operate(ctx, p, ns, "explode", nil)[0]; r.Err == nil || !strings.Contains(r.Err.Error(), "unpause") {
		t.Errorf("an unknown operation: %v", r.Err)
	}
}

func TestHosts(t *testing.T) {
	e := setup(t)
	d := nova.New()
	ctx := ctxT(t)
	p := e.spec("h1", nil)
	ns := nodes("hosts", 1)
	e.cleanup(t, d, p, ns)
	apply(t, "create", ns, d.Create(ctx, p, ns))
	hosts, err := d.Hosts(ctx)
	if err != nil {
		t.Fatal(err)
	}
	hvs, zones := 0, 0
	running := 0.0
	for _, h := range hosts {
		if h.Err != "" {
			t.Errorf("host %+v", h)
		}
		switch h.Attributes["kind"] {
		case "hypervisor":
			hvs++
			running += h.Load["running_vms"]
			if h.Attributes["state"] != "up" || h.Attributes["status"] != "enabled" || h.Attributes["vcpus"] == "0" || h.Attributes["memory_mib"] == "0" ||
				h.Attributes["zone"] != "nova" {
				t.Errorf("hypervisor %+v", h)
			}
		case "availability_zone":
			zones++
			if h.Name != "nova" || h.Attributes["available"] != "true" {
				t.Errorf("zone %+v", h)
			}
		}
	}
	if hvs != len(e.n.Hosts) || zones != 1 || running < 1 {
		t.Errorf("%d hypervisors, %d zones, %v running VMs; want %d, 1, at least 1: %+v", hvs, zones, running, len(e.n.Hosts), hosts)
	}
	// A project member (noauth2's non-admin user) may not list
	// hypervisors: the zones only.
	t.Setenv("OS_TOKEN", "demo:demo")
	hosts, err = nova.New().Hosts(ctx)
	if err != nil || len(hosts) != 1 || hosts[0].Name != "nova" || hosts[0].Attributes["kind"] != "availability_zone" || hosts[0].Err != "" {
		t.Errorf("a member's hosts: %+v %v; want the zone nova only", hosts, err)
	}
	for _, k := range nova.EnvNames() {
		t.Setenv(k, "")
	}
	if hs, err := nova.New().Hosts(ctx); err != nil || len(hs) != 0 {
		t.Errorf("without a cloud configured: %v %v", hs, err)
	}
}

// TestCreateCutByDeadlineIsResumed: a create whose action times out while
// the servers boot fails its nodes as retryable; the engine's retry finds
// the servers booted (by cluster_node_id) instead of booting more.
func TestCreateCutByDeadlineIsResumed(t *testing.T) {
	e := setup(t)
	d := nova.New()
	p := e.spec("dl", nil)
	ns := nodes("dl", 3)
	e.cleanup(t, d, p, ns)
	if ds := d.Validate(ctxT(t), p); len(ds) > 0 {
		t.Fatal(ds)
	}
	// Boots take Nova here between half a second and two: a 400 ms
	// deadline cuts them after the requests are sent.
	short, cancel := context.WithTimeout(context.Background(), 400*time.Millisecond)
	defer cancel()
	for _, r := range d.Create(short, p, ns) {
		if r.Err != nil && !sdk.IsRetryable(r.Err) {
			t.Errorf("node %s cut by the deadline: %v, not retryable", r.ID, r.Err)
		}
	}
	ctx := ctxT(t)
	// Nova finishes the boot requests it received after the client gave
	// up on them: wait until its count of the cluster's servers has held
	// for two seconds, as the engine's retry comes after a backoff.
	deadline := time.Now().Add(30 * time.Second)
	booted, since := -1, time.Now()
	for time.Now().Before(deadline) {
		if got := len(e.ofCluster(t, "dl-cid")); got != booted {
			booted, since = got, time.Now()
		} else if time.Since(since) > 2*time.Second {
			break
		}
		time.Sleep(100 * time.Millisecond) // polling interval
	}
	apply(t, "create again", ns, d.Create(ctx, p, ns))
	if got := len(e.ofCluster(t, "dl-cid")); got != 3 {
		t.Errorf("%d servers after the retried create (%d booted before it), want 3", got, booted)
	}
	// Delete is bounded by its deadline too: what it could not finish is
	// retryable, and the retry finishes it.
	short, cancel = context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	start := time.Now()
	for _, r := range d.Delete(short, p, ns) {
		if r.Err != nil && !sdk.IsRetryable(r.Err) {
			t.Errorf("node %s's delete cut by the deadline: %v, not retryable", r.ID, r.Err)
		}
	}
	if took := time.Since(start); took > 5*time.Second {
		t.Errorf("a delete with a 300ms deadline took %s", took)
	}
	apply(t, "delete again", ns, d.Delete(ctx, p, ns))
	if got := len(e.ofCluster(t, "dl-cid")); got != 0 {
		t.Errorf("%d servers after the retried delete", got)
	}
}

// TestNetworks: a network named in the profile is resolved (through
// Nova's proxy on a cloud without a catalog) and the servers boot on it.
// (Nova's Neutron test fixture plugs the port but leaves the server's
// addresses empty, so this asks for its interfaces instead.)
func TestNetworks(t *testing.T) {
	e := setup(t)
	d := nova.New()
	ctx := ctxT(t)
	p := e.spec("net", map[string]any{"networks": []any{map[string]any{"network": "private"}}})
	if ds := d.Validate(ctx, p); len(ds) > 0 {
		t.Fatal(ds)
	}
	ns := nodes("net", 1)
	e.cleanup(t, d, p, ns)
	apply(t, "create", ns, d.Create(ctx, p, ns))
	pages, err := attachinterfaces.List(e.c, ns[0].PhysicalID).AllPages(ctx)
	if err != nil {
		t.Fatal(err)
	}
	ifs, err := attachinterfaces.ExtractInterfaces(pages)
	if err != nil {
		t.Fatal(err)
	}
	if len(ifs) != 1 || ifs[0].NetID != privateNet {
		t.Errorf("the server's interfaces: %+v; want one on network private (%s)", ifs, privateNet)
	}
	if _, ok := ns[0].Data["addresses"].(map[string]any); !ok {
		t.Errorf("node data %v has no addresses", ns[0].Data)
	}
}

// privateNet is the id of the network Nova's Neutron fixture calls private.
const privateNet = "3cb9bc59-5699-4588-a4b1-b87f96708bc6"

// TestUpdateNetworks: removing a network from the profile detaches its
// interface from each server and adding one attaches one, keeping the
// servers. Nova's test fixtures cannot hot-plug: the fake driver fails to
// detach a port the server booted with, and to attach one, after Nova's
// API accepted the request. So this checks the requests Nova received and
// that a refused attach fails the node naming the network and the server.
func TestUpdateNetworks(t *testing.T) {
	e := setup(t)
	d := nova.New()
	ctx := ctxT(t)
	p := e.spec("n1", map[string]any{"networks": []any{map[string]any{"network": "private"}}})
	ns := nodes("renet", 1)
	e.cleanup(t, d, p, ns)
	apply(t, "create", ns, d.Create(ctx, p, ns))
	id := ns[0].PhysicalID
	pages, err := attachinterfaces.List(e.c, id).AllPages(ctx)
	if err != nil {
		t.Fatal(err)
	}
	ifs, _ := attachinterfaces.ExtractInterfaces(pages)
	if len(ifs) != 1 || ifs[0].NetID != privateNet {
		t.Fatalf("after boot: interfaces %+v", ifs)
	}
	sent := func(mark int64, prefix string) bool {
		for _, c := range e.requestsSince(t, mark) {
			if strings.HasPrefix(c, prefix) {
				return true
			}
		}
		return false
	}
	p2 := e.spec("n2", nil)
	mark := e.mark(t)
	apply(t, "remove the network", ns, d.Update(ctx, p, p2, ns))
	if !sent(mark, "DELETE /v2.1/servers/"+id+"/os-interface/"+ifs[0].PortID) || ns[0].PhysicalID != id {
		t.Errorf("removing the network did not detach port %s of server %s (now %s)", ifs[0].PortID, id, ns[0].PhysicalID)
	}
	mark = e.mark(t)
	r := d.Update(ctx, p2, e.spec("n3", map[string]any{"networks": []any{map[string]any{"network": "private"}}}), ns)[0]
	if !sent(mark, "POST /v2.1/servers/"+id+"/os-interface") {
		t.Errorf("adding a network asked Nova for no interface")
	}
	if r.Err != nil && (!strings.Contains(r.Err.Error(), "attach network "+privateNet) || !strings.Contains(r.Err.Error(), "renet-a")) {
		t.Errorf("a failed attach names neither the network nor the server: %v", r.Err)
	}
}

// TestAdopt: a server booted outside Grove (on network private, with a key
// pair, metadata, user data and a stale Grove key) is described by id and
// by name as Senlin's do_adopt describes it, the spec validates, and the
// adopted node's result is what Create would have returned, so Check finds
// it healthy and Delete deletes it. A missing server and an ambiguous name
// are errors saying so.
func TestAdopt(t *testing.T) {
	e := setup(t)
	d := nova.New()
	ctx := ctxT(t)
	name := fmt.Sprintf("adoptee-%d", time.Now().UnixNano())
	kp, err := keypairs.Create(ctx, e.c, keypairs.CreateOpts{Name: name}).Extract()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = keypairs.Delete(context.Background(), e.c, name, nil).ExtractErr() })
	boot := func(name string) string {
		t.Helper()
		s, err := servers.Create(ctx, e.c, keypairs.CreateOptsExt{CreateOptsBuilder: servers.CreateOpts{Name: name, ImageRef: e.n.ImageID, FlavorRef: "2",
			Networks: []servers.Network{{UUID: privateNet}}, Metadata: map[string]string{"owner": "ops", "cluster_id": "stale"},
			UserData: []byte("#cloud-config\n")}, KeyName: kp.Name}, nil).Extract()
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = servers.Delete(context.Background(), e.c, s.ID).ExtractErr() })
		if _, err := novatest.WaitServer(ctx, e.c, s.ID, "ACTIVE"); err != nil {
			t.Fatal(err)
		}
		return s.ID
	}
	id := boot(name)
	s, err := servers.Get(ctx, e.c, id).Extract()
	if err != nil {
		t.Fatal(err)
	}

	want := map[string]any{"name": name, "flavor": "m1.small", "image": e.n.ImageID, "key_name": name, "availability_zone": s.AvailabilityZone,
		"metadata": map[string]any{"owner": "ops"}, "networks": []any{map[string]any{"network": privateNet}}, "security_groups": []any{"default"}, "user_data": "#cloud-config\n",
		"auto_disk_config": false, "config_drive": false}
	for _, identity := range []string{id, name} {
		a, err := d.Adopt(ctx, sdk.AdoptRequest{Type: nova.TypeName, Version: "1.0", Identity: identity, Preview: true})
		if err != nil {
			t.Fatalf("preview %s: %v", identity, err)
		}
		got := a.Properties
		for k, v := range want {
			if fmt.Sprint(got[k]) != fmt.Sprint(v) {
				t.Errorf("preview %s: %s is %v, want %v (all: %v)", identity, k, got[k], v, got)
			}
		}
		// The preview names the server, so the engine can refuse one a
		// node already holds; nothing else of a node result.
		if a.Result.PhysicalID != id || a.Result.State != nil || a.Result.Data != nil {
			t.Errorf("preview %s: result %+v, want only the physical id %s", identity, a.Result, id)
		}
	}
	node := sdk.Node{ID: "adopted-id", Name: "adopted", Index: -1}
	a, err := d.Adopt(ctx, sdk.AdoptRequest{Type: nova.TypeName, Version: "1.0", Identity: id, Node: node})
	if err != nil {
		t.Fatal(err)
	}
	p := sdk.Spec{ID: "adopted-p", Name: "adopted-p", Type: nova.TypeName, Version: "1.0", Properties: a.Properties}
	if ds := d.Validate(ctx, p); len(ds) > 0 {
		t.Fatalf("the adopted spec does not validate: %v", ds)
	}
	if a.Result.PhysicalID != id || a.Result.Data["server_name"] != name || a.Result.Data["host"] != s.Host {
		t.Fatalf("adopted node result: %+v", a.Result)
	}
	node.PhysicalID, node.State, node.Data = a.Result.PhysicalID, a.Result.State, a.Result.Data
	if r := d.Check(ctx, p, []sdk.Node{node})[0]; !r.Healthy {
		t.Errorf("check of the adopted node: %+v", r)
	}
	if r := d.Delete(ctx, p, []sdk.Node{node})[0]; r.Err != nil {
		t.Fatalf("delete of the adopted node: %v", r.Err)
	}
	if _, err := servers.Get(ctx, e.c, id).Extract(); !gophercloud.ResponseCodeIs(err, 404) {
		if s, _ := servers.Get(ctx, e.c, id).Extract(); s != nil && s.Status != "DELETED" {
			t.Errorf("the adopted server is still there after its node was deleted: %v %v", s.Status, err)
		}
	}

	for identity, msg := range map[string]string{
		"00000000-0000-4000-8000-000000000000": "has no server with id 00000000-0000-4000-8000-000000000000",
		"no-such-server-" + name:               `has no server with id or name "no-such-server-` + name + `"`,
	} {
		if _, err := d.Adopt(ctx, sdk.AdoptRequest{Type: nova.TypeName, Version: "1.0", Identity: identity, Preview: true}); err == nil || !strings.Contains(err.Error(), msg) {
			t.Errorf("adopt %s: %v, want %q", identity, err, msg)
		}
	}
	twin := name + "-twin"
	boot(twin)
	boot(twin)
	if _, err := d.Adopt(ctx, sdk.AdoptRequest{Type: nova.TypeName, Version: "1.0", Identity: twin, Preview: true}); err == nil || !strings.Contains(err.Error(), "2 servers") || !strings.Contains(err.Error(), "give the id") {
		t.Errorf("adopt by an ambiguous name: %v", err)
	}
}

// TestAdoptSnapshot: adopting with Senlin's snapshot flag snapshots the
// server (Nova's createImage) and makes the snapshot the profile's image,
// recorded in the node's data; a preview snapshots nothing.
func TestAdoptSnapshot(t *testing.T) {
	e := setup(t)
	d := nova.New()
	ctx := ctxT(t)
	name := fmt.Sprintf("snapped-%d", time.Now().UnixNano())
	s, err := servers.Create(ctx, e.c, servers.CreateOpts{Name: name, ImageRef: e.n.ImageID, FlavorRef: "1", Networks: "none"}, nil).Extract()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = servers.Delete(context.Background(), e.c, s.ID).ExtractErr() })
	if _, err := novatest.WaitServer(ctx, e.c, s.ID, "ACTIVE"); err != nil {
		t.Fatal(err)
	}
	legacy := e.n.Compute("")
	imageNamed := func(want string) string {
		t.Helper()
		var list struct {
			Images []struct{ ID, Name string } `json:"images"`
		}
		if _, err := legacy.Get(ctx, legacy.ServiceURL("images")+"?name="+want, &list, nil); err != nil {
			t.Fatal(err)
		}
		for _, img := range list.Images {
			if img.Name == want {
				return img.ID
			}
		}
		return ""
	}
	p, err := d.Adopt(ctx, sdk.AdoptRequest{Type: nova.TypeName, Version: "1.0", Identity: s.ID, Preview: true, Snapshot: true})
	if err != nil || p.Properties["image"] != e.n.ImageID {
		t.Fatalf("a preview with snapshot: %v %v", p.Properties, err)
	}
	node := sdk.Node{ID: "snap-id", Name: "snap", Index: -1}
	if id := imageNamed(name + "-adopted-" + node.ID); id != "" {
		t.Fatalf("a preview made snapshot %s", id)
	}
	a, err := d.Adopt(ctx, sdk.AdoptRequest{Type: nova.TypeName, Version: "1.0", Identity: s.ID, Node: node, Snapshot: true})
	if err != nil {
		t.Fatal(err)
	}
	snap := imageNamed(name + "-adopted-" + node.ID)
	if snap == "" || a.Properties["image"] != snap || a.Result.Data["snapshot_image"] != snap {
		t.Fatalf("adopt with snapshot: image %v, node data %v; Nova's snapshot %q", a.Properties["image"], a.Result.Data, snap)
	}
	t.Cleanup(func() { _, _ = legacy.Delete(context.Background(), legacy.ServiceURL("images", snap), nil) })
	if ds := d.Validate(ctx, sdk.Spec{ID: "snap-p", Type: nova.TypeName, Version: "1.0", Properties: a.Properties}); len(ds) > 0 {
		t.Errorf("the snapshot's spec does not validate: %v", ds)
	}
}
