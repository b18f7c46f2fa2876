package bench

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/vmware/govmomi"
	"github.com/vmware/govmomi/find"
	"github.com/vmware/govmomi/object"
	"github.com/vmware/govmomi/vim25/types"

	"github.com/grovehq/grove/internal/vcsimtest"
)

// BenchmarkVSphere50 creates a 50-VM vsphere.vm cluster on the vSphere
// simulator through a real agent and plugin process, then makes the same 50
// clones (same pool, hardware, extraConfig, powered on) with govmomi
// directly at the driver's concurrency (8 clones at once), and reports
// both wall-clock times and their ratio.
func BenchmarkVSphere50(b *testing.B) {
	const n, concurrency = 50, 8
	sim, err := vcsimtest.Start("")
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(sim.Close)
	for _, kv := range sim.Env() {
		k, v, _ := strings.Cut(kv, "=")
		b.Setenv(k, v)
	}
	c, _ := startAgent(b)
	ctx := context.Background()
	if _, err := c.Do(ctx, http.MethodPost, "/v1/profiles", nil, map[string]any{"profile": map[string]any{"name": "vm",
		"spec": map[string]any{"type": "vsphere.vm", "version": "1.0", "properties": map[string]any{
			"cluster": vcsimtest.Cluster, "template": vcsimtest.Template, "num_cpus": 1, "memory_mb": 128}}}}, nil); err != nil {
		b.Fatal(err)
	}
	gc, err := govmomi.NewClient(ctx, sim.UserURL(), true)
	if err != nil {
		b.Fatal(err)
	}
	f := find.NewFinder(gc.Client, true)
	dc, err := f.Datacenter(ctx, vcsimtest.Datacenter)
	if err != nil {
		b.Fatal(err)
	}
	f.SetDatacenter(dc)
	tmpl, err := f.VirtualMachine(ctx, vcsimtest.Template)
	if err != nil {
		b.Fatal(err)
	}
	cl, err := f.ClusterComputeResource(ctx, vcsimtest.Cluster)
	if err != nil {
		b.Fatal(err)
	}
	pool, err := cl.ResourcePool(ctx)
	if err != nil {
		b.Fatal(err)
	}
	folders, err := dc.Folders(ctx)
	if err != nil {
		b.Fatal(err)
	}

	var groveTotal, directTotal time.Duration
	for i := 0; i < b.N; i++ {
		start := time.Now()
		r, err := c.Do(ctx, http.MethodPost, "/v1/clusters", nil, map[string]any{"cluster": map[string]any{"name": "vms", "profile_id": "vm", "desired_capacity": n}}, nil)
		if err != nil {
			b.Fatal(err)
		}
		act, err := c.WaitAction(ctx, r.ActionID(), nil)
		if err != nil || act.Status != "SUCCEEDED" {
			b.Fatalf("create: %v", err)
		}
		groveTotal += time.UnixMicro(int64(act.EndTime * 1e6)).Sub(start)
		r, err = c.Do(ctx, http.MethodDelete, "/v1/clusters/vms", nil, nil, nil)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := c.WaitAction(ctx, r.ActionID(), nil); err != nil {
			b.Fatal(err)
		}

		ref := pool.Reference()
		made := make([]*object.VirtualMachine, n)
		errs := make([]error, n)
		sem := make(chan struct{}, concurrency)
		var wg sync.WaitGroup
		start = time.Now()
		for j := 0; j < n; j++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				sem <- struct{}{}
				defer func() { <-sem }()
				spec := types.VirtualMachineCloneSpec{Location: types.VirtualMachineRelocateSpec{Pool: &ref}, PowerOn: true,
					Config: &types.VirtualMachineConfigSpec{NumCPUs: 1, MemoryMB: 128, ExtraConfig: []types.BaseOptionValue{
						&types.OptionValue{Key: "grove.node_id", Value: fmt.Sprintf("bench-%d-%d", i, j)}}}}
				t, err := tmpl.Clone(ctx, folders.VmFolder, fmt.Sprintf("bench-%d-%d", i, j), spec)
				if err == nil {
					var info *types.TaskInfo
					if info, err = t.WaitForResult(ctx); err == nil {
						made[j] = object.NewVirtualMachine(gc.Client, info.Result.(types.ManagedObjectReference))
					}
				}
				errs[j] = err
			}()
		}
		wg.Wait()
		directTotal += time.Since(start)
		for j, vm := range made {
			if errs[j] != nil {
				b.Fatalf("direct clone %d: %v", j, errs[j])
			}
			if t, err := vm.PowerOff(ctx); err == nil {
				_ = t.Wait(ctx)
			}
			if t, err := vm.Destroy(ctx); err == nil {
				_ = t.Wait(ctx)
			}
		}
	}
	b.ReportMetric(groveTotal.Seconds()/float64(b.N), "grove-s")
	b.ReportMetric(directTotal.Seconds()/float64(b.N), "govmomi-s")
	b.ReportMetric(groveTotal.Seconds()/directTotal.Seconds(), "grove/govmomi")
}
