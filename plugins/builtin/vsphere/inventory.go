package vsphere

import (
	"context"
	"errors"
	"fmt"

	"github.com/vmware/govmomi/find"
	"github.com/vmware/govmomi/object"
	"github.com/vmware/govmomi/vim25/mo"
	"github.com/vmware/govmomi/vim25/types"

	"github.com/grovehq/grove/plugins/sdk"
	"github.com/grovehq/grove/plugins/sdk/schema"
)

// inventory is a profile's inventory paths resolved to managed objects.
// A profile's properties never change under its id, so it is resolved once
// per profile and kept.
type inventory struct {
	s         *session
	finder    *find.Finder
	dc        *object.Datacenter
	cluster   *object.ClusterComputeResource // nil when the pool is not in a cluster
	pool      *object.ResourcePool
	host      *object.HostSystem // nil unless pinned
	folder    *object.Folder
	datastore *object.Datastore      // nil: the template's
	template  *object.VirtualMachine // nil in an adopted VM's profile
	snapshot  *types.ManagedObjectReference
	networks  []types.BaseVirtualDeviceBackingInfo
	// nics are the template's network cards, to move onto networks.
	nics []types.BaseVirtualDevice
	// devices are all the template's devices, to add disks beside them.
	devices object.VirtualDeviceList
}

// notFound words an inventory lookup that found nothing as a diagnostic on
// the property, naming the value.
func notFound(prop, what, value string, err error) schema.Diagnostic {
	var nf *find.NotFoundError
	if errors.As(err, &nf) {
		return schema.Diagnostic{Field: "properties." + prop, Message: fmt.Sprintf("no %s %q was found.", what, value)}
	}
	var dup *find.MultipleFoundError
	if errors.As(err, &dup) {
		return schema.Diagnostic{Field: "properties." + prop, Message: fmt.Sprintf("%q names several %ss; give its full inventory path.", value, what)}
	}
	return schema.Diagnostic{Field: "properties." + prop, Message: fmt.Sprintf("%s %q: %v", what, value, err)}
}

// resolve looks every inventory path of the properties up. Each failure is
// a diagnostic on its property.
func resolve(ctx context.Context, s *session, pr Properties, df defaults) (*inventory, schema.Diagnostics) {
	inv := &inventory{s: s, finder: find.NewFinder(s.vim(), true)}
	var ds schema.Diagnostics
	var err error
	dcName := pr.Datacenter
	if dcName == "" {
		dcName = df.get("vsphere_datacenter", "GOVC_DATACENTER", "VSPHERE_DATACENTER")
	}
	if dcName == "" {
		inv.dc, err = inv.finder.DefaultDatacenter(ctx)
		if err != nil {
			return nil, schema.Diagnostics{{Field: "properties.datacenter", Message: "is required: vCenter has several datacenters (or none): " + err.Error()}}
		}
	} else if inv.dc, err = inv.finder.Datacenter(ctx, dcName); err != nil {
		return nil, schema.Diagnostics{notFound("datacenter", "datacenter", dcName, err)}
	}
	inv.finder.SetDatacenter(inv.dc)

	if pr.Cluster != "" {
		if inv.cluster, err = inv.finder.ClusterComputeResource(ctx, pr.Cluster); err != nil {
			ds = append(ds, notFound("cluster", "compute cluster", pr.Cluster, err))
		}
	}
	poolName := pr.ResourcePool
	if poolName == "" && inv.cluster == nil && pr.Cluster == "" {
		poolName = df.get("vsphere_resource_pool", "GOVC_RESOURCE_POOL")
	}
	switch {
	case poolName != "":
		if inv.pool, err = inv.finder.ResourcePool(ctx, poolName); err != nil {
			ds = append(ds, notFound("resource_pool", "resource pool", poolName, err))
		} else if inv.cluster == nil {
			inv.cluster = ownerCluster(ctx, inv.pool)
		}
	case inv.cluster != nil:
		if inv.pool, err = inv.cluster.ResourcePool(ctx); err != nil {
			ds = append(ds, schema.Diagnostic{Field: "properties.cluster", Message: fmt.Sprintf("the root resource pool of %q: %v", pr.Cluster, err)})
		}
	case pr.Cluster == "":
		if inv.pool, err = inv.finder.DefaultResourcePool(ctx); err != nil {
			ds = append(ds, schema.Diagnostic{Field: "properties.cluster", Message: "set cluster or resource_pool: the datacenter has several resource pools."})
		} else {
			inv.cluster = ownerCluster(ctx, inv.pool)
		}
	}
	if pr.Host != "" {
		if inv.host, err = inv.finder.HostSystem(ctx, pr.Host); err != nil {
			ds = append(ds, notFound("host", "ESXi host", pr.Host, err))
		}
	}
	if pr.Folder != "" {
		if inv.folder, err = inv.finder.Folder(ctx, pr.Folder); err != nil {
			ds = append(ds, notFound("folder", "VM folder", pr.Folder, err))
		}
	} else {
		folders, err := inv.dc.Folders(ctx)
		if err != nil {
			ds = append(ds, schema.Diagnostic{Field: "properties.datacenter", Message: err.Error()})
		} else {
			inv.folder = folders.VmFolder
		}
	}
	dsName := pr.Datastore
	if dsName == "" {
		dsName = df.get("vsphere_datastore", "GOVC_DATASTORE")
	}
	if dsName != "" {
		if inv.datastore, err = inv.finder.Datastore(ctx, dsName); err != nil {
			ds = append(ds, notFound("datastore", "datastore", dsName, err))
		}
	}
	if pr.Template == "" {
		// An adopted VM's profile: nothing to clone from (Create and
		// recreate refuse).
	} else if inv.template, err = inv.finder.VirtualMachine(ctx, pr.Template); err != nil {
		ds = append(ds, notFound("template", "VM or template", pr.Template, err))
	} else {
		var vm mo.VirtualMachine
		if err := inv.template.Properties(ctx, inv.template.Reference(), []string{"config.hardware.device", "snapshot"}, &vm); err != nil {
			ds = append(ds, schema.Diagnostic{Field: "properties.template", Message: fmt.Sprintf("read %q: %v", pr.Template, err)})
		} else if vm.Config != nil {
			inv.devices = object.VirtualDeviceList(vm.Config.Hardware.Device)
			inv.nics = inv.devices.SelectByType((*types.VirtualEthernetCard)(nil))
		}
		if pr.Snapshot != "" {
			if inv.snapshot, err = inv.template.FindSnapshot(ctx, pr.Snapshot); err != nil {
				ds = append(ds, schema.Diagnostic{Field: "properties.snapshot", Message: fmt.Sprintf("the template %q has no snapshot %q.", pr.Template, pr.Snapshot)})
			}
		}
	}
	for i, name := range pr.Networks {
		n, err := inv.finder.Network(ctx, name)
		if err != nil {
			d := notFound("networks", "network (port group)", name, err)
			d.Field = fmt.Sprintf("properties.networks[%d]", i)
			ds = append(ds, d)
			continue
		}
		b, err := n.EthernetCardBackingInfo(ctx)
		if err != nil {
			ds = append(ds, schema.Diagnostic{Field: fmt.Sprintf("properties.networks[%d]", i), Message: fmt.Sprintf("network %q: %v", name, err)})
			continue
		}
		inv.networks = append(inv.networks, b)
	}
	if len(ds) > 0 {
		return nil, ds
	}
	return inv, nil
}

// ownerCluster is the compute cluster a pool belongs to, nil for a
// standalone host's.
func ownerCluster(ctx context.Context, pool *object.ResourcePool) *object.ClusterComputeResource {
	owner, err := pool.Owner(ctx)
	if err != nil {
		return nil
	}
	if c, ok := owner.(*object.ClusterComputeResource); ok {
		return c
	}
	return nil
}

// inventory resolves a spec's properties, once per profile id.
func (d *Driver) inventory(ctx context.Context, p sdk.Spec) (*inventory, Properties, error) {
	pr, err := propsOf(p)
	if err != nil {
		return nil, pr, err
	}
	d.mu.Lock()
	inv, ok := d.resolved[p.ID]
	d.mu.Unlock()
	if ok && p.ID != "" {
		return inv, pr, nil
	}
	s, err := d.session(ctx, pr.Connection)
	if err != nil {
		return nil, pr, err
	}
	inv, ds := resolve(ctx, s, pr, d.defaults)
	if len(ds) > 0 {
		if ctx.Err() != nil {
			return nil, pr, sdk.Retryable(ctx.Err())
		}
		return nil, pr, ds
	}
	if p.ID != "" {
		d.mu.Lock()
		d.resolved[p.ID] = inv
		d.mu.Unlock()
	}
	return inv, pr, nil
}
