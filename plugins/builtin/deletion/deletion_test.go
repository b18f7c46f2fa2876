package deletion

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/grovehq/grove/plugins/sdk"
)

func cluster() sdk.Cluster {
	return sdk.Cluster{DesiredCapacity: 4, MinSize: 0, MaxSize: -1, Nodes: []sdk.ClusterNode{
		{ID: "a", Status: "ACTIVE", CreatedAt: 10, ProfileCreatedAt: 5},
		{ID: "b", Status: "ACTIVE", CreatedAt: 20, ProfileCreatedAt: 1},
		{ID: "c", Status: "ACTIVE", CreatedAt: 30, ProfileCreatedAt: 9},
		{ID: "d", Status: "ERROR", CreatedAt: 40, ProfileCreatedAt: 9},
	}}
}

func props(criteria string) map[string]any {
	return map[string]any{"criteria": criteria, "destroy_after_deletion": true, "grace_period": int64(0), "reduce_desired_capacity": true}
}

func TestCheck(t *testing.T) {
	cases := []struct {
		name     string
		criteria string
		action   sdk.Action
		want     []string
		refuse   bool
	}{
		{"scale in oldest", "OLDEST_FIRST", sdk.Action{Name: "CLUSTER_SCALE_IN", Inputs: map[string]any{"count": 2.0}}, []string{"d", "a"}, false},
		{"scale in youngest", "YOUNGEST_FIRST", sdk.Action{Name: "CLUSTER_SCALE_IN", Inputs: map[string]any{"count": 2.0}}, []string{"d", "c"}, false},
		{"scale in profile age", "OLDEST_PROFILE_FIRST", sdk.Action{Name: "CLUSTER_SCALE_IN", Inputs: map[string]any{"count": 2.0}}, []string{"d", "b"}, false},
		{"scale in default one", "OLDEST_FIRST", sdk.Action{Name: "CLUSTER_SCALE_IN", Inputs: map[string]any{}}, []string{"d"}, false},
		{"scale in clamps", "OLDEST_FIRST", sdk.Action{Name: "CLUSTER_SCALE_IN", Inputs: map[string]any{"count": 9.0}}, []string{"d", "a", "b", "c"}, false},
		{"explicit candidates", "OLDEST_FIRST", sdk.Action{Name: "CLUSTER_DEL_NODES", Inputs: map[string]any{"candidates": []any{"c"}}}, []string{"c"}, false},
		{"node delete", "OLDEST_FIRST", sdk.Action{Name: "NODE_DELETE", Target: "b", Inputs: map[string]any{}}, []string{"b"}, false},
		{"resize shrink", "OLDEST_FIRST", sdk.Action{Name: "CLUSTER_RESIZE", Inputs: map[string]any{"adjustment_type": "EXACT_CAPACITY", "number": 1.0, "strict": true}}, []string{"d", "a", "b"}, false},
		{"resize grow decides nothing", "OLDEST_FIRST", sdk.Action{Name: "CLUSTER_RESIZE", Inputs: map[string]any{"adjustment_type": "CHANGE_IN_CAPACITY", "number": 2.0}}, nil, false},
		{"resize invalid", "OLDEST_FIRST", sdk.Action{Name: "CLUSTER_RESIZE", Inputs: map[string]any{"adjustment_type": "EXACT_CAPACITY", "number": 1.0, "min_size": 2.0, "strict": true}}, nil, true},
		{"count from scaling policy", "OLDEST_FIRST", sdk.Action{Name: "CLUSTER_SCALE_IN", Inputs: map[string]any{}, Data: map[string]any{"deletion": map[string]any{"count": 3.0}}}, []string{"d", "a", "b"}, false},
	}
	for _, c := range cases {
		res, err := policy{}.Check(context.Background(), sdk.CheckRequest{Policy: sdk.Spec{Properties: props(c.criteria)}, Phase: "BEFORE", Action: c.action, Cluster: cluster()})
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if c.refuse {
			if res.Refuse == "" {
				t.Errorf("%s: want a refusal", c.name)
			}
			continue
		}
		if c.want == nil {
			if res.Data != nil {
				t.Errorf("%s: want no decision, got %v", c.name, res.Data)
			}
			continue
		}
		d := res.Data["deletion"].(map[string]any)
		if got := d["candidates"].([]string); !slices.Equal(got, c.want) {
			t.Errorf("%s: candidates %v, want %v", c.name, got, c.want)
		}
		if d["count"] != len(c.want) || d["destroy_after_deletion"] != true || d["reduce_desired_capacity"] != true {
			t.Errorf("%s: flags %v", c.name, d)
		}
	}
}

// TestCheckNamesWhatItCannotRead: inputs, data and properties of the wrong
// type are refusals or errors naming them, not values silently dropped.
func TestCheckNamesWhatItCannotRead(t *testing.T) {
	cases := []struct {
		name   string
		props  map[string]any
		action sdk.Action
		refuse string
		err    string
	}{
		{"a candidate that is not an id", props("OLDEST_FIRST"), sdk.Action{Name: "CLUSTER_DEL_NODES", Inputs: map[string]any{"candidates": []any{"c", 3.0}}},
			"The inputs of action CLUSTER_DEL_NODES cannot be read: inputs.candidates must be a string, got a number.", ""},
		{"a scale-in count that is not a number", props("OLDEST_FIRST"), sdk.Action{Name: "CLUSTER_SCALE_IN", Inputs: map[string]any{"count": "x"}},
			"The inputs of action CLUSTER_SCALE_IN cannot be read: inputs.count must be an integer, got a string.", ""},
		{"a resize number that is not a number", props("OLDEST_FIRST"), sdk.Action{Name: "CLUSTER_RESIZE", Inputs: map[string]any{"adjustment_type": "EXACT_CAPACITY", "number": "x"}},
			`The inputs of action CLUSTER_RESIZE cannot be read: inputs.number must be a number, got the string "x".`, ""},
		{"an earlier decision's count", props("OLDEST_FIRST"), sdk.Action{Name: "CLUSTER_SCALE_IN", Data: map[string]any{"deletion": map[string]any{"count": true}}},
			"The deletion decided by an earlier policy cannot be read: data.deletion.count must be an integer, got a boolean.", ""},
		{"a grace period that is not a number", map[string]any{"criteria": "OLDEST_FIRST", "destroy_after_deletion": true, "grace_period": "soon", "reduce_desired_capacity": true},
			sdk.Action{Name: "CLUSTER_SCALE_IN", Inputs: map[string]any{}}, "", "properties.grace_period must be an integer, got a string"},
		{"criteria that are not a string", map[string]any{"criteria": 1.0, "destroy_after_deletion": true, "grace_period": int64(0), "reduce_desired_capacity": true},
			sdk.Action{Name: "CLUSTER_SCALE_IN", Inputs: map[string]any{}}, "", "properties.criteria must be a string, got a number"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			res, err := policy{}.Check(context.Background(), sdk.CheckRequest{Policy: sdk.Spec{ID: "p1", Properties: c.props}, Phase: "BEFORE", Action: c.action, Cluster: cluster()})
			if c.err != "" {
				if err == nil || !strings.Contains(err.Error(), c.err) {
					t.Fatalf("error %v, result %+v; want an error containing %q", err, res, c.err)
				}
				return
			}
			if err != nil || res.Refuse != c.refuse {
				t.Fatalf("refusal %q, error %v\nwant refusal %q", res.Refuse, err, c.refuse)
			}
		})
	}
}

// TestValidateNamesTheProperty: a property Validate cannot read is a
// diagnostic naming it; a Zaqar hook is refused (Grove has no Zaqar), a
// webhook needs an http or https URL.
func TestValidateNamesTheProperty(t *testing.T) {
	validate := Type().Validate
	ds := validate(context.Background(), sdk.Spec{Properties: map[string]any{"hooks": map[string]any{"params": "x"}}})
	if len(ds) != 1 || ds[0].Field != "properties.hooks.params" || ds[0].Message != "must be an object, got a string." {
		t.Errorf("diagnostics %v", ds)
	}
	ds = validate(context.Background(), sdk.Spec{Properties: map[string]any{"hooks": map[string]any{"params": map[string]any{"queue": "q"}}}})
	if len(ds) != 1 || ds[0].Field != "properties.hooks.type" || !strings.Contains(ds[0].Message, "webhook") {
		t.Errorf("a zaqar hook: diagnostics %v", ds)
	}
	hook := func(u string) sdk.Spec {
		return sdk.Spec{Properties: map[string]any{"hooks": map[string]any{"type": "webhook", "params": map[string]any{"url": u}}}}
	}
	if ds := validate(context.Background(), hook("ftp://x/")); len(ds) != 1 || ds[0].Field != "properties.hooks.params.url" {
		t.Errorf("a webhook to ftp: diagnostics %v", ds)
	}
	if ds := validate(context.Background(), hook("http://127.0.0.1:9/hook")); ds != nil {
		t.Errorf("a webhook: diagnostics %v", ds)
	}
	if ds := validate(context.Background(), sdk.Spec{Properties: props("RANDOM")}); ds != nil {
		t.Errorf("diagnostics %v", ds)
	}
}

// TestCheckFollowsPlacementPlan: with a placement policy's plan in
// data.deletion, the victims are chosen region by region (regions first,
// as Senlin) or zone by zone with the criterion, and the plan stays in
// data.deletion.
func TestCheckFollowsPlacementPlan(t *testing.T) {
	c := cluster()
	where := []map[string]any{{"zone": "z1", "region_name": "r2"}, {"zone": "z1", "region_name": "r1"}, {"zone": "z2", "region_name": "r1"}, {"zone": "z2", "region_name": "r1"}}
	for i := range c.Nodes {
		c.Nodes[i].Status = "ACTIVE"
		c.Nodes[i].Data = map[string]any{"placement": where[i]}
	}
	cases := []struct {
		name     string
		decided  map[string]any
		want     []string
		planKeys []string
	}{
		{"one from each zone, oldest first", map[string]any{"count": 2, "zones": map[string]any{"z1": 1, "z2": 1}}, []string{"a", "c"}, []string{"zones"}},
		{"two from r1, oldest first", map[string]any{"count": 2, "regions": map[string]any{"r1": 2}}, []string{"b", "c"}, []string{"regions"}},
		{"regions before zones", map[string]any{"count": 1, "regions": map[string]any{"r2": 1}, "zones": map[string]any{"z2": 1}}, []string{"a"}, []string{"regions", "zones"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			req := sdk.CheckRequest{Phase: "BEFORE", Policy: sdk.Spec{Properties: props("OLDEST_FIRST")}, Cluster: c,
				Action: sdk.Action{Name: "CLUSTER_SCALE_IN", Data: map[string]any{"deletion": tc.decided}}}
			res, err := Type().Policy.Check(context.Background(), req)
			if err != nil || res.Refuse != "" {
				t.Fatalf("check: %+v %v", res, err)
			}
			del := res.Data["deletion"].(map[string]any)
			if got := del["candidates"].([]string); !slices.Equal(got, tc.want) {
				t.Errorf("candidates %v, want %v", got, tc.want)
			}
			for _, k := range tc.planKeys {
				if del[k] == nil {
					t.Errorf("data.deletion lost the plan's %s: %v", k, del)
				}
			}
		})
	}
}
