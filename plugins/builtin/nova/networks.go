package nova

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/gophercloud/gophercloud/v2"
	"github.com/gophercloud/gophercloud/v2/openstack/compute/v2/attachinterfaces"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/ports"
)

// networkDiff is what changing a server's networks from old to new takes:
// the entries to unplug and those to plug, each list in profile order. An
// entry in both (counted, so a network listed twice is twice) stays.
func networkDiff(old, new []netEntry) (gone, added []netEntry) {
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
// An entry Grove made a port for matches the interface on that port,
// whose name carries the node and the entry's key (portNames).
func matches(f attachinterfaces.Interface, e netEntry, portNames map[string]string) bool {
	n := e.Net
	if e.Key != "" && n.Port == "" {
		return portNames[f.PortID] != "" && portNames[f.PortID] == e.Key
	}
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
// interface is what a later update finds again. A port Grove made for an
// entry gone is deleted once detached (Neutron refuses nothing: a port
// still detaching is unplugged by its deletion); an entry added that asks
// for a port gets a new one.
func replug(ctx context.Context, r *resolved, nodeID, id, name string, old []netEntry) error {
	c := r.c
	gone, added := networkDiff(old, r.entries)
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
	// The keys of the ports Grove made for this node, by port id.
	portNames := map[string]string{}
	if c.network != nil && (slices.ContainsFunc(gone, func(e netEntry) bool { return e.Key != "" }) || slices.ContainsFunc(added, func(e netEntry) bool { return e.Key != "" })) {
		pages, err := ports.List(c.network, ports.ListOpts{Description: portDescription(nodeID)}).AllPages(ctx)
		if err != nil {
			return apiError(ctx, "list the ports of node "+nodeID, err)
		}
		all, err := ports.ExtractPorts(pages)
		if err != nil {
			return err
		}
		prefix := portName(nodeID, "")
		for _, p := range all {
			if k, ok := strings.CutPrefix(p.Name, prefix); ok {
				portNames[p.ID] = k
			}
		}
	}
	for _, e := range gone {
		i := slices.IndexFunc(ifs, func(f attachinterfaces.Interface) bool { return matches(f, e, portNames) })
		if i < 0 {
			continue // already unplugged
		}
		port := ifs[i].PortID
		ifs = slices.Delete(ifs, i, i+1)
		if err := attachinterfaces.Delete(ctx, c.compute, id, port).ExtractErr(); err != nil && !gophercloud.ResponseCodeIs(err, 404) {
			return apiError(ctx, fmt.Sprintf("detach port %s from server %s", port, name), err)
		}
		if portNames[port] != "" {
			if err := dropFloating(ctx, c, nodeID, port); err != nil {
				return err
			}
			if err := deletePorts(ctx, c, []string{port}); err != nil {
				return err
			}
		}
	}
	for _, e := range added {
		n := e.Net
		opts := attachinterfaces.CreateOpts{PortID: n.Port, NetworkID: n.UUID}
		if n.FixedIP != "" {
			opts.FixedIPs = []attachinterfaces.FixedIP{{IPAddress: n.FixedIP}}
		}
		if e.Key != "" && n.Port == "" {
			spec := r.specs[slices.Index(r.entries, e)]
			port, err := makePort(ctx, c, nodeID, e, spec)
			if err != nil {
				return err
			}
			opts = attachinterfaces.CreateOpts{PortID: port}
		}
		if _, err := attachinterfaces.Create(ctx, c.compute, id, opts).Extract(); err != nil {
			what := "network " + n.UUID
			if opts.PortID != "" {
				what = "port " + opts.PortID
			}
			if e.Key != "" && n.Port == "" {
				_ = deletePorts(context.WithoutCancel(ctx), c, []string{opts.PortID})
			}
			return apiError(ctx, fmt.Sprintf("attach %s to server %s", what, name), err)
		}
	}
	return nil
}
