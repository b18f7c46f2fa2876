package vsphere

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"strings"

	"github.com/vmware/govmomi/find"
	"github.com/vmware/govmomi/object"
	"github.com/vmware/govmomi/vim25/mo"
	"github.com/vmware/govmomi/vim25/types"

	"github.com/grovehq/grove/plugins/sdk"
)

// vmMoref is a VirtualMachine managed object id, bare ("vm-42") or typed
// ("VirtualMachine:vm-42"); any other identity is an inventory path or a
// name as govc takes them, and so is a bare one no VM has as its id.
var vmMoref = regexp.MustCompile(`^(?:VirtualMachine:)?(vm-[0-9]+)$`)

// adoptProps are the VM properties an adoption reads.
var adoptProps = []string{"name", "parent", "resourcePool", "datastore", "config.template", "config.hardware", "config.annotation",
	"runtime.powerState", "config.extraConfig"}

// Adopt takes over an existing VM of the plugin's vCenter (the plugin
// config's or the GOVC_* connection), by its managed object id (vm-42), its
// inventory path or its name. Its datacenter, compute cluster, resource
// pool (when not the cluster's root), folder, datastore, CPUs, memory, port
// groups, annotation and power state become the profile's properties, and
// adopted_from records the VM's inventory path. What the VM was cloned from
// cannot be read back, so the spec has no template (unless an override
// gives one): such a profile describes this VM only, and the driver refuses
// what needs a template, cloning new nodes from it and changes that replace
// the VM. The VM itself is left as it is. Senlin's snapshot flag is
// refused, saying why.
func (d *Driver) Adopt(ctx context.Context, req sdk.AdoptRequest) (sdk.Adoption, error) {
	if req.Snapshot {
		// A template is a full clone of the VM: minutes of vCenter work,
		// more than an API call may take.
		return sdk.Adoption{}, errors.New("snapshot: vsphere.vm does not make a template of the VM on adoption (a full clone, longer than an API call); " +
			"clone one (govc vm.clone -vm VM -template NAME) and give it as the template override")
	}
	s, err := d.session(ctx, Connection{})
	if err != nil {
		return sdk.Adoption{}, err
	}
	c := s.vim()
	f := find.NewFinder(c, true)
	var ref types.ManagedObjectReference
	var m mo.VirtualMachine
	read := func() error { return object.NewVirtualMachine(c, ref).Properties(ctx, ref, adoptProps, &m) }
	if id := vmMoref.FindStringSubmatch(req.Identity); id != nil {
		ref = types.ManagedObjectReference{Type: "VirtualMachine", Value: id[1]}
		err = read()
		// A bare "vm-01" is also a name VMs have (examples/hcl/vsphere names
		// its VMs vm-$2I): with no VM of that id, it is looked up as a name.
		if isNotFound(err) && id[0] == id[1] {
			if named, ferr := d.findVM(ctx, f, req.Identity); ferr == nil {
				ref = named
				err = read()
			}
		}
	} else {
		if ref, err = d.findVM(ctx, f, req.Identity); err != nil {
			return sdk.Adoption{}, err
		}
		err = read()
	}
	if err != nil {
		if isNotFound(err) {
			return sdk.Adoption{}, fmt.Errorf("vCenter has no VM %s", ref.Value)
		}
		return sdk.Adoption{}, vmError(ctx, "read VM "+req.Identity, err)
	}
	if m.Config == nil {
		return sdk.Adoption{}, fmt.Errorf("VM %s (%s) has no configuration to describe (is it inaccessible?)", m.Name, ref.Value)
	}
	if m.Config.Template {
		return sdk.Adoption{}, fmt.Errorf("%s (%s) is a template, not a VM: templates do not run; clone nodes from it with a profile whose template it is", m.Name, ref.Value)
	}
	if owner := extraValue(m.Config.ExtraConfig, keyNode); owner != "" {
		return sdk.Adoption{}, fmt.Errorf("VM %s (%s) is already the VM of Grove node %s", m.Name, ref.Value, owner)
	}
	props, err := describeVM(ctx, s, m)
	if err != nil {
		return sdk.Adoption{}, err
	}
	if req.Preview {
		return sdk.Adoption{Properties: props}, nil
	}
	vm := object.NewVirtualMachine(c, ref)
	var now mo.VirtualMachine
	if err := vm.Properties(ctx, ref, vmProps, &now); err != nil {
		return sdk.Adoption{}, vmError(ctx, "read VM "+m.Name, err)
	}
	r := d.result(ctx, s, req.Node, now)
	r.Data["adopted"] = true
	return sdk.Adoption{Properties: props, Result: r}, nil
}

// describeVM is the vsphere.vm spec of a VM, its inventory as paths.
func describeVM(ctx context.Context, s *session, m mo.VirtualMachine) (map[string]any, error) {
	c := s.vim()
	pathOf := func(ref types.ManagedObjectReference) (string, error) {
		p, err := find.InventoryPath(ctx, c, ref)
		if err != nil {
			return "", vmError(ctx, "read the inventory path of "+ref.Value, err)
		}
		return p, nil
	}
	self, err := pathOf(m.Self)
	if err != nil {
		return nil, err
	}
	props := map[string]any{
		"adopted_from": self,
		"num_cpus":     int64(m.Config.Hardware.NumCPU),
		"memory_mb":    int64(m.Config.Hardware.MemoryMB),
		"power_on":     m.Runtime.PowerState == types.VirtualMachinePowerStatePoweredOn,
	}
	if m.Config.Annotation != "" {
		props["annotation"] = m.Config.Annotation
	}
	// The datacenter is the first part of every inventory path.
	if dc, _, ok := strings.Cut(strings.TrimPrefix(self, "/"), "/"); ok {
		props["datacenter"] = dc
	}
	if m.Parent != nil {
		if p, err := pathOf(*m.Parent); err == nil {
			props["folder"] = p
		}
	}
	if m.ResourcePool != nil {
		pool := object.NewResourcePool(c, *m.ResourcePool)
		if cl := ownerCluster(ctx, pool); cl != nil {
			cp, err := pathOf(cl.Reference())
			if err != nil {
				return nil, err
			}
			props["cluster"] = cp
			if root, err := cl.ResourcePool(ctx); err == nil && root.Reference() != pool.Reference() {
				if pp, err := pathOf(pool.Reference()); err == nil {
					props["resource_pool"] = pp
				}
			}
		} else if pp, err := pathOf(pool.Reference()); err == nil {
			props["resource_pool"] = pp
		}
	}
	if len(m.Datastore) > 0 {
		var ds mo.Datastore
		if err := object.NewDatastore(c, m.Datastore[0]).Properties(ctx, m.Datastore[0], []string{"name"}, &ds); err == nil {
			props["datastore"] = ds.Name
		}
	}
	nets, err := portGroups(ctx, s, object.VirtualDeviceList(m.Config.Hardware.Device))
	if err != nil {
		return nil, err
	}
	if len(nets) > 0 {
		props["networks"] = nets
	}
	return props, nil
}

// portGroups are the names of the port groups of a VM's network cards, in
// card order.
func portGroups(ctx context.Context, s *session, devices object.VirtualDeviceList) ([]any, error) {
	var out []any
	for _, dev := range devices.SelectByType((*types.VirtualEthernetCard)(nil)) {
		switch b := dev.GetVirtualDevice().Backing.(type) {
		case *types.VirtualEthernetCardNetworkBackingInfo:
			out = append(out, b.DeviceName)
		case *types.VirtualEthernetCardDistributedVirtualPortBackingInfo:
			ref := types.ManagedObjectReference{Type: "DistributedVirtualPortgroup", Value: b.Port.PortgroupKey}
			var pg mo.DistributedVirtualPortgroup
			if err := object.NewDistributedVirtualPortgroup(s.vim(), ref).Properties(ctx, ref, []string{"name"}, &pg); err != nil {
				return nil, vmError(ctx, "read port group "+b.Port.PortgroupKey, err)
			}
			out = append(out, pg.Name)
		default:
			return nil, fmt.Errorf("a network card of the VM is backed by a %T, which vsphere.vm cannot describe; give networks as an override", b)
		}
	}
	return out, nil
}

// noTemplate is the error of what needs a template on a profile that has
// none: one adopted from a VM.
func noTemplate(pr Properties, what string) error {
	return fmt.Errorf("%s needs a template to clone from, and this profile has none: it was adopted from VM %s, whose origin vSphere does not record; "+
		"update the node (or cluster) to a profile that names a template", what, pr.AdoptedFrom)
}

// findVM looks a VM up by its inventory path, or by its name in the
// configured (or the only) datacenter, as govc does.
func (d *Driver) findVM(ctx context.Context, f *find.Finder, identity string) (types.ManagedObjectReference, error) {
	if !strings.HasPrefix(identity, "/") {
		dc, err := f.DefaultDatacenter(ctx)
		if name := d.defaults.get("vsphere_datacenter", "GOVC_DATACENTER", "VSPHERE_DATACENTER"); name != "" {
			dc, err = f.Datacenter(ctx, name)
		}
		if err != nil {
			return types.ManagedObjectReference{}, fmt.Errorf("identity %q is a VM name, which needs a datacenter to look in: %w; give the VM's inventory path (/DC/vm/NAME) or its managed object id (vm-42)", identity, err)
		}
		f.SetDatacenter(dc)
	}
	vm, err := f.VirtualMachine(ctx, identity)
	var nf *find.NotFoundError
	var dup *find.MultipleFoundError
	switch {
	case errors.As(err, &nf):
		return types.ManagedObjectReference{}, fmt.Errorf("no VM %q was found", identity)
	case errors.As(err, &dup):
		return types.ManagedObjectReference{}, fmt.Errorf("%q names several VMs; give its inventory path or its managed object id", identity)
	case err != nil:
		return types.ManagedObjectReference{}, vmError(ctx, "look for VM "+identity, err)
	}
	return vm.Reference(), nil
}
