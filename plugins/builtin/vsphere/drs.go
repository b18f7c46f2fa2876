package vsphere

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/vmware/govmomi/object"
	"github.com/vmware/govmomi/vim25/mo"
	"github.com/vmware/govmomi/vim25/types"

	"github.com/grovehq/grove/plugins/sdk"
)

// DRS rules are what an affinity policy asks vSphere for: keep a Grove
// cluster's VMs together, apart, or on (off) a set of hosts. Each rule and
// group Grove makes is named "grove-<grove cluster>-<rule>", so it is found
// again after a restart and removed with the cluster: Delete takes destroyed
// VMs out of their cluster's rules and removes rules left with nothing to
// rule, and DeleteRules removes them all.

// RuleType is the kind of a DRS rule.
type RuleType string

const (
	// Affinity keeps the VMs on one host.
	Affinity RuleType = "affinity"
	// AntiAffinity keeps the VMs on different hosts.
	AntiAffinity RuleType = "anti-affinity"
	// VMHost keeps a VM group on (or, with AntiHost, off) a host group.
	VMHost RuleType = "vm-host"
)

// Rule is one DRS rule of a Grove cluster.
type Rule struct {
	// Name is the rule's name within the Grove cluster, such as "spread".
	Name      string
	Type      RuleType
	Mandatory bool
	// VMs are the managed object ids of the VMs (node data "moid").
	VMs []string
	// Hosts are ESXi host names, for a VMHost rule.
	Hosts []string
	// AntiHost keeps a VMHost rule's VMs off its hosts.
	AntiHost bool

	// Read back from vSphere.
	VSphereName string
	Key         int32
	Enabled     bool
}

// RulePrefix is the prefix of the names of a Grove cluster's rules and
// groups.
func RulePrefix(groveCluster string) string { return "grove-" + groveCluster + "-" }

// RuleName is the vSphere name of a Grove cluster's rule.
func RuleName(groveCluster, name string) string { return RulePrefix(groveCluster) + name }

func vmGroup(full string) string   { return full + "-vms" }
func hostGroup(full string) string { return full + "-hosts" }

// ruleCluster resolves the compute cluster a profile's VMs run in.
func (d *Driver) ruleCluster(ctx context.Context, p sdk.Spec) (*inventory, error) {
	inv, _, err := d.inventory(ctx, p)
	if err != nil {
		return nil, err
	}
	if inv.cluster == nil {
		return nil, fmt.Errorf("the profile's VMs are not in a compute cluster (set the cluster property): DRS rules live on a cluster")
	}
	return inv, nil
}

// CreateRule creates (or, when one of its name exists, replaces) a DRS rule
// on the compute cluster of the profile's VMs.
func (d *Driver) CreateRule(ctx context.Context, p sdk.Spec, groveCluster string, r Rule) error {
	inv, err := d.ruleCluster(ctx, p)
	if err != nil {
		return err
	}
	return CreateRule(ctx, inv.cluster, groveCluster, r)
}

// Rules reads back a Grove cluster's DRS rules.
func (d *Driver) Rules(ctx context.Context, p sdk.Spec, groveCluster string) ([]Rule, error) {
	inv, err := d.ruleCluster(ctx, p)
	if err != nil {
		return nil, err
	}
	return Rules(ctx, inv.cluster, groveCluster)
}

// DeleteRules removes a Grove cluster's DRS rules and groups.
func (d *Driver) DeleteRules(ctx context.Context, p sdk.Spec, groveCluster string) error {
	inv, err := d.ruleCluster(ctx, p)
	if err != nil {
		return err
	}
	return DeleteRules(ctx, inv.cluster, groveCluster, nil)
}

func vmRefs(ids []string) []types.ManagedObjectReference {
	out := make([]types.ManagedObjectReference, len(ids))
	for i, id := range ids {
		out[i] = types.ManagedObjectReference{Type: "VirtualMachine", Value: id}
	}
	return out
}

func config(ctx context.Context, cl *object.ClusterComputeResource) (*types.ClusterConfigInfoEx, error) {
	var m mo.ClusterComputeResource
	if err := cl.Properties(ctx, cl.Reference(), []string{"configurationEx"}, &m); err != nil {
		return nil, err
	}
	cfg, ok := m.ConfigurationEx.(*types.ClusterConfigInfoEx)
	if !ok {
		return nil, fmt.Errorf("cluster %s has no extended configuration", cl.InventoryPath)
	}
	return cfg, nil
}

func reconfigure(ctx context.Context, cl *object.ClusterComputeResource, spec *types.ClusterConfigSpecEx) error {
	if len(spec.RulesSpec) == 0 && len(spec.GroupSpec) == 0 {
		return nil
	}
	t, err := cl.Reconfigure(ctx, spec, true)
	if err == nil {
		_, err = waitTask(ctx, t)
	}
	if err != nil {
		return fmt.Errorf("reconfigure the DRS rules of cluster %s: %w", cl.InventoryPath, err)
	}
	return nil
}

// CreateRule creates or replaces a Grove cluster's rule on cl. A VMHost
// rule comes with its VM group and host group, made in the same
// reconfiguration.
func CreateRule(ctx context.Context, cl *object.ClusterComputeResource, groveCluster string, r Rule) error {
	if r.Name == "" {
		return fmt.Errorf("a DRS rule needs a name")
	}
	full := RuleName(groveCluster, r.Name)
	cfg, err := config(ctx, cl)
	if err != nil {
		return err
	}
	var existing types.BaseClusterRuleInfo
	for _, ri := range cfg.Rule {
		if ri.GetClusterRuleInfo().Name == full {
			existing = ri
		}
	}
	base := types.ClusterRuleInfo{Name: full, Enabled: types.NewBool(true), Mandatory: types.NewBool(r.Mandatory), UserCreated: types.NewBool(true)}
	op := types.ArrayUpdateOperationAdd
	if existing != nil {
		op = types.ArrayUpdateOperationEdit
		base.Key = existing.GetClusterRuleInfo().Key
		base.RuleUuid = existing.GetClusterRuleInfo().RuleUuid
	}
	spec := &types.ClusterConfigSpecEx{}
	switch r.Type {
	case Affinity:
		if len(r.VMs) < 2 {
			return fmt.Errorf("an affinity rule needs at least 2 VMs, got %d", len(r.VMs))
		}
		spec.RulesSpec = append(spec.RulesSpec, types.ClusterRuleSpec{ArrayUpdateSpec: types.ArrayUpdateSpec{Operation: op},
			Info: &types.ClusterAffinityRuleSpec{ClusterRuleInfo: base, Vm: vmRefs(r.VMs)}})
	case AntiAffinity:
		if len(r.VMs) < 2 {
			return fmt.Errorf("an anti-affinity rule needs at least 2 VMs, got %d", len(r.VMs))
		}
		spec.RulesSpec = append(spec.RulesSpec, types.ClusterRuleSpec{ArrayUpdateSpec: types.ArrayUpdateSpec{Operation: op},
			Info: &types.ClusterAntiAffinityRuleSpec{ClusterRuleInfo: base, Vm: vmRefs(r.VMs)}})
	case VMHost:
		if len(r.VMs) == 0 || len(r.Hosts) == 0 {
			return fmt.Errorf("a vm-host rule needs VMs and hosts")
		}
		var hosts []types.ManagedObjectReference
		members, err := cl.Hosts(ctx)
		if err != nil {
			return err
		}
		for _, name := range r.Hosts {
			i := slices.IndexFunc(members, func(h *object.HostSystem) bool { return h.Name() == name })
			if i < 0 {
				return fmt.Errorf("host %q is not in cluster %s", name, cl.InventoryPath)
			}
			hosts = append(hosts, members[i].Reference())
		}
		groupOp := func(name string) types.ArrayUpdateOperation {
			for _, g := range cfg.Group {
				if g.GetClusterGroupInfo().Name == name {
					return types.ArrayUpdateOperationEdit
				}
			}
			return types.ArrayUpdateOperationAdd
		}
		vg, hg := vmGroup(full), hostGroup(full)
		spec.GroupSpec = append(spec.GroupSpec,
			types.ClusterGroupSpec{ArrayUpdateSpec: types.ArrayUpdateSpec{Operation: groupOp(vg)},
				Info: &types.ClusterVmGroup{ClusterGroupInfo: types.ClusterGroupInfo{Name: vg, UserCreated: types.NewBool(true)}, Vm: vmRefs(r.VMs)}},
			types.ClusterGroupSpec{ArrayUpdateSpec: types.ArrayUpdateSpec{Operation: groupOp(hg)},
				Info: &types.ClusterHostGroup{ClusterGroupInfo: types.ClusterGroupInfo{Name: hg, UserCreated: types.NewBool(true)}, Host: hosts}})
		info := &types.ClusterVmHostRuleInfo{ClusterRuleInfo: base, VmGroupName: vg}
		if r.AntiHost {
			info.AntiAffineHostGroupName = hg
		} else {
			info.AffineHostGroupName = hg
		}
		spec.RulesSpec = append(spec.RulesSpec, types.ClusterRuleSpec{ArrayUpdateSpec: types.ArrayUpdateSpec{Operation: op}, Info: info})
	default:
		return fmt.Errorf("unknown DRS rule type %q; use %s, %s or %s", r.Type, Affinity, AntiAffinity, VMHost)
	}
	return reconfigure(ctx, cl, spec)
}

// Rules reads back the rules of a Grove cluster on cl.
func Rules(ctx context.Context, cl *object.ClusterComputeResource, groveCluster string) ([]Rule, error) {
	cfg, err := config(ctx, cl)
	if err != nil {
		return nil, err
	}
	prefix := RulePrefix(groveCluster)
	groups := map[string]types.BaseClusterGroupInfo{}
	for _, g := range cfg.Group {
		groups[g.GetClusterGroupInfo().Name] = g
	}
	hostNames := map[string]string{}
	if members, err := cl.Hosts(ctx); err == nil {
		for _, h := range members {
			hostNames[h.Reference().Value] = h.Name()
		}
	}
	var out []Rule
	for _, ri := range cfg.Rule {
		info := ri.GetClusterRuleInfo()
		if !strings.HasPrefix(info.Name, prefix) {
			continue
		}
		r := Rule{Name: strings.TrimPrefix(info.Name, prefix), VSphereName: info.Name, Key: info.Key,
			Enabled: isTrue(info.Enabled), Mandatory: isTrue(info.Mandatory)}
		switch v := ri.(type) {
		case *types.ClusterAffinityRuleSpec:
			r.Type, r.VMs = Affinity, ids(v.Vm)
		case *types.ClusterAntiAffinityRuleSpec:
			r.Type, r.VMs = AntiAffinity, ids(v.Vm)
		case *types.ClusterVmHostRuleInfo:
			r.Type = VMHost
			if g, ok := groups[v.VmGroupName].(*types.ClusterVmGroup); ok {
				r.VMs = ids(g.Vm)
			}
			hg := v.AffineHostGroupName
			if hg == "" {
				hg, r.AntiHost = v.AntiAffineHostGroupName, true
			}
			if g, ok := groups[hg].(*types.ClusterHostGroup); ok {
				for _, h := range g.Host {
					r.Hosts = append(r.Hosts, hostNames[h.Value])
				}
			}
		default:
			continue
		}
		out = append(out, r)
	}
	return out, nil
}

func ids(refs []types.ManagedObjectReference) []string {
	out := make([]string, len(refs))
	for i, r := range refs {
		out[i] = r.Value
	}
	return out
}

// DeleteRules removes a Grove cluster's rules and groups from cl; with
// names, only those rules (and their groups).
func DeleteRules(ctx context.Context, cl *object.ClusterComputeResource, groveCluster string, names []string) error {
	cfg, err := config(ctx, cl)
	if err != nil {
		return err
	}
	prefix := RulePrefix(groveCluster)
	wanted := func(full string) bool {
		if !strings.HasPrefix(full, prefix) {
			return false
		}
		return names == nil || slices.Contains(names, strings.TrimPrefix(full, prefix))
	}
	spec := &types.ClusterConfigSpecEx{}
	for _, ri := range cfg.Rule {
		if info := ri.GetClusterRuleInfo(); wanted(info.Name) {
			spec.RulesSpec = append(spec.RulesSpec, types.ClusterRuleSpec{ArrayUpdateSpec: types.ArrayUpdateSpec{Operation: types.ArrayUpdateOperationRemove, RemoveKey: info.Key}})
		}
	}
	for _, g := range cfg.Group {
		name := g.GetClusterGroupInfo().Name
		base := strings.TrimSuffix(strings.TrimSuffix(name, "-vms"), "-hosts")
		if wanted(base) {
			spec.GroupSpec = append(spec.GroupSpec, types.ClusterGroupSpec{ArrayUpdateSpec: types.ArrayUpdateSpec{Operation: types.ArrayUpdateOperationRemove, RemoveKey: name}})
		}
	}
	return reconfigure(ctx, cl, spec)
}

// pruneRules takes destroyed VMs out of a Grove cluster's rules on cl and
// removes the rules (with their groups) left with nothing to rule: an
// affinity rule with fewer than 2 VMs, a VM group with none.
func pruneRules(ctx context.Context, cl *object.ClusterComputeResource, groveCluster string, gone []types.ManagedObjectReference) error {
	cfg, err := config(ctx, cl)
	if err != nil {
		return err
	}
	prefix := RulePrefix(groveCluster)
	dead := map[string]bool{}
	for _, r := range gone {
		dead[r.Value] = true
	}
	keep := func(refs []types.ManagedObjectReference) ([]types.ManagedObjectReference, bool) {
		out := refs[:0:0]
		for _, r := range refs {
			if !dead[r.Value] {
				out = append(out, r)
			}
		}
		return out, len(out) != len(refs)
	}
	spec := &types.ClusterConfigSpecEx{}
	remove := func(key int32) {
		spec.RulesSpec = append(spec.RulesSpec, types.ClusterRuleSpec{ArrayUpdateSpec: types.ArrayUpdateSpec{Operation: types.ArrayUpdateOperationRemove, RemoveKey: key}})
	}
	emptyGroups := map[string]bool{}
	for _, g := range cfg.Group {
		vg, ok := g.(*types.ClusterVmGroup)
		if !ok || !strings.HasPrefix(vg.Name, prefix) {
			continue
		}
		left, changed := keep(vg.Vm)
		switch {
		case len(left) == 0:
			emptyGroups[vg.Name] = true
		case changed:
			edited := *vg
			edited.Vm = left
			spec.GroupSpec = append(spec.GroupSpec, types.ClusterGroupSpec{ArrayUpdateSpec: types.ArrayUpdateSpec{Operation: types.ArrayUpdateOperationEdit}, Info: &edited})
		}
	}
	var removed []string
	for _, ri := range cfg.Rule {
		info := ri.GetClusterRuleInfo()
		if !strings.HasPrefix(info.Name, prefix) {
			continue
		}
		switch v := ri.(type) {
		case *types.ClusterAffinityRuleSpec:
			if left, changed := keep(v.Vm); len(left) < 2 {
				remove(info.Key)
			} else if changed {
				edited := *v
				edited.Vm = left
				spec.RulesSpec = append(spec.RulesSpec, types.ClusterRuleSpec{ArrayUpdateSpec: types.ArrayUpdateSpec{Operation: types.ArrayUpdateOperationEdit}, Info: &edited})
			}
		case *types.ClusterAntiAffinityRuleSpec:
			if left, changed := keep(v.Vm); len(left) < 2 {
				remove(info.Key)
			} else if changed {
				edited := *v
				edited.Vm = left
				spec.RulesSpec = append(spec.RulesSpec, types.ClusterRuleSpec{ArrayUpdateSpec: types.ArrayUpdateSpec{Operation: types.ArrayUpdateOperationEdit}, Info: &edited})
			}
		case *types.ClusterVmHostRuleInfo:
			if emptyGroups[v.VmGroupName] {
				remove(info.Key)
				removed = append(removed, info.Name)
			}
		}
	}
	for _, full := range removed {
		for _, g := range []string{vmGroup(full), hostGroup(full)} {
			if slices.ContainsFunc(cfg.Group, func(x types.BaseClusterGroupInfo) bool { return x.GetClusterGroupInfo().Name == g }) {
				spec.GroupSpec = append(spec.GroupSpec, types.ClusterGroupSpec{ArrayUpdateSpec: types.ArrayUpdateSpec{Operation: types.ArrayUpdateOperationRemove, RemoveKey: g}})
			}
		}
	}
	return reconfigure(ctx, cl, spec)
}

// DeleteRule removes one of a Grove cluster's rules (with its groups) from
// the compute cluster of the profile's VMs; a rule already gone is no
// error.
func (d *Driver) DeleteRule(ctx context.Context, p sdk.Spec, groveCluster, name string) error {
	inv, err := d.ruleCluster(ctx, p)
	if err != nil {
		return err
	}
	return DeleteRules(ctx, inv.cluster, groveCluster, []string{name})
}

// ClusterHosts are the names of the ESXi hosts of the compute cluster the
// profile's VMs run in, in vSphere's order: where a placement policy may
// put each VM.
func (d *Driver) ClusterHosts(ctx context.Context, p sdk.Spec) ([]string, error) {
	inv, err := d.ruleCluster(ctx, p)
	if err != nil {
		return nil, err
	}
	hosts, err := inv.cluster.Hosts(ctx)
	if err != nil {
		return nil, fmt.Errorf("list the hosts of cluster %s: %w", inv.cluster.InventoryPath, err)
	}
	out := make([]string, len(hosts))
	for i, h := range hosts {
		out[i] = h.Name()
	}
	return out, nil
}

// RuleJoin is what a node's data.placement.drs_rule asks of the VM made
// for it: to join the Grove cluster's VM-VM rule Name, made Type and
// Mandatory with the cluster's VMs (VMs, their moids) when it does not
// exist yet (a rule needs two VMs, so a policy cannot make it before).
type RuleJoin struct {
	Name      string   `json:"name"`
	Type      RuleType `json:"type"`
	Mandatory bool     `json:"mandatory"`
	VMs       []string `json:"vms"`
}

// joinRules puts the VMs made for nodes into the rules their placement
// names: the rule's VMs, the ones the placement lists and the new ones,
// once they are two or more. It reports its failure on the nodes, whose
// VMs are made.
func joinRules(ctx context.Context, cl *object.ClusterComputeResource, nodes []sdk.Node, out []sdk.Result) {
	type key struct{ cluster, rule string }
	joins := map[key]*Rule{}
	var order []key
	for i, n := range nodes {
		pl, _ := n.Data["placement"].(map[string]any)
		raw, ok := pl["drs_rule"]
		if !ok || out[i].Err != nil {
			continue
		}
		var j RuleJoin
		if err := sdk.Decode("data.placement.drs_rule", raw, &j); err != nil || j.Name == "" {
			continue
		}
		moid, _ := out[i].Data["moid"].(string)
		k := key{n.ClusterID, j.Name}
		r, ok := joins[k]
		if !ok {
			r = &Rule{Name: j.Name, Type: j.Type, Mandatory: j.Mandatory}
			joins[k] = r
			order = append(order, k)
		}
		for _, v := range append(j.VMs, moid) {
			if v != "" && !slices.Contains(r.VMs, v) {
				r.VMs = append(r.VMs, v)
			}
		}
	}
	for _, k := range order {
		r := joins[k]
		err := func() error {
			have, err := Rules(ctx, cl, k.cluster)
			if err != nil {
				return err
			}
			for _, h := range have {
				if h.Name == r.Name {
					for _, v := range h.VMs {
						if !slices.Contains(r.VMs, v) {
							r.VMs = append(r.VMs, v)
						}
					}
				}
			}
			if len(r.VMs) < 2 {
				return nil
			}
			return CreateRule(ctx, cl, k.cluster, *r)
		}()
		if err != nil {
			for i, n := range nodes {
				if n.ClusterID == k.cluster && out[i].Err == nil {
					out[i].Reason = fmt.Sprintf("the VM is made, but it could not join DRS rule %s: %v", RuleName(k.cluster, r.Name), err)
				}
			}
		}
	}
}
