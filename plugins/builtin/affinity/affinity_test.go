package affinity_test

import (
	"context"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/grovehq/grove/plugins/builtin/affinity"
	"github.com/grovehq/grove/plugins/sdk"
)

// TestType holds the registration to the seed: type, version, priority,
// singleton, the BEFORE targets and exactly the seed's properties.
func TestType(t *testing.T) {
	pt := affinity.Type()
	if pt.Type != "senlin.policy.affinity" || !reflect.DeepEqual(pt.Versions, []string{"1.0"}) || pt.Priority != 300 || !pt.Singleton {
		t.Errorf("registration %s %v priority %d singleton %v", pt.Type, pt.Versions, pt.Priority, pt.Singleton)
	}
	want := []sdk.Target{{Phase: "BEFORE", Action: "CLUSTER_SCALE_OUT"}, {Phase: "BEFORE", Action: "CLUSTER_RESIZE"}, {Phase: "BEFORE", Action: "NODE_CREATE"}}
	if !reflect.DeepEqual(pt.Targets, want) {
		t.Errorf("targets %v", pt.Targets)
	}
	var keys []string
	for k := range pt.Schema {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	if !reflect.DeepEqual(keys, []string{"availability_zone", "enable_drs_extension", "servergroup"}) {
		t.Errorf("properties %v", keys)
	}
	sg := pt.Schema["servergroup"].Schema
	if len(sg) != 2 || sg["name"] == nil || sg["policies"] == nil || sg["policies"].Default != "anti-affinity" {
		t.Errorf("servergroup properties %v", sg)
	}
	if pt.Schema["enable_drs_extension"].Default != false {
		t.Errorf("enable_drs_extension default %v", pt.Schema["enable_drs_extension"].Default)
	}
	props, diags := pt.Schema.Validate("properties", map[string]any{"servergroup": map[string]any{"policies": "together"}})
	if len(diags) == 0 || !strings.Contains(diags[0].Field, "policies") {
		t.Errorf("a bad policies value: %v %v", props, diags)
	}
}

// TestCheckPassesWhatCreatesNothing: a resize that removes nodes and an
// AFTER phase pass untouched, with no cloud asked (the cluster's profile
// type has no backend, which only a creation would find).
func TestCheckPassesWhatCreatesNothing(t *testing.T) {
	pt := affinity.Type()
	c := sdk.Cluster{Name: "web", DesiredCapacity: 3, MaxSize: -1, ProfileType: "local.process-1.0",
		Nodes: []sdk.ClusterNode{{ID: "a"}, {ID: "b"}, {ID: "c"}}}
	shrink := sdk.CheckRequest{Phase: "BEFORE", Cluster: c, Action: sdk.Action{Name: "CLUSTER_RESIZE",
		Inputs: map[string]any{"adjustment_type": "CHANGE_IN_CAPACITY", "number": -2}}}
	if res, err := pt.Policy.Check(context.Background(), shrink); err != nil || res.Refuse != "" || res.Data != nil {
		t.Errorf("a shrinking resize: %+v, %v", res, err)
	}
	after := sdk.CheckRequest{Phase: "AFTER", Cluster: c, Action: sdk.Action{Name: "CLUSTER_SCALE_OUT"}}
	if res, err := pt.Policy.Check(context.Background(), after); err != nil || res.Refuse != "" || res.Data != nil {
		t.Errorf("AFTER: %+v, %v", res, err)
	}
	grow := sdk.CheckRequest{Phase: "BEFORE", Cluster: c, Action: sdk.Action{Name: "CLUSTER_SCALE_OUT"}}
	res, err := pt.Policy.Check(context.Background(), grow)
	if err != nil || !strings.Contains(res.Refuse, "local.process") {
		t.Errorf("a growth of a cluster the policy cannot place: %+v, %v", res, err)
	}
	_, err = pt.Policy.Attach(context.Background(), sdk.Spec{ID: "p"}, c)
	if err == nil || !strings.Contains(err.Error(), "os.nova.server, vsphere.vm and container.docker") {
		t.Errorf("attach to a local.process cluster: %v", err)
	}
}
