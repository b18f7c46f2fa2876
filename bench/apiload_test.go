package bench

import (
	"bytes"
	"cmp"
	"context"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/grovehq/grove/api"
)

// BenchmarkAPILoad puts the API under concurrent load beside a
// 10,000-node cluster: 16 clients (a load generator: kept connections,
// pages counted rather than decoded) each read 100-node pages of
// GET /v1/nodes (the first page, and pages reached by markers spread over
// the cluster) until 4,000 requests are done, then 50 clients each create a
// 100-node grove.noop cluster at the same time. It reports the page reads'
// p50 and p99 in milliseconds, their rate, the CPU time per read of the
// agent and of the benchmark's own clients, and fails if any create does
// not succeed.
func BenchmarkAPILoad(b *testing.B) {
	const (
		size        = 10000
		readers     = 16
		reads       = 4000
		creators    = 50
		createNodes = 100
	)
	for range b.N {
		b.StopTimer()
		c, agent := bigAgentCmd(b, size)
		createNoop(b, c, "big", size, nil)
		ctx := context.Background()
		// Markers spread over the cluster, so the reads are not all of one
		// page the store has cached.
		var all struct {
			Nodes []api.Node `json:"nodes"`
		}
		if _, err := c.Do(ctx, http.MethodGet, "/v1/nodes", url.Values{"limit": {"1000"}}, nil, &all); err != nil {
			b.Fatal(err)
		}
		markers := []string{""}
		for i := 99; i < len(all.Nodes); i += 100 {
			markers = append(markers, all.Nodes[i].ID)
		}

		// With GROVE_BENCH_PROFILE_DIR set, the agent's CPU profile over
		// the first seconds of the page reads is saved there.
		profiled := make(chan error, 1)
		if dir := os.Getenv(profileEnv); dir != "" {
			go func() { profiled <- fetchProfile(c, filepath.Join(dir, "apiload-reads.pprof"), 3*time.Second) }()
		} else {
			profiled <- nil
		}
		// The readers are a load generator, as hey or wrk would be: each
		// keeps its connection (the api client's transport keeps two idle
		// per host, so 14 of 16 readers would connect anew for every
		// request) and checks a page by its status and its count of
		// nodes without decoding it, so the CPU they take from the agent
		// on this machine's two shared cores is little beside its own.
		tr := http.DefaultTransport.(*http.Transport).Clone()
		tr.MaxIdleConnsPerHost = readers
		hc := &http.Client{Transport: tr, Timeout: time.Minute}
		defer tr.CloseIdleConnections()
		agentBefore, err1 := procCPU(agent.Process.Pid)
		selfBefore, err2 := procCPU(os.Getpid())
		b.StartTimer()
		readStart := time.Now()
		took := make([]time.Duration, reads)
		var wg sync.WaitGroup
		errs := make(chan error, readers)
		for r := range readers {
			wg.Go(func() {
				var body bytes.Buffer
				for i := r; i < reads; i += readers {
					q := url.Values{"limit": {"100"}}
					if m := markers[i%len(markers)]; m != "" {
						q.Set("marker", m)
					}
					start := time.Now()
					nodes, err := readPage(ctx, hc, c.Address+"/v1/nodes?"+q.Encode(), &body)
					took[i] = time.Since(start)
					if err != nil {
						errs <- err
						return
					}
					if nodes != 100 {
						errs <- fmt.Errorf("a page of %d nodes, want 100", nodes)
						return
					}
				}
			})
		}
		wg.Wait()
		readWall := time.Since(readStart)
		agentAfter, err3 := procCPU(agent.Process.Pid)
		selfAfter, err4 := procCPU(os.Getpid())
		if err := cmp.Or(err1, err2, err3, err4); err != nil {
			b.Fatal(err)
		}
		close(errs)
		for err := range errs {
			b.Fatal(err)
		}
		if err := <-profiled; err != nil {
			b.Fatal(err)
		}
		slices.Sort(took)
		b.ReportMetric(float64(took[reads/2].Microseconds())/1000, "nodes-p50-ms")
		b.ReportMetric(float64(took[reads*99/100].Microseconds())/1000, "nodes-p99-ms")
		// Where the reads' CPU went: the agent serving them, and this
		// process (the 16 clients: HTTP and decoding each page), which
		// shares the machine's cores with the agent.
		b.ReportMetric(float64(reads)/readWall.Seconds(), "reads/s")
		b.ReportMetric(float64((agentAfter-agentBefore).Microseconds())/1000/reads, "agent-cpu-ms/read")
		b.ReportMetric(float64((selfAfter-selfBefore).Microseconds())/1000/reads, "client-cpu-ms/read")

		start := time.Now()
		failed := make(chan error, creators)
		for i := range creators {
			wg.Go(func() {
				r, err := c.Do(ctx, http.MethodPost, "/v1/clusters", nil, map[string]any{"cluster": map[string]any{
					"name": fmt.Sprintf("load-%d", i), "profile_id": "noop", "desired_capacity": createNodes}}, nil)
				if err != nil {
					failed <- fmt.Errorf("create load-%d: %w", i, err)
					return
				}
				act, err := c.WaitAction(ctx, r.ActionID(), nil)
				if err != nil {
					failed <- fmt.Errorf("wait for load-%d: %w", i, err)
					return
				}
				if act.Status != "SUCCEEDED" {
					failed <- fmt.Errorf("create load-%d: %s %s", i, act.Status, act.StatusReason)
				}
			})
		}
		wg.Wait()
		close(failed)
		b.StopTimer()
		for err := range failed {
			b.Error(err)
		}
		b.ReportMetric(time.Since(start).Seconds(), "creates-s")
	}
}

// readPage GETs a page of the node list into body and returns how many
// nodes it holds, counted by their physical_id keys (one per node in the
// API's node shape) rather than decoded.
func readPage(ctx context.Context, hc *http.Client, u string, body *bytes.Buffer) (int, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return 0, err
	}
	req.Header.Set("Accept", "application/json")
	req.Header.Set("OpenStack-API-Version", "clustering 1.14")
	resp, err := hc.Do(req)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	body.Reset()
	if _, err := body.ReadFrom(resp.Body); err != nil {
		return 0, err
	}
	if resp.StatusCode != http.StatusOK {
		return 0, fmt.Errorf("GET %s: %s: %s", u, resp.Status, body.Bytes())
	}
	return bytes.Count(body.Bytes(), []byte(`"physical_id":`)), nil
}
