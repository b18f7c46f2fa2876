package nova

import (
	"context"
	"os"
	"sort"
	"strconv"

	"github.com/gophercloud/gophercloud/v2"
	"github.com/gophercloud/gophercloud/v2/openstack/compute/v2/availabilityzones"
	"github.com/gophercloud/gophercloud/v2/openstack/compute/v2/hypervisors"

	"github.com/grovehq/grove/plugins/sdk"
)

// Hosts lists where the agent's cloud (OS_CLOUD or the OS_* variables)
// places servers: each hypervisor, with its state, status, zone, vCPUs and
// memory used and total and running servers, when the credentials may list
// hypervisors (an administrator's); and each availability zone. Without
// credentials configured there are none; a cloud that does not answer is
// one entry carrying the reason.
func (d *Driver) Hosts(ctx context.Context) ([]sdk.Host, error) {
	if !configured() {
		return []sdk.Host{}, nil
	}
	c, err := d.connect(ctx, Context{})
	if err != nil {
		return []sdk.Host{{Name: "openstack", Err: err.Error()}}, nil
	}
	hosts, err := ListHosts(ctx, c)
	if err != nil {
		return []sdk.Host{{Name: c.where, Err: err.Error()}}, nil
	}
	return hosts, nil
}

// configured says whether the agent's environment names a cloud.
func configured() bool {
	for _, k := range []string{"OS_CLOUD", "OS_AUTH_URL", "OS_ENDPOINT"} {
		if os.Getenv(k) != "" {
			return true
		}
	}
	return false
}

// ListHosts lists a cloud's hypervisors (when allowed) and availability
// zones, hypervisors first, each sorted by name.
func ListHosts(ctx context.Context, c *clients) ([]sdk.Host, error) {
	zoneOf := map[string]string{} // compute host -> zone
	var zones []sdk.Host
	pages, err := availabilityzones.ListDetail(c.compute).AllPages(ctx)
	if gophercloud.ResponseCodeIs(err, 403) {
		pages, err = availabilityzones.List(c.compute).AllPages(ctx)
	}
	if err != nil {
		return nil, apiError(ctx, "list the availability zones", err)
	}
	azs, err := availabilityzones.ExtractAvailabilityZones(pages)
	if err != nil {
		return nil, err
	}
	for _, z := range azs {
		computes := 0
		for host, svcs := range z.Hosts {
			if _, ok := svcs["nova-compute"]; ok {
				zoneOf[host] = z.ZoneName
				computes++
			}
		}
		if z.ZoneName == "internal" && computes == 0 {
			continue // Nova's control services, where no server goes
		}
		zones = append(zones, sdk.Host{Name: z.ZoneName, Attributes: map[string]string{
			"kind": "availability_zone", "available": strconv.FormatBool(z.ZoneState.Available)},
			Load: map[string]float64{"compute_hosts": float64(computes)}})
	}
	var out []sdk.Host
	hpages, err := hypervisors.List(c.compute, hypervisors.ListOpts{}).AllPages(ctx)
	switch {
	case gophercloud.ResponseCodeIs(err, 403):
		// Not an administrator: zones only.
	case err != nil:
		return nil, apiError(ctx, "list the hypervisors", err)
	default:
		hvs, err := hypervisors.ExtractHypervisors(hpages)
		if err != nil {
			return nil, err
		}
		for _, h := range hvs {
			out = append(out, sdk.Host{Name: h.HypervisorHostname, Attributes: map[string]string{
				"kind": "hypervisor", "state": h.State, "status": h.Status, "host": h.Service.Host, "zone": zoneOf[h.Service.Host],
				"hypervisor_type": h.HypervisorType, "host_ip": h.HostIP,
				"vcpus": strconv.Itoa(h.VCPUs), "memory_mib": strconv.Itoa(h.MemoryMB),
			}, Load: map[string]float64{"vcpus": float64(h.VCPUsUsed), "memory_mib": float64(h.MemoryMBUsed), "running_vms": float64(h.RunningVMs)}})
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	sort.Slice(zones, func(i, j int) bool { return zones[i].Name < zones[j].Name })
	return append(out, zones...), nil
}
