package vsphere

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/vmware/govmomi/fault"
	"github.com/vmware/govmomi/object"
	"github.com/vmware/govmomi/vim25/mo"
	"github.com/vmware/govmomi/vim25/types"

	"github.com/grovehq/grove/plugins/builtin/internal/fanout"
	"github.com/grovehq/grove/plugins/sdk"
	"github.com/grovehq/grove/plugins/sdk/schema"
)

func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// isNotFound says a vSphere error means the object no longer exists.
func isNotFound(err error) bool {
	return fault.Is(err, &types.ManagedObjectNotFound{})
}

// powerOn powers a VM on; one already on is fine.
func powerOn(ctx context.Context, vm *object.VirtualMachine) error {
	t, err := vm.PowerOn(ctx)
	if err == nil {
		_, err = waitTask(ctx, t)
	}
	if err != nil && fault.Is(err, &types.InvalidPowerState{}) {
		return nil
	}
	return err
}

// powerOff powers a VM off; one already off is fine.
func powerOff(ctx context.Context, vm *object.VirtualMachine) error {
	t, err := vm.PowerOff(ctx)
	if err == nil {
		_, err = waitTask(ctx, t)
	}
	if err != nil && fault.Is(err, &types.InvalidPowerState{}) {
		return nil
	}
	return err
}

// destroy powers a VM off and destroys it; one already gone is success.
func destroy(ctx context.Context, vm *object.VirtualMachine) error {
	if err := powerOff(ctx, vm); err != nil && !isNotFound(err) {
		return err
	}
	t, err := vm.Destroy(ctx)
	if err == nil {
		_, err = waitTask(ctx, t)
	}
	if err != nil && !isNotFound(err) {
		return err
	}
	return nil
}

// Delete powers each node's VM off and destroys it; a VM already gone is
// success. Then the DRS rules of the node's cluster lose the destroyed VMs,
// and those left with nothing to rule are removed.
func (d *Driver) Delete(ctx context.Context, p sdk.Spec, nodes []sdk.Node) []sdk.Result {
	pr, err := propsOf(p)
	if err != nil {
		return fanout.FailAll(ctx, nodes, err)
	}
	s, err := d.session(ctx, pr.Connection)
	if err != nil {
		return fanout.FailAll(ctx, nodes, err)
	}
	// The inventory finds VMs whose create was cut short before their id
	// was recorded; without it (a template deleted since) only recorded
	// VMs can be found, which is every VM whose create returned.
	inv, _, invErr := d.inventory(ctx, p)
	// Once for the batch: the wait is for the template's clones, not a
	// node's.
	var settleErr error
	if inv != nil && slices.ContainsFunc(nodes, func(n sdk.Node) bool { return stateOf(n).MOID == "" }) {
		if err := settleClones(ctx, inv); err != nil {
			settleErr = vmError(ctx, "wait for the clones of "+inv.template.InventoryPath+" running", err)
		}
	}
	out := each(nodes, func(n sdk.Node) sdk.Result {
		r := sdk.Result{ID: n.ID, PhysicalID: n.PhysicalID, State: n.State}
		r.Err = d.remove(ctx, s, inv, invErr, settleErr, n)
		return r
	})
	var gone []types.ManagedObjectReference
	clusters := map[string]bool{}
	for i, n := range nodes {
		if out[i].Err == nil {
			if st := stateOf(n); st.MOID != "" {
				gone = append(gone, st.ref())
			}
			clusters[n.ClusterID] = true
		}
	}
	if inv != nil && inv.cluster != nil && len(gone) > 0 {
		for id := range clusters {
			if err := pruneRules(ctx, inv.cluster, id, gone); err != nil {
				// The VMs are gone; a rule left behind is removed by the
				// next delete or by DeleteRules. Report it on the nodes so
				// it is seen.
				for i := range out {
					if nodes[i].ClusterID == id && out[i].Err == nil {
						out[i].Reason = "the VM is destroyed, but its DRS rules could not be updated: " + err.Error()
					}
				}
			}
		}
	}
	return out
}

// remove destroys one node's VM: the recorded one, and any VM of the
// node's name that carries its id. A node with no VM recorded is looked
// for only once the template's clones have settled (settleErr says they
// could not be waited for).
func (d *Driver) remove(ctx context.Context, s *session, inv *inventory, invErr, settleErr error, n sdk.Node) error {
	c := s.vim()
	if st := stateOf(n); st.MOID != "" {
		if err := destroy(ctx, object.NewVirtualMachine(c, st.ref())); err != nil {
			return vmError(ctx, "destroy VM "+vmName(n), err)
		}
	}
	if inv == nil {
		if stateOf(n).MOID == "" {
			return fmt.Errorf("cannot look for VM %s: %v", vmName(n), invErr)
		}
		return nil
	}
	if stateOf(n).MOID == "" && settleErr != nil {
		return fmt.Errorf("look for VM %s: %w", vmName(n), settleErr)
	}
	found, err := object.NewSearchIndex(c).FindChild(ctx, inv.folder, vmName(n))
	if err != nil {
		return vmError(ctx, "look for VM "+vmName(n), err)
	}
	if found == nil {
		return nil
	}
	vm := object.NewVirtualMachine(c, found.Reference())
	owner, err := nodeOf(ctx, vm)
	if err != nil && !isNotFound(err) {
		return vmError(ctx, "read VM "+vmName(n), err)
	}
	if owner != n.ID {
		return nil // another node's or someone else's VM of that name
	}
	if err := destroy(ctx, vm); err != nil {
		return vmError(ctx, "destroy VM "+vmName(n), err)
	}
	return nil
}

// settleClones waits until vCenter runs no clone of the profile's
// template. A node with no VM recorded is one whose create never returned,
// and that create's clone may still be running: a search now would miss
// the VM it is about to make (leaving it behind once the node is gone), or
// find it half-made and destroy it under the clone, which vCenter refuses
// and govmomi's simulator crashes on. vCenter's tasks do not name a
// clone's target, so every running clone of the template is waited for;
// only deletes of nodes whose create never returned pay for it.
func settleClones(ctx context.Context, inv *inventory) error {
	if inv.template == nil {
		return nil
	}
	c := inv.s.vim()
	var tmpl mo.VirtualMachine
	if err := inv.template.Properties(ctx, inv.template.Reference(), []string{"recentTask"}, &tmpl); err != nil {
		if isNotFound(err) {
			return nil // no template, no clone of it
		}
		return err
	}
	for _, ref := range tmpl.RecentTask {
		var t mo.Task
		if err := inv.template.Properties(ctx, ref, []string{"info"}, &t); err != nil {
			if isNotFound(err) {
				continue // expired from vCenter's recent tasks: long done
			}
			return err
		}
		// vCenter's is VirtualMachine.clone, the simulator's
		// VirtualMachine.cloneVm.
		if !strings.HasPrefix(t.Info.DescriptionId, "VirtualMachine.clone") {
			continue
		}
		if t.Info.State != types.TaskInfoStateQueued && t.Info.State != types.TaskInfoStateRunning {
			continue
		}
		// The clone's own outcome is its create's business: only its end
		// matters here.
		if _, err := waitTask(ctx, object.NewTask(c, ref)); err != nil && ctx.Err() != nil {
			return err
		}
	}
	return nil
}

// inPlace are the properties a VM changes without being replaced: those
// reconfigured, and those that say how Grove reaches vCenter (rotated
// credentials) or waits, which change nothing of the VM.
var inPlace = []string{"num_cpus", "memory_mb", "annotation", "connection", "wait_for_ip", "wait_timeout", "adopted_from"}

// replaces says whether moving from old to new replaces the VMs: any
// change beyond those in inPlace does.
func replaces(old, new sdk.Spec) bool { return len(replacing(old, new)) > 0 }

// replacing are the properties, sorted, whose change from old to new
// replaces the VMs.
func replacing(old, new sdk.Spec) []string {
	keys := map[string]bool{}
	for k := range old.Properties {
		keys[k] = true
	}
	for k := range new.Properties {
		keys[k] = true
	}
	var out []string
	for k := range keys {
		if slices.Contains(inPlace, k) {
			continue
		}
		a, _ := json.Marshal(old.Properties[k])
		b, _ := json.Marshal(new.Properties[k])
		if string(a) != string(b) {
			out = append(out, k)
		}
	}
	slices.Sort(out)
	return out
}

// Update reconfigures CPU, memory and annotation in place, power-cycling a
// running VM only when a CPU or memory change cannot be hot-added. Any
// other change replaces the VM, keeping the node's identity.
func (d *Driver) Update(ctx context.Context, old, new sdk.Spec, nodes []sdk.Node) []sdk.Result {
	if replaces(old, new) {
		if pr, err := propsOf(new); err == nil && pr.Template == "" {
			return fanout.FailAll(ctx, nodes, noTemplate(pr, fmt.Sprintf("Changing %s replaces the VM, which", strings.Join(replacing(old, new), ", "))))
		}
		return d.recreate(ctx, old, new, nodes)
	}
	pr, err := propsOf(new)
	if err != nil {
		return fanout.FailAll(ctx, nodes, err)
	}
	s, err := d.session(ctx, pr.Connection)
	if err != nil {
		return fanout.FailAll(ctx, nodes, err)
	}
	return each(nodes, func(n sdk.Node) sdk.Result { return d.reconfigure(ctx, s, pr, n) })
}

func (d *Driver) reconfigure(ctx context.Context, s *session, pr Properties, n sdk.Node) sdk.Result {
	st := stateOf(n)
	fail := func(what string, err error) sdk.Result {
		return sdk.Result{ID: n.ID, PhysicalID: n.PhysicalID, State: n.State, Err: vmError(ctx, what+" VM "+vmName(n), err)}
	}
	vm := object.NewVirtualMachine(s.vim(), st.ref())
	var m mo.VirtualMachine
	if err := vm.Properties(ctx, vm.Reference(), []string{"config.hardware", "config.annotation", "config.cpuHotAddEnabled", "config.memoryHotAddEnabled", "runtime.powerState"}, &m); err != nil {
		return fail("read", err)
	}
	if m.Config == nil {
		return fail("read", errors.New("the VM has no configuration"))
	}
	spec := types.VirtualMachineConfigSpec{}
	cycle := false
	on := m.Runtime.PowerState == types.VirtualMachinePowerStatePoweredOn
	if pr.NumCPUs > 0 && pr.NumCPUs != m.Config.Hardware.NumCPU {
		spec.NumCPUs = pr.NumCPUs
		// Hot-add only adds; fewer CPUs always need the VM off.
		cycle = cycle || on && (!isTrue(m.Config.CpuHotAddEnabled) || pr.NumCPUs < m.Config.Hardware.NumCPU)
	}
	if pr.MemoryMB > 0 && pr.MemoryMB != int64(m.Config.Hardware.MemoryMB) {
		spec.MemoryMB = pr.MemoryMB
		cycle = cycle || on && (!isTrue(m.Config.MemoryHotAddEnabled) || pr.MemoryMB < int64(m.Config.Hardware.MemoryMB))
	}
	if pr.Annotation != m.Config.Annotation {
		spec.Annotation = pr.Annotation
		if pr.Annotation == "" {
			spec.Annotation = " " // vSphere leaves an empty annotation unchanged
		}
	}
	if spec.NumCPUs != 0 || spec.MemoryMB != 0 || spec.Annotation != "" {
		if cycle {
			if err := powerOff(ctx, vm); err != nil {
				return fail("power off", err)
			}
		}
		t, err := vm.Reconfigure(ctx, spec)
		if err == nil {
			_, err = waitTask(ctx, t)
		}
		if err != nil {
			if cycle {
				_ = powerOn(context.WithoutCancel(ctx), vm)
			}
			return fail("reconfigure", err)
		}
		if cycle {
			if err := powerOn(ctx, vm); err != nil {
				return fail("power on", err)
			}
		}
	}
	var after mo.VirtualMachine
	if err := vm.Properties(ctx, vm.Reference(), vmProps, &after); err != nil {
		return fail("read", err)
	}
	r := d.result(ctx, s, n, after)
	r.Healthy = after.Runtime.PowerState == types.VirtualMachinePowerStatePoweredOn || !pr.PowerOn
	return r
}

func isTrue(b *bool) bool { return b != nil && *b }

// recreate destroys each node's VM and clones a new one from new.
func (d *Driver) recreate(ctx context.Context, old, new sdk.Spec, nodes []sdk.Node) []sdk.Result {
	// Refused before anything is destroyed: without a template the VMs
	// could not be cloned again.
	if pr, err := propsOf(new); err == nil && pr.Template == "" {
		return fanout.FailAll(ctx, nodes, noTemplate(pr, "Cloning the VM again"))
	}
	gone := d.Delete(ctx, old, nodes)
	inv, pr, err := d.inventory(ctx, new)
	if err != nil {
		return fanout.FailAll(ctx, nodes, err)
	}
	return fanout.Replace(nodes, gone, "moid", func(batch []sdk.Node) []sdk.Result {
		return each(batch, func(n sdk.Node) sdk.Result { return d.create(ctx, inv, pr, n) })
	})
}

// Recover brings nodes back. REBOOT (health recovery's) powers a stopped or
// suspended VM on, resets a running one and clones a missing one again;
// RECREATE and REBUILD replace the VM. The names of Operate's operations
// are accepted too.
func (d *Driver) Recover(ctx context.Context, p sdk.Spec, nodes []sdk.Node, operation string, params map[string]any) []sdk.Result {
	op := strings.ToLower(operation)
	switch {
	case op == "recreate" || op == "rebuild":
		return d.recreate(ctx, p, p, nodes)
	case isOperation(op):
		return d.Operate(ctx, p, nodes, op, params)
	case op != "" && op != "reboot":
		return fanout.FailAll(ctx, nodes, fmt.Errorf("vsphere.vm cannot recover with %q; it knows %s", operation, strings.Join(Operations, ", ")))
	}
	s, got, fail := d.powerStates(ctx, p, nodes)
	if fail != nil {
		return fail
	}
	out := make([]sdk.Result, len(nodes))
	var missing []int
	for i, n := range nodes {
		st := stateOf(n)
		v, ok := got[st.MOID]
		if st.MOID == "" || !ok || v.missing {
			missing = append(missing, i)
			continue
		}
		vm := object.NewVirtualMachine(s.vim(), st.ref())
		var err error
		if v.power == types.VirtualMachinePowerStatePoweredOn {
			err = task(ctx, vm.Reset)
		} else {
			err = powerOn(ctx, vm)
		}
		out[i] = d.after(ctx, s, n, vm, "recover", err)
	}
	if len(missing) > 0 {
		batch := make([]sdk.Node, len(missing))
		for j, i := range missing {
			batch[j] = nodes[i]
		}
		made := d.recreate(ctx, p, p, batch)
		for j, i := range missing {
			out[i] = made[j]
		}
	}
	return out
}

// task runs a VM method that returns a task and waits for it.
func task(ctx context.Context, f func(context.Context) (*object.Task, error)) error {
	t, err := f(ctx)
	if err == nil {
		_, err = waitTask(ctx, t)
	}
	return err
}

// after describes a VM after an operation, or fails the node with err.
func (d *Driver) after(ctx context.Context, s *session, n sdk.Node, vm *object.VirtualMachine, what string, err error) sdk.Result {
	if err != nil {
		return sdk.Result{ID: n.ID, PhysicalID: n.PhysicalID, State: n.State, Err: vmError(ctx, what+" VM "+vmName(n), err)}
	}
	var m mo.VirtualMachine
	if err := vm.Properties(ctx, vm.Reference(), vmProps, &m); err != nil {
		return sdk.Result{ID: n.ID, PhysicalID: n.PhysicalID, State: n.State, Err: vmError(ctx, "read VM "+vmName(n), err)}
	}
	r := d.result(ctx, s, n, m)
	r.Healthy = m.Runtime.PowerState == types.VirtualMachinePowerStatePoweredOn
	r.Reason = "VM " + string(m.Runtime.PowerState)
	return r
}

// NodeOperations are the operations Operate runs, as the API lists them
// (GET /v1/profile-types/vsphere.vm-1.0/ops) and checks their parameters.
func NodeOperations() []sdk.NodeOperation {
	none := schema.Schema{}
	snapshot := schema.Schema{
		"name":        {Type: schema.String, Description: "The snapshot's name."},
		"description": {Type: schema.String, Description: "The snapshot's description."},
		"memory":      {Type: schema.Boolean, Description: "Include the VM's memory in the snapshot."},
	}
	return []sdk.NodeOperation{
		{Name: "power_on", Description: "Power the VM on (one already on is left so).", Parameters: none},
		{Name: "power_off", Description: "Power the VM off; the node stays, WARNING, until powered on.", Parameters: none},
		{Name: "reset", Description: "Reset the VM, as a hardware reset.", Parameters: none},
		{Name: "suspend", Description: "Suspend the VM.", Parameters: none},
		{Name: "shutdown_guest", Description: "Shut the guest down through VMware Tools and wait until the VM is off.", Parameters: none},
		{Name: "reboot_guest", Description: "Reboot the guest through VMware Tools.", Parameters: none},
		{Name: "snapshot_create", Description: "Take a snapshot of the VM (name required).", Parameters: snapshot},
		{Name: "snapshot_revert", Description: "Revert the VM to the named snapshot, or to the current one.", Parameters: snapshot},
	}
}

// isOperation reports whether op is one of NodeOperations.
func isOperation(op string) bool {
	_, ok := sdk.FindNodeOperation(NodeOperations(), op)
	return ok
}

// OperationParams are the parameters of the snapshot operations.
type OperationParams struct {
	// Name is the snapshot's name; snapshot_revert without one reverts to
	// the current snapshot.
	Name        string `json:"name"`
	Description string `json:"description"`
	// Memory includes the VM's memory in the snapshot.
	Memory bool `json:"memory"`
}

// Operate runs a node operation on each node's VM: power_on, power_off,
// reset, suspend, shutdown_guest, reboot_guest (through VMware Tools),
// snapshot_create and snapshot_revert (params name, description, memory).
// It is the driver's sdk.Operator hook (POST /v1/nodes/{id}/ops); Recover
// accepts these names too.
func (d *Driver) Operate(ctx context.Context, p sdk.Spec, nodes []sdk.Node, op string, params map[string]any) []sdk.Result {
	if !isOperation(op) {
		return fanout.FailAll(ctx, nodes, fmt.Errorf("vsphere.vm has no operation %q; it has %s", op, sdk.NodeOperationNames(NodeOperations())))
	}
	var in OperationParams
	if err := sdk.Decode("params", params, &in); err != nil {
		return fanout.FailAll(ctx, nodes, err)
	}
	if op == "snapshot_create" && in.Name == "" {
		return fanout.FailAll(ctx, nodes, errors.New("params.name: snapshot_create needs the snapshot's name"))
	}
	pr, err := propsOf(p)
	if err != nil {
		return fanout.FailAll(ctx, nodes, err)
	}
	s, err := d.session(ctx, pr.Connection)
	if err != nil {
		return fanout.FailAll(ctx, nodes, err)
	}
	return each(nodes, func(n sdk.Node) sdk.Result {
		st := stateOf(n)
		if st.MOID == "" {
			return sdk.Result{ID: n.ID, Err: fmt.Errorf("node %s has no VM recorded", vmName(n))}
		}
		vm := object.NewVirtualMachine(s.vim(), st.ref())
		var err error
		switch op {
		case "power_on":
			err = powerOn(ctx, vm)
		case "power_off":
			err = powerOff(ctx, vm)
		case "reset":
			err = task(ctx, vm.Reset)
		case "suspend":
			err = task(ctx, vm.Suspend)
		case "shutdown_guest":
			if err = vm.ShutdownGuest(ctx); err == nil {
				err = vm.WaitForPowerState(ctx, types.VirtualMachinePowerStatePoweredOff)
			}
		case "reboot_guest":
			err = vm.RebootGuest(ctx)
		case "snapshot_create":
			err = task(ctx, func(ctx context.Context) (*object.Task, error) {
				return vm.CreateSnapshot(ctx, in.Name, in.Description, in.Memory, false)
			})
		case "snapshot_revert":
			err = task(ctx, func(ctx context.Context) (*object.Task, error) {
				if in.Name == "" {
					return vm.RevertToCurrentSnapshot(ctx, false)
				}
				return vm.RevertToSnapshot(ctx, in.Name, false)
			})
		}
		return d.after(ctx, s, n, vm, op, err)
	})
}
