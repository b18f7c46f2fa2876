package vsphere

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/vmware/govmomi/fault"
	"github.com/vmware/govmomi/object"
	"github.com/vmware/govmomi/vim25/mo"
	"github.com/vmware/govmomi/vim25/types"

	"github.com/grovehq/grove/plugins/builtin/internal/fanout"
	"github.com/grovehq/grove/plugins/sdk"
)

// state is what the engine stores for each node: enough to find the VM
// again without a search.
type state struct {
	MOID string `json:"moid"`
	UUID string `json:"instance_uuid"`
}

func stateOf(n sdk.Node) state {
	var st state
	_ = json.Unmarshal(n.State, &st)
	if st.MOID == "" {
		st.MOID, _ = n.Data["moid"].(string)
	}
	return st
}

func (st state) ref() types.ManagedObjectReference {
	return types.ManagedObjectReference{Type: "VirtualMachine", Value: st.MOID}
}

// vmName is the VM's name: the node's.
func vmName(n sdk.Node) string {
	if n.Name != "" {
		return n.Name
	}
	return "grove-" + n.ID
}

// each runs f for every node, at most cloneConcurrency at once.
func each(nodes []sdk.Node, f func(sdk.Node) sdk.Result) []sdk.Result {
	return fanout.Each(nodes, cloneConcurrency, f)
}

// Create clones one VM per node from the template, at most cloneConcurrency
// at once.
func (d *Driver) Create(ctx context.Context, p sdk.Spec, nodes []sdk.Node) []sdk.Result {
	inv, pr, err := d.inventory(ctx, p)
	if err != nil {
		return fanout.FailAll(ctx, nodes, err)
	}
	if inv.template == nil {
		return fanout.FailAll(ctx, nodes, noTemplate(pr, "Creating a vsphere.vm node"))
	}
	out := each(nodes, func(n sdk.Node) sdk.Result { return d.create(ctx, inv, pr, n) })
	if inv.cluster != nil {
		joinRules(ctx, inv.cluster, nodes, out)
	}
	return out
}

// vmError turns a vSphere error into a node's error: a cut context is
// retryable, anything else carries vSphere's message.
func vmError(ctx context.Context, what string, err error) error {
	if ctx.Err() != nil {
		return sdk.Retryable(fmt.Errorf("%s: %w", what, ctx.Err()))
	}
	return fmt.Errorf("%s: %s", what, err)
}

// waitTask waits for a vSphere task. govmomi's wait answers a cancelled
// context with no info and no error (it cancels its collector's wait and
// returns that call's result), which would read as a task that succeeded:
// here it is the context's error.
func waitTask(ctx context.Context, t *object.Task) (*types.TaskInfo, error) {
	info, err := t.WaitForResult(ctx)
	if err == nil && info == nil {
		if err = ctx.Err(); err == nil {
			err = errors.New("the task's wait ended without its result")
		}
	}
	return info, err
}

// create is idempotent per node id: the VM is named after the node and
// carries its id in extraConfig, so a create retried after a crash adopts
// the VM an earlier attempt made, also when that attempt's clone was still
// running and ends first (the retry's clone then fails DuplicateName).
func (d *Driver) create(ctx context.Context, inv *inventory, pr Properties, n sdk.Node) sdk.Result {
	if err := ctx.Err(); err != nil {
		return sdk.Result{ID: n.ID, Err: sdk.Retryable(err)}
	}
	c := inv.s.vim()
	name := vmName(n)
	if res, ok := d.adopt(ctx, inv, pr, n); ok {
		return res
	}
	spec, err := d.cloneSpec(ctx, inv, pr, n)
	if err != nil {
		return sdk.Result{ID: n.ID, Err: err}
	}
	what := fmt.Sprintf("clone VM %s from %s", name, inv.template.InventoryPath)
	var info *types.TaskInfo
	task, err := inv.template.Clone(ctx, inv.folder, name, spec)
	if err == nil {
		info, err = waitTask(ctx, task)
	}
	if err != nil {
		if fault.Is(err, &types.DuplicateName{}) && ctx.Err() == nil {
			// An earlier attempt's clone ended first: its VM is this
			// node's, or the error stands.
			if res, ok := d.adopt(ctx, inv, pr, n); ok {
				return res
			}
			return sdk.Result{ID: n.ID, Err: vmError(ctx, what, err)}
		}
		if ctx.Err() != nil {
			// The clone may still be running: a retry adopts the VM it
			// makes. Sweeping now would race it.
			return sdk.Result{ID: n.ID, Err: vmError(ctx, what, err)}
		}
		// A failed clone may leave a half-made VM under the node's name
		// behind (vCenter cleans up after most faults, not all).
		d.sweep(context.WithoutCancel(ctx), inv, n)
		return sdk.Result{ID: n.ID, Err: vmError(ctx, what, err)}
	}
	ref, ok := info.Result.(types.ManagedObjectReference)
	if !ok {
		return sdk.Result{ID: n.ID, Err: fmt.Errorf("clone VM %s: the task returned %T, not the VM", name, info.Result)}
	}
	return d.finish(ctx, inv, pr, n, object.NewVirtualMachine(c, ref))
}

// adopt looks for a VM of the node's name in the folder. One carrying the
// node's id that an earlier attempt finished is the node's VM: ok, with its
// result (powered on when the profile says so). One carrying the node's id
// that vCenter no longer has whole (inaccessible, orphaned, invalid) is
// removed, so the caller clones anew. A VM of the name that is not the
// node's fails the node: Grove never takes over a VM it did not make.
func (d *Driver) adopt(ctx context.Context, inv *inventory, pr Properties, n sdk.Node) (res sdk.Result, ok bool) {
	c := inv.s.vim()
	name := vmName(n)
	found, err := object.NewSearchIndex(c).FindChild(ctx, inv.folder, name)
	if err != nil {
		return sdk.Result{ID: n.ID, Err: vmError(ctx, "look for VM "+name, err)}, true
	}
	if found == nil {
		return sdk.Result{}, false
	}
	vm := object.NewVirtualMachine(c, found.Reference())
	var m mo.VirtualMachine
	if err := vm.Properties(ctx, vm.Reference(), []string{"config.extraConfig", "runtime.connectionState"}, &m); err != nil {
		if isNotFound(err) {
			return sdk.Result{}, false // destroyed since the search
		}
		return sdk.Result{ID: n.ID, Err: vmError(ctx, "read VM "+name, err)}, true
	}
	owner := ""
	if m.Config != nil {
		owner = extraValue(m.Config.ExtraConfig, keyNode)
	}
	if owner != n.ID {
		return sdk.Result{ID: n.ID, Err: fmt.Errorf("a VM named %q already exists in folder %s and is not this node's (its %s is %q); rename or remove it",
			name, inv.folder.InventoryPath, keyNode, owner)}, true
	}
	if m.Runtime.ConnectionState != "" && m.Runtime.ConnectionState != types.VirtualMachineConnectionStateConnected &&
		m.Runtime.ConnectionState != types.VirtualMachineConnectionStateDisconnected {
		if err := discard(ctx, vm); err != nil {
			return sdk.Result{ID: n.ID, Err: vmError(ctx, fmt.Sprintf("remove VM %s, left %s by an earlier attempt,", name, m.Runtime.ConnectionState), err)}, true
		}
		return sdk.Result{}, false
	}
	if pr.PowerOn {
		if err := powerOn(ctx, vm); err != nil {
			return sdk.Result{ID: n.ID, Err: vmError(ctx, "power on VM "+name, err)}, true
		}
	}
	return d.finish(ctx, inv, pr, n, vm), true
}

// discard removes a VM vCenter no longer has whole: destroyed when it can
// be, else unregistered (an orphaned VM's files are gone already).
func discard(ctx context.Context, vm *object.VirtualMachine) error {
	err := destroy(ctx, vm)
	if err == nil {
		return nil
	}
	if uerr := vm.Unregister(ctx); uerr != nil && !isNotFound(uerr) {
		return fmt.Errorf("%w; unregister: %v", err, uerr)
	}
	return nil
}

// sweep destroys the node's VM if a failed create left one.
func (d *Driver) sweep(ctx context.Context, inv *inventory, n sdk.Node) {
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	found, err := object.NewSearchIndex(inv.s.vim()).FindChild(ctx, inv.folder, vmName(n))
	if err != nil || found == nil {
		return
	}
	vm := object.NewVirtualMachine(inv.s.vim(), found.Reference())
	if owner, err := nodeOf(ctx, vm); err == nil && owner == n.ID {
		_ = destroy(ctx, vm)
	}
}

// finish waits for the IP address if asked and describes the VM.
func (d *Driver) finish(ctx context.Context, inv *inventory, pr Properties, n sdk.Node, vm *object.VirtualMachine) sdk.Result {
	if pr.WaitForIP && pr.PowerOn {
		wctx, cancel := context.WithTimeout(ctx, time.Duration(pr.WaitTimeout)*time.Second)
		_, err := vm.WaitForIP(wctx, true)
		cancel()
		if err != nil {
			if ctx.Err() != nil {
				return sdk.Result{ID: n.ID, Err: sdk.Retryable(ctx.Err())}
			}
			return sdk.Result{ID: n.ID, Err: fmt.Errorf("VM %s reported no IP address within wait_timeout (%ds): %v", vmName(n), pr.WaitTimeout, err)}
		}
	}
	var m mo.VirtualMachine
	if err := vm.Properties(ctx, vm.Reference(), vmProps, &m); err != nil {
		return sdk.Result{ID: n.ID, Err: vmError(ctx, "read VM "+vmName(n), err)}
	}
	r := d.result(ctx, inv.s, n, m)
	r.Healthy = !pr.PowerOn || m.Runtime.PowerState == types.VirtualMachinePowerStatePoweredOn
	return r
}

// vmProps are the properties a node's result is made of.
var vmProps = []string{"name", "config.instanceUuid", "runtime.powerState", "runtime.host", "guest.net", "guest.ipAddress"}

// result is a node's result for its VM: physical id, state and data.
func (d *Driver) result(ctx context.Context, s *session, n sdk.Node, m mo.VirtualMachine) sdk.Result {
	st := state{MOID: m.Self.Value}
	if m.Config != nil {
		st.UUID = m.Config.InstanceUuid
	}
	b, _ := json.Marshal(st)
	data := map[string]any{"moid": st.MOID, "instance_uuid": st.UUID, "vm": m.Name}
	if m.Runtime.Host != nil {
		data["host"] = d.hostName(ctx, s, *m.Runtime.Host)
	}
	ips := addresses(m)
	data["ip_addresses"] = ips
	if len(ips) > 0 {
		data["address"] = ips[0]
	}
	if p, ok := n.Data["placement"]; ok {
		data["placement"] = p
	}
	id := st.UUID
	if id == "" {
		id = st.MOID
	}
	return sdk.Result{ID: n.ID, PhysicalID: id, State: b, Data: data}
}

// addresses lists the guest's IP addresses, the primary first.
func addresses(m mo.VirtualMachine) []any {
	out := []any{}
	seen := map[string]bool{}
	if m.Guest != nil {
		if m.Guest.IpAddress != "" {
			out = append(out, m.Guest.IpAddress)
			seen[m.Guest.IpAddress] = true
		}
		for _, nic := range m.Guest.Net {
			for _, ip := range nic.IpAddress {
				if !seen[ip] {
					out = append(out, ip)
					seen[ip] = true
				}
			}
		}
	}
	return out
}

// hostName returns an ESXi host's name, from a cache the driver fills as it
// meets hosts (hosts are hardly ever renamed; a stale name is only shown).
func (d *Driver) hostName(ctx context.Context, s *session, ref types.ManagedObjectReference) string {
	d.mu.Lock()
	name, ok := d.hostNames[ref.Value]
	d.mu.Unlock()
	if ok {
		return name
	}
	var h mo.HostSystem
	if err := object.NewHostSystem(s.vim(), ref).Properties(ctx, ref, []string{"name"}, &h); err != nil {
		return ref.Value
	}
	d.mu.Lock()
	d.hostNames[ref.Value] = h.Name
	d.mu.Unlock()
	return h.Name
}

// nodeOf reads the node id a VM carries, "" for a VM Grove did not make.
func nodeOf(ctx context.Context, vm *object.VirtualMachine) (string, error) {
	var m mo.VirtualMachine
	if err := vm.Properties(ctx, vm.Reference(), []string{"config.extraConfig"}, &m); err != nil {
		return "", err
	}
	if m.Config == nil {
		return "", nil
	}
	return extraValue(m.Config.ExtraConfig, keyNode), nil
}

func extraValue(opts []types.BaseOptionValue, key string) string {
	for _, o := range opts {
		if v := o.GetOptionValue(); v.Key == key {
			return fmt.Sprint(v.Value)
		}
	}
	return ""
}

// placement is the node's data.placement, as a placement policy gives it.
type placement struct {
	Host         string `json:"host"`
	ResourcePool string `json:"resource_pool"`
	Datastore    string `json:"datastore"`
}

// cloneSpec builds the clone of one node: placement, hardware, network
// cards, disks, extraConfig and customization.
func (d *Driver) cloneSpec(ctx context.Context, inv *inventory, pr Properties, n sdk.Node) (types.VirtualMachineCloneSpec, error) {
	var spec types.VirtualMachineCloneSpec
	pool := inv.pool.Reference()
	spec.Location.Pool = &pool
	if inv.host != nil {
		h := inv.host.Reference()
		spec.Location.Host = &h
	}
	if inv.datastore != nil {
		ds := inv.datastore.Reference()
		spec.Location.Datastore = &ds
	}
	var pl placement
	if raw, ok := n.Data["placement"]; ok && raw != nil {
		if err := sdk.Decode("data.placement", raw, &pl); err != nil {
			return spec, err
		}
	}
	if pl.Host != "" {
		h, err := inv.finder.HostSystem(ctx, pl.Host)
		if err != nil {
			return spec, fmt.Errorf("data.placement.host: no ESXi host %q: %v", pl.Host, err)
		}
		ref := h.Reference()
		spec.Location.Host = &ref
	}
	if pl.ResourcePool != "" {
		p, err := inv.finder.ResourcePool(ctx, pl.ResourcePool)
		if err != nil {
			return spec, fmt.Errorf("data.placement.resource_pool: no resource pool %q: %v", pl.ResourcePool, err)
		}
		ref := p.Reference()
		spec.Location.Pool = &ref
	}
	if pl.Datastore != "" {
		ds, err := inv.finder.Datastore(ctx, pl.Datastore)
		if err != nil {
			return spec, fmt.Errorf("data.placement.datastore: no datastore %q: %v", pl.Datastore, err)
		}
		ref := ds.Reference()
		spec.Location.Datastore = &ref
	}
	if inv.snapshot != nil {
		spec.Snapshot = inv.snapshot
		spec.Location.DiskMoveType = string(types.VirtualMachineRelocateDiskMoveOptionsCreateNewChildDiskBacking)
	}
	cfg := &types.VirtualMachineConfigSpec{NumCPUs: pr.NumCPUs, MemoryMB: pr.MemoryMB, Annotation: pr.Annotation}
	cfg.ExtraConfig = append(cfg.ExtraConfig,
		&types.OptionValue{Key: keyNode, Value: n.ID},
		&types.OptionValue{Key: keyCluster, Value: n.ClusterID})
	for _, k := range sortedKeys(pr.ExtraConfig) {
		cfg.ExtraConfig = append(cfg.ExtraConfig, &types.OptionValue{Key: k, Value: pr.ExtraConfig[k]})
	}
	changes, err := deviceChanges(inv, pr)
	if err != nil {
		return spec, err
	}
	cfg.DeviceChange = changes
	spec.Config = cfg
	spec.PowerOn = pr.PowerOn
	if pr.Customization != nil {
		cs, err := customization(*pr.Customization, n)
		if err != nil {
			return spec, err
		}
		spec.Customization = cs
	}
	return spec, nil
}

// deviceChanges moves the template's network cards onto the networks,
// adds cards for the networks beyond them and adds the extra disks. The
// inventory is shared by concurrent clones: its devices are copied, never
// changed.
func deviceChanges(inv *inventory, pr Properties) ([]types.BaseVirtualDeviceConfigSpec, error) {
	var out []types.BaseVirtualDeviceConfigSpec
	for i, b := range inv.networks {
		if i < len(inv.nics) {
			dev, ok := withBacking(inv.nics[i], b)
			if !ok {
				return nil, fmt.Errorf("properties.networks[%d]: the template's card %d is a %T, which Grove cannot move", i, i, inv.nics[i])
			}
			out = append(out, &types.VirtualDeviceConfigSpec{Operation: types.VirtualDeviceConfigSpecOperationEdit, Device: dev})
			continue
		}
		card, err := object.EthernetCardTypes().CreateEthernetCard("vmxnet3", b)
		if err != nil {
			return nil, fmt.Errorf("properties.networks[%d]: %v", i, err)
		}
		out = append(out, &types.VirtualDeviceConfigSpec{Operation: types.VirtualDeviceConfigSpecOperationAdd, Device: card})
	}
	if len(pr.Disks) > 0 {
		ctrl, err := inv.devices.FindDiskController("")
		if err != nil {
			return nil, fmt.Errorf("properties.disks: the template %s has no disk controller to add disks to: %v", inv.template.InventoryPath, err)
		}
		key := ctrl.GetVirtualController().Key
		used := map[int32]bool{7: true} // the SCSI controller's own unit
		for _, dev := range inv.devices {
			if v := dev.GetVirtualDevice(); v.ControllerKey == key && v.UnitNumber != nil {
				used[*v.UnitNumber] = true
			}
		}
		unit := int32(0)
		for i, gib := range pr.Disks {
			for used[unit] {
				unit++
			}
			used[unit] = true
			u := unit
			disk := &types.VirtualDisk{
				VirtualDevice: types.VirtualDevice{Key: -int32(100 + i), ControllerKey: key, UnitNumber: &u,
					Backing: &types.VirtualDiskFlatVer2BackingInfo{DiskMode: string(types.VirtualDiskModePersistent), ThinProvisioned: types.NewBool(true)}},
				CapacityInKB: gib << 20,
			}
			out = append(out, &types.VirtualDeviceConfigSpec{Operation: types.VirtualDeviceConfigSpecOperationAdd,
				FileOperation: types.VirtualDeviceConfigSpecFileOperationCreate, Device: disk})
		}
	}
	return out, nil
}

// withBacking returns a copy of a network card on another backing.
func withBacking(dev types.BaseVirtualDevice, b types.BaseVirtualDeviceBackingInfo) (types.BaseVirtualDevice, bool) {
	switch c := dev.(type) {
	case *types.VirtualVmxnet3:
		cp := *c
		cp.Backing = b
		return &cp, true
	case *types.VirtualE1000:
		cp := *c
		cp.Backing = b
		return &cp, true
	case *types.VirtualE1000e:
		cp := *c
		cp.Backing = b
		return &cp, true
	case *types.VirtualPCNet32:
		cp := *c
		cp.Backing = b
		return &cp, true
	case *types.VirtualVmxnet2:
		cp := *c
		cp.Backing = b
		return &cp, true
	}
	return nil, false
}

// customization is the Linux guest customization of node n.
func customization(c Customization, n sdk.Node) (*types.CustomizationSpec, error) {
	host := c.Hostname
	if host == "" {
		host = vmName(n)
	}
	domain := c.Domain
	if domain == "" {
		domain = "local"
	}
	ip := types.CustomizationIPSettings{Ip: &types.CustomizationDhcpIpGenerator{}, DnsServerList: c.DNSServers}
	if len(c.IPAddresses) > 0 {
		if n.Index < 1 || n.Index > len(c.IPAddresses) {
			return nil, fmt.Errorf("properties.customization.ip_addresses lists %d addresses; node %s (index %d) has none", len(c.IPAddresses), vmName(n), n.Index)
		}
		ip.Ip = &types.CustomizationFixedIp{IpAddress: c.IPAddresses[n.Index-1]}
		ip.SubnetMask = c.Netmask
		if c.Gateway != "" {
			ip.Gateway = []string{c.Gateway}
		}
	}
	return &types.CustomizationSpec{
		Identity:         &types.CustomizationLinuxPrep{HostName: &types.CustomizationFixedName{Name: host}, Domain: domain},
		GlobalIPSettings: types.CustomizationGlobalIPSettings{DnsServerList: c.DNSServers},
		NicSettingMap:    []types.CustomizationAdapterMapping{{Adapter: ip}},
	}, nil
}
