package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/grovehq/grove/plugins/sdk"
	"github.com/grovehq/grove/plugins/sdk/sdktest"
)

// TestConformance builds this plugin and runs the SDK's conformance kit on it.
func TestConformance(t *testing.T) {
	bin := filepath.Join(t.TempDir(), "grove-plugin-files")
	build := exec.Command("go", "build", "-o", bin, ".")
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	sdktest.Run(t, sdktest.Options{Command: []string{bin}},
		[]sdktest.ProfileCase{{Type: "example.file", Version: "1.0",
			Properties: map[string]any{"directory": dir},
			Updated:    map[string]any{"directory": dir, "content": "v2 {{name}}\n"}}},
		[]sdktest.PolicyCase{
			{Type: "grove.policy.quota", Version: "1.0", Properties: map[string]any{"max_nodes": 5}, Action: "CLUSTER_SCALE_OUT"},
			{Type: "grove.policy.quota", Version: "1.0", Properties: map[string]any{"max_nodes": 2}, Action: "CLUSTER_SCALE_OUT",
				Cluster: &sdk.Cluster{MaxSize: -1, Nodes: []sdk.ClusterNode{{ID: "a"}, {ID: "b"}}}},
		})
}

// TestQuotaReadsTypedInputs: the quota sizes an action from its typed
// inputs and data, and names a value it cannot read instead of counting it
// as zero.
func TestQuotaReadsTypedInputs(t *testing.T) {
	two := sdk.Cluster{MaxSize: -1, Nodes: []sdk.ClusterNode{{ID: "a"}, {ID: "b"}}}
	cases := []struct {
		name   string
		props  map[string]any
		action sdk.Action
		refuse string
		err    string
	}{
		{"count within", map[string]any{"max_nodes": int64(3)}, sdk.Action{Name: "CLUSTER_SCALE_OUT", Inputs: map[string]any{"count": 1.0}}, "", ""},
		{"count past", map[string]any{"max_nodes": int64(3)}, sdk.Action{Name: "CLUSTER_SCALE_OUT", Inputs: map[string]any{"count": 2.0}},
			"the quota of 3 nodes would be exceeded: the cluster has 2 and the action adds 2", ""},
		{"a scaling policy's count wins", map[string]any{"max_nodes": int64(3)},
			sdk.Action{Name: "CLUSTER_SCALE_OUT", Inputs: map[string]any{"count": 1.0}, Data: map[string]any{"creation": map[string]any{"count": 2.0}}},
			"the quota of 3 nodes would be exceeded: the cluster has 2 and the action adds 2", ""},
		{"a decision without a count leaves the user's", map[string]any{"max_nodes": int64(3)},
			sdk.Action{Name: "CLUSTER_SCALE_OUT", Inputs: map[string]any{"count": 2.0}, Data: map[string]any{"creation": map[string]any{}}},
			"the quota of 3 nodes would be exceeded: the cluster has 2 and the action adds 2", ""},
		{"resize in the strings of an old action", map[string]any{"max_nodes": int64(3)},
			sdk.Action{Name: "CLUSTER_RESIZE", Inputs: map[string]any{"adjustment_type": "CHANGE_IN_CAPACITY", "number": "2", "strict": "true"}},
			"the quota of 3 nodes would be exceeded: the cluster has 2 and the action adds 2", ""},
		{"add nodes", map[string]any{"max_nodes": int64(3)}, sdk.Action{Name: "CLUSTER_ADD_NODES", Inputs: map[string]any{"nodes": []any{"c", "d"}}},
			"the quota of 3 nodes would be exceeded: the cluster has 2 and the action adds 2", ""},
		{"a count that is not a number", map[string]any{"max_nodes": int64(3)}, sdk.Action{Name: "CLUSTER_SCALE_OUT", Inputs: map[string]any{"count": "lots"}},
			"the CLUSTER_SCALE_OUT action cannot be sized: inputs.count must be an integer, got a string", ""},
		{"a decision that is not a number", map[string]any{"max_nodes": int64(3)},
			sdk.Action{Name: "CLUSTER_SCALE_OUT", Data: map[string]any{"creation": map[string]any{"count": "lots"}}},
			"the CLUSTER_SCALE_OUT action cannot be sized: data.creation.count must be an integer, got a string", ""},
		{"a limit that is not a number", map[string]any{"max_nodes": "ten"}, sdk.Action{Name: "NODE_CREATE"},
			"", "properties.max_nodes must be an integer, got a string"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			res, err := quota{}.Check(t.Context(), sdk.CheckRequest{Policy: sdk.Spec{ID: "q", Properties: c.props}, Phase: "BEFORE", Action: c.action, Cluster: two})
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
