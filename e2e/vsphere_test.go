package e2e

import (
	"bufio"
	"context"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/vmware/govmomi"
	"github.com/vmware/govmomi/find"
	"github.com/vmware/govmomi/object"
	"github.com/vmware/govmomi/view"
	"github.com/vmware/govmomi/vim25/mo"
	"github.com/vmware/govmomi/vim25/types"

	"github.com/grovehq/grove/api"
	"github.com/grovehq/grove/internal/testbin"
	"github.com/grovehq/grove/internal/vcsimtest"
)

var (
	vcsimOnce sync.Once
	vcsimBin  string
	vcsimErr  error
)

// vcsim starts grove-vcsim as a process on 127.0.0.1, as scripts/vcsim.sh
// does, sets the variables it prints for the agents the test starts, and
// returns a govmomi client and finder on it. t.Cleanup stops the process.
func vcsim(t *testing.T) (*govmomi.Client, *find.Finder) {
	t.Helper()
	vcsimOnce.Do(func() {
		vcsimBin = filepath.Join(filepath.Dir(groveBin), "grove-vcsim")
		vcsimErr = testbin.Build(vcsimBin, "../internal/vcsimtest/grove-vcsim")
	})
	if vcsimErr != nil {
		t.Fatal(vcsimErr)
	}
	cmd := exec.Command(vcsimBin)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	vars := map[string]string{}
	sc := bufio.NewScanner(out)
	for sc.Scan() {
		k, v, _ := strings.Cut(sc.Text(), "=")
		if k == "GROVE_VCSIM_READY" {
			break
		}
		vars[k] = v
	}
	if vars["GOVC_URL"] == "" {
		t.Fatalf("grove-vcsim printed no GOVC_URL: %v", vars)
	}
	for k, v := range vars {
		if strings.HasPrefix(k, "GOVC_") {
			t.Setenv(k, v)
		}
	}
	u, err := url.Parse(vars["GOVC_URL"])
	if err != nil {
		t.Fatal(err)
	}
	u.User = url.UserPassword(vars["GOVC_USERNAME"], vars["GOVC_PASSWORD"])
	ctx := context.Background()
	c, err := govmomi.NewClient(ctx, u, true)
	if err != nil {
		t.Fatal(err)
	}
	f := find.NewFinder(c.Client, true)
	dc, err := f.Datacenter(ctx, vcsimtest.Datacenter)
	if err != nil {
		t.Fatal(err)
	}
	f.SetDatacenter(dc)
	return c, f
}

// clusterVMs lists the VMs carrying a Grove cluster's id, by node id:
// name and power state.
func clusterVMs(t *testing.T, c *govmomi.Client, clusterID string) map[string]mo.VirtualMachine {
	t.Helper()
	ctx := context.Background()
	v, err := view.NewManager(c.Client).CreateContainerView(ctx, c.ServiceContent.RootFolder, []string{"VirtualMachine"}, true)
	if err != nil {
		t.Fatal(err)
	}
	defer v.Destroy(ctx)
	var vms []mo.VirtualMachine
	if err := v.Retrieve(ctx, []string{"VirtualMachine"}, []string{"name", "config.extraConfig", "config.hardware", "runtime.powerState"}, &vms); err != nil {
		t.Fatal(err)
	}
	out := map[string]mo.VirtualMachine{}
	for _, vm := range vms {
		if vm.Config == nil {
			continue
		}
		var node, cluster string
		for _, o := range vm.Config.ExtraConfig {
			switch ov := o.GetOptionValue(); ov.Key {
			case "grove.node_id":
				node = fmt.Sprint(ov.Value)
			case "grove.cluster_id":
				cluster = fmt.Sprint(ov.Value)
			}
		}
		if cluster == clusterID {
			out[node] = vm
		}
	}
	return out
}

func vmTask(t *testing.T, f func(context.Context) (*object.Task, error)) {
	t.Helper()
	tk, err := f(context.Background())
	if err == nil {
		err = tk.Wait(context.Background())
	}
	if err != nil {
		t.Fatal(err)
	}
}

// TestVSphereCluster runs a cluster of VMs on the simulator, served as a
// separate process, through a real agent and its plugin process, which
// reach vCenter with the credentials of the agent config: cloned
// and powered on, scaled out and in, a VM powered off and one destroyed
// behind Grove's back are recovered, a memory change rolls out, a clone
// that vSphere faults fails its node and leaves nothing, and deleting the
// cluster leaves no VM.
func TestVSphereCluster(t *testing.T) {
	vc, finder := vcsim(t)
	dir := t.TempDir()
	var clusterID string
	// The credentials reach the driver through the agent config's plugin
	// "builtin" block, not the environment (TestVSphereHCL uses that).
	cfg := fastConfig(t, dir, "")
	block := fmt.Sprintf("plugin \"builtin\" {\n  config = {\n    vsphere_url = %q\n    vsphere_username = %q\n    vsphere_password = %q\n    vsphere_insecure = \"true\"\n  }\n}\n",
		os.Getenv("GOVC_URL"), os.Getenv("GOVC_USERNAME"), os.Getenv("GOVC_PASSWORD"))
	if err := appendFile(cfg, block); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"GOVC_URL", "GOVC_USERNAME", "GOVC_PASSWORD", "GOVC_INSECURE"} {
		t.Setenv(k, "")
	}
	a := startAgent(t, dir, "-config", cfg)
	profile := func(name string, props map[string]any) {
		p := map[string]any{"cluster": vcsimtest.Cluster, "template": vcsimtest.Template, "num_cpus": 1}
		for k, v := range props {
			p[k] = v
		}
		a.mustDo(http.MethodPost, "/v1/profiles", map[string]any{"profile": map[string]any{"name": name,
			"spec": map[string]any{"type": "vsphere.vm", "version": "1.0", "properties": p}}}, nil)
	}
	profile("vm", map[string]any{"memory_mb": 128})
	profile("vm-big", map[string]any{"memory_mb": 256})

	// Inventory is resolved at submit time.
	_, err := a.do(http.MethodPost, "/v1/profiles", map[string]any{"profile": map[string]any{"name": "bad",
		"spec": map[string]any{"type": "vsphere.vm", "version": "1.0", "properties": map[string]any{"cluster": vcsimtest.Cluster, "template": "no-such-template"}}}})
	if err == nil || !strings.Contains(err.Error(), "properties.template") || !strings.Contains(err.Error(), "no-such-template") {
		t.Errorf("an unknown template: %v", err)
	}

	restart := map[string]any{"condition": "any", "delay": "0s", "max_attempts": 5, "window": "5m"}
	act := a.waitAction(a.createCluster("vms", "vm", 4, map[string]any{"config": map[string]any{
		"grove.update": map[string]any{"parallelism": 1, "monitor": "200ms"}, "grove.restart": restart}}))
	if act.Status != "SUCCEEDED" {
		t.Fatalf("create: %s %s\n%s", act.Status, act.StatusReason, tail(a.logText(), 40))
	}
	clusterID = a.cluster("vms").ID
	t.Cleanup(func() {
		for _, vm := range clusterVMs(t, vc, clusterID) {
			o := object.NewVirtualMachine(vc.Client, vm.Self)
			if tk, err := o.PowerOff(context.Background()); err == nil {
				_ = tk.Wait(context.Background())
			}
			if tk, err := o.Destroy(context.Background()); err == nil {
				_ = tk.Wait(context.Background())
			}
		}
	})
	matches := func(what string, want int) []api.Node {
		t.Helper()
		nodes := a.nodes(clusterID)
		vms := clusterVMs(t, vc, clusterID)
		if len(nodes) != want || len(vms) != want {
			t.Fatalf("%s: %d nodes and %d VMs, want %d", what, len(nodes), len(vms), want)
		}
		for _, n := range nodes {
			vm, ok := vms[n.ID]
			if !ok || vm.Name != n.Name || vm.Runtime.PowerState != types.VirtualMachinePowerStatePoweredOn || n.Data["moid"] != vm.Self.Value || n.Status != "ACTIVE" {
				t.Errorf("%s: node %s (%s, data %v) has VM %+v %s", what, n.Name, n.Status, n.Data, vm.Name, vm.Runtime.PowerState)
			}
		}
		return nodes
	}
	matches("after create", 4)

	var hosts struct {
		Hosts []api.Host `json:"hosts"`
	}
	a.mustDo(http.MethodGet, "/v1/profile-types/vsphere.vm/hosts", nil, &hosts)
	if len(hosts.Hosts) != 6 || !slices.ContainsFunc(hosts.Hosts, func(h api.Host) bool { return h.Name == vcsimtest.DRSHost }) {
		t.Errorf("hosts of vsphere.vm: %+v", hosts.Hosts)
	}

	if act := a.waitAction(a.clusterAction("vms", "scale_out", map[string]any{"count": 2})); act.Status != "SUCCEEDED" {
		t.Fatalf("scale_out: %s %s", act.Status, act.StatusReason)
	}
	matches("after scale_out", 6)
	if act := a.waitAction(a.clusterAction("vms", "scale_in", map[string]any{"count": 3})); act.Status != "SUCCEEDED" {
		t.Fatalf("scale_in: %s %s", act.Status, act.StatusReason)
	}
	nodes := matches("after scale_in", 3)

	// A VM powered off behind Grove's back is found dead and powered on.
	off := nodes[0]
	vm, err := finder.VirtualMachine(context.Background(), off.Name)
	if err != nil {
		t.Fatal(err)
	}
	vmTask(t, vm.PowerOff)
	eventually(t, 60*time.Second, "the powered-off VM to be recovered", func() (bool, string) {
		n, err := a.client.GetNode(context.Background(), off.ID)
		if err != nil {
			return false, err.Error()
		}
		st, _ := vm.PowerState(context.Background())
		return n.Status == "ACTIVE" && restarts(*n) >= 1 && st == types.VirtualMachinePowerStatePoweredOn, n.Status + " " + n.StatusReason + " " + string(st)
	})

	// A VM destroyed behind Grove's back is cloned again.
	gone := nodes[1]
	vm, err = finder.VirtualMachine(context.Background(), gone.Name)
	if err != nil {
		t.Fatal(err)
	}
	vmTask(t, vm.PowerOff)
	vmTask(t, vm.Destroy)
	eventually(t, 60*time.Second, "the destroyed VM to be recreated", func() (bool, string) {
		n, err := a.client.GetNode(context.Background(), gone.ID)
		if err != nil {
			return false, err.Error()
		}
		now, ok := clusterVMs(t, vc, clusterID)[gone.ID]
		return n.Status == "ACTIVE" && ok && now.Self.Value != gone.Data["moid"] && now.Runtime.PowerState == types.VirtualMachinePowerStatePoweredOn && n.Data["moid"] == now.Self.Value,
			fmt.Sprintf("%s %s %v", n.Status, n.StatusReason, ok)
	})
	matches("after recovery", 3)

	// A VM moved to another host behind Grove's back (as DRS would): the
	// health checks record its new host in the node's data.
	moved := a.nodes(clusterID)[0]
	mvm, err := finder.VirtualMachine(context.Background(), moved.Name)
	if err != nil {
		t.Fatal(err)
	}
	var to *object.HostSystem
	for _, h := range []string{vcsimtest.DRSHost, vcsimtest.Cluster + "_H1", vcsimtest.Cluster + "_H2"} {
		if h != moved.Data["host"] {
			if to, err = finder.HostSystem(context.Background(), h); err != nil {
				t.Fatal(err)
			}
			break
		}
	}
	toRef := to.Reference()
	vmTask(t, func(ctx context.Context) (*object.Task, error) {
		return mvm.Relocate(ctx, types.VirtualMachineRelocateSpec{Host: &toRef}, types.VirtualMachineMovePriorityDefaultPriority)
	})
	eventually(t, 30*time.Second, "the moved VM's node to name its new host", func() (bool, string) {
		n, err := a.client.GetNode(context.Background(), moved.ID)
		if err != nil {
			return false, err.Error()
		}
		return n.Data["host"] == to.Name() && n.Status == "ACTIVE", fmt.Sprintf("%s %v", n.Status, n.Data["host"])
	})

	// Node operations through the API: power_off leaves the node WARNING
	// (the restart supervisor leaves a VM switched off on purpose alone),
	// power_on brings it back ACTIVE.
	op := nodes[2]
	opVM, err := finder.VirtualMachine(context.Background(), op.Name)
	if err != nil {
		t.Fatal(err)
	}
	for _, step := range []struct {
		name, status string
		power        types.VirtualMachinePowerState
	}{
		{"power_off", "WARNING", types.VirtualMachinePowerStatePoweredOff},
		{"power_on", "ACTIVE", types.VirtualMachinePowerStatePoweredOn},
	} {
		id, err := a.client.NodeOperation(context.Background(), op.ID, step.name, nil)
		if err != nil {
			t.Fatalf("%s: %v", step.name, err)
		}
		if act := a.waitAction(id); act.Status != "SUCCEEDED" {
			t.Fatalf("%s: %s %s", step.name, act.Status, act.StatusReason)
		}
		n, err := a.client.GetNode(context.Background(), op.ID)
		st, _ := opVM.PowerState(context.Background())
		if err != nil || n.Status != step.status || st != step.power {
			t.Errorf("after %s: node %v %v, VM %s; want %s and %s", step.name, n, err, st, step.status, step.power)
		}
	}

	// A memory change rolls out, keeping every node.
	r := a.mustDo(http.MethodPatch, "/v1/clusters/vms", map[string]any{"cluster": map[string]any{"profile_id": "vm-big"}}, nil)
	if act := a.waitAction(r.ActionID()); act.Status != "SUCCEEDED" {
		t.Fatalf("memory update: %s %s\n%s", act.Status, act.StatusReason, tail(a.logText(), 30))
	}
	after := matches("after the memory update", 3)
	for _, n := range after {
		if !slices.ContainsFunc(nodes, func(o api.Node) bool { return o.ID == n.ID }) {
			t.Errorf("node %s is new; the update must keep nodes", n.Name)
		}
		if got := clusterVMs(t, vc, clusterID)[n.ID].Config.Hardware.MemoryMB; got != 256 {
			t.Errorf("node %s has %d MiB after the update", n.Name, got)
		}
	}

	// A clone that vSphere faults fails its node with the fault's message.
	profile("faulty", map[string]any{"cluster": vcsimtest.Cluster2, "template": vcsimtest.FaultyTemplate})
	wctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	act, err = a.client.WaitAction(wctx, a.createCluster("faulty", "faulty", 1, nil), nil)
	if act == nil {
		t.Fatalf("the faulty cluster's create: %v", err)
	}
	badID := a.cluster("faulty").ID
	bad := a.nodes(badID)
	if act.Status != "FAILED" || len(bad) != 1 || bad[0].Status != "ERROR" || !strings.Contains(bad[0].StatusReason, vcsimtest.FaultMessage) {
		t.Errorf("a faulted clone: action %s %s, nodes %+v", act.Status, act.StatusReason, bad)
	}
	if vms := clusterVMs(t, vc, badID); len(vms) != 0 {
		t.Errorf("a faulted clone left VMs: %v", vms)
	}
	if act := a.waitAction(a.mustDo(http.MethodDelete, "/v1/clusters/faulty", nil, nil).ActionID()); act.Status != "SUCCEEDED" {
		t.Errorf("delete the faulty cluster: %s %s", act.Status, act.StatusReason)
	}

	// Deleting the cluster leaves no VM.
	r = a.mustDo(http.MethodDelete, "/v1/clusters/vms", nil, nil)
	if act := a.waitAction(r.ActionID()); act.Status != "SUCCEEDED" {
		t.Fatalf("delete: %s %s", act.Status, act.StatusReason)
	}
	if vms := clusterVMs(t, vc, clusterID); len(vms) != 0 {
		t.Fatalf("VMs left after deleting the cluster: %d", len(vms))
	}
}

func appendFile(path, text string) error {
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		return err
	}
	if _, err := f.WriteString(text); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// TestVSphereHCL applies examples/hcl/vsphere with the grove CLI against
// the simulator, changes the VMs' memory and destroys it.
func TestVSphereHCL(t *testing.T) {
	vc, _ := vcsim(t)
	a := startAgent(t, t.TempDir())
	ex := "../examples/hcl/vsphere"
	out, errOut, code := a.grove("apply", "-auto-approve", "-var", "nodes=2", ex)
	if code != 0 || !strings.Contains(out, "Apply complete!") {
		t.Fatalf("apply: %d\n%s\n%s", code, out, errOut)
	}
	id := a.cluster("vsphere").ID
	if vms := clusterVMs(t, vc, id); len(vms) != 2 {
		t.Fatalf("%d VMs after apply, want 2", len(vms))
	}
	out, errOut, code = a.grove("apply", "-auto-approve", "-var", "nodes=2", "-var", "memory_mb=512", ex)
	if code != 0 {
		t.Fatalf("apply more memory: %d\n%s\n%s", code, out, errOut)
	}
	for node, vm := range clusterVMs(t, vc, id) {
		if vm.Config.Hardware.MemoryMB != 512 || vm.Runtime.PowerState != types.VirtualMachinePowerStatePoweredOn {
			t.Errorf("node %s after the memory change: %d MiB, %s", node, vm.Config.Hardware.MemoryMB, vm.Runtime.PowerState)
		}
	}
	if out, errOut, code = a.grove("destroy", "-auto-approve", ex); code != 0 {
		t.Fatalf("destroy: %d\n%s\n%s", code, out, errOut)
	}
	if vms := clusterVMs(t, vc, id); len(vms) != 0 {
		t.Fatalf("%d VMs left after destroy", len(vms))
	}
}
