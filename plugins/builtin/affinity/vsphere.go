package affinity

import (
	"context"

	"github.com/grovehq/grove/plugins/builtin/affinity/decide"
	"github.com/grovehq/grove/plugins/builtin/vsphere"
	"github.com/grovehq/grove/plugins/sdk"
)

// ruleName is the affinity policy's DRS rule within a Grove cluster; its
// vSphere name is vsphere.RuleName(cluster id, ruleName).
const ruleName = "affinity"

// Binding data keys of a vsphere.vm cluster.
const (
	keyRule = "drs_rule"
)

// vsphereBackend keeps vsphere.vm clusters together or apart with a VM-VM
// DRS rule on the compute cluster of the profile's VMs: mandatory for the
// hard policies, not for the soft ones. A rule needs two VMs, so attach
// makes it only when the cluster has them; otherwise the first VMs the
// driver makes for the policy's placement make it (vsphere.RuleJoin).
type vsphereBackend struct{ d *vsphere.Driver }

func (b vsphereBackend) rule(pr Properties, c sdk.Cluster) vsphere.Rule {
	r := vsphere.Rule{Name: ruleName, Type: vsphere.AntiAffinity, Mandatory: decide.Hard(pr.ServerGroup.Policies)}
	if decide.Together(pr.ServerGroup.Policies) {
		r.Type = vsphere.Affinity
	}
	r.VMs = moids(c)
	return r
}

// moids are the managed object ids of the cluster's VMs.
func moids(c sdk.Cluster) []string {
	var out []string
	for _, n := range c.Nodes {
		if m, _ := n.Data["moid"].(string); m != "" {
			out = append(out, m)
		}
	}
	return out
}

func (b vsphereBackend) attach(ctx context.Context, pr Properties, c sdk.Cluster) (map[string]any, error) {
	r := b.rule(pr, c)
	// Resolving the compute cluster checks the profile's VMs have one.
	if _, err := b.d.ClusterHosts(ctx, c.Profile); err != nil {
		return nil, err
	}
	if len(r.VMs) >= 2 {
		if err := b.d.CreateRule(ctx, c.Profile, c.ID, r); err != nil {
			return nil, err
		}
	}
	return map[string]any{keyRule: vsphere.RuleName(c.ID, ruleName), keyInherited: false}, nil
}

func (b vsphereBackend) detach(ctx context.Context, _ Properties, c sdk.Cluster, data map[string]any) error {
	if _, ok := data[keyRule]; !ok {
		return nil
	}
	return b.d.DeleteRule(ctx, c.Profile, c.ID, ruleName)
}

func (b vsphereBackend) place(ctx context.Context, pr Properties, req sdk.CheckRequest, count int) ([]decide.Entry, string, map[string]any, error) {
	c := req.Cluster
	hosts, err := b.d.ClusterHosts(ctx, c.Profile)
	if err != nil {
		return nil, "", nil, err
	}
	entries := decide.Assign(pr.ServerGroup.Policies, count, hosts, running(c))
	for i := range entries {
		// Without a host of its own, a VM is left to DRS, which the rule
		// binds (a mandatory anti-affinity rule keeps it off the others).
		entries[i].Refused = ""
		entries[i].DRSRule = b.drsRule(pr, c)
	}
	return entries, "", nil, nil
}

// drsRule is the placement's request that each new VM join the rule.
func (b vsphereBackend) drsRule(pr Properties, c sdk.Cluster) map[string]any {
	r := b.rule(pr, c)
	return map[string]any{"name": r.Name, "type": string(r.Type), "mandatory": r.Mandatory, "vms": r.VMs}
}
