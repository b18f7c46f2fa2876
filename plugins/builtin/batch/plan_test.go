package batch_test

import (
	"context"
	"fmt"
	"reflect"
	"testing"

	"github.com/grovehq/grove/plugins/builtin/batch"
	"github.com/grovehq/grove/plugins/sdk"
)

// TestSize holds Senlin's batch size rule.
func TestSize(t *testing.T) {
	cases := []struct {
		name                     string
		total, minIn, max, wantN int
	}{
		{"more nodes than min_in_service: all but min_in_service", 5, 1, -1, 4},
		{"min_in_service 3 of 5 leaves batches of 2", 5, 3, -1, 2},
		{"as many nodes as min_in_service: half, rounded up", 3, 3, -1, 2},
		{"fewer nodes than min_in_service: half, rounded up", 3, 5, -1, 2},
		{"one node under min_in_service 1: one", 1, 1, -1, 1},
		{"max_batch_size caps", 10, 1, 3, 3},
		{"max_batch_size equal to the size caps to itself", 4, 1, 3, 3},
		{"max_batch_size above the size does not matter", 4, 2, 5, 2},
		{"min_in_service 0 takes all", 4, 0, -1, 4},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := batch.Size(c.total, c.minIn, c.max); got != c.wantN {
				t.Errorf("Size(%d, %d, %d) = %d, want %d", c.total, c.minIn, c.max, got, c.wantN)
			}
		})
	}
}

func nodes(spec ...string) []batch.Node {
	var out []batch.Node
	for i, s := range spec {
		n := batch.Node{ID: fmt.Sprintf("n%d", i+1), Status: "ACTIVE", Created: true}
		switch s {
		case "error":
			n.Status = "ERROR"
		case "warning":
			n.Status = "WARNING"
		case "tainted":
			n.Tainted = true
		case "uncreated":
			n.Status, n.Created = "INIT", false
		}
		out = append(out, n)
	}
	return out
}

// TestPlan holds Senlin's order (nodes in error, warning or tainted, then
// nodes never created, then the rest) and the cut into batches.
func TestPlan(t *testing.T) {
	cases := []struct {
		name       string
		nodes      []batch.Node
		minIn, max int
		want       [][]string
	}{
		{"no node: an empty plan", nil, 1, -1, [][]string{}},
		{"three active, min_in_service 1: two then one", nodes("ok", "ok", "ok"), 1, -1, [][]string{{"n1", "n2"}, {"n3"}}},
		{"max_batch_size 1: one at a time in the cluster's order", nodes("ok", "ok", "ok"), 1, 1, [][]string{{"n1"}, {"n2"}, {"n3"}}},
		{"bad nodes first, then uncreated, then the rest", nodes("ok", "uncreated", "error", "ok", "tainted", "warning"), 6, -1,
			[][]string{{"n3", "n5", "n6"}, {"n2", "n1", "n4"}}},
		{"min_in_service 2 of 4 with one in error", nodes("ok", "ok", "ok", "error"), 2, -1, [][]string{{"n4", "n1"}, {"n2", "n3"}}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := batch.Plan(c.nodes, c.minIn, c.max); !reflect.DeepEqual(got, c.want) {
				t.Errorf("Plan = %v, want %v", got, c.want)
			}
		})
	}
}

// TestCheck: the policy writes data.update for a cluster update, reads the
// snapshot's statuses, and refuses a max_batch_size of 0 at validation.
func TestCheck(t *testing.T) {
	pt := batch.Type()
	if pt.Type != "senlin.policy.batch" || pt.Priority != 200 || !pt.Singleton || !reflect.DeepEqual(pt.Versions, []string{"1.0"}) ||
		!reflect.DeepEqual(pt.Targets, []sdk.Target{{Phase: "BEFORE", Action: "CLUSTER_UPDATE"}}) {
		t.Errorf("registration %+v", pt)
	}
	props, diags := pt.Schema.Validate("properties", map[string]any{})
	if len(diags) > 0 || props["min_in_service"] != int64(1) || props["max_batch_size"] != int64(-1) || props["pause_time"] != int64(60) {
		t.Errorf("defaults %v %v", props, diags)
	}
	spec := sdk.Spec{ID: "b", Properties: map[string]any{"min_in_service": 1, "max_batch_size": -1, "pause_time": 7}}
	req := sdk.CheckRequest{Phase: "BEFORE", Policy: spec, Action: sdk.Action{Name: "CLUSTER_UPDATE"},
		Cluster: sdk.Cluster{Nodes: []sdk.ClusterNode{{ID: "a", Status: "ACTIVE", CreatedAt: 1}, {ID: "b", Status: "ERROR", CreatedAt: 1}, {ID: "c", Status: "ACTIVE", CreatedAt: 1}}}}
	res, err := pt.Policy.Check(context.Background(), req)
	if err != nil || res.Refuse != "" {
		t.Fatalf("check: %+v %v", res, err)
	}
	want := sdk.UpdateData{PauseTime: 7, Plan: [][]string{{"b", "a"}, {"c"}}}
	if got := res.Data[sdk.DataUpdate]; !reflect.DeepEqual(got, want) {
		t.Errorf("data.update = %#v, want %#v", got, want)
	}
	bad := sdk.Spec{Properties: map[string]any{"min_in_service": 1, "max_batch_size": 0, "pause_time": 7}}
	if d := pt.Validate(context.Background(), bad); len(d) != 1 || d[0].Field != "properties.max_batch_size" {
		t.Errorf("max_batch_size 0: %v", d)
	}
	if _, d := pt.Schema.Validate("properties", map[string]any{"max_batch_size": -2}); len(d) == 0 {
		t.Errorf("max_batch_size -2 passed the schema")
	}
}
