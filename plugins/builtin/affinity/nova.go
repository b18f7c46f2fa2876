package affinity

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"

	"github.com/gophercloud/gophercloud/v2"
	"github.com/gophercloud/gophercloud/v2/openstack/compute/v2/hypervisors"
	"github.com/gophercloud/gophercloud/v2/openstack/compute/v2/servergroups"

	"github.com/grovehq/grove/plugins/builtin/affinity/decide"
	"github.com/grovehq/grove/plugins/builtin/nova"
	"github.com/grovehq/grove/plugins/sdk"
	"github.com/grovehq/grove/plugins/sdk/scaling"
)

// novaBackend keeps os.nova.server clusters together or apart with a Nova
// server group, Senlin's scenarios S1 (inherited), S2 (created) and S3
// (the DRS extension).
type novaBackend struct{ d *nova.Driver }

// profileGroup is the server group the profile's scheduler_hints name.
func profileGroup(c sdk.Cluster) string {
	hints, _ := c.Profile.Properties["scheduler_hints"].(map[string]any)
	g, _ := hints["group"].(string)
	return g
}

func (b novaBackend) attach(ctx context.Context, pr Properties, c sdk.Cluster) (map[string]any, error) {
	cc, err := b.d.Compute(ctx, c.Profile)
	if err != nil {
		return nil, err
	}
	if pr.EnableDRSExtension {
		// Listing hypervisors is an administrator's right in Nova: refuse
		// now rather than at every scale-out.
		if _, err := hypervisorNames(ctx, cc); err != nil {
			return nil, err
		}
	}
	want := pr.ServerGroup.Policies
	if name := profileGroup(c); name != "" {
		g, err := findGroup(ctx, cc, name)
		if err != nil {
			return nil, err
		}
		if reason := decide.GroupMismatch(name, want, g.Policies); reason != "" {
			return nil, errors.New(reason)
		}
		return map[string]any{keyGroup: g.ID, keyInherited: true}, nil
	}
	suffix := make([]byte, 4)
	_, _ = rand.Read(suffix)
	name := decide.GroupName(pr.ServerGroup.Name, hex.EncodeToString(suffix))
	g, err := servergroups.Create(ctx, cc, servergroups.CreateOpts{Name: name, Policies: []string{want}}).Extract()
	if err != nil {
		return nil, nova.APIError(ctx, fmt.Sprintf("create the %s server group '%s'", want, name), err)
	}
	return map[string]any{keyGroup: g.ID, keyInherited: false}, nil
}

// findGroup finds a server group by id or name, as Senlin's
// server_group_find does.
func findGroup(ctx context.Context, cc *gophercloud.ServiceClient, ident string) (*servergroups.ServerGroup, error) {
	g, err := servergroups.Get(ctx, cc, ident).Extract()
	if err == nil {
		return g, nil
	}
	if !gophercloud.ResponseCodeIs(err, 404) {
		return nil, nova.APIError(ctx, fmt.Sprintf("find the server group '%s'", ident), err)
	}
	pages, err := servergroups.List(cc, servergroups.ListOpts{}).AllPages(ctx)
	if err != nil {
		return nil, nova.APIError(ctx, "list the server groups", err)
	}
	all, err := servergroups.ExtractServerGroups(pages)
	if err != nil {
		return nil, err
	}
	var found []servergroups.ServerGroup
	for _, g := range all {
		if g.Name == ident {
			found = append(found, g)
		}
	}
	switch len(found) {
	case 0:
		return nil, fmt.Errorf("The server group '%s' the profile's scheduler_hints.group names does not exist.", ident)
	case 1:
		return &found[0], nil
	}
	return nil, fmt.Errorf("%d server groups are named '%s'; name the group by its id in the profile's scheduler_hints.group.", len(found), ident)
}

func (b novaBackend) detach(ctx context.Context, _ Properties, c sdk.Cluster, data map[string]any) error {
	id, _ := data[keyGroup].(string)
	if inherited, _ := data[keyInherited].(bool); inherited || id == "" {
		return nil
	}
	cc, err := b.d.Compute(ctx, c.Profile)
	if err != nil {
		return err
	}
	err = servergroups.Delete(ctx, cc, id).ExtractErr()
	if err != nil && !gophercloud.ResponseCodeIs(err, 404) {
		return nova.APIError(ctx, fmt.Sprintf("delete the server group %s", id), err)
	}
	return nil
}

func (b novaBackend) place(ctx context.Context, pr Properties, req sdk.CheckRequest, count int) ([]decide.Entry, string, map[string]any, error) {
	id, _ := req.BindingData[keyGroup].(string)
	if id == "" {
		return nil, errNoBinding.Error(), refusal(errNoBinding.Error()), nil
	}
	e := decide.Entry{ServerGroup: id, Zone: pr.AvailabilityZone}
	if pr.EnableDRSExtension {
		cc, err := b.d.Compute(ctx, req.Cluster.Profile)
		if err != nil {
			return nil, "", nil, err
		}
		names, err := hypervisorNames(ctx, cc)
		if err != nil {
			return nil, err.Error(), refusal(err.Error()), nil
		}
		zone, err := decide.DRSZone(pr.AvailabilityZone, names)
		if err != nil {
			return nil, err.Error(), refusal(err.Error()), nil
		}
		e.Zone = zone
	}
	return decide.Same(count, e), "", nil, nil
}

// hypervisorNames lists Nova's hypervisors' host names in Nova's order.
func hypervisorNames(ctx context.Context, cc *gophercloud.ServiceClient) ([]string, error) {
	pages, err := hypervisors.List(cc, hypervisors.ListOpts{}).AllPages(ctx)
	if gophercloud.ResponseCodeIs(err, 403) {
		return nil, errors.New("The vSphere DRS extension lists Nova's hypervisors, which only an administrator may: " +
			"the cluster's profile must log in to an admin project.")
	}
	if err != nil {
		return nil, nova.APIError(ctx, "list the hypervisors", err)
	}
	hvs, err := hypervisors.ExtractHypervisors(pages)
	if err != nil {
		return nil, err
	}
	out := make([]string, len(hvs))
	for i, h := range hvs {
		out[i] = h.HypervisorHostname
	}
	return out, nil
}

func boundsOf(c sdk.Cluster) scaling.Bounds {
	return scaling.Bounds{Desired: c.DesiredCapacity, Min: c.MinSize, Max: c.MaxSize}
}
