package vsphere

import (
	"context"
	"fmt"

	"github.com/vmware/govmomi/property"
	"github.com/vmware/govmomi/vim25/mo"
	"github.com/vmware/govmomi/vim25/types"

	"github.com/grovehq/grove/plugins/sdk"
)

// vmStatus is what one round trip tells of a VM.
type vmStatus struct {
	missing bool
	power   types.VirtualMachinePowerState
	name    string
}

// statuses reads the power state of every ref with one property-collector
// round trip: missing VMs are reported in the results (not a fault that
// fails the whole batch), so a batch costs one call however many VMs it
// holds.
func statuses(ctx context.Context, s *session, refs []types.ManagedObjectReference) (map[string]vmStatus, error) {
	out := map[string]vmStatus{}
	if len(refs) == 0 {
		return out, nil
	}
	objs := make([]types.ObjectSpec, len(refs))
	for i, r := range refs {
		objs[i] = types.ObjectSpec{Obj: r, Skip: types.NewBool(false)}
	}
	req := types.RetrieveProperties{SpecSet: []types.PropertyFilterSpec{{
		ObjectSet:                     objs,
		PropSet:                       []types.PropertySpec{{Type: "VirtualMachine", PathSet: []string{"name", "runtime.powerState"}}},
		ReportMissingObjectsInResults: types.NewBool(true),
	}}}
	res, err := property.DefaultCollector(s.vim()).RetrieveProperties(ctx, req)
	if err != nil {
		return nil, err
	}
	for _, r := range refs {
		out[r.Value] = vmStatus{missing: true}
	}
	for _, oc := range res.Returnval {
		if gone(oc) {
			continue
		}
		var m mo.VirtualMachine
		if err := mo.LoadObjectContent([]types.ObjectContent{oc}, &m); err != nil {
			return nil, err
		}
		out[oc.Obj.Value] = vmStatus{power: m.Runtime.PowerState, name: m.Name}
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
		return nil, nil, failAll(ctx, nodes, err)
	}
	if s, err = d.session(ctx, pr.Connection); err != nil {
		return nil, nil, failAll(ctx, nodes, err)
	}
	var refs []types.ManagedObjectReference
	for _, n := range nodes {
		if st := stateOf(n); st.MOID != "" {
			refs = append(refs, st.ref())
		}
	}
	if got, err = statuses(ctx, s, refs); err != nil {
		return nil, nil, failAll(ctx, nodes, vmError(ctx, "read the VMs' power states", err))
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
		out[i] = r
	}
	return out
}
