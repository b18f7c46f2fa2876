package placement

import (
	"context"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/grovehq/grove/plugins/sdk"
)

// TestTypes holds both registrations to Senlin's: names, versions,
// priorities, singletons, the BEFORE targets and the properties with
// their defaults.
func TestTypes(t *testing.T) {
	want := []sdk.Target{{Phase: "BEFORE", Action: "CLUSTER_SCALE_OUT"}, {Phase: "BEFORE", Action: "CLUSTER_SCALE_IN"},
		{Phase: "BEFORE", Action: "CLUSTER_RESIZE"}, {Phase: "BEFORE", Action: "NODE_CREATE"}}
	for _, c := range []struct {
		pt       sdk.PolicyType
		name     string
		priority int
		list     string
		keys     []string
	}{
		{ZoneType(), "senlin.policy.zone_placement", 300, "zones", []string{"name", "weight"}},
		{RegionType(), "senlin.policy.region_placement", 200, "regions", []string{"cap", "name", "weight"}},
	} {
		pt := c.pt
		if pt.Type != c.name || !reflect.DeepEqual(pt.Versions, []string{"1.0"}) || pt.Priority != c.priority || !pt.Singleton || !reflect.DeepEqual(pt.Targets, want) {
			t.Errorf("%s: registration %s %v priority %d singleton %v targets %v", c.name, pt.Type, pt.Versions, pt.Priority, pt.Singleton, pt.Targets)
		}
		if len(pt.Schema) != 1 || pt.Schema[c.list] == nil {
			t.Fatalf("%s: properties %v", c.name, pt.Schema)
		}
		var keys []string
		for k := range pt.Schema[c.list].Elem.Schema {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		if !reflect.DeepEqual(keys, c.keys) {
			t.Errorf("%s: entry keys %v, want %v", c.name, keys, c.keys)
		}
		props, diags := pt.Schema.Validate("properties", map[string]any{c.list: []any{map[string]any{"name": "a"}}})
		entry := props[c.list].([]any)[0].(map[string]any)
		if len(diags) > 0 || entry["weight"] != int64(100) || (c.list == "regions" && entry["cap"] != int64(-1)) {
			t.Errorf("%s: defaults %v %v", c.name, props, diags)
		}
		spec := func(names ...string) sdk.Spec {
			var l []any
			for _, n := range names {
				l = append(l, map[string]any{"name": n, "weight": 100})
			}
			return sdk.Spec{Properties: map[string]any{c.list: l}}
		}
		if d := pt.Validate(context.Background(), spec("a", "a")); len(d) != 1 || d[0].Field != "properties."+c.list+"[1].name" {
			t.Errorf("%s: a name twice: %v", c.name, d)
		}
		if d := pt.Validate(context.Background(), spec()); len(d) != 1 || !strings.Contains(d[0].Message, "at least one") {
			t.Errorf("%s: no entry: %v", c.name, d)
		}
	}
}

// zones is a zone placement policy over a cloud with the zones given.
func zones(known ...string) sdk.PolicyType {
	return zoneType(func(context.Context, sdk.Cluster) ([]string, error) { return known, nil })
}

func novaCluster(nodes ...sdk.ClusterNode) sdk.Cluster {
	return sdk.Cluster{Name: "web", ProfileType: "os.nova.server-1.0", Profile: sdk.Spec{Type: "os.nova.server", Properties: map[string]any{}},
		DesiredCapacity: len(nodes), MaxSize: -1, Nodes: nodes}
}

func inZone(id, zone string, created int64) sdk.ClusterNode {
	return sdk.ClusterNode{ID: id, Status: "ACTIVE", CreatedAt: created, Data: map[string]any{"placement": map[string]any{"zone": zone}}}
}

var spec = sdk.Spec{ID: "zp", Properties: map[string]any{"zones": []any{
	map[string]any{"name": "az1", "weight": 200}, map[string]any{"name": "az2", "weight": 100}, map[string]any{"name": "gone", "weight": 100}}}}

// TestZoneCheck: a scale-out's plan goes to data.creation and one zone per
// new node to data.placement, keeping what an earlier policy put in each
// entry; a scale-in's goes to data.deletion with each zone's victims;
// zones the cloud lacks are left out, and none at all, an infeasible plan
// or another profile type is refused with Senlin's words.
func TestZoneCheck(t *testing.T) {
	pt := zones("az1", "az2")
	ctx := context.Background()
	c := novaCluster(inZone("n1", "az2", 1))
	out := sdk.CheckRequest{Phase: "BEFORE", Policy: spec, Cluster: c, Action: sdk.Action{Name: "CLUSTER_SCALE_OUT",
		Data: map[string]any{"placement": map[string]any{"count": 3, "placements": []any{map[string]any{"servergroup": "g"}}}}}}
	res, err := pt.Policy.Check(ctx, withCount(out, 3))
	if err != nil || res.Refuse != "" {
		t.Fatalf("scale-out: %+v %v", res, err)
	}
	if got := res.Data["creation"]; !reflect.DeepEqual(got, map[string]any{"count": 3, "zones": map[string]int{"az1": 3}}) {
		t.Errorf("data.creation = %v", got)
	}
	wantPl := map[string]any{"count": 3, "placements": []any{map[string]any{"servergroup": "g", "zone": "az1"}, map[string]any{"zone": "az1"}, map[string]any{"zone": "az1"}}}
	if got := res.Data["placement"]; !reflect.DeepEqual(got, wantPl) {
		t.Errorf("data.placement = %v, want %v", got, wantPl)
	}

	c = novaCluster(inZone("a1", "az1", 1), inZone("a2", "az1", 2), inZone("a3", "az1", 3), inZone("b1", "az2", 4))
	in := sdk.CheckRequest{Phase: "BEFORE", Policy: spec, Cluster: c, Action: sdk.Action{Name: "CLUSTER_SCALE_IN", Inputs: map[string]any{"count": 2}}}
	res, err = pt.Policy.Check(ctx, in)
	if err != nil || res.Refuse != "" {
		t.Fatalf("scale-in: %+v %v", res, err)
	}
	wantDel := map[string]any{"count": 2, "zones": map[string]int{"az1": 1, "az2": 1}, "candidates": []string{"a3", "b1"}}
	if got := res.Data["deletion"]; !reflect.DeepEqual(got, wantDel) {
		t.Errorf("data.deletion = %v, want %v", got, wantDel)
	}

	res, _ = zones("elsewhere").Policy.Check(ctx, withCount(out, 1))
	if res.Refuse != "No availability zone found available." || res.Data["status"] != "ERROR" {
		t.Errorf("no usable zone: %+v", res)
	}
	res, _ = pt.Policy.Check(ctx, sdk.CheckRequest{Phase: "BEFORE", Policy: spec, Cluster: novaCluster(inZone("a1", "az1", 1)),
		Action: sdk.Action{Name: "CLUSTER_SCALE_IN", Inputs: map[string]any{"count": 2}}})
	if res.Refuse != "There is no feasible plan to handle all nodes." {
		t.Errorf("an infeasible plan: %+v", res)
	}
	other := novaCluster()
	other.ProfileType, other.Profile.Type = "grove.noop-1.0", "grove.noop"
	if _, err := pt.Policy.Attach(ctx, spec, other); err == nil || !strings.Contains(err.Error(), "os.nova.server") {
		t.Errorf("attach to a grove.noop cluster: %v", err)
	}
	if _, err := pt.Policy.Attach(ctx, spec, novaCluster()); err == nil || !strings.Contains(err.Error(), "gone") {
		t.Errorf("attach with a zone the cloud lacks: %v", err)
	}
	pinned := novaCluster()
	pinned.Profile.Properties["availability_zone"] = "az2"
	res, err = pt.Policy.Check(ctx, sdk.CheckRequest{Phase: "BEFORE", Policy: spec, Cluster: pinned, Action: sdk.Action{Name: "NODE_CREATE"}})
	if err != nil || res.Refuse != "" || res.Data != nil {
		t.Errorf("a node creation the profile pins to a zone: %+v %v", res, err)
	}
}

func withCount(r sdk.CheckRequest, n int) sdk.CheckRequest {
	r.Action.Inputs = map[string]any{"count": n}
	return r
}

// TestRegionCheck: regions spread by weight under their caps on any
// profile type, the scaling policy's count and creation data kept.
func TestRegionCheck(t *testing.T) {
	pt := RegionType()
	rs := sdk.Spec{ID: "rp", Properties: map[string]any{"regions": []any{
		map[string]any{"name": "r1", "weight": 200, "cap": 1}, map[string]any{"name": "r2", "weight": 100, "cap": -1}, map[string]any{"name": "r3", "weight": 100, "cap": -1}}}}
	c := sdk.Cluster{Name: "web", ProfileType: "grove.noop-1.0", MaxSize: -1}
	req := sdk.CheckRequest{Phase: "BEFORE", Policy: rs, Cluster: c, Action: sdk.Action{Name: "CLUSTER_SCALE_OUT",
		Data: map[string]any{"creation": map[string]any{"count": 3.0}}}}
	res, err := pt.Policy.Check(context.Background(), req)
	if err != nil || res.Refuse != "" {
		t.Fatalf("scale-out: %+v %v", res, err)
	}
	if got := res.Data["creation"]; !reflect.DeepEqual(got, map[string]any{"count": 3, "regions": map[string]int{"r1": 1, "r2": 1, "r3": 1}}) {
		t.Errorf("data.creation = %v", got)
	}
	pl := res.Data["placement"].(map[string]any)["placements"].([]any)
	if len(pl) != 3 || pl[0].(map[string]any)["region_name"] != "r1" || pl[2].(map[string]any)["region_name"] != "r3" {
		t.Errorf("data.placement = %v", res.Data["placement"])
	}
	if _, err := pt.Policy.Attach(context.Background(), rs, c); err != nil {
		t.Errorf("attach to a grove.noop cluster: %v", err)
	}
}
