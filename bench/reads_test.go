package bench

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/grovehq/grove/api"
)

// bigAgent starts a dev agent that accepts clusters of up to max nodes
// and has a grove.noop profile named noop.
func bigAgent(b *testing.B, max int) *api.Client {
	c, _ := bigAgentCmd(b, max)
	return c
}

// bigAgentCmd is bigAgent, also returning the agent's process.
func bigAgentCmd(b *testing.B, max int) (*api.Client, *exec.Cmd) {
	cfg := filepath.Join(b.TempDir(), "agent.hcl")
	if err := os.WriteFile(cfg, []byte(fmt.Sprintf("workers {\n  max_nodes_per_cluster = %d\n}\n", max)), 0o600); err != nil {
		b.Fatal(err)
	}
	c, cmd := startAgent(b, "-config", cfg)
	if _, err := c.Do(context.Background(), http.MethodPost, "/v1/profiles", nil, map[string]any{"profile": map[string]any{"name": "noop",
		"spec": map[string]any{"type": "grove.noop", "version": "1.0", "properties": map[string]any{}}}}, nil); err != nil {
		b.Fatal(err)
	}
	return c, cmd
}

// createNoop creates a cluster of n grove.noop nodes and returns the
// CLUSTER_CREATE action's id and how long it took (to the action's end
// time). poll, when set, runs beside the creation until it ends.
func createNoop(b *testing.B, c *api.Client, name string, n int, poll func(ctx context.Context, actionID string)) (string, time.Duration) {
	return createTimed(b, c, name, "noop", n, poll)
}

// createTimed is createNoop of a cluster of any profile.
func createTimed(b *testing.B, c *api.Client, name, profile string, n int, poll func(ctx context.Context, actionID string)) (string, time.Duration) {
	b.Helper()
	ctx := context.Background()
	start := time.Now()
	r, err := c.Do(ctx, http.MethodPost, "/v1/clusters", nil, map[string]any{"cluster": map[string]any{"name": name, "profile_id": profile, "desired_capacity": n}}, nil)
	if err != nil {
		b.Fatal(err)
	}
	pctx, stop := context.WithCancel(ctx)
	polled := make(chan struct{})
	go func() {
		defer close(polled)
		if poll != nil {
			poll(pctx, r.ActionID())
		}
	}()
	act, err := c.WaitAction(ctx, r.ActionID(), nil)
	stop()
	<-polled
	if err != nil {
		b.Fatal(err)
	}
	if act.Status != "SUCCEEDED" {
		b.Fatalf("create %d nodes: %s %s", n, act.Status, act.StatusReason)
	}
	return r.ActionID(), time.UnixMicro(int64(act.EndTime * 1e6)).Sub(start)
}

// BenchmarkReads measures the reads a user makes of a large cluster, at
// 1,000, 10,000 and 100,000 grove.noop nodes: GET /v1/actions/{id} of the
// CLUSTER_CREATE action, GET /v1/clusters/{id}, and one 100-node page of
// GET /v1/nodes, the first and the last (reached by marker). The requests
// run interleaved, 50 of each; p50 and p99 are reported in milliseconds.
func BenchmarkReads(b *testing.B) {
	for _, n := range []int{1000, 10000, 100000} {
		b.Run(strconv.Itoa(n), func(b *testing.B) {
			for range b.N {
				b.StopTimer()
				c := bigAgent(b, n)
				actionID, took := createNoop(b, c, "big", n, nil)
				ctx := context.Background()
				var cl struct {
					Cluster api.Cluster `json:"cluster"`
				}
				if _, err := c.Do(ctx, http.MethodGet, "/v1/clusters/big", nil, nil, &cl); err != nil {
					b.Fatal(err)
				}
				// The marker that reaches the last page: the 101st node from
				// the end in the list's default order.
				var last struct {
					Nodes []api.Node `json:"nodes"`
				}
				if _, err := c.Do(ctx, http.MethodGet, "/v1/nodes", url.Values{"cluster_id": {cl.Cluster.ID}, "sort": {"init_at:desc"}, "limit": {"101"}}, nil, &last); err != nil {
					b.Fatal(err)
				}
				marker := last.Nodes[len(last.Nodes)-1].ID
				get := func(path string, q url.Values, check func(body map[string]any) error) func() error {
					return func() error {
						var body map[string]any
						if _, err := c.Do(ctx, http.MethodGet, path, q, nil, &body); err != nil {
							return err
						}
						return check(body)
					}
				}
				page := func(body map[string]any) error {
					if got := len(body["nodes"].([]any)); got != 100 {
						return fmt.Errorf("a page of %d nodes, want 100", got)
					}
					return nil
				}
				// The action's outputs name at most api.MaxInlineIDs nodes and
				// count them all (api.md).
				bounded := func(body map[string]any) error {
					act, _ := body["action"].(map[string]any)
					out, _ := act["outputs"].(map[string]any)
					added, _ := out["nodes_added"].([]any)
					count, counted := out["nodes_added_count"].(float64)
					if len(added) != min(n, api.MaxInlineIDs) || counted != (n > api.MaxInlineIDs) || (counted && int(count) != n) {
						return fmt.Errorf("outputs.nodes_added has %d ids and nodes_added_count %v, want %d ids and the count %d past %d",
							len(added), out["nodes_added_count"], min(n, api.MaxInlineIDs), n, api.MaxInlineIDs)
					}
					return nil
				}
				b.StartTimer()
				p50, p99 := interleaved(b, 50,
					get("/v1/actions/"+actionID, nil, bounded),
					get("/v1/clusters/"+cl.Cluster.ID, nil, func(map[string]any) error { return nil }),
					get("/v1/nodes", url.Values{"limit": {"100"}}, page),
					get("/v1/nodes", url.Values{"limit": {"100"}, "marker": {marker}}, page),
				)
				b.StopTimer()
				for i, name := range []string{"action", "cluster", "nodes-first", "nodes-last"} {
					b.ReportMetric(p50[i]/1000, name+"-p50-ms")
					b.ReportMetric(p99[i]/1000, name+"-p99-ms")
				}
				b.ReportMetric(float64(n)/took.Seconds(), "create-nodes/s")
			}
		})
	}
}

// BenchmarkCreatePolled creates 10,000 grove.noop nodes twice per
// iteration, each on a fresh agent, once alone and once with a client
// polling GET /v1/actions/{id} and GET /v1/clusters/{id} every 100 ms, in
// alternating order so that drift touches both alike. Beside the ratio of
// the total times it reports the median of the iterations' ratios (one
// slow create moves it less) and the ratio of the agent's CPU time over
// the creates (utime + stime, the reads' own work included), which the
// machine's other load moves far less than wall time: on a machine with a
// core to spare the reads run beside the writer, and their CPU is what
// they could take from it.
func BenchmarkCreatePolled(b *testing.B) {
	const n = 10000
	poll := func(c *api.Client) func(ctx context.Context, actionID string) {
		return func(ctx context.Context, actionID string) {
			t := time.NewTicker(100 * time.Millisecond)
			defer t.Stop()
			for {
				select {
				case <-ctx.Done():
					return
				case <-t.C:
				}
				_, _ = c.Do(ctx, http.MethodGet, "/v1/actions/"+actionID, nil, nil, nil)
				_, _ = c.Do(ctx, http.MethodGet, "/v1/clusters/polled", nil, nil, nil)
			}
		}
	}
	var alone, polled, aloneCPU, polledCPU time.Duration
	var ratios []float64
	for i := range b.N {
		b.StopTimer()
		var took [2]time.Duration // alone, polled
		for j := range 2 {
			c, cmd := bigAgentCmd(b, n)
			cpu0, err := procCPU(cmd.Process.Pid)
			if err != nil {
				b.Fatal(err)
			}
			kind := "alone"
			var p func(ctx context.Context, actionID string)
			if (i+j)%2 == 1 {
				kind, p = "polled", poll(c)
			}
			_, t := createNoop(b, c, kind, n, p)
			cpu1, err := procCPU(cmd.Process.Pid)
			if err != nil {
				b.Fatal(err)
			}
			if p == nil {
				alone, aloneCPU, took[0] = alone+t, aloneCPU+cpu1-cpu0, t
			} else {
				polled, polledCPU, took[1] = polled+t, polledCPU+cpu1-cpu0, t
			}
			b.Logf("run %d %s: %.0f nodes/s, agent CPU %.2f s", i+1, kind, n/t.Seconds(), (cpu1 - cpu0).Seconds())
		}
		ratios = append(ratios, took[1].Seconds()/took[0].Seconds())
	}
	slices.Sort(ratios)
	b.ReportMetric(float64(n*b.N)/alone.Seconds(), "alone-nodes/s")
	b.ReportMetric(float64(n*b.N)/polled.Seconds(), "polled-nodes/s")
	b.ReportMetric(polled.Seconds()/alone.Seconds(), "polled/alone")
	b.ReportMetric(ratios[len(ratios)/2], "median-polled/alone")
	b.ReportMetric(polledCPU.Seconds()/aloneCPU.Seconds(), "polled/alone-agent-CPU")
}
