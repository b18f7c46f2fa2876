package e2e

import (
	"context"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/gophercloud/gophercloud/v2"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/extensions/layer3/floatingips"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/extensions/portsbinding"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/ports"

	"github.com/grovehq/grove/api"
	"github.com/grovehq/grove/internal/novatest"
)

// groveNeutron lists the ports (with their bindings) and the floating IPs
// Grove made in Neutron for a node, found by the description it gives them.
func groveNeutron(t *testing.T, c *gophercloud.ServiceClient, nodeID string) ([]portWithBinding, []floatingips.FloatingIP) {
	t.Helper()
	ctx := context.Background()
	pages, err := ports.List(c, ports.ListOpts{Description: "grove node " + nodeID}).AllPages(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var ps []portWithBinding
	if err := ports.ExtractPortsInto(pages, &ps); err != nil {
		t.Fatal(err)
	}
	fpages, err := floatingips.List(c, floatingips.ListOpts{Description: "grove node " + nodeID}).AllPages(ctx)
	if err != nil {
		t.Fatal(err)
	}
	fips, err := floatingips.ExtractFloatingIPs(fpages)
	if err != nil {
		t.Fatal(err)
	}
	return ps, fips
}

type portWithBinding struct {
	ports.Port
	portsbinding.PortsBindingExt
}

// TestNovaNeutronPorts runs os.nova.server nodes whose networks item asks
// for a Neutron port (subnet, fixed IP, security group, vNIC type) and a
// floating IP, on the real Nova using a real Neutron (internal/novatest
// with Options.Neutron): each server boots on the port Grove made, the
// port carries the item's properties as Neutron reports them, a floating
// IP from the external network is on it, and scaling in and deleting the
// cluster leave no port or floating IP behind. Unknown names are refused
// at submit time, naming the property and the value.
func TestNovaNeutronPorts(t *testing.T) {
	nv := novatest.SharedNeutron(t)
	nt := nv.Neutron
	net := nt.Client()
	c := nv.Compute(novaMicroversion)
	// The clouds.yaml says where Neutron is (network_endpoint_override).
	for _, k := range []string{"OS_AUTH_TYPE", "OS_TOKEN", "OS_ENDPOINT", "OS_PROJECT_ID"} {
		t.Setenv(k, "")
	}
	t.Setenv("OS_CLIENT_CONFIG_FILE", nv.CloudsYAML)
	t.Setenv("OS_CLOUD", "grove-nova")
	dir := t.TempDir()
	a := startAgent(t, dir, "-config", fastConfig(t, dir, ""))

	item := map[string]any{"network": nt.Network, "subnet": nt.Subnet, "fixed_ip": "10.20.0.50",
		"security_groups": []any{nt.SecurityGroup}, "vnic_type": "normal", "floating_network": nt.ExternalNetwork}
	spec := func(it map[string]any) map[string]any {
		return map[string]any{"type": "os.nova.server", "version": "1.0", "properties": map[string]any{
			"flavor": "m1.tiny", "image": nv.ImageName, "networks": []any{it}}}
	}

	// Unknown names are validation errors at submit time.
	for _, bad := range []struct{ key, value, field string }{
		{"network", "no-such-net", "properties.networks[0].network"},
		{"subnet", "no-such-subnet", "properties.networks[0].subnet"},
		{"security_groups", "no-such-group", "properties.networks[0].security_groups[0]"},
		{"floating_network", "no-such-public", "properties.networks[0].floating_network"},
	} {
		it := map[string]any{"network": nt.Network}
		if bad.key == "security_groups" {
			it[bad.key] = []any{bad.value}
		} else {
			it[bad.key] = bad.value
		}
		_, err := a.do(http.MethodPost, "/v1/profiles", map[string]any{"profile": map[string]any{"name": "bad", "spec": spec(it)}})
		if err == nil || !strings.Contains(err.Error(), bad.field) || !strings.Contains(err.Error(), bad.value) {
			t.Errorf("an unknown %s: %v", bad.key, err)
		}
	}

	// One node gets the fixed IP; a second node on the same address would
	// fail, so the cluster is 1 node, scaled out without the fixed IP.
	a.mustDo(http.MethodPost, "/v1/profiles", map[string]any{"profile": map[string]any{"name": "ported", "spec": spec(item)}}, nil)
	act := a.waitAction(a.createCluster("ported", "ported", 1, nil))
	if act.Status != "SUCCEEDED" {
		t.Fatalf("create: %s %s\n%s", act.Status, act.StatusReason, tail(a.logText(), 40))
	}
	clusterID := a.cluster("ported").ID
	nodes := a.nodes(clusterID)
	if len(nodes) != 1 {
		t.Fatalf("%d nodes, want 1", len(nodes))
	}
	n := nodes[0]
	ps, fips := groveNeutron(t, net, n.ID)
	if len(ps) != 1 || len(fips) != 1 {
		t.Fatalf("node %s: %d ports and %d floating IPs in Neutron, want 1 and 1", n.Name, len(ps), len(fips))
	}
	p := ps[0]
	if p.DeviceID != n.PhysicalID || p.NetworkID != nt.NetworkID || p.VNICType != "normal" || p.VIFType != "ovs" || p.HostID == "" ||
		!slices.Equal(p.SecurityGroups, []string{nt.SecurityGroupID}) ||
		len(p.FixedIPs) != 1 || p.FixedIPs[0].IPAddress != "10.20.0.50" || p.FixedIPs[0].SubnetID != nt.SubnetID {
		t.Errorf("the port Grove made: %+v", p)
	}
	if f := fips[0]; f.PortID != p.ID || f.FloatingNetworkID != nt.ExternalNetworkID || f.FixedIP != "10.20.0.50" {
		t.Errorf("the floating IP: %+v", f)
	}
	if got, _ := n.Data["floating_ips"].([]any); len(got) != 1 || got[0] != fips[0].FloatingIP {
		t.Errorf("node data floating_ips = %v, want [%s]", n.Data["floating_ips"], fips[0].FloatingIP)
	}
	if got, _ := n.Data["ports"].([]any); len(got) != 1 || got[0] != p.ID {
		t.Errorf("node data ports = %v, want [%s]", n.Data["ports"], p.ID)
	}
	if addrs, _ := n.Data["ip_addresses"].([]any); !slices.Contains(addrs, any("10.20.0.50")) {
		t.Errorf("node data ip_addresses = %v", n.Data["ip_addresses"])
	}

	// Scale out on a profile without the fixed IP, then in: the node gone
	// leaves nothing behind.
	delete(item, "fixed_ip")
	a.mustDo(http.MethodPost, "/v1/profiles", map[string]any{"profile": map[string]any{"name": "ported-2", "spec": spec(item)}}, nil)
	r := a.mustDo(http.MethodPatch, "/v1/clusters/ported", map[string]any{"cluster": map[string]any{"profile_id": "ported-2"}}, nil)
	if act := a.waitAction(r.ActionID()); act.Status != "SUCCEEDED" {
		t.Fatalf("profile update: %s %s\n%s", act.Status, act.StatusReason, tail(a.logText(), 40))
	}
	// The networks change replugs the server: Grove's old port (and its
	// floating IP) gone, a new one without the fixed IP attached.
	if ps, fips := groveNeutron(t, net, n.ID); len(ps) != 1 || len(fips) != 1 || ps[0].ID == p.ID || ps[0].DeviceID != n.PhysicalID ||
		fips[0].PortID != ps[0].ID || len(ps[0].FixedIPs) != 1 || ps[0].FixedIPs[0].IPAddress == "10.20.0.50" {
		t.Errorf("after the networks update, node %s has ports %+v and floating IPs %+v", n.Name, ps, fips)
	}
	if _, err := ports.Get(context.Background(), net, p.ID).Extract(); !gophercloud.ResponseCodeIs(err, 404) {
		t.Errorf("the replaced port %s: %v, want 404", p.ID, err)
	}
	if act := a.waitAction(a.clusterAction("ported", "scale_out", map[string]any{"count": 2})); act.Status != "SUCCEEDED" {
		t.Fatalf("scale_out: %s %s\n%s", act.Status, act.StatusReason, tail(a.logText(), 40))
	}
	nodes = a.nodes(clusterID)
	if len(nodes) != 3 {
		t.Fatalf("%d nodes after scale_out, want 3", len(nodes))
	}
	for _, n := range nodes {
		if ps, fips := groveNeutron(t, net, n.ID); len(ps) != 1 || len(fips) != 1 || ps[0].DeviceID != n.PhysicalID {
			t.Errorf("node %s: ports %+v, floating IPs %+v", n.Name, ps, fips)
		}
	}
	if act := a.waitAction(a.clusterAction("ported", "scale_in", map[string]any{"count": 2})); act.Status != "SUCCEEDED" {
		t.Fatalf("scale_in: %s %s", act.Status, act.StatusReason)
	}
	left := a.nodes(clusterID)
	for _, n := range nodes {
		if slices.ContainsFunc(left, func(l api.Node) bool { return l.ID == n.ID }) {
			continue
		}
		if ps, fips := groveNeutron(t, net, n.ID); len(ps) != 0 || len(fips) != 0 {
			t.Errorf("node %s, scaled in, left %d ports and %d floating IPs", n.Name, len(ps), len(fips))
		}
	}

	r = a.mustDo(http.MethodDelete, "/v1/clusters/ported", nil, nil)
	if act := a.waitAction(r.ActionID()); act.Status != "SUCCEEDED" {
		t.Fatalf("delete: %s %s", act.Status, act.StatusReason)
	}
	for _, n := range nodes {
		if ps, fips := groveNeutron(t, net, n.ID); len(ps) != 0 || len(fips) != 0 {
			t.Errorf("node %s, deleted, left %d ports and %d floating IPs", n.Name, len(ps), len(fips))
		}
	}
	if s := clusterServers(t, c, clusterID); len(s) != 0 {
		t.Errorf("%d servers left after delete", len(s))
	}

	// A server that goes ERROR (NoValidHost: m1.xlarge fits no fake host)
	// fails its node, and the port and floating IP made for it go too.
	huge := spec(item)
	huge["properties"].(map[string]any)["flavor"] = "m1.xlarge"
	a.mustDo(http.MethodPost, "/v1/profiles", map[string]any{"profile": map[string]any{"name": "huge-ported", "spec": huge}}, nil)
	act = a.waitFailed(a.createCluster("huge-ported", "huge-ported", 1, nil))
	if !strings.Contains(act.StatusReason, "No valid host") {
		t.Errorf("the failed create's reason: %s", act.StatusReason)
	}
	hugeID := a.cluster("huge-ported").ID
	for _, n := range a.nodes(hugeID) {
		if ps, fips := groveNeutron(t, net, n.ID); len(ps) != 0 || len(fips) != 0 {
			t.Errorf("node %s, whose server failed, left ports %+v and floating IPs %+v", n.Name, ps, fips)
		}
	}
	if act := a.waitAction(a.mustDo(http.MethodDelete, "/v1/clusters/huge-ported", nil, nil).ActionID()); act.Status != "SUCCEEDED" {
		t.Errorf("delete huge-ported: %s %s", act.Status, act.StatusReason)
	}

	// Nothing at all is left: the private network holds only the router's
	// interfaces, and there are no floating IPs.
	pages, err := ports.List(net, ports.ListOpts{NetworkID: nt.NetworkID}).AllPages(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	all, _ := ports.ExtractPorts(pages)
	for _, p := range all {
		if p.DeviceOwner != "network:router_interface" {
			t.Errorf("port %s (%s, %q) left on the private network", p.ID, p.DeviceOwner, p.Description)
		}
	}
	fpages, err := floatingips.List(net, nil).AllPages(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if fips, _ := floatingips.ExtractFloatingIPs(fpages); len(fips) != 0 {
		t.Errorf("%d floating IPs left: %+v", len(fips), fips)
	}
}
