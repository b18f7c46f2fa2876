package vsphere

import (
	"context"
	"sort"
	"strconv"

	"github.com/vmware/govmomi/view"
	"github.com/vmware/govmomi/vim25/mo"

	"github.com/grovehq/grove/plugins/sdk"
)

// Hosts lists the ESXi hosts of every compute cluster of the vCenter the
// agent's environment names (GOVC_URL or VSPHERE_SERVER), with their
// connection state, maintenance mode, CPU and memory usage and VM count
// (or vsphere_url of the plugin config).
// Without a vCenter configured there are none; a vCenter that does not
// answer is one host entry carrying the reason.
func (d *Driver) Hosts(ctx context.Context) ([]sdk.Host, error) {
	e, err := d.defaults.resolveEndpoint(Connection{})
	if err != nil {
		return []sdk.Host{}, nil
	}
	s, err := d.session(ctx, Connection{})
	if err != nil {
		return []sdk.Host{{Name: e.u.Host, Err: err.Error()}}, nil
	}
	hosts, err := ListHosts(ctx, s)
	if err != nil {
		return []sdk.Host{{Name: e.u.Host, Err: err.Error()}}, nil
	}
	return hosts, nil
}

// ListHosts lists the clustered ESXi hosts of a session's vCenter in two
// property-collector round trips (hosts, then clusters' names).
func ListHosts(ctx context.Context, s *session) ([]sdk.Host, error) {
	c := s.vim()
	m := view.NewManager(c)
	v, err := m.CreateContainerView(ctx, c.ServiceContent.RootFolder, []string{"HostSystem", "ClusterComputeResource"}, true)
	if err != nil {
		return nil, err
	}
	defer func() { _ = v.Destroy(context.WithoutCancel(ctx)) }()
	var hs []mo.HostSystem
	if err := v.Retrieve(ctx, []string{"HostSystem"}, []string{"name", "parent", "runtime.connectionState", "runtime.inMaintenanceMode",
		"summary.quickStats.overallCpuUsage", "summary.quickStats.overallMemoryUsage", "summary.hardware.cpuMhz", "summary.hardware.numCpuCores",
		"summary.hardware.memorySize", "vm"}, &hs); err != nil {
		return nil, err
	}
	var cls []mo.ClusterComputeResource
	if err := v.Retrieve(ctx, []string{"ClusterComputeResource"}, []string{"name"}, &cls); err != nil {
		return nil, err
	}
	names := map[string]string{}
	for _, cl := range cls {
		names[cl.Self.Value] = cl.Name
	}
	out := []sdk.Host{}
	for _, h := range hs {
		if h.Parent == nil || names[h.Parent.Value] == "" {
			continue // a standalone host: nodes go to clusters
		}
		host := sdk.Host{Name: h.Name, Attributes: map[string]string{
			"cluster":          names[h.Parent.Value],
			"moid":             h.Self.Value,
			"connection_state": string(h.Runtime.ConnectionState),
			"maintenance_mode": strconv.FormatBool(h.Runtime.InMaintenanceMode),
		}, Load: map[string]float64{"vms": float64(len(h.Vm))}}
		if hw := h.Summary.Hardware; hw != nil {
			host.Attributes["cpu_mhz"] = strconv.FormatInt(int64(hw.CpuMhz)*int64(hw.NumCpuCores), 10)
			host.Attributes["memory_mib"] = strconv.FormatInt(hw.MemorySize>>20, 10)
		}
		host.Load["cpu_mhz"] = float64(h.Summary.QuickStats.OverallCpuUsage)
		host.Load["memory_mib"] = float64(h.Summary.QuickStats.OverallMemoryUsage)
		out = append(out, host)
	}
	sort.Slice(out, func(i, j int) bool {
		if a, b := out[i].Attributes["cluster"], out[j].Attributes["cluster"]; a != b {
			return a < b
		}
		return out[i].Name < out[j].Name
	})
	return out, nil
}
