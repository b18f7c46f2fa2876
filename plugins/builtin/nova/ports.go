package nova

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"slices"
	"time"

	"github.com/gophercloud/gophercloud/v2"
	"github.com/gophercloud/gophercloud/v2/openstack/compute/v2/servers"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/extensions/layer3/floatingips"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/extensions/portsbinding"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/extensions/security/groups"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/ports"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/subnets"

	"github.com/grovehq/grove/plugins/sdk"
	"github.com/grovehq/grove/plugins/sdk/schema"
)

// portSpec is what a networks item asks of a Neutron port Grove makes
// (vnic_type, security_groups, subnet, or a floating IP on a network
// rather than a port), and of the floating IP it associates. Names are
// resolved to ids. The zero value asks for nothing: Nova makes the port.
type portSpec struct {
	// Make says Grove creates the port (the item names a network).
	Make           bool     `json:"make,omitempty"`
	SubnetID       string   `json:"subnet_id,omitempty"`
	VNICType       string   `json:"vnic_type,omitempty"`
	SecurityGroups []string `json:"security_groups,omitempty"`
	// FloatingNetworkID is the network a new floating IP comes from;
	// FloatingIPID an existing floating IP to associate.
	FloatingNetworkID string `json:"floating_network_id,omitempty"`
	FloatingIPID      string `json:"floating_ip_id,omitempty"`
}

func (s portSpec) floating() bool { return s.FloatingNetworkID != "" || s.FloatingIPID != "" }

// netEntry is one resolved networks item: what Nova is asked for, and
// the key of what Grove does in Neutron for it ("" when nothing), so two
// entries compare equal when they make the same interface.
type netEntry struct {
	Net servers.Network
	Key string
}

// needsNeutron says whether a networks item asks Grove for Neutron work:
// a port it makes, or a floating IP.
func needsNeutron(n Network) bool {
	return n.VNICType != "" || len(n.SecurityGroups) > 0 || n.Subnet != "" || n.FloatingNetwork != "" || n.FloatingIP != ""
}

// key is a portSpec's identity, with the network and fixed IP it is made
// on: entries with equal keys make interchangeable ports.
func (s portSpec) key(net servers.Network) string {
	if !s.Make && !s.floating() {
		return ""
	}
	b, _ := json.Marshal(struct {
		Net  servers.Network
		Spec portSpec
	}{net, s})
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:6])
}

// portDescription marks every port and floating IP Grove makes for a node,
// so that deleting the node finds them even when the ids were never
// recorded (a create cut short).
func portDescription(nodeID string) string { return "grove node " + nodeID }

// portName names the port Grove makes for a node's item with key.
func portName(nodeID, key string) string { return "grove-" + nodeID + "-" + key }

// resolvePort resolves a networks item's Neutron options (subnet, security
// groups, floating network, floating IP) to ids. netID is the item's
// network id ("" when it gives a port). Each failure is a diagnostic
// naming the property and the value.
func resolvePort(ctx context.Context, c *clients, i int, n Network, netID string) (portSpec, schema.Diagnostics) {
	field := func(k string) string { return fmt.Sprintf("properties.networks[%d].%s", i, k) }
	var ds schema.Diagnostics
	add := func(d *schema.Diagnostic) {
		if d != nil {
			ds = append(ds, *d)
		}
	}
	var s portSpec
	if !needsNeutron(n) {
		return s, nil
	}
	if c.network == nil {
		return s, schema.Diagnostics{{Field: fmt.Sprintf("properties.networks[%d]", i),
			Message: "asks for a Neutron port or floating IP, but the cloud has no network (Neutron) endpoint; give the cloud's network_endpoint_override in clouds.yaml or use a catalog that lists it."}}
	}
	s.Make = n.Port == ""
	s.VNICType = n.VNICType
	if n.Subnet != "" {
		var d *schema.Diagnostic
		s.SubnetID, d = findSubnet(ctx, c, field("subnet"), n.Subnet, netID)
		add(d)
	}
	for j, g := range n.SecurityGroups {
		id, d := findSecurityGroup(ctx, c, fmt.Sprintf("%s[%d]", field("security_groups"), j), g)
		add(d)
		s.SecurityGroups = append(s.SecurityGroups, id)
	}
	if n.FloatingNetwork != "" {
		var d *schema.Diagnostic
		s.FloatingNetworkID, d = findNetwork(ctx, c, field("floating_network"), n.FloatingNetwork)
		add(d)
	}
	if n.FloatingIP != "" {
		var d *schema.Diagnostic
		s.FloatingIPID, d = findFloatingIP(ctx, c, field("floating_ip"), n.FloatingIP)
		add(d)
	}
	return s, ds
}

func findSubnet(ctx context.Context, c *clients, field, value, netID string) (string, *schema.Diagnostic) {
	var wrongNet bool
	id, d := lookupNeutron(ctx, field, "subnet", value,
		func() (string, error) {
			s, err := subnets.Get(ctx, c.network, value).Extract()
			if err != nil {
				return "", err
			}
			wrongNet = netID != "" && s.NetworkID != netID
			return s.ID, nil
		},
		func() ([]found, error) {
			pages, err := subnets.List(c.network, subnets.ListOpts{Name: value, NetworkID: netID}).AllPages(ctx)
			if err != nil {
				return nil, err
			}
			all, err := subnets.ExtractSubnets(pages)
			cands := make([]found, len(all))
			for i, s := range all {
				cands[i] = found{s.ID, s.Name}
			}
			return cands, err
		})
	if wrongNet {
		return "", &schema.Diagnostic{Field: field, Message: fmt.Sprintf("subnet %q is not on the item's network.", value)}
	}
	return id, d
}

func findSecurityGroup(ctx context.Context, c *clients, field, value string) (string, *schema.Diagnostic) {
	return lookupNeutron(ctx, field, "security group", value,
		func() (string, error) {
			g, err := groups.Get(ctx, c.network, value).Extract()
			if err != nil {
				return "", err
			}
			return g.ID, nil
		},
		func() ([]found, error) {
			pages, err := groups.List(c.network, groups.ListOpts{Name: value}).AllPages(ctx)
			if err != nil {
				return nil, err
			}
			all, err := groups.ExtractGroups(pages)
			cands := make([]found, len(all))
			for i, g := range all {
				cands[i] = found{g.ID, g.Name}
			}
			return cands, err
		})
}

// lookupNeutron resolves a value that names a Neutron object by id (get,
// tried when the value looks like one; a 404 falls through to names) or
// by name (list, the objects of that name).
func lookupNeutron(ctx context.Context, field, kind, value string, get func() (string, error), list func() ([]found, error)) (string, *schema.Diagnostic) {
	if uuidRE.MatchString(value) {
		if id, err := get(); err == nil {
			return id, nil
		} else if !gophercloud.ResponseCodeIs(err, 404) {
			return "", lookupError(ctx, field, kind, value, err)
		}
	}
	cands, err := list()
	if err != nil {
		return "", lookupError(ctx, field, kind, value, err)
	}
	f, d := pick(field, kind, value, cands)
	return f.id, d
}

// findFloatingIP finds an existing floating IP by address (or id).
func findFloatingIP(ctx context.Context, c *clients, field, value string) (string, *schema.Diagnostic) {
	opts := floatingips.ListOpts{FloatingIP: value}
	if uuidRE.MatchString(value) {
		opts = floatingips.ListOpts{ID: value}
	}
	pages, err := floatingips.List(c.network, opts).AllPages(ctx)
	if err != nil {
		return "", lookupError(ctx, field, "floating IP", value, err)
	}
	all, err := floatingips.ExtractFloatingIPs(pages)
	if err != nil {
		return "", lookupError(ctx, field, "floating IP", value, err)
	}
	if len(all) != 1 {
		return "", &schema.Diagnostic{Field: field, Message: fmt.Sprintf("no floating IP %q was found.", value)}
	}
	return all[0].ID, nil
}

// makePort creates the port an entry asks for, named and described for
// the node.
func makePort(ctx context.Context, c *clients, nodeID string, e netEntry, s portSpec) (string, error) {
	opts := ports.CreateOpts{
		NetworkID:   e.Net.UUID,
		Name:        portName(nodeID, e.Key),
		Description: portDescription(nodeID),
	}
	if s.SubnetID != "" || e.Net.FixedIP != "" {
		opts.FixedIPs = []ports.IP{{SubnetID: s.SubnetID, IPAddress: e.Net.FixedIP}}
	}
	if len(s.SecurityGroups) > 0 {
		sgs := slices.Clone(s.SecurityGroups)
		opts.SecurityGroups = &sgs
	}
	var b ports.CreateOptsBuilder = opts
	if s.VNICType != "" {
		b = portsbinding.CreateOptsExt{CreateOptsBuilder: opts, VNICType: s.VNICType}
	}
	p, err := ports.Create(ctx, c.network, b).Extract()
	if err != nil {
		return "", apiError(ctx, "create a port on network "+e.Net.UUID, err)
	}
	return p.ID, nil
}

// makePorts creates the ports a node's entries ask Grove for and returns
// the networks to boot with (each Grove port by id) and the ports made.
// Ports of the node left unattached by an earlier attempt are deleted
// first, so a retried create leaves none behind. On error, what it made
// is deleted again.
func makePorts(ctx context.Context, c *clients, nodeID string, entries []netEntry, specs []portSpec) ([]servers.Network, []string, error) {
	nets := make([]servers.Network, len(entries))
	var made []string
	for i, e := range entries {
		nets[i] = e.Net
		if !specs[i].Make {
			continue
		}
		if made == nil {
			if err := dropPorts(ctx, c, nodeID, true); err != nil {
				return nil, nil, err
			}
		}
		id, err := makePort(ctx, c, nodeID, e, specs[i])
		if err != nil {
			_ = deletePorts(context.WithoutCancel(ctx), c, made)
			return nil, nil, err
		}
		made = append(made, id)
		nets[i] = servers.Network{Port: id}
	}
	return nets, made, nil
}

// attachFloating gives a booted server's entries the floating IPs they
// ask for: a new one from FloatingNetworkID, or the existing FloatingIPID,
// on the entry's port (nets[i].Port, or the port Nova made on the
// network). It returns the floating IPs it created.
func attachFloating(ctx context.Context, c *clients, nodeID, serverID string, nets []servers.Network, specs []portSpec) ([]string, error) {
	var created []string
	for i, s := range specs {
		if !s.floating() {
			continue
		}
		port := nets[i].Port
		if port == "" {
			pages, err := ports.List(c.network, ports.ListOpts{DeviceID: serverID, NetworkID: nets[i].UUID}).AllPages(ctx)
			if err != nil {
				return created, apiError(ctx, "list the ports of server "+serverID, err)
			}
			all, err := ports.ExtractPorts(pages)
			if err != nil || len(all) == 0 {
				return created, fmt.Errorf("server %s has no port on network %s for its floating IP", serverID, nets[i].UUID)
			}
			port = all[0].ID
		}
		if s.FloatingIPID != "" {
			if _, err := floatingips.Update(ctx, c.network, s.FloatingIPID, floatingips.UpdateOpts{PortID: &port}).Extract(); err != nil {
				return created, apiError(ctx, "associate floating IP "+s.FloatingIPID+" with port "+port, err)
			}
			continue
		}
		fip, err := floatingips.Create(ctx, c.network, floatingips.CreateOpts{
			FloatingNetworkID: s.FloatingNetworkID, PortID: port, Description: portDescription(nodeID),
		}).Extract()
		if err != nil {
			return created, apiError(ctx, "create a floating IP on network "+s.FloatingNetworkID+" for port "+port, err)
		}
		created = append(created, fip.ID)
	}
	return created, nil
}

// dropPorts deletes the floating IPs and ports Grove made for a node,
// found by their description (404 is success). With unattachedOnly, only
// ports no server holds go (and no floating IPs).
func dropPorts(ctx context.Context, c *clients, nodeID string, unattachedOnly bool) error {
	if c.network == nil {
		return nil
	}
	desc := portDescription(nodeID)
	if !unattachedOnly {
		if err := deleteFloatingIPs(ctx, c, floatingips.ListOpts{Description: desc}, "node "+nodeID); err != nil {
			return err
		}
	}
	pages, err := ports.List(c.network, ports.ListOpts{Description: desc}).AllPages(ctx)
	if err != nil {
		return apiError(ctx, "list the ports of node "+nodeID, err)
	}
	all, err := ports.ExtractPorts(pages)
	if err != nil {
		return err
	}
	var ids []string
	for _, p := range all {
		if !unattachedOnly || p.DeviceID == "" {
			ids = append(ids, p.ID)
		}
	}
	return deletePorts(ctx, c, ids)
}

// dropFloating deletes the floating IPs Grove made for a node on a port.
func dropFloating(ctx context.Context, c *clients, nodeID, port string) error {
	return deleteFloatingIPs(ctx, c, floatingips.ListOpts{PortID: port, Description: portDescription(nodeID)}, "port "+port)
}

// deleteFloatingIPs deletes the floating IPs opts lists (whose are named
// by of, for errors); one already gone is no error.
func deleteFloatingIPs(ctx context.Context, c *clients, opts floatingips.ListOpts, of string) error {
	pages, err := floatingips.List(c.network, opts).AllPages(ctx)
	if err != nil {
		return apiError(ctx, "list the floating IPs of "+of, err)
	}
	fips, err := floatingips.ExtractFloatingIPs(pages)
	if err != nil {
		return err
	}
	for _, f := range fips {
		if err := floatingips.Delete(ctx, c.network, f.ID).ExtractErr(); err != nil && !gophercloud.ResponseCodeIs(err, 404) {
			return apiError(ctx, "delete floating IP "+f.FloatingIP, err)
		}
	}
	return nil
}

func deletePorts(ctx context.Context, c *clients, ids []string) error {
	for _, id := range ids {
		if err := ports.Delete(ctx, c.network, id).ExtractErr(); err != nil && !gophercloud.ResponseCodeIs(err, 404) {
			return apiError(ctx, "delete port "+id, err)
		}
	}
	return nil
}

// usesNeutron says whether any networks item asks Grove for Neutron work.
func (r *resolved) usesNeutron() bool {
	return slices.ContainsFunc(r.specs, func(s portSpec) bool { return s.Make || s.floating() })
}

// discard deletes a server that failed its create, and the ports and
// floating IPs Grove made for its node.
func (d *Driver) discard(ctx context.Context, r *resolved, n sdk.Node, id string) error {
	if err := deleteAndWait(ctx, r.c, id, time.Minute); err != nil {
		return err
	}
	if r.usesNeutron() {
		return dropPorts(ctx, r.c, n.ID, false)
	}
	return nil
}

// finishNeutron gives an ACTIVE server's entries their floating IPs
// (unless an earlier attempt did) and returns what the node's data
// records of Neutron: ports, the ids of the ports Grove made, and
// floating_ips, the addresses of the floating IPs on them.
func (d *Driver) finishNeutron(ctx context.Context, r *resolved, n sdk.Node, serverID string) (map[string]any, error) {
	c := r.c
	pages, err := ports.List(c.network, ports.ListOpts{DeviceID: serverID}).AllPages(ctx)
	if err != nil {
		return nil, apiError(ctx, "list the ports of server "+serverID, err)
	}
	held, err := ports.ExtractPorts(pages)
	if err != nil {
		return nil, err
	}
	byName := map[string]string{}
	for _, p := range held {
		byName[p.Name] = p.ID
	}
	nets := make([]servers.Network, len(r.entries))
	for i, e := range r.entries {
		nets[i] = e.Net
		if r.specs[i].Make {
			id, ok := byName[portName(n.ID, e.Key)]
			if !ok {
				return nil, fmt.Errorf("server %s does not hold the port Grove made for networks[%d]", serverID, i)
			}
			nets[i] = servers.Network{Port: id}
		}
	}
	specs := slices.Clone(r.specs)
	for i := range specs {
		if !specs[i].floating() || nets[i].Port == "" {
			continue
		}
		pages, err := floatingips.List(c.network, floatingips.ListOpts{PortID: nets[i].Port}).AllPages(ctx)
		if err != nil {
			return nil, apiError(ctx, "list the floating IPs of port "+nets[i].Port, err)
		}
		if have, err := floatingips.ExtractFloatingIPs(pages); err == nil && len(have) > 0 {
			specs[i].FloatingNetworkID, specs[i].FloatingIPID = "", "" // done before
		}
	}
	if _, err := attachFloating(ctx, c, n.ID, serverID, nets, specs); err != nil {
		return nil, err
	}
	var portIDs, addrs []any
	for i := range r.entries {
		if r.specs[i].Make {
			portIDs = append(portIDs, nets[i].Port)
		}
		if !r.specs[i].floating() || nets[i].Port == "" {
			continue
		}
		pages, err := floatingips.List(c.network, floatingips.ListOpts{PortID: nets[i].Port}).AllPages(ctx)
		if err != nil {
			return nil, apiError(ctx, "list the floating IPs of port "+nets[i].Port, err)
		}
		fips, err := floatingips.ExtractFloatingIPs(pages)
		if err != nil {
			return nil, err
		}
		for _, f := range fips {
			addrs = append(addrs, f.FloatingIP)
		}
	}
	out := map[string]any{}
	if len(portIDs) > 0 {
		out["ports"] = portIDs
	}
	if len(addrs) > 0 {
		out["floating_ips"] = addrs
	}
	return out, nil
}
