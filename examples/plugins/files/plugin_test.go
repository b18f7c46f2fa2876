package main

import (
	"os"
	"os/exec"
	"path/filepath"
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
