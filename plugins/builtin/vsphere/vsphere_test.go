package vsphere_test

import (
	"bytes"
	"context"
	"crypto/tls"
	"encoding/json"
	"io"
	"maps"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/vmware/govmomi"
	"github.com/vmware/govmomi/find"
	"github.com/vmware/govmomi/object"
	"github.com/vmware/govmomi/simulator"
	"github.com/vmware/govmomi/vim25/methods"
	"github.com/vmware/govmomi/vim25/mo"
	"github.com/vmware/govmomi/vim25/types"

	"github.com/grovehq/grove/internal/vcsimtest"
	"github.com/grovehq/grove/plugins/builtin/vsphere"
	"github.com/grovehq/grove/plugins/sdk"
)

// recorder sits between the driver and the simulator and records each
// SOAP call's method and body: what Grove asked vSphere for.
type recorder struct {
	mu    sync.Mutex
	calls []call
	// before, when set, runs before a call is passed on.
	before func(method, body string)
	// drop, when set and true for a call, answers it 502 Bad Gateway, as
	// a proxy in front of vCenter does, instead of passing it on.
	drop func(method string) bool
}

type call struct{ method, body string }

var methodRE = regexp.MustCompile(`<(?:\w+:)?Body[^>]*>\s*<(?:\w+:)?(\w+)`)

func (r *recorder) count(method string) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	n := 0
	for _, c := range r.calls {
		if c.method == method {
			n++
		}
	}
	return n
}

func (r *recorder) bodies(method string) []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []string
	for _, c := range r.calls {
		if c.method == method {
			out = append(out, c.body)
		}
	}
	return out
}

func (r *recorder) reset() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.calls = nil
}

type env struct {
	sim *vcsimtest.Sim
	rec *recorder
	url string // the recorder's URL, with credentials
	c   *govmomi.Client
	f   *find.Finder
}

func setup(t *testing.T) *env {
	t.Helper()
	sim := vcsimtest.New(t)
	rec := &recorder{}
	target := *sim.URL
	target.Path = ""
	proxy := httputil.NewSingleHostReverseProxy(&target)
	proxy.Transport = &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		b, _ := io.ReadAll(req.Body)
		req.Body = io.NopCloser(bytes.NewReader(b))
		if m := methodRE.FindSubmatch(b); m != nil {
			rec.mu.Lock()
			rec.calls = append(rec.calls, call{string(m[1]), string(b)})
			before := rec.before
			rec.mu.Unlock()
			if before != nil {
				before(string(m[1]), string(b))
			}
			rec.mu.Lock()
			drop := rec.drop
			rec.mu.Unlock()
			if drop != nil && drop(string(m[1])) {
				w.WriteHeader(http.StatusBadGateway)
				return
			}
		}
		proxy.ServeHTTP(w, req)
	}))
	t.Cleanup(srv.Close)
	ctx := context.Background()
	c, err := govmomi.NewClient(ctx, sim.UserURL(), true)
	if err != nil {
		t.Fatal(err)
	}
	f := find.NewFinder(c.Client, true)
	dc, err := f.Datacenter(ctx, vcsimtest.Datacenter)
	if err != nil {
		t.Fatal(err)
	}
	f.SetDatacenter(dc)
	u := strings.Replace(srv.URL, "http://", "http://"+vcsimtest.Username+":"+vcsimtest.Password+"@", 1) + "/sdk"
	return &env{sim: sim, rec: rec, url: u, c: c, f: f}
}

// spec is a profile on the simulator, through the recorder.
func (e *env) spec(id string, props map[string]any) sdk.Spec {
	p := map[string]any{
		"connection": map[string]any{"url": e.url, "insecure": true},
		"datacenter": vcsimtest.Datacenter, "cluster": vcsimtest.Cluster, "template": vcsimtest.Template,
		"num_cpus": int64(2), "memory_mb": int64(256), "power_on": true, "wait_timeout": int64(30),
	}
	for k, v := range props {
		p[k] = v
	}
	return sdk.Spec{ID: id, Name: id, Type: vsphere.TypeName, Version: "1.0", Properties: p}
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

// vm reads a VM by name, nil when there is none.
func (e *env) vm(t *testing.T, name string) (*object.VirtualMachine, *mo.VirtualMachine) {
	t.Helper()
	ctx := context.Background()
	vm, err := e.f.VirtualMachine(ctx, name)
	if err != nil {
		if _, ok := err.(*find.NotFoundError); ok {
			return nil, nil
		}
		t.Fatal(err)
	}
	var m mo.VirtualMachine
	if err := vm.Properties(ctx, vm.Reference(), []string{"name", "config", "runtime", "resourcePool", "snapshot"}, &m); err != nil {
		t.Fatal(err)
	}
	return vm, &m
}

func extra(m *mo.VirtualMachine, key string) string {
	for _, o := range m.Config.ExtraConfig {
		if v := o.GetOptionValue(); v.Key == key {
			return v.Value.(string)
		}
	}
	return ""
}

func hostName(t *testing.T, e *env, ref *types.ManagedObjectReference) string {
	var h mo.HostSystem
	if err := e.c.RetrieveOne(context.Background(), *ref, []string{"name"}, &h); err != nil {
		t.Fatal(err)
	}
	return h.Name
}

func ctxT(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	t.Cleanup(cancel)
	return ctx
}

func TestValidateNamesPropertyAndValue(t *testing.T) {
	e := setup(t)
	d := vsphere.New()
	ctx := ctxT(t)
	if ds := d.Validate(ctx, e.spec("ok", map[string]any{"networks": []any{vcsimtest.Network}, "datastore": vcsimtest.Datastore})); len(ds) > 0 {
		t.Fatalf("a good spec: %v", ds)
	}
	cases := []struct {
		name  string
		props map[string]any
		field string
		value string
	}{
		{"datacenter", map[string]any{"datacenter": "DC9"}, "properties.datacenter", "DC9"},
		{"template", map[string]any{"template": "no-such-template"}, "properties.template", "no-such-template"},
		{"pool", map[string]any{"resource_pool": "/DC0/host/DC0_C0/Resources/nope"}, "properties.resource_pool", "nope"},
		{"cluster", map[string]any{"cluster": "DC0_C7"}, "properties.cluster", "DC0_C7"},
		{"network", map[string]any{"networks": []any{vcsimtest.Network, "no-such-pg"}}, "properties.networks[1]", "no-such-pg"},
		{"datastore", map[string]any{"datastore": "nods"}, "properties.datastore", "nods"},
		{"snapshot", map[string]any{"snapshot": "nosnap"}, "properties.snapshot", "nosnap"},
		{"static without netmask", map[string]any{"customization": map[string]any{"ip_addresses": []any{"10.0.0.5"}}}, "properties.customization.netmask", ""},
		{"no vcenter", map[string]any{"connection": map[string]any{"url": "https://127.0.0.1:1/sdk", "insecure": true}}, "properties.connection", "127.0.0.1:1"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ds := d.Validate(ctx, e.spec("bad", c.props))
			if len(ds) != 1 || ds[0].Field != c.field || !strings.Contains(ds[0].Message, c.value) {
				t.Errorf("Validate = %v, want one diagnostic on %s naming %q", ds, c.field, c.value)
			}
		})
	}
}

func TestCreateCheckRecoverDelete(t *testing.T) {
	e := setup(t)
	d := vsphere.New()
	ctx := ctxT(t)
	p := e.spec("p1", map[string]any{"networks": []any{vcsimtest.Network}, "disks": []any{int64(1)}, "annotation": "made by grove",
		"extra_config": map[string]any{"guestinfo.role": "web"}})
	ns := nodes("web", 3)
	apply(t, "create", ns, d.Create(ctx, p, ns))
	for _, n := range ns {
		_, m := e.vm(t, n.Name)
		if m == nil {
			t.Fatalf("no VM named %s", n.Name)
		}
		if extra(m, "grove.node_id") != n.ID || extra(m, "grove.cluster_id") != n.ClusterID || extra(m, "guestinfo.role") != "web" {
			t.Errorf("VM %s extraConfig: %v", n.Name, m.Config.ExtraConfig)
		}
		if m.Config.Hardware.NumCPU != 2 || m.Config.Hardware.MemoryMB != 256 {
			t.Errorf("VM %s: %d CPUs, %d MiB", n.Name, m.Config.Hardware.NumCPU, m.Config.Hardware.MemoryMB)
		}
		if m.Runtime.PowerState != types.VirtualMachinePowerStatePoweredOn {
			t.Errorf("VM %s is %s", n.Name, m.Runtime.PowerState)
		}
		if n.Data["moid"] != m.Self.Value || n.Data["instance_uuid"] != m.Config.InstanceUuid || n.PhysicalID != m.Config.InstanceUuid ||
			n.Data["host"] != hostName(t, e, m.Runtime.Host) {
			t.Errorf("node %s data %v, physical id %s; VM %s %s", n.Name, n.Data, n.PhysicalID, m.Self.Value, m.Config.InstanceUuid)
		}
		if _, ok := n.Data["ip_addresses"].([]any); !ok {
			t.Errorf("node %s data has no ip_addresses list: %v", n.Name, n.Data)
		}
	}
	// What Grove asked for: one clone per node, each with the NIC on the
	// port group and one new 1 GiB disk.
	clones := e.rec.bodies("CloneVM_Task")
	if len(clones) != 3 {
		t.Fatalf("%d clones for 3 nodes", len(clones))
	}
	for _, b := range clones {
		if !strings.Contains(b, "<capacityInKB>1048576</capacityInKB>") || !strings.Contains(b, "<operation>edit</operation>") ||
			!strings.Contains(b, "<fileOperation>create</fileOperation>") || !strings.Contains(b, "<pool type=\"ResourcePool\"") ||
			!strings.Contains(b, "<annotation>made by grove</annotation>") {
			t.Errorf("clone spec lacks the disk, the network edit or the pool:\n%s", b)
		}
	}

	// Create again: the same VMs, no new clone.
	e.rec.reset()
	again := d.Create(ctx, p, ns)
	for i, r := range again {
		if r.Err != nil || r.Data["moid"] != ns[i].Data["moid"] {
			t.Errorf("create again: %v %v, want VM %v", r.Err, r.Data["moid"], ns[i].Data["moid"])
		}
	}
	if n := e.rec.count("CloneVM_Task"); n != 0 {
		t.Errorf("create again cloned %d VMs", n)
	}

	// Behind Grove's back: one powered off, one suspended, one destroyed.
	vm0, _ := e.vm(t, ns[0].Name)
	vm1, _ := e.vm(t, ns[1].Name)
	vm2, _ := e.vm(t, ns[2].Name)
	for _, f := range []func(context.Context) (*object.Task, error){vm0.PowerOff, vm1.Suspend, vm2.PowerOff, vm2.Destroy} {
		tk, err := f(ctx)
		if err == nil {
			err = tk.Wait(ctx)
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	e.rec.reset()
	res := d.Check(ctx, p, ns)
	if n := len(e.rec.calls); n != 1 || e.rec.count("RetrievePropertiesEx") != 1 {
		t.Errorf("check of 3 VMs made %d calls (%v); want one property-collector round trip", n, e.rec.calls)
	}
	want := []string{"poweredOff", "suspended", "missing"}
	for i, r := range res {
		if r.Err != nil || r.Healthy || !strings.Contains(r.Reason, want[i]) {
			t.Errorf("check %s: healthy=%v reason=%q err=%v; want dead, %s", ns[i].Name, r.Healthy, r.Reason, r.Err, want[i])
		}
	}

	// Recovery powers the stopped ones on and clones the missing one.
	oldMoid := ns[2].Data["moid"]
	apply(t, "recover", ns, d.Recover(ctx, p, ns, "REBOOT", nil))
	if ns[2].Data["moid"] == oldMoid {
		t.Errorf("the destroyed VM was not cloned again")
	}
	for _, r := range d.Check(ctx, p, ns) {
		if !r.Healthy {
			t.Errorf("after recover: %s %s", r.ID, r.Reason)
		}
	}

	// Delete: powered off and destroyed, twice without error.
	for round := 0; round < 2; round++ {
		for _, r := range d.Delete(ctx, p, ns) {
			if r.Err != nil {
				t.Fatalf("delete round %d: %v", round, r.Err)
			}
		}
	}
	for _, n := range ns {
		if vm, _ := e.vm(t, n.Name); vm != nil {
			t.Errorf("VM %s outlived its delete", n.Name)
		}
	}
	for _, r := range d.Check(ctx, p, ns) {
		if r.Healthy || !strings.Contains(r.Reason, "missing") {
			t.Errorf("check after delete: %+v", r)
		}
	}
}

func TestPlacementLinkedCloneAndCustomization(t *testing.T) {
	e := setup(t)
	d := vsphere.New()
	ctx := ctxT(t)
	p := e.spec("p2", map[string]any{"snapshot": vcsimtest.Snapshot, "wait_for_ip": true,
		"customization": map[string]any{"ip_addresses": []any{"10.0.0.11", "10.0.0.12"}, "netmask": "255.255.255.0", "gateway": "10.0.0.1"}})
	ns := nodes("db", 2)
	ns[0].Data = map[string]any{"placement": map[string]any{"datastore": vcsimtest.Datastore, "resource_pool": "/DC0/host/DC0_C0/Resources"}}
	ns[1].Data = map[string]any{"placement": map[string]any{"host": vcsimtest.DRSHost}}
	ds, err := e.f.Datastore(ctx, vcsimtest.Datastore)
	if err != nil {
		t.Fatal(err)
	}
	apply(t, "create", ns, d.Create(ctx, p, ns))
	var placed int
	for _, b := range e.rec.bodies("CloneVM_Task") {
		if strings.Contains(b, "<name>"+ns[0].Name+"</name>") && strings.Contains(b, `<datastore type="Datastore">`+ds.Reference().Value+`</datastore>`) {
			placed++
		}
	}
	if placed != 1 {
		t.Errorf("node %s's clone was not placed on datastore %s", ns[0].Name, vcsimtest.Datastore)
	}
	_, m := e.vm(t, ns[1].Name)
	if got := hostName(t, e, m.Runtime.Host); got != vcsimtest.DRSHost || ns[1].Data["host"] != vcsimtest.DRSHost {
		t.Errorf("node placed on %s (data %v), want %s", got, ns[1].Data["host"], vcsimtest.DRSHost)
	}
	for i, n := range ns {
		if n.Data["address"] != []string{"10.0.0.11", "10.0.0.12"}[i] {
			t.Errorf("node %s address %v", n.Name, n.Data["address"])
		}
	}
	for _, b := range e.rec.bodies("CloneVM_Task") {
		if !strings.Contains(b, "<diskMoveType>createNewChildDiskBacking</diskMoveType>") || !strings.Contains(b, "<snapshot type=\"VirtualMachineSnapshot\"") {
			t.Errorf("not a linked clone on the snapshot:\n%s", b)
		}
		if !strings.Contains(b, "CustomizationLinuxPrep") || !strings.Contains(b, "<gateway>10.0.0.1</gateway>") {
			t.Errorf("no Linux customization with the gateway:\n%s", b)
		}
	}
	d.Delete(ctx, p, ns)

	// A third node has no address in the list: it fails, naming the property.
	r := d.Create(ctx, p, nodes("db3", 3)[2:])[0]
	if r.Err == nil || !strings.Contains(r.Err.Error(), "customization.ip_addresses") {
		t.Errorf("node 3 of 2 addresses: %v", r.Err)
	}
}

func TestCloneFaultFailsTheNodeAndLeavesNothing(t *testing.T) {
	e := setup(t)
	d := vsphere.New()
	ctx := ctxT(t)
	p := e.spec("p3", map[string]any{"cluster": vcsimtest.Cluster2, "template": vcsimtest.FaultyTemplate})
	ns := nodes("bad", 2)
	for i, r := range d.Create(ctx, p, ns) {
		if r.Err == nil || !strings.Contains(r.Err.Error(), vcsimtest.FaultMessage) || sdk.IsRetryable(r.Err) {
			t.Errorf("node %d: %v; want the fault's message, not retryable", i, r.Err)
		}
	}
	for _, n := range ns {
		if vm, _ := e.vm(t, n.Name); vm != nil {
			t.Errorf("a failed clone left VM %s", n.Name)
		}
	}
}

func TestUpdateInPlaceAndReplace(t *testing.T) {
	e := setup(t)
	d := vsphere.New()
	ctx := ctxT(t)
	p := e.spec("u1", nil)
	ns := nodes("up", 2)
	apply(t, "create", ns, d.Create(ctx, p, ns))
	// Node 0 can hot-add memory; node 1 cannot.
	vm0, _ := e.vm(t, ns[0].Name)
	tk, err := vm0.Reconfigure(ctx, types.VirtualMachineConfigSpec{MemoryHotAddEnabled: types.NewBool(true), CpuHotAddEnabled: types.NewBool(true)})
	if err == nil {
		err = tk.Wait(ctx)
	}
	if err != nil {
		t.Fatal(err)
	}

	step := func(id string, props map[string]any, cycles int) sdk.Spec {
		t.Helper()
		np := e.spec(id, props)
		e.rec.reset()
		apply(t, "update to "+id, ns, d.Update(ctx, p, np, ns))
		if got := e.rec.count("PowerOffVM_Task"); got != cycles {
			t.Errorf("update to %s power-cycled %d VMs, want %d", id, got, cycles)
		}
		p = np
		return np
	}
	step("u2", map[string]any{"memory_mb": int64(512)}, 1) // only the VM without hot-add
	for _, n := range ns {
		if _, m := e.vm(t, n.Name); m.Config.Hardware.MemoryMB != 512 || m.Runtime.PowerState != types.VirtualMachinePowerStatePoweredOn {
			t.Errorf("VM %s after the memory change: %d MiB, %s", n.Name, m.Config.Hardware.MemoryMB, m.Runtime.PowerState)
		}
	}
	// CPUs: node 0 hot-adds them, node 1 is power-cycled; fewer CPUs
	// always need the VM off, hot-add or not.
	step("u2c", map[string]any{"memory_mb": int64(512), "num_cpus": int64(4)}, 1)
	step("u2d", map[string]any{"memory_mb": int64(512), "num_cpus": int64(2)}, 2)
	for _, n := range ns {
		if _, m := e.vm(t, n.Name); m.Config.Hardware.NumCPU != 2 || m.Runtime.PowerState != types.VirtualMachinePowerStatePoweredOn {
			t.Errorf("VM %s after the CPU changes: %d CPUs, %s", n.Name, m.Config.Hardware.NumCPU, m.Runtime.PowerState)
		}
	}
	step("u3", map[string]any{"memory_mb": int64(512), "annotation": "v3"}, 0)
	// Rotated credentials and another wait change nothing of the VMs.
	kept := ns[1].Data["moid"]
	step("u3b", map[string]any{"memory_mb": int64(512), "annotation": "v3", "wait_timeout": int64(60),
		"connection": map[string]any{"url": e.url, "insecure": false}}, 0)
	if e.rec.count("CloneVM_Task") != 0 || ns[1].Data["moid"] != kept {
		t.Errorf("a connection change replaced the VMs")
	}
	if _, m := e.vm(t, ns[1].Name); m.Config.Annotation != "v3" {
		t.Errorf("annotation %q", m.Config.Annotation)
	}
	before := ns[0].Data["moid"]
	step("u4", map[string]any{"memory_mb": int64(512), "annotation": "v3", "snapshot": vcsimtest.Snapshot}, 2)
	if ns[0].Data["moid"] == before {
		t.Errorf("a snapshot change kept the VM; it must replace it")
	}
	if e.rec.count("CloneVM_Task") != 2 || e.rec.count("Destroy_Task") != 2 {
		t.Errorf("replace: %d clones, %d destroys", e.rec.count("CloneVM_Task"), e.rec.count("Destroy_Task"))
	}
	d.Delete(ctx, p, ns)
}

func TestOperations(t *testing.T) {
	e := setup(t)
	d := vsphere.New()
	ctx := ctxT(t)
	p := e.spec("o1", nil)
	ns := nodes("ops", 1)
	apply(t, "create", ns, d.Create(ctx, p, ns))
	steps := []struct {
		op     string
		params map[string]any
		power  types.VirtualMachinePowerState
		err    string // vcsim runs no VMware Tools in its VMs
	}{
		{"snapshot_create", map[string]any{"name": "s1"}, types.VirtualMachinePowerStatePoweredOn, ""},
		{"power_off", nil, types.VirtualMachinePowerStatePoweredOff, ""},
		{"power_on", nil, types.VirtualMachinePowerStatePoweredOn, ""},
		{"reset", nil, types.VirtualMachinePowerStatePoweredOn, ""},
		{"suspend", nil, types.VirtualMachinePowerStateSuspended, ""},
		{"power_on", nil, types.VirtualMachinePowerStatePoweredOn, ""},
		{"reboot_guest", nil, types.VirtualMachinePowerStatePoweredOn, "ToolsUnavailable"},
		{"shutdown_guest", nil, types.VirtualMachinePowerStatePoweredOff, ""},
		{"snapshot_revert", map[string]any{"name": "s1"}, types.VirtualMachinePowerStatePoweredOff, ""}, // a snapshot without memory reverts to off,
	}
	for _, s := range steps {
		r := d.Operate(ctx, p, ns, s.op, s.params)[0]
		if s.err != "" {
			if r.Err == nil || !strings.Contains(r.Err.Error(), s.err) || !strings.Contains(r.Err.Error(), s.op) {
				t.Errorf("%s: %v, want an error naming the operation and %s", s.op, r.Err, s.err)
			}
		} else if r.Err != nil {
			t.Fatalf("%s: %v", s.op, r.Err)
		}
		if _, m := e.vm(t, ns[0].Name); m.Runtime.PowerState != s.power {
			t.Errorf("after %s the VM is %s, want %s", s.op, m.Runtime.PowerState, s.power)
		}
	}
	if r := d.Operate(ctx, p, ns, "explode", nil)[0]; r.Err == nil || !strings.Contains(r.Err.Error(), "power_on") {
		t.Errorf("an unknown operation: %v", r.Err)
	}
	d.Delete(ctx, p, ns)
}

func TestDRSRulesNamedAfterTheClusterAndRemovedWithIt(t *testing.T) {
	e := setup(t)
	d := vsphere.New()
	ctx := ctxT(t)
	p := e.spec("r1", nil)
	ns := nodes("drs", 3)
	apply(t, "create", ns, d.Create(ctx, p, ns))
	moids := []string{ns[0].Data["moid"].(string), ns[1].Data["moid"].(string), ns[2].Data["moid"].(string)}
	cid := ns[0].ClusterID
	rules := []vsphere.Rule{
		{Name: "spread", Type: vsphere.AntiAffinity, Mandatory: true, VMs: moids},
		{Name: "together", Type: vsphere.Affinity, VMs: moids[:2]},
		{Name: "drs-hosts", Type: vsphere.VMHost, VMs: moids[2:], Hosts: []string{vcsimtest.DRSHost}},
	}
	for _, r := range rules {
		if err := d.CreateRule(ctx, p, cid, r); err != nil {
			t.Fatalf("create rule %s: %v", r.Name, err)
		}
	}
	// Created again (after a restart): replaced, not doubled.
	if err := d.CreateRule(ctx, p, cid, rules[0]); err != nil {
		t.Fatal(err)
	}
	// Another Grove cluster's rule is not ours.
	if err := d.CreateRule(ctx, p, "other", vsphere.Rule{Name: "spread", Type: vsphere.AntiAffinity, VMs: moids[:2]}); err != nil {
		t.Fatal(err)
	}
	// A fresh driver (a restarted plugin) reads them back by name.
	got, err := vsphere.New().Rules(ctx, p, cid)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 3 {
		t.Fatalf("read back %d rules: %+v", len(got), got)
	}
	byName := map[string]vsphere.Rule{}
	for _, r := range got {
		byName[r.Name] = r
		if r.VSphereName != "grove-"+cid+"-"+r.Name || !r.Enabled {
			t.Errorf("rule %+v", r)
		}
	}
	if r := byName["spread"]; r.Type != vsphere.AntiAffinity || !r.Mandatory || strings.Join(r.VMs, ",") != strings.Join(moids, ",") {
		t.Errorf("spread: %+v", r)
	}
	if r := byName["together"]; r.Type != vsphere.Affinity || r.Mandatory || strings.Join(r.VMs, ",") != strings.Join(moids[:2], ",") {
		t.Errorf("together: %+v", r)
	}
	if r := byName["drs-hosts"]; r.Type != vsphere.VMHost || r.AntiHost || strings.Join(r.VMs, ",") != moids[2] || strings.Join(r.Hosts, ",") != vcsimtest.DRSHost {
		t.Errorf("drs-hosts: %+v", r)
	}

	// Deleting the first node leaves spread with 2 VMs and together with 1:
	// together goes. Deleting the rest removes every rule and group.
	apply(t, "delete", ns[:1], d.Delete(ctx, p, ns[:1]))
	got, _ = d.Rules(ctx, p, cid)
	if len(got) != 2 || got[0].Name != "spread" || len(got[0].VMs) != 2 {
		t.Errorf("after deleting one node: %+v", got)
	}
	d.Delete(ctx, p, ns[1:])
	got, _ = d.Rules(ctx, p, cid)
	if len(got) != 0 {
		t.Errorf("rules outlived their cluster's VMs: %+v", got)
	}
	cl, err := e.f.ClusterComputeResource(ctx, vcsimtest.Cluster)
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := cl.Configuration(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, g := range cfg.Group {
		if strings.HasPrefix(g.GetClusterGroupInfo().Name, "grove-"+cid) {
			t.Errorf("group %s outlived its rule", g.GetClusterGroupInfo().Name)
		}
	}
	if other, _ := d.Rules(ctx, p, "other"); len(other) != 1 {
		t.Errorf("another Grove cluster's rule was touched: %+v", other)
	}
	if err := d.DeleteRules(ctx, p, "other"); err != nil {
		t.Fatal(err)
	}
	if other, _ := d.Rules(ctx, p, "other"); len(other) != 0 {
		t.Errorf("DeleteRules left %+v", other)
	}
}

func TestHosts(t *testing.T) {
	e := setup(t)
	for _, kv := range e.sim.Env() {
		k, v, _ := strings.Cut(kv, "=")
		t.Setenv(k, v)
	}
	d := vsphere.New()
	ctx := ctxT(t)
	p := e.spec("h1", nil)
	ns := nodes("h", 1)
	ns[0].Data = map[string]any{"placement": map[string]any{"host": vcsimtest.DRSHost}}
	apply(t, "create", ns, d.Create(ctx, p, ns))
	defer d.Delete(ctx, p, ns)
	hosts, err := d.Hosts(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(hosts) != 6 {
		t.Fatalf("%d hosts, want 2 clusters x 3: %+v", len(hosts), hosts)
	}
	perCluster := map[string]int{}
	for _, h := range hosts {
		perCluster[h.Attributes["cluster"]]++
		if h.Err != "" || h.Attributes["connection_state"] != "connected" || h.Attributes["maintenance_mode"] != "false" || h.Attributes["memory_mib"] == "" {
			t.Errorf("host %+v", h)
		}
		if _, ok := h.Load["cpu_mhz"]; !ok {
			t.Errorf("host %s has no cpu load", h.Name)
		}
		if h.Name == vcsimtest.DRSHost && h.Load["vms"] < 1 {
			t.Errorf("%s carries the node's VM but counts %v", h.Name, h.Load["vms"])
		}
	}
	if perCluster[vcsimtest.Cluster] != 3 || perCluster[vcsimtest.Cluster2] != 3 {
		t.Errorf("hosts per cluster: %v", perCluster)
	}
	b, _ := json.Marshal(hosts)
	if !strings.Contains(string(b), vcsimtest.DRSHost) {
		t.Errorf("no host named %s", vcsimtest.DRSHost)
	}

	t.Setenv("GOVC_URL", "")
	t.Setenv("VSPHERE_SERVER", "")
	if hs, err := vsphere.New().Hosts(ctx); err != nil || len(hs) != 0 {
		t.Errorf("without a vCenter configured: %v %v", hs, err)
	}
}

// terminateOthers ends every vCenter session but the test's own, as an
// administrator (or an expiry, or a vCenter restart) would.
func (e *env) terminateOthers(t *testing.T) int {
	t.Helper()
	ctx := context.Background()
	var sm mo.SessionManager
	if err := e.c.RetrieveOne(ctx, *e.c.ServiceContent.SessionManager, []string{"sessionList", "currentSession"}, &sm); err != nil {
		t.Fatal(err)
	}
	var keys []string
	for _, s := range sm.SessionList {
		if s.Key != sm.CurrentSession.Key {
			keys = append(keys, s.Key)
		}
	}
	if len(keys) > 0 {
		if _, err := methods.TerminateSession(ctx, e.c, &types.TerminateSession{This: *e.c.ServiceContent.SessionManager, SessionId: keys}); err != nil {
			t.Fatal(err)
		}
	}
	return len(keys)
}

func TestSessionTerminatedIsLoggedInAgain(t *testing.T) {
	e := setup(t)
	d := vsphere.New()
	ctx := ctxT(t)
	p := e.spec("s1", nil)
	ns := nodes("sess", 2)
	apply(t, "create", ns, d.Create(ctx, p, ns))
	for round := 1; round <= 2; round++ {
		if n := e.terminateOthers(t); n != 1 {
			t.Fatalf("round %d: terminated %d sessions, want the driver's one", round, n)
		}
		e.rec.reset()
		for i, r := range d.Check(ctx, p, ns) {
			if r.Err != nil || !r.Healthy {
				t.Fatalf("round %d: check of %s after its session was terminated: %v %s", round, ns[i].Name, r.Err, r.Reason)
			}
		}
		if n := e.rec.count("Login"); n != 1 {
			t.Errorf("round %d: %d logins after the session was terminated, want 1", round, n)
		}
	}
	// Concurrent calls refused together log in once.
	e.terminateOthers(t)
	e.rec.reset()
	apply(t, "operate", ns, d.Operate(ctx, p, ns, "reset", nil))
	if n := e.rec.count("Login"); n != 1 {
		t.Errorf("%d logins for 2 concurrent operations after the session was terminated, want 1", n)
	}
	apply(t, "delete", ns, d.Delete(ctx, p, ns))
}

// cloneAs clones the template as an earlier attempt to create node n
// would have: named after the node, carrying its id. It returns the VM's
// managed object id.
func (e *env) cloneAs(n sdk.Node, on bool) (string, error) {
	ctx := context.Background()
	tmpl, err := e.f.VirtualMachine(ctx, vcsimtest.Template)
	if err != nil {
		return "", err
	}
	cl, err := e.f.ClusterComputeResource(ctx, vcsimtest.Cluster)
	if err != nil {
		return "", err
	}
	pool, err := cl.ResourcePool(ctx)
	if err != nil {
		return "", err
	}
	folder, err := e.f.DefaultFolder(ctx)
	if err != nil {
		return "", err
	}
	ref := pool.Reference()
	tk, err := tmpl.Clone(ctx, folder, n.Name, types.VirtualMachineCloneSpec{PowerOn: on, Location: types.VirtualMachineRelocateSpec{Pool: &ref},
		Config: &types.VirtualMachineConfigSpec{ExtraConfig: []types.BaseOptionValue{&types.OptionValue{Key: "grove.node_id", Value: n.ID}}}})
	if err != nil {
		return "", err
	}
	info, err := tk.WaitForResult(ctx)
	if err != nil {
		return "", err
	}
	return info.Result.(types.ManagedObjectReference).Value, nil
}

// TestCreateAdoptsWhatAnEarlierAttemptLeft retries creates after crashes:
// a VM an earlier attempt finished is adopted (and powered on), also when
// its clone ends while the retry's own clone runs (which then fails
// DuplicateName); a VM of the node's that vCenter no longer has whole is
// removed and cloned anew. Each node ends with exactly one VM.
func TestCreateAdoptsWhatAnEarlierAttemptLeft(t *testing.T) {
	e := setup(t)
	d := vsphere.New()
	ctx := ctxT(t)
	p := e.spec("c1", nil)
	ns := nodes("crash", 3)

	// a: the crash came after the clone, before the power-on.
	leftA, err := e.cloneAs(ns[0], false)
	if err != nil {
		t.Fatal(err)
	}
	// b: the earlier clone was still running when the retry looked for
	// the VM, and ends just before the retry's clone.
	var once sync.Once
	var leftB string
	e.rec.before = func(method, body string) {
		if method == "CloneVM_Task" && strings.Contains(body, "<name>"+ns[1].Name+"</name>") {
			once.Do(func() {
				var err error
				if leftB, err = e.cloneAs(ns[1], true); err != nil {
					t.Error(err)
				}
			})
		}
	}
	// c: the earlier attempt's VM is inaccessible.
	leftC, err := e.cloneAs(ns[2], false)
	if err != nil {
		t.Fatal(err)
	}
	sm := e.sim.Model
	obj := sm.Map().Get(types.ManagedObjectReference{Type: "VirtualMachine", Value: leftC})
	sm.Map().Update(sm.Service.Context, obj, []types.PropertyChange{{Name: "runtime.connectionState", Val: types.VirtualMachineConnectionStateInaccessible}})

	e.rec.reset()
	apply(t, "create", ns, d.Create(ctx, p, ns))
	if ns[0].Data["moid"] != leftA || ns[1].Data["moid"] != leftB || leftB == "" {
		t.Errorf("nodes a and b have VMs %v and %v, want the earlier attempts' %s and %s", ns[0].Data["moid"], ns[1].Data["moid"], leftA, leftB)
	}
	if ns[2].Data["moid"] == leftC {
		t.Errorf("node c kept the inaccessible VM %s", leftC)
	}
	if n := e.rec.count("CloneVM_Task"); n != 2 {
		t.Errorf("%d clones, want 2 (b's, which failed DuplicateName, and c's)", n)
	}
	for _, n := range ns {
		vms, err := e.f.VirtualMachineList(ctx, n.Name)
		if err != nil || len(vms) != 1 {
			t.Errorf("node %s: %d VMs of its name (%v)", n.Name, len(vms), err)
			continue
		}
		if _, m := e.vm(t, n.Name); m.Runtime.PowerState != types.VirtualMachinePowerStatePoweredOn || m.Self.Value != n.Data["moid"] {
			t.Errorf("node %s: VM %s is %s, node data %v", n.Name, m.Self.Value, m.Runtime.PowerState, n.Data["moid"])
		}
	}

	// Another's VM of the node's name is never taken over.
	other := nodes("crash", 1)
	other[0].ID = "someone-else"
	if r := d.Create(ctx, p, other)[0]; r.Err == nil || !strings.Contains(r.Err.Error(), "is not this node's") {
		t.Errorf("a VM of the name that is another node's: %v", r.Err)
	}
	apply(t, "delete", ns, d.Delete(ctx, p, ns))
}

// TestCheckRefreshesHostAndAddresses: a VM moved to another host and given
// another address behind Grove's back is reported by the next check, in
// its one round trip, as data for the node; a check with the node's data
// true returns none, so it writes nothing.
func TestCheckRefreshesHostAndAddresses(t *testing.T) {
	e := setup(t)
	d := vsphere.New()
	ctx := ctxT(t)
	p := e.spec("k1", nil)
	ns := nodes("moved", 2)
	apply(t, "create", ns, d.Create(ctx, p, ns))
	for _, r := range d.Check(ctx, p, ns) {
		if r.Data != nil {
			t.Errorf("a check with true node data returned %v", r.Data)
		}
	}
	vm, m := e.vm(t, ns[0].Name)
	var to string
	for _, h := range []string{vcsimtest.DRSHost, vcsimtest.Cluster + "_H1", vcsimtest.Cluster + "_H2"} {
		if h != hostName(t, e, m.Runtime.Host) {
			to = h
			break
		}
	}
	host, err := e.f.HostSystem(ctx, to)
	if err != nil {
		t.Fatal(err)
	}
	href := host.Reference()
	tk, err := vm.Relocate(ctx, types.VirtualMachineRelocateSpec{Host: &href}, types.VirtualMachineMovePriorityDefaultPriority)
	if err == nil {
		err = tk.Wait(ctx)
	}
	if err != nil {
		t.Fatal(err)
	}
	sm := e.sim.Model
	sm.Map().Update(sm.Service.Context, sm.Map().Get(vm.Reference()), []types.PropertyChange{{Name: "guest.ipAddress", Val: "10.1.2.3"},
		{Name: "guest.net", Val: []types.GuestNicInfo{{IpAddress: []string{"10.1.2.3", "fe80::1"}}}}})

	e.rec.reset()
	res := d.Check(ctx, p, ns)
	if n := len(e.rec.calls); n != 1 {
		t.Errorf("check made %d calls, want one round trip", n)
	}
	want := map[string]any{"host": to, "ip_addresses": []any{"10.1.2.3", "fe80::1"}, "address": "10.1.2.3"}
	if b, w := mustJSON(t, res[0].Data), mustJSON(t, want); b != w || !res[0].Healthy {
		t.Errorf("check of the moved VM: data %s, want %s (healthy %v)", b, w, res[0].Healthy)
	}
	if res[1].Data != nil {
		t.Errorf("check of the unmoved VM returned %v", res[1].Data)
	}
	// Once the engine merged it, the next check is quiet again.
	for k, v := range res[0].Data {
		ns[0].Data[k] = v
	}
	ns[0].Data = roundTrip(t, ns[0].Data)
	for _, r := range d.Check(ctx, p, ns) {
		if r.Data != nil {
			t.Errorf("a check after the merge returned %v", r.Data)
		}
	}
	apply(t, "delete", ns, d.Delete(ctx, p, ns))
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// roundTrip is node data as the engine stores and sends it: through JSON.
func roundTrip(t *testing.T, m map[string]any) map[string]any {
	t.Helper()
	var out map[string]any
	if err := json.Unmarshal([]byte(mustJSON(t, m)), &out); err != nil {
		t.Fatal(err)
	}
	return out
}

// TestPluginConfigCredentials: the plugin config (GROVE_PLUGIN_CONFIG, from
// the agent config's plugin "builtin" block) names vCenter and the
// credentials, before the environment's variables and after the profile's
// connection.
func TestPluginConfigCredentials(t *testing.T) {
	e := setup(t)
	ctx := ctxT(t)
	t.Setenv("GOVC_URL", "https://127.0.0.1:1/sdk") // not answering: the config must win
	t.Setenv("GOVC_USERNAME", "nobody")
	t.Setenv("GOVC_PASSWORD", "wrong")
	bare := strings.Replace(e.url, vcsimtest.Username+":"+vcsimtest.Password+"@", "", 1)
	cfg, _ := json.Marshal(map[string]string{"vsphere_url": bare, "vsphere_username": vcsimtest.Username,
		"vsphere_password": vcsimtest.Password, "vsphere_insecure": "true", "vsphere_datacenter": vcsimtest.Datacenter})
	t.Setenv("GROVE_PLUGIN_CONFIG", string(cfg))
	d := vsphere.New()
	if hosts, err := d.Hosts(ctx); err != nil || len(hosts) != 6 || hosts[0].Err != "" {
		t.Fatalf("hosts through the plugin config: %v %+v", err, hosts)
	}
	p := e.spec("pc", nil)
	delete(p.Properties, "connection")
	delete(p.Properties, "datacenter")
	if ds := d.Validate(ctx, p); len(ds) != 0 {
		t.Fatalf("a profile without connection or datacenter: %v", ds)
	}
	e.rec.reset()
	ns := nodes("pc", 1)
	apply(t, "create", ns, d.Create(ctx, p, ns))
	if b := e.rec.bodies("Login"); len(b) != 0 {
		t.Errorf("the session of Hosts was not reused: %d logins", len(b))
	}
	apply(t, "delete", ns, d.Delete(ctx, p, ns))

	// The profile's connection comes first.
	p.Properties["connection"] = map[string]any{"url": "https://127.0.0.1:1/sdk"}
	if ds := d.Validate(ctx, p); len(ds) != 1 || ds[0].Field != "properties.connection" || !strings.Contains(ds[0].Message, "127.0.0.1:1") {
		t.Errorf("a profile's own url: %v", ds)
	}
}

// TestRecoverResetsAndRecreates: REBOOT resets a running VM (a hung guest)
// in place; RECREATE replaces the VM, keeping the node.
func TestRecoverResetsAndRecreates(t *testing.T) {
	e := setup(t)
	d := vsphere.New()
	ctx := ctxT(t)
	p := e.spec("rr", nil)
	ns := nodes("rr", 2)
	apply(t, "create", ns, d.Create(ctx, p, ns))
	before := []any{ns[0].Data["moid"], ns[1].Data["moid"]}
	e.rec.reset()
	apply(t, "reboot", ns, d.Recover(ctx, p, ns, "REBOOT", nil))
	if n := e.rec.count("ResetVM_Task"); n != 2 || ns[0].Data["moid"] != before[0] {
		t.Errorf("REBOOT of running VMs: %d resets, VM %v (was %v)", n, ns[0].Data["moid"], before[0])
	}
	apply(t, "recreate", ns, d.Recover(ctx, p, ns, "RECREATE", nil))
	for i, n := range ns {
		vm, m := e.vm(t, n.Name)
		if vm == nil || n.Data["moid"] == before[i] || m.Self.Value != n.Data["moid"] || m.Runtime.PowerState != types.VirtualMachinePowerStatePoweredOn {
			t.Errorf("RECREATE of %s: node data %v, was %v", n.Name, n.Data["moid"], before[i])
		}
	}
	if n := e.rec.count("Destroy_Task"); n != 2 {
		t.Errorf("RECREATE destroyed %d VMs, want 2", n)
	}
	apply(t, "delete", ns, d.Delete(ctx, p, ns))
}

// TestCreateBoundsConcurrentClones: a batch of 10 nodes clones at most 8
// VMs at once. The simulator holds each clone request until 8 are held
// together, and then for a moment more, in which a ninth would arrive
// without the bound; then it lets them all go.
func TestCreateBoundsConcurrentClones(t *testing.T) {
	e := setup(t)
	d := vsphere.New()
	ctx := ctxT(t)
	p := e.spec("b1", nil)
	ns := nodes("bound", 10)
	var mu sync.Mutex
	held, most := 0, 0
	eight, ninth := make(chan struct{}), make(chan struct{})
	var onceEight, onceNinth sync.Once
	release := make(chan struct{})
	go func() {
		defer close(release)
		select {
		case <-eight:
		case <-ctx.Done():
			return
		}
		// Nothing should happen here: the deadline ends the wait for a
		// ninth clone that the bound keeps from coming.
		select {
		case <-ninth:
		case <-time.After(500 * time.Millisecond):
		}
	}()
	e.rec.before = func(method, _ string) {
		if method != "CloneVM_Task" {
			return
		}
		mu.Lock()
		held++
		most = max(most, held)
		switch held {
		case 8:
			onceEight.Do(func() { close(eight) })
		case 9:
			onceNinth.Do(func() { close(ninth) })
		}
		mu.Unlock()
		<-release
		mu.Lock()
		held--
		mu.Unlock()
	}
	apply(t, "create", ns, d.Create(ctx, p, ns))
	if most != 8 {
		t.Errorf("%d clones were under way at once, want 8", most)
	}
	apply(t, "delete", ns, d.Delete(ctx, p, ns))
}

// legacyVM clones a VM the way an operator would, outside Grove: from the
// template into the cluster's root pool, powered on.
func (e *env) legacyVM(t *testing.T, name string) *object.VirtualMachine {
	t.Helper()
	ctx := ctxT(t)
	tmpl, err := e.f.VirtualMachine(ctx, vcsimtest.Template)
	if err != nil {
		t.Fatal(err)
	}
	cl, err := e.f.ClusterComputeResource(ctx, vcsimtest.Cluster)
	if err != nil {
		t.Fatal(err)
	}
	pool, err := cl.ResourcePool(ctx)
	if err != nil {
		t.Fatal(err)
	}
	folder, err := e.f.DefaultFolder(ctx)
	if err != nil {
		t.Fatal(err)
	}
	ref := pool.Reference()
	task, err := tmpl.Clone(ctx, folder, name, types.VirtualMachineCloneSpec{Location: types.VirtualMachineRelocateSpec{Pool: &ref}, PowerOn: true})
	if err != nil {
		t.Fatal(err)
	}
	info, err := task.WaitForResult(ctx)
	if err != nil {
		t.Fatal(err)
	}
	vm := object.NewVirtualMachine(e.c.Client, info.Result.(types.ManagedObjectReference))
	if t, err := vm.Reconfigure(ctx, types.VirtualMachineConfigSpec{Annotation: "billing"}); err == nil {
		_, _ = t.WaitForResult(ctx)
	}
	return vm
}

// TestAdopt: a VM made outside Grove is described by name, inventory path
// and managed object id (its datacenter, cluster, folder, datastore, CPUs,
// memory, port groups, annotation and power state, and no template); the
// adopted node is checked healthy, reconfigured in place, and destroyed
// with its node. What needs a template (cloning nodes from the adopted
// spec, a change that replaces the VM, RECREATE) is refused naming what is
// missing, with the VM left alone. Templates, Grove's own VMs and unknown
// VMs are refused.
func TestAdopt(t *testing.T) {
	e := setup(t)
	ctx := ctxT(t)
	t.Setenv("GOVC_URL", e.url)
	t.Setenv("GOVC_INSECURE", "1")
	t.Setenv("GOVC_DATACENTER", "")
	d := vsphere.New()
	vm := e.legacyVM(t, "legacy")
	moid := vm.Reference().Value
	want := map[string]any{"adopted_from": "/DC0/vm/legacy", "datacenter": "DC0", "cluster": "/DC0/host/" + vcsimtest.Cluster, "folder": "/DC0/vm",
		"datastore": vcsimtest.Datastore, "annotation": "billing", "power_on": true}
	var props map[string]any
	for _, identity := range []string{"legacy", "/DC0/vm/legacy", moid, "VirtualMachine:" + moid} {
		a, err := d.Adopt(ctx, sdk.AdoptRequest{Type: vsphere.TypeName, Version: "1.0", Identity: identity, Preview: true})
		if err != nil {
			t.Fatalf("preview %s: %v", identity, err)
		}
		for k, v := range want {
			if a.Properties[k] != v {
				t.Errorf("preview %s: %s is %v, want %v (all %v)", identity, k, a.Properties[k], v, a.Properties)
			}
		}
		if _, ok := a.Properties["template"]; ok {
			t.Errorf("preview %s names a template: %v", identity, a.Properties)
		}
		if nets, _ := a.Properties["networks"].([]any); len(nets) == 0 {
			t.Errorf("preview %s has no networks: %v", identity, a.Properties)
		}
		props = a.Properties
	}
	p := sdk.Spec{ID: "adopted", Name: "adopted", Type: vsphere.TypeName, Version: "1.0", Properties: props}
	if ds := d.Validate(ctx, p); len(ds) > 0 {
		t.Fatalf("the adopted spec does not validate: %v", ds)
	}

	node := sdk.Node{ID: "adopted-id", Name: "adopted-node", Index: -1, Data: map[string]any{}}
	a, err := d.Adopt(ctx, sdk.AdoptRequest{Type: vsphere.TypeName, Version: "1.0", Identity: "legacy", Node: node})
	if err != nil {
		t.Fatal(err)
	}
	if a.Result.Data["moid"] != moid || a.Result.Data["vm"] != "legacy" || a.Result.PhysicalID == "" {
		t.Fatalf("the adopted node's result: %+v", a.Result)
	}
	ns := []sdk.Node{node}
	apply(t, "adopt", ns, []sdk.Result{a.Result})
	if r := d.Check(ctx, p, ns)[0]; !r.Healthy {
		t.Errorf("check of the adopted node: %+v", r)
	}

	more := maps.Clone(props)
	more["num_cpus"] = int64(3)
	p2 := sdk.Spec{ID: "adopted-2", Name: "adopted-2", Type: vsphere.TypeName, Version: "1.0", Properties: more}
	apply(t, "update in place", ns, d.Update(ctx, p, p2, ns))
	if _, m := e.vm(t, "legacy"); m == nil || m.Config.Hardware.NumCPU != 3 {
		t.Errorf("the adopted VM was not reconfigured to 3 CPUs: %+v", m)
	}

	replaced := maps.Clone(more)
	replaced["networks"] = []any{"VM Network", vcsimtest.Network}
	for what, res := range map[string]sdk.Result{
		"create":  d.Create(ctx, p2, nodes("more", 1))[0],
		"update":  d.Update(ctx, p2, sdk.Spec{ID: "adopted-3", Type: vsphere.TypeName, Version: "1.0", Properties: replaced}, ns)[0],
		"recover": d.Recover(ctx, p2, ns, "RECREATE", nil)[0],
	} {
		if res.Err == nil || !strings.Contains(res.Err.Error(), "needs a template") || !strings.Contains(res.Err.Error(), "/DC0/vm/legacy") {
			t.Errorf("%s from the adopted spec: %v; want it refused for want of a template", what, res.Err)
		}
	}
	if r := d.Update(ctx, p2, sdk.Spec{ID: "adopted-3", Type: vsphere.TypeName, Version: "1.0", Properties: replaced}, ns)[0]; r.Err == nil || !strings.Contains(r.Err.Error(), "Changing networks replaces the VM") {
		t.Errorf("a replacing update names what replaces: %v", r.Err)
	}
	if v, _ := e.vm(t, "legacy"); v == nil || v.Reference().Value != moid {
		t.Fatalf("a refused change touched the adopted VM")
	}

	if _, err := d.Adopt(ctx, sdk.AdoptRequest{Type: vsphere.TypeName, Version: "1.0", Identity: "legacy", Node: node, Snapshot: true}); err == nil || !strings.Contains(err.Error(), "give it as the template override") {
		t.Errorf("adopt with snapshot: %v", err)
	}
	for identity, msg := range map[string]string{
		"no-such-vm":          `no VM "no-such-vm" was found`,
		"vm-999999":           "vCenter has no VM vm-999999",
		vcsimtest.Template:    "is a template, not a VM",
		"/DC0/vm/x/y/nothing": `no VM "/DC0/vm/x/y/nothing" was found`,
	} {
		if _, err := d.Adopt(ctx, sdk.AdoptRequest{Type: vsphere.TypeName, Version: "1.0", Identity: identity, Preview: true}); err == nil || !strings.Contains(err.Error(), msg) {
			t.Errorf("adopt %s: %v, want %q", identity, err, msg)
		}
	}
	// A name shaped like a managed object id, as examples/hcl/vsphere names
	// its VMs (vm-$2I), is looked up as a name when no VM has that id.
	named := e.legacyVM(t, "vm-01")
	if a, err := d.Adopt(ctx, sdk.AdoptRequest{Type: vsphere.TypeName, Version: "1.0", Identity: "vm-01", Preview: true}); err != nil || a.Properties["adopted_from"] != "/DC0/vm/vm-01" {
		t.Errorf("adopt vm-01 by its name: %v, %v", a.Properties, err)
	}
	if _, err := d.Adopt(ctx, sdk.AdoptRequest{Type: vsphere.TypeName, Version: "1.0", Identity: "VirtualMachine:vm-01", Preview: true}); err == nil || !strings.Contains(err.Error(), "vCenter has no VM vm-01") {
		t.Errorf("adopt VirtualMachine:vm-01, an id only: %v", err)
	}
	if task, err := named.PowerOff(ctx); err == nil {
		_ = task.Wait(ctx)
	}
	if task, err := named.Destroy(ctx); err != nil || task.Wait(ctx) != nil {
		t.Fatalf("destroy vm-01: %v", err)
	}

	gp := e.spec("grove", nil)
	gn := nodes("own", 1)
	apply(t, "create", gn, d.Create(ctx, gp, gn))
	if _, err := d.Adopt(ctx, sdk.AdoptRequest{Type: vsphere.TypeName, Version: "1.0", Identity: gn[0].Name, Preview: true}); err == nil || !strings.Contains(err.Error(), "already the VM of Grove node "+gn[0].ID) {
		t.Errorf("adopting a VM Grove made: %v", err)
	}
	apply(t, "delete", gn, d.Delete(ctx, gp, gn))

	apply(t, "delete", ns, d.Delete(ctx, p2, ns))
	if v, _ := e.vm(t, "legacy"); v != nil {
		t.Error("the adopted VM is still there after its node was deleted")
	}
}

// TestCancelledTaskWaitIsNotSuccess: govmomi answers a wait on a task whose
// context is cancelled with neither the task's info nor an error. A clone
// cancelled so (the agent's call ending) fails its node as retryable and
// the plugin keeps serving; before, the driver read the missing info and
// the plugin crashed.
func TestCancelledTaskWaitIsNotSuccess(t *testing.T) {
	e := setup(t)
	d := vsphere.New()
	ctx, cancel := context.WithCancel(ctxT(t))
	defer cancel()
	p := e.spec("pc", nil)
	ns := nodes("cut", 1)
	var cloned atomic.Bool
	e.rec.before = func(method, _ string) {
		switch method {
		case "CloneVM_Task":
			cloned.Store(true)
		case "WaitForUpdatesEx":
			if cloned.Load() {
				cancel()
			}
		}
	}
	res := d.Create(ctx, p, ns)
	if len(res) != 1 || res[0].Err == nil || !sdk.IsRetryable(res[0].Err) {
		t.Fatalf("a create whose clone wait was cancelled: %+v", res)
	}
	e.rec.before = nil
	// The clone goes on in vSphere; a retry once it is done adopts its VM.
	deadline := time.Now().Add(30 * time.Second)
	for {
		if vms, _ := e.f.VirtualMachineList(ctxT(t), ns[0].Name); len(vms) == 1 {
			if _, m := e.vm(t, ns[0].Name); m != nil && m.Config != nil {
				break
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("the cancelled wait's clone of %s never finished", ns[0].Name)
		}
		time.Sleep(20 * time.Millisecond)
	}
	apply(t, "create", ns, d.Create(ctxT(t), p, ns))
	if _, m := e.vm(t, ns[0].Name); m == nil {
		t.Errorf("no VM named %s after the retry", ns[0].Name)
	}
}

// TestDeleteAfterACutCreateWaitsForItsClone: a create cut by its deadline
// leaves its clone running in vCenter. A delete of that node, which has no
// VM recorded, must neither miss the VM the clone is about to make nor
// destroy it under the clone: it waits for the clone, then destroys its VM.
func TestDeleteAfterACutCreateWaitsForItsClone(t *testing.T) {
	// The simulator's task delay is a package variable: set it before the
	// simulator starts, and put it back after the simulator has stopped
	// (cleanups run last registered first).
	simulator.TaskDelay.MethodDelay = map[string]int{
		"CloneVm":     500, // the simulator's name for CloneVM_Task
		"LockHandoff": 0,   // no lock held through the delay, as in vCenter
	}
	t.Cleanup(func() { simulator.TaskDelay.MethodDelay = nil })
	e := setup(t)
	d := vsphere.New()
	p := e.spec("cutdel", nil)
	ns := nodes("cutdel", 1)

	short, cancel := context.WithTimeout(ctxT(t), 100*time.Millisecond)
	res := d.Create(short, p, ns)
	cancel()
	if len(res) != 1 || res[0].Err == nil || !sdk.IsRetryable(res[0].Err) {
		t.Fatalf("a create cut by its deadline: %+v", res)
	}
	if n := e.rec.count("CloneVM_Task"); n != 1 {
		t.Fatalf("%d clones started, want 1", n)
	}
	for _, r := range d.Delete(ctxT(t), p, ns) {
		if r.Err != nil {
			t.Fatalf("delete after the cut create: %v", r.Err)
		}
	}
	// The delete has returned: the clone has ended and its VM is gone.
	if vms, _ := e.f.VirtualMachineList(ctxT(t), ns[0].Name); len(vms) != 0 {
		t.Errorf("%d VMs named %s left after the delete", len(vms), ns[0].Name)
	}
	var tmpl mo.VirtualMachine
	tv, err := e.f.VirtualMachine(ctxT(t), vcsimtest.Template)
	if err != nil {
		t.Fatal(err)
	}
	if err := tv.Properties(ctxT(t), tv.Reference(), []string{"recentTask"}, &tmpl); err != nil {
		t.Fatal(err)
	}
	for _, ref := range tmpl.RecentTask {
		var task mo.Task
		if err := tv.Properties(ctxT(t), ref, []string{"info"}, &task); err != nil {
			t.Fatal(err)
		}
		if strings.HasPrefix(task.Info.DescriptionId, "VirtualMachine.clone") && task.Info.State != types.TaskInfoStateSuccess {
			t.Errorf("clone task %s is %s after the delete returned, want success", ref.Value, task.Info.State)
		}
	}
}

// TestLookupsSurviveABadGateway: a lookup a proxy answers 502 is sent
// again and the create goes on; a call that changes something (the clone)
// is not sent twice, and fails its node.
func TestLookupsSurviveABadGateway(t *testing.T) {
	e := setup(t)
	d := vsphere.New()
	ctx := ctxT(t)
	p := e.spec("gw", nil)
	var dropped atomic.Int32
	e.rec.drop = func(method string) bool { return method == "FindChild" && dropped.Add(1) == 1 }
	ns := nodes("gw", 1)
	apply(t, "create", ns, d.Create(ctx, p, ns))
	if dropped.Load() < 2 || e.rec.count("CloneVM_Task") != 1 {
		t.Errorf("after one FindChild answered 502: %d FindChild calls, %d clones", dropped.Load(), e.rec.count("CloneVM_Task"))
	}
	e.rec.reset()
	e.rec.drop = func(method string) bool { return method == "CloneVM_Task" }
	more := nodes("gw2", 1)
	res := d.Create(ctx, p, more)
	if len(res) != 1 || res[0].Err == nil || e.rec.count("CloneVM_Task") != 1 {
		t.Errorf("a clone answered 502: %+v, sent %d times", res, e.rec.count("CloneVM_Task"))
	}
}
