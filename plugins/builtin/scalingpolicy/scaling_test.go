package scalingpolicy

import (
	"context"
	"strings"
	"testing"

	"github.com/grovehq/grove/plugins/sdk"
)

func TestCheck(t *testing.T) {
	nodes := make([]sdk.ClusterNode, 10)
	cl := sdk.Cluster{DesiredCapacity: 10, MinSize: 2, MaxSize: 12, Nodes: nodes}
	adj := func(typ string, number float64, best bool, cooldown int64) map[string]any {
		return map[string]any{"type": typ, "number": number, "min_step": int64(1), "best_effort": best, "cooldown": cooldown}
	}
	cases := []struct {
		name   string
		event  string
		adj    map[string]any
		inputs map[string]any
		lastOp int64
		key    string
		count  int
		refuse string
	}{
		{"change in capacity", "CLUSTER_SCALE_OUT", adj("CHANGE_IN_CAPACITY", 2, false, 0), nil, 0, "creation", 2, ""},
		{"inputs win", "CLUSTER_SCALE_OUT", adj("CHANGE_IN_CAPACITY", 2, false, 0), map[string]any{"count": 1.0}, 0, "creation", 1, ""},
		{"percentage", "CLUSTER_SCALE_IN", adj("CHANGE_IN_PERCENTAGE", 30, false, 0), nil, 0, "deletion", 3, ""},
		{"exact out", "CLUSTER_SCALE_OUT", adj("EXACT_CAPACITY", 12, false, 0), nil, 0, "creation", 2, ""},
		{"too big strict", "CLUSTER_SCALE_OUT", adj("CHANGE_IN_CAPACITY", 5, false, 0), nil, 0, "", 0, "greater than the cluster's max_size (12)"},
		{"best effort clamps", "CLUSTER_SCALE_OUT", adj("CHANGE_IN_CAPACITY", 5, true, 0), nil, 0, "creation", 2, ""},
		{"best effort in", "CLUSTER_SCALE_IN", adj("CHANGE_IN_CAPACITY", 20, true, 0), nil, 0, "deletion", 8, ""},
		{"cooldown", "CLUSTER_SCALE_OUT", adj("CHANGE_IN_CAPACITY", 1, false, 60), nil, 1_000_000_000 - 30_000_000, "", 0, "cooldown is still in progress"},
		{"cooldown over", "CLUSTER_SCALE_OUT", adj("CHANGE_IN_CAPACITY", 1, false, 60), nil, 1_000_000_000 - 61_000_000, "creation", 1, ""},
		{"exact in nothing to do", "CLUSTER_SCALE_IN", adj("EXACT_CAPACITY", 10, false, 0), nil, 0, "", 0, "Invalid count (0)"},
	}
	for _, c := range cases {
		req := sdk.CheckRequest{Policy: sdk.Spec{ID: "p1", Properties: map[string]any{"event": c.event, "adjustment": c.adj}}, Phase: "BEFORE",
			Action: sdk.Action{Name: c.event, Inputs: c.inputs}, Cluster: cl, LastOp: c.lastOp, Now: 1_000_000_000}
		res, err := policy{}.Check(context.Background(), req)
		if err != nil {
			t.Fatal(err)
		}
		if c.refuse != "" {
			if !strings.Contains(res.Refuse, c.refuse) {
				t.Errorf("%s: refusal %q, want %q", c.name, res.Refuse, c.refuse)
			}
			continue
		}
		if res.Refuse != "" {
			t.Errorf("%s: refused: %s", c.name, res.Refuse)
			continue
		}
		if got := res.Data[c.key].(map[string]any)["count"]; got != c.count {
			t.Errorf("%s: %s count %v, want %d", c.name, c.key, got, c.count)
		}
	}
	res, _ := policy{}.Check(context.Background(), sdk.CheckRequest{Policy: sdk.Spec{Properties: map[string]any{"event": "CLUSTER_SCALE_IN"}}, Phase: "BEFORE",
		Action: sdk.Action{Name: "CLUSTER_SCALE_OUT"}, Cluster: cl})
	if res.Refuse != "" || res.Data != nil {
		t.Errorf("a policy for scale-in leaves scale-out alone: %+v", res)
	}
}

// TestCheckNamesWhatItCannotRead: a property or input of the wrong type is
// an error or refusal naming it, not a zero that sizes the action.
func TestCheckNamesWhatItCannotRead(t *testing.T) {
	cl := sdk.Cluster{DesiredCapacity: 2, MinSize: 0, MaxSize: -1, Nodes: make([]sdk.ClusterNode, 2)}
	adj := map[string]any{"type": "CHANGE_IN_CAPACITY", "number": float64(1), "min_step": int64(1), "best_effort": false, "cooldown": int64(0)}
	with := func(k string, v any) map[string]any {
		m := map[string]any{}
		for k, v := range adj {
			m[k] = v
		}
		m[k] = v
		return m
	}
	cases := []struct {
		name   string
		adj    map[string]any
		inputs map[string]any
		err    string
		refuse string
	}{
		{"cooldown", with("cooldown", "soon"), nil, "properties.adjustment.cooldown must be an integer, got a string", ""},
		{"number", with("number", "many"), nil, "properties.adjustment.number must be a number, got a string", ""},
		{"min_step", with("min_step", 1.5), nil, "properties.adjustment.min_step must be an integer, got the number 1.5", ""},
		{"count", adj, map[string]any{"count": "two"}, "", "Invalid count (two) for action 'CLUSTER_SCALE_OUT': inputs.count must be an integer, got a string."},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			req := sdk.CheckRequest{Policy: sdk.Spec{ID: "p1", Properties: map[string]any{"event": "CLUSTER_SCALE_OUT", "adjustment": c.adj}}, Phase: "BEFORE",
				Action: sdk.Action{Name: "CLUSTER_SCALE_OUT", Inputs: c.inputs}, Cluster: cl, Now: 1_000_000_000}
			res, err := policy{}.Check(context.Background(), req)
			if c.err != "" {
				if err == nil || !strings.Contains(err.Error(), c.err) {
					t.Fatalf("error %v, result %+v; want an error containing %q", err, res, c.err)
				}
				return
			}
			if err != nil || res.Refuse != c.refuse {
				t.Fatalf("refusal %q, error %v; want refusal %q", res.Refuse, err, c.refuse)
			}
		})
	}
}
