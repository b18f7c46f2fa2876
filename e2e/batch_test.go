package e2e

import (
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/grovehq/grove/api"
)

// noopProfileWith creates a grove.noop profile with the given properties.
func noopProfileWith(a *agentProc, name string, props map[string]any) {
	a.t.Helper()
	a.mustDo(http.MethodPost, "/v1/profiles", map[string]any{"profile": map[string]any{"name": name,
		"spec": map[string]any{"type": "grove.noop", "version": "1.0", "properties": props}}}, nil)
}

// TestBatchPolicy runs senlin.policy.batch through the API and the CLI as
// docs/policies.md shows it: a cluster of four whose grove.update says one
// node at a time is updated in the policy's two batches of two
// (min_in_service 2), with the policy's pause between them, and the
// action keeps the plan.
func TestBatchPolicy(t *testing.T) {
	a := startAgent(t, t.TempDir())
	noopProfileWith(a, "v1", map[string]any{"label": "v1"})
	noopProfileWith(a, "v2", map[string]any{"label": "v2"})
	a.waitAction(a.createCluster("web", "v1", 4, map[string]any{"config": map[string]any{
		"grove.update": map[string]any{"parallelism": 1, "monitor": "0s"}}}))
	spec := filepath.Join(t.TempDir(), "batches.yaml")
	if err := os.WriteFile(spec, []byte("type: senlin.policy.batch\nversion: 1.0\nproperties:\n  min_in_service: 2\n  pause_time: 1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{{"policy", "create", "-spec-file", spec, "batches"}, {"cluster", "policy-attach", "-wait", "web", "batches"}} {
		if out, errOut, code := a.grove(args...); code != 0 {
			t.Fatalf("grove %v: %d\n%s\n%s", args, code, out, errOut)
		}
	}
	if b := a.binding("web", "batches"); b.Priority != 200 {
		t.Errorf("binding priority %d, want Senlin's 200", b.Priority)
	}
	nodes := a.nodes(a.cluster("web").ID)
	start := time.Now()
	r := a.mustDo(http.MethodPatch, "/v1/clusters/web", map[string]any{"cluster": map[string]any{"profile_id": "v2"}}, nil)
	act := a.waitAction(r.ActionID())
	took := time.Since(start)
	if act.Status != "SUCCEEDED" {
		t.Fatalf("the update: %s %s", act.Status, act.StatusReason)
	}
	var plan []any
	for _, set := range [][]api.Node{nodes[:2], nodes[2:]} {
		plan = append(plan, []any{set[0].ID, set[1].ID})
	}
	bp, _ := act.Data["batch_plan"].(map[string]any)
	if !reflect.DeepEqual(bp["plan"], plan) || bp["pause_time"] != float64(1) {
		t.Errorf("data.batch_plan %v, want the plan %v with pause_time 1", bp, plan)
	}
	u, _ := act.Data["update"].(map[string]any)
	if u["status"] != "completed" || u["batches"] != float64(2) || u["updated"] != float64(4) {
		t.Errorf("progress %v, want completed in 2 batches, 4 updated", u)
	}
	for i := 1; i <= 2; i++ {
		rec, _ := act.Data[fmt.Sprintf("update.batch%d", i)].(map[string]any)
		if got, _ := rec["nodes"].([]any); !reflect.DeepEqual(got, plan[i-1]) {
			t.Errorf("batch %d updated %v, want %v", i, got, plan[i-1])
		}
	}
	// The policy's pause follows each batch (grove.update's delay is 0).
	if took < 2*time.Second {
		t.Errorf("the update took %v; two batches with pause_time 1 take at least 2s", took)
	}
	for _, n := range a.nodes(a.cluster("web").ID) {
		if n.ProfileName != "v2" || n.Status != "ACTIVE" {
			t.Errorf("node %s: profile %s, %s", n.Name, n.ProfileName, n.Status)
		}
	}
	// Without a way to batch, a max_batch_size of 0 is refused, naming it.
	if _, err := a.do(http.MethodPost, "/v1/policies", map[string]any{"policy": map[string]any{"name": "zero",
		"spec": map[string]any{"type": "senlin.policy.batch", "version": "1.0", "properties": map[string]any{"max_batch_size": 0}}}}); err == nil ||
		!strings.Contains(err.Error(), "max_batch_size") || !strings.Contains(err.Error(), "-1") {
		t.Errorf("max_batch_size 0: %v", err)
	}
}
