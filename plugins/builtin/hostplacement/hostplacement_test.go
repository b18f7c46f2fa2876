package hostplacement

import (
	"context"
	"reflect"
	"strings"
	"testing"

	"github.com/grovehq/grove/plugins/sdk"
)

func hosts(names ...string) *sdk.HostSnapshot {
	s := &sdk.HostSnapshot{}
	for _, n := range names {
		s.Hosts = append(s.Hosts, sdk.PlacementHost{Name: n, State: "up", Availability: "active"})
	}
	return s
}

func node(id, host, status string) sdk.ClusterNode {
	return sdk.ClusterNode{ID: id, Name: "n-" + id, Status: status, Data: map[string]any{"host": host}}
}

// TestCheck: what the policy writes for each action it checks.
func TestCheck(t *testing.T) {
	spec := func(props map[string]any) sdk.Spec {
		return sdk.Spec{ID: "p1", Type: TypeName, Version: "1.0", Properties: props}
	}
	web := sdk.Cluster{Name: "web", DesiredCapacity: 3, MinSize: 0, MaxSize: 10,
		Nodes: []sdk.ClusterNode{node("a1", "a", "ACTIVE"), node("a2", "a", "ACTIVE"), node("b1", "b", "ERROR")}}
	for _, tc := range []struct {
		name   string
		props  map[string]any
		action sdk.Action
		hosts  *sdk.HostSnapshot
		want   map[string]any
		refuse string
	}{
		{"scale-out places each new node", nil, sdk.Action{Name: "CLUSTER_SCALE_OUT", Inputs: map[string]any{"count": 2}}, hosts("a", "b", "c"),
			map[string]any{"placement": map[string]any{"count": 2, "placements": []any{map[string]any{"host": "c"}, map[string]any{"host": "b"}}}}, ""},
		{"an earlier policy's placement entries are kept", nil, sdk.Action{Name: "NODE_CREATE",
			Data: map[string]any{"placement": map[string]any{"placements": []any{map[string]any{"zone": "z1"}}}}}, hosts("a", "b", "c"),
			map[string]any{"placement": map[string]any{"count": 1, "placements": []any{map[string]any{"zone": "z1", "host": "c"}}}}, ""},
		{"scale-in names victims by node id, worst placed first", map[string]any{"hosts": []any{"a", "b"}}, sdk.Action{Name: "CLUSTER_SCALE_IN", Inputs: map[string]any{"count": 2},
			Data: map[string]any{"deletion": map[string]any{"grace_period": 5}}}, hosts("a", "b"),
			map[string]any{"deletion": map[string]any{"grace_period": 5, "count": 2, "candidates": []string{"a2", "b1"}}}, ""},
		{"a shrinking resize removes", nil, sdk.Action{Name: "CLUSTER_RESIZE", Inputs: map[string]any{"adjustment_type": "EXACT_CAPACITY", "number": 2}}, hosts("a", "b"),
			map[string]any{"deletion": map[string]any{"count": 1, "candidates": []string{"a2"}}}, ""},
		{"placement none leaves the choice to the driver", map[string]any{"placement": "none"}, sdk.Action{Name: "CLUSTER_SCALE_OUT"}, hosts("a"), nil, ""},
		{"no candidate refuses with the reasons", map[string]any{"hard_affinity": []any{"db"}}, sdk.Action{Name: "CLUSTER_SCALE_OUT"}, hosts("a"), nil,
			"The placement policy found no place: no host can take a new node: a: hard affinity: no running node of db."},
		{"hosts the engine could not read refuse", nil, sdk.Action{Name: "CLUSTER_SCALE_OUT"}, &sdk.HostSnapshot{Err: "the driver has no hosts"}, nil,
			"The hosts cannot be read: the driver has no hosts."},
		{"no host snapshot refuses", nil, sdk.Action{Name: "CLUSTER_SCALE_OUT"}, nil, nil, "The engine sent no hosts"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			props := map[string]any{"placement": "nodes order", "hosts": []any{}, "constraints": ""}
			for k, v := range tc.props {
				props[k] = v
			}
			res, err := policy{}.Check(context.Background(), sdk.CheckRequest{Policy: spec(props), Phase: "BEFORE", Action: tc.action, Cluster: web, Hosts: tc.hosts})
			if err != nil {
				t.Fatal(err)
			}
			if !strings.HasPrefix(res.Refuse, tc.refuse) || (tc.refuse == "") != (res.Refuse == "") {
				t.Fatalf("refuse %q, want %q", res.Refuse, tc.refuse)
			}
			if tc.refuse == "" && !reflect.DeepEqual(res.Data, tc.want) {
				t.Errorf("data %#v\nwant %#v", res.Data, tc.want)
			}
		})
	}
}

// TestValidate: bad properties are diagnostics naming the field.
func TestValidate(t *testing.T) {
	v := Type().Validate
	for props, want := range map[string]string{
		"placement":          `properties.placement: "best" is not a placement policy`,
		"constraints":        "properties.constraints: the expression does not compile",
		"hard_anti_affinity": `properties.hard_anti_affinity[0]: the cluster "db" is also in the affinity list`,
	} {
		p := map[string]any{"placement": "nodes order", "constraints": "", "hard_affinity": []any{}, "hard_anti_affinity": []any{}}
		switch props {
		case "placement":
			p["placement"] = "best"
		case "constraints":
			p["constraints"] = "labels.zone =="
		case "hard_anti_affinity":
			p["hard_affinity"], p["hard_anti_affinity"] = []any{"db"}, []any{"db"}
		}
		d := v(context.Background(), sdk.Spec{Type: TypeName, Version: "1.0", Properties: p})
		if len(d) != 1 || !strings.Contains(d[0].Field+": "+d[0].Message, want) {
			t.Errorf("%s: %+v, want %q", props, d, want)
		}
	}
}
