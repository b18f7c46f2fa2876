package bench

import (
	"context"
	"fmt"
	"net/http"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/grovehq/grove/api"
	"github.com/grovehq/grove/plugins/builtin/noop"
)

// BenchmarkPlacementScaleOut is BenchmarkPlace10000Over1000
// (core/orchestrator/placement) end to end: a dev agent whose grove.noop
// driver reports 1,000 hosts, 20 other clusters of 50 nodes each pinned to
// hosts by their own placement policies, and a cluster whose
// grove.policy.placement policy (spread, hard anti-affinity against 10 of
// them, soft against the other 10) places a 10,000-node scale-out. The time
// runs from the request to the action's end: the policy check (hosts,
// every node, the decision) and creating the nodes.
func BenchmarkPlacementScaleOut(b *testing.B) {
	var hosts []string
	for i := range 1000 {
		hosts = append(hosts, fmt.Sprintf("host-%04d:zone=z%d", i, i%3))
	}
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		c, cmd := startAgentEnv(b, noop.HostsEnv+"="+strings.Join(hosts, " "))
		ctx := context.Background()
		do := func(path string, body map[string]any) {
			b.Helper()
			r, err := c.Do(ctx, http.MethodPost, path, nil, body, nil)
			if err != nil {
				b.Fatalf("%s: %v", path, err)
			}
			if id := r.ActionID(); id != "" {
				if act, err := c.WaitAction(ctx, id, nil); err != nil || act.Status != "SUCCEEDED" {
					b.Fatalf("%s: %v %+v", path, err, act)
				}
			}
		}
		policy := func(name string, props map[string]any) {
			do("/v1/policies", map[string]any{"policy": map[string]any{"name": name,
				"spec": map[string]any{"type": "grove.policy.placement", "version": "1.0", "properties": props}}})
		}
		cluster := func(name, policyName string) {
			do("/v1/clusters", map[string]any{"cluster": map[string]any{"name": name, "profile_id": "noop", "desired_capacity": 0}})
			do("/v1/clusters/"+name+"/actions", map[string]any{"policy_attach": map[string]any{"policy_id": policyName}})
		}
		do("/v1/profiles", map[string]any{"profile": map[string]any{"name": "noop",
			"spec": map[string]any{"type": "grove.noop", "version": "1.0", "properties": map[string]any{}}}})
		var hard, soft []any
		for o := range 20 {
			name := fmt.Sprintf("other-%02d", o)
			var pinned []any
			for h := o; h < 1000; h += 20 {
				pinned = append(pinned, fmt.Sprintf("host-%04d", h))
			}
			policy(name, map[string]any{"hosts": pinned, "hard_anti_affinity": []any{name}})
			cluster(name, name)
			do("/v1/clusters/"+name+"/actions", map[string]any{"scale_out": map[string]any{"count": 50}})
			if o < 10 {
				hard = append(hard, name)
			} else {
				soft = append(soft, name)
			}
		}
		policy("web", map[string]any{"placement": "spread", "constraints": `labels.zone != ""`, "hard_anti_affinity": hard, "soft_anti_affinity": soft})
		cluster("web", "web")
		b.StartTimer()
		start := time.Now()
		r, err := c.Do(ctx, http.MethodPost, "/v1/clusters/web/actions", nil, map[string]any{"scale_out": map[string]any{"count": 10000}}, nil)
		if err != nil {
			b.Fatal(err)
		}
		act, err := c.WaitAction(ctx, r.ActionID(), nil)
		if err != nil {
			b.Fatal(err)
		}
		elapsed := time.UnixMicro(int64(act.EndTime * 1e6)).Sub(start)
		b.StopTimer()
		cl, err := c.GetCluster(ctx, "web")
		if err != nil || act.Status != "SUCCEEDED" || len(cl.Nodes) != 10000 {
			b.Fatalf("scale-out: %v %s %s, %d nodes", err, act.Status, act.StatusReason, len(cl.Nodes))
		}
		b.ReportMetric(elapsed.Seconds(), "s/scale-out")
		b.ReportMetric(10000/elapsed.Seconds(), "nodes/s")
		b.ReportMetric(peakRSS(cmd.Process.Pid), "agent-peak-RSS-MiB")
	}
}

// startAgentEnv is startAgent with variables added to the agent's
// environment (the test's, restored after it).
func startAgentEnv(b *testing.B, env ...string) (*api.Client, *exec.Cmd) {
	b.Helper()
	for _, kv := range env {
		k, v, _ := strings.Cut(kv, "=")
		b.Setenv(k, v)
	}
	return startAgent(b)
}
