package nova

import (
	"context"
	"fmt"
	"slices"

	"github.com/gophercloud/gophercloud/v2"
	"github.com/gophercloud/gophercloud/v2/openstack/compute/v2/attachinterfaces"
	"github.com/gophercloud/gophercloud/v2/openstack/compute/v2/servers"
)

// networkDiff is what changing a server's networks from old to new takes:
// the entries to unplug and those to plug, each list in profile order. An
// entry in both (counted, so a network listed twice is twice) stays.
func networkDiff(old, new []servers.Network) (gone, added []servers.Network) {
	left := slices.Clone(new)
	for _, o := range old {
		if i := slices.Index(left, o); i >= 0 {
			left = slices.Delete(left, i, i+1)
			continue
		}
		gone = append(gone, o)
	}
	return gone, left
}

// matches says whether a server's interface is what a network entry made.
func matches(f attachinterfaces.Interface, n servers.Network) bool {
	if n.Port != "" {
		return f.PortID == n.Port
	}
	if f.NetID != n.UUID {
		return false
	}
	if n.FixedIP == "" {
		return true
	}
	return slices.ContainsFunc(f.FixedIPs, func(ip attachinterfaces.FixedIP) bool { return ip.IPAddress == n.FixedIP })
}

// replug changes a server's networks as Senlin does: the interfaces of the
// entries gone are detached, interfaces for the entries added attached.
// Nova detaches asynchronously and, like Senlin, the driver does not wait:
// a detach that fails shows in the server's instance actions, and its
// interface is what a later update finds again.
func replug(ctx context.Context, c *clients, id, name string, old, new []servers.Network) error {
	gone, added := networkDiff(old, new)
	if len(gone) == 0 && len(added) == 0 {
		return nil
	}
	list := func() ([]attachinterfaces.Interface, error) {
		pages, err := attachinterfaces.List(c.compute, id).AllPages(ctx)
		if err != nil {
			return nil, err
		}
		return attachinterfaces.ExtractInterfaces(pages)
	}
	ifs, err := list()
	if err != nil {
		return apiError(ctx, "list the interfaces of server "+name, err)
	}
	for _, n := range gone {
		i := slices.IndexFunc(ifs, func(f attachinterfaces.Interface) bool { return matches(f, n) })
		if i < 0 {
			continue // already unplugged
		}
		port := ifs[i].PortID
		ifs = slices.Delete(ifs, i, i+1)
		if err := attachinterfaces.Delete(ctx, c.compute, id, port).ExtractErr(); err != nil && !gophercloud.ResponseCodeIs(err, 404) {
			return apiError(ctx, fmt.Sprintf("detach port %s from server %s", port, name), err)
		}
	}
	for _, n := range added {
		opts := attachinterfaces.CreateOpts{PortID: n.Port, NetworkID: n.UUID}
		if n.FixedIP != "" {
			opts.FixedIPs = []attachinterfaces.FixedIP{{IPAddress: n.FixedIP}}
		}
		if _, err := attachinterfaces.Create(ctx, c.compute, id, opts).Extract(); err != nil {
			what := "network " + n.UUID
			if n.Port != "" {
				what = "port " + n.Port
			}
			return apiError(ctx, fmt.Sprintf("attach %s to server %s", what, name), err)
		}
	}
	return nil
}
