package bench

import (
	"context"
	"fmt"
	"net/http"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gophercloud/gophercloud/v2"
	"github.com/gophercloud/gophercloud/v2/openstack/compute/v2/flavors"
	"github.com/gophercloud/gophercloud/v2/openstack/compute/v2/servers"

	"github.com/grovehq/grove/internal/novatest"
)

// novaConcurrency is os.nova.server's boot fan-out (bootConcurrency in
// plugins/builtin/nova): the baseline boots as many servers at once.
const novaConcurrency = 10

// BenchmarkNova20 creates a 20-server os.nova.server cluster (m1.tiny, the
// harness's grove-image, no network) on a real Nova (internal/novatest)
// through a real agent and plugin process, then boots the same 20 servers
// (same flavor, image, metadata) with gophercloud directly, 10 at a time,
// each waited for ACTIVE with gophercloud.WaitFor as the driver does, and
// reports both wall-clock times and their ratio. A small round of each
// goes first, untimed, and rounds alternate which side goes first, since a
// fresh Nova is slower at first and its in-memory databases grow with
// every round.
func BenchmarkNova20(b *testing.B) {
	const n = 20
	novatest.Need(b)
	ctx := context.Background()
	startCtx, cancel := context.WithTimeout(ctx, 3*time.Minute)
	defer cancel()
	nova, err := novatest.Start(startCtx, b.TempDir(), novatest.Options{})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(nova.Stop)
	for _, kv := range nova.Env() {
		k, v, _ := strings.Cut(kv, "=")
		b.Setenv(k, v)
	}
	c, _ := startAgent(b)
	if _, err := c.Do(ctx, http.MethodPost, "/v1/profiles", nil, map[string]any{"profile": map[string]any{"name": "server",
		"spec": map[string]any{"type": "os.nova.server", "version": "1.0", "properties": map[string]any{
			"flavor": "m1.tiny", "image": nova.ImageName}}}}, nil); err != nil {
		b.Fatal(err)
	}
	compute := nova.Compute("2.79")
	flavor := ""
	pages, err := flavors.ListDetail(compute, nil).AllPages(ctx)
	if err != nil {
		b.Fatal(err)
	}
	all, err := flavors.ExtractFlavors(pages)
	if err != nil {
		b.Fatal(err)
	}
	for _, f := range all {
		if f.Name == "m1.tiny" {
			flavor = f.ID
		}
	}

	grove := func(round, n int) time.Duration {
		name := fmt.Sprintf("servers-%d", round)
		start := time.Now()
		r, err := c.Do(ctx, http.MethodPost, "/v1/clusters", nil, map[string]any{"cluster": map[string]any{"name": name, "profile_id": "server", "desired_capacity": n}}, nil)
		if err != nil {
			b.Fatal(err)
		}
		act, err := c.WaitAction(ctx, r.ActionID(), nil)
		if err != nil || act.Status != "SUCCEEDED" {
			b.Fatalf("create: %v %+v", err, act)
		}
		took := time.UnixMicro(int64(act.EndTime * 1e6)).Sub(start)
		r, err = c.Do(ctx, http.MethodDelete, "/v1/clusters/"+name, nil, nil, nil)
		if err != nil {
			b.Fatal(err)
		}
		if act, err := c.WaitAction(ctx, r.ActionID(), nil); err != nil || act.Status != "SUCCEEDED" {
			b.Fatalf("delete: %v %+v", err, act)
		}
		return took
	}
	direct := func(round, n int) time.Duration {
		ids := make([]string, n)
		errs := make([]error, n)
		sem := make(chan struct{}, novaConcurrency)
		var wg sync.WaitGroup
		start := time.Now()
		for j := range n {
			wg.Add(1)
			go func() {
				defer wg.Done()
				sem <- struct{}{}
				defer func() { <-sem }()
				name := fmt.Sprintf("direct-%d-%d", round, j)
				s, err := servers.Create(ctx, compute, servers.CreateOpts{Name: name, ImageRef: nova.ImageID, FlavorRef: flavor, Networks: "none",
					Metadata: map[string]string{"cluster_id": "direct", "cluster_node_id": name, "cluster_node_index": fmt.Sprint(j)}}, nil).Extract()
				if err != nil {
					errs[j] = err
					return
				}
				ids[j] = s.ID
				errs[j] = gophercloud.WaitFor(ctx, func(ctx context.Context) (bool, error) {
					s, err := servers.Get(ctx, compute, s.ID).Extract()
					if err != nil {
						return false, err
					}
					if s.Status == "ERROR" {
						return false, fmt.Errorf("server %s went ERROR: %s", name, s.Fault.Message)
					}
					return s.Status == "ACTIVE", nil
				})
			}()
		}
		wg.Wait()
		took := time.Since(start)
		for j, id := range ids {
			if errs[j] != nil {
				b.Fatalf("direct boot %d: %v", j, errs[j])
			}
			if err := servers.Delete(ctx, compute, id).ExtractErr(); err != nil {
				b.Fatal(err)
			}
			if err := gophercloud.WaitFor(ctx, func(ctx context.Context) (bool, error) {
				_, err := servers.Get(ctx, compute, id).Extract()
				return gophercloud.ResponseCodeIs(err, 404), nil
			}); err != nil {
				b.Fatal(err)
			}
		}
		return took
	}

	// Untimed: a fresh Nova is slower at its first boots, whichever side
	// makes them.
	grove(-1, 2)
	direct(-1, 2)
	var groveTotal, directTotal time.Duration
	var ratios []float64
	for i := 0; i < b.N; i++ {
		var g, d time.Duration
		if i%2 == 0 {
			g = grove(i, n)
			d = direct(i, n)
		} else {
			d = direct(i, n)
			g = grove(i, n)
		}
		groveTotal += g
		directTotal += d
		ratios = append(ratios, g.Seconds()/d.Seconds())
	}
	// Nova shares the machine's cores with everything else, so the
	// ratio of totals drifts with the load; each round's own ratio, of two
	// runs minutes apart at most, drifts less. Their median is reported too.
	sort.Float64s(ratios)
	b.ReportMetric(groveTotal.Seconds()/float64(b.N), "grove-s")
	b.ReportMetric(directTotal.Seconds()/float64(b.N), "gophercloud-s")
	b.ReportMetric(groveTotal.Seconds()/directTotal.Seconds(), "grove/gophercloud")
	median := ratios[len(ratios)/2]
	if len(ratios)%2 == 0 {
		median = (ratios[len(ratios)/2-1] + median) / 2
	}
	b.ReportMetric(median, "median-round-ratio")
}
