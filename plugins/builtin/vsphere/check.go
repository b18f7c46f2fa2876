package vsphere

import (
	"context"
	"fmt"
	"maps"
	"reflect"

	"github.com/vmware/govmomi/property"
	"github.com/vmware/govmomi/vim25/mo"
	"github.com/vmware/govmomi/vim25/types"

	"github.com/grovehq/grove/plugins/builtin/internal/fanout"
	"github.com/grovehq/grove/plugins/sdk"
)

// vmStatus is what one round trip tells of a VM.
type vmStatus struct {
	missing bool
	power   types.VirtualMachinePowerState
	name    string
	// host is the name of the ESXi host the VM runs on, "" when unknown.
	host string
	// ips are the guest's addresses, the primary first.
	ips []any
}

// statuses reads the power state, host and addresses of every ref with one
// property-collector round trip: the VMs' hosts come along (their names
// through a traversal from runtime.host), and missing VMs are reported in
// the results (not a fault that fails the whole batch), so a batch costs
// one call however many VMs it holds.
func (d *Driver) statuses(ctx context.Context, s *session, refs []types.ManagedObjectReference) (map[string]vmStatus, error) {
	out := map[string]vmStatus{}
	if len(refs) == 0 {
		return out, nil
	}
	toHost := []types.BaseSelectionSpec{&types.TraversalSpec{SelectionSpec: types.SelectionSpec{Name: "vmHost"},
		Type: "VirtualMachine", Path: "runtime.host", Skip: types.NewBool(false)}}
	objs := make([]types.ObjectSpec, len(refs))
	for i, r := range refs {
		objs[i] = types.ObjectSpec{Obj: r, Skip: types.NewBool(false), SelectSet: toHost}
	}
	req := types.RetrieveProperties{SpecSet: []types.PropertyFilterSpec{{
		ObjectSet: objs,
		PropSet: []types.PropertySpec{
			{Type: "VirtualMachine", PathSet: []string{"name", "runtime.powerState", "runtime.host", "guest.ipAddress", "guest.net"}},
			{Type: "HostSystem", PathSet: []string{"name"}},
		},
		ReportMissingObjectsInResults: types.NewBool(true),
	}}}
	res, err := property.DefaultCollector(s.vim()).RetrieveProperties(ctx, req)
	if err != nil {
		return nil, err
	}
	for _, r := range refs {
		out[r.Value] = vmStatus{missing: true}
	}
	hosts := map[string]string{}
	var vms []mo.VirtualMachine
	for _, oc := range res.Returnval {
		if gone(oc) {
			continue
		}
		switch oc.Obj.Type {
		case "HostSystem":
			var h mo.HostSystem
			if err := mo.LoadObjectContent([]types.ObjectContent{oc}, &h); err != nil {
				return nil, err
			}
			hosts[oc.Obj.Value] = h.Name
		case "VirtualMachine":
			var m mo.VirtualMachine
			if err := mo.LoadObjectContent([]types.ObjectContent{oc}, &m); err != nil {
				return nil, err
			}
			vms = append(vms, m)
		}
	}
	d.mu.Lock()
	maps.Copy(d.hostNames, hosts)
	d.mu.Unlock()
	for _, m := range vms {
		st := vmStatus{power: m.Runtime.PowerState, name: m.Name, ips: addresses(m)}
		if m.Runtime.Host != nil {
			st.host = hosts[m.Runtime.Host.Value]
		}
		out[m.Self.Value] = st
	}
	return out, nil
}

// gone says an object's content reports it missing: vCenter lists a
// missing object with a ManagedObjectNotFound fault in its MissingSet.
func gone(oc types.ObjectContent) bool {
	for _, m := range oc.MissingSet {
		if _, ok := m.Fault.Fault.(*types.ManagedObjectNotFound); ok {
			return true
		}
	}
	return false
}

// powerStates opens the profile's vCenter session and reads the power state
// of every VM of the batch in one property-collector round trip. When that
// fails, fail holds the batch's results.
func (d *Driver) powerStates(ctx context.Context, p sdk.Spec, nodes []sdk.Node) (s *session, got map[string]vmStatus, fail []sdk.Result) {
	pr, err := propsOf(p)
	if err != nil {
		return nil, nil, fanout.FailAll(ctx, nodes, err)
	}
	if s, err = d.session(ctx, pr.Connection); err != nil {
		return nil, nil, fanout.FailAll(ctx, nodes, err)
	}
	var refs []types.ManagedObjectReference
	for _, n := range nodes {
		if st := stateOf(n); st.MOID != "" {
			refs = append(refs, st.ref())
		}
	}
	if got, err = d.statuses(ctx, s, refs); err != nil {
		return nil, nil, fanout.FailAll(ctx, nodes, vmError(ctx, "read the VMs' power states", err))
	}
	return s, got, nil
}

// Check reports powered-on VMs healthy and powered-off, suspended and
// missing ones dead with the reason, for the whole batch in one round trip.
func (d *Driver) Check(ctx context.Context, p sdk.Spec, nodes []sdk.Node) []sdk.Result {
	_, got, fail := d.powerStates(ctx, p, nodes)
	if fail != nil {
		return fail
	}
	out := make([]sdk.Result, len(nodes))
	for i, n := range nodes {
		r := sdk.Result{ID: n.ID, PhysicalID: n.PhysicalID, State: n.State}
		st := stateOf(n)
		v, ok := got[st.MOID]
		switch {
		case st.MOID == "":
			r.Reason = "the node has no VM recorded"
		case !ok || v.missing:
			r.Reason = fmt.Sprintf("the VM %s (%s) is missing", vmName(n), st.MOID)
		case v.power == types.VirtualMachinePowerStatePoweredOn:
			r.Healthy, r.Reason = true, "VM powered on"
		default:
			r.Reason = fmt.Sprintf("the VM %s is %s", v.name, v.power)
		}
		if ok && !v.missing {
			r.Data = changedData(n, v)
		}
		out[i] = r
	}
	return out
}

// changedData is what the node's data says wrong of its VM: the host it
// runs on (DRS or an administrator moved it) and its addresses. A guest
// that reports no address (powered off, VMware Tools not running) keeps
// the last ones known. Nil when all is still true, so a check writes
// nothing.
func changedData(n sdk.Node, v vmStatus) map[string]any {
	out := map[string]any{}
	if v.host != "" && n.Data["host"] != v.host {
		out["host"] = v.host
	}
	if len(v.ips) > 0 && !reflect.DeepEqual(n.Data["ip_addresses"], v.ips) {
		out["ip_addresses"] = v.ips
		out["address"] = v.ips[0]
	}
	if len(out) == 0 {
		return nil
	}
	return out
}
