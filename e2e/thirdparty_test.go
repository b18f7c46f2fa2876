package e2e

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/grovehq/grove/api"
	"github.com/grovehq/grove/internal/testbin"
)

// TestThirdPartyPlugin loads the example plugin through the plugin dir and
// its checksum, runs a cluster of its profile type under its policy, and
// checks that a wrong checksum and an unregistered binary are refused.
func TestThirdPartyPlugin(t *testing.T) {
	dir := t.TempDir()
	pluginDir := filepath.Join(dir, "plugins.d")
	os.MkdirAll(pluginDir, 0o755)
	bin := filepath.Join(pluginDir, "grove-plugin-files")
	if err := testbin.Build(bin, "../examples/plugins/files"); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(bin)
	sum := sha256.Sum256(b)
	// A copy nobody registered must not run.
	os.WriteFile(filepath.Join(pluginDir, "stray-plugin"), b, 0o755)
	cfg := filepath.Join(dir, "agent.hcl")
	os.WriteFile(cfg, []byte(fmt.Sprintf("plugin_dir = %q\nplugin \"files\" {\n  command = \"grove-plugin-files\"\n  sha256 = %q\n}\n"+
		"plugin \"tampered\" {\n  command = \"grove-plugin-files\"\n  sha256 = %q\n}\n", pluginDir, hex.EncodeToString(sum[:]), strings.Repeat("ab", 32))), 0o644)
	a := startAgent(t, dir, "-config", cfg)

	var list struct {
		Plugins []api.PluginStatus `json:"plugins"`
	}
	a.mustDo(http.MethodGet, "/v1/plugins", nil, &list)
	states := map[string]api.PluginStatus{}
	for _, p := range list.Plugins {
		states[p.Name] = p
	}
	if states["files"].State != "running" || len(states["files"].Components) != 2 {
		t.Fatalf("files plugin: %+v", states["files"])
	}
	if st := states["tampered"]; st.State != "refused" || !strings.Contains(st.LastError, "checksum mismatch") {
		t.Fatalf("a checksum mismatch is refused with the reason: %+v", st)
	}
	if st := states["stray-plugin"]; st.State != "refused" || !strings.Contains(st.LastError, "not registered") {
		t.Fatalf("an unregistered binary is refused with the reason: %+v", st)
	}
	var info struct {
		Plugin api.PluginStatus `json:"plugin"`
	}
	a.mustDo(http.MethodGet, "/v1/plugins/files", nil, &info)
	if len(info.Plugin.Details) != 2 || info.Plugin.Details[0].Schema == nil {
		t.Fatalf("plugin info shows components with schemas: %+v", info.Plugin)
	}
	// The example is built on this checkout's SDK: the newest of each API
	// (profile API 3 adopts existing resources, policy API 2 typed decisions).
	if v := info.Plugin.APIVersions; v["profile"] != "3" || v["policy"] != "2" {
		t.Errorf("plugin info shows the agreed API versions: %v", v)
	}

	out := filepath.Join(dir, "nodes")
	_, err := a.do(http.MethodPost, "/v1/profiles", map[string]any{"profile": map[string]any{"name": "bad",
		"spec": map[string]any{"type": "example.file", "version": "1.0", "properties": map[string]any{"directory": "relative"}}}})
	if err == nil || !strings.Contains(err.Error(), "spec.properties.directory") || !strings.Contains(err.Error(), "absolute") {
		t.Fatalf("the plugin's own validation reaches the API naming the field: %v", err)
	}
	a.mustDo(http.MethodPost, "/v1/profiles", map[string]any{"profile": map[string]any{"name": "files",
		"spec": map[string]any{"type": "example.file", "version": "1.0", "properties": map[string]any{"directory": out}}}}, nil)
	a.mustDo(http.MethodPost, "/v1/policies", map[string]any{"policy": map[string]any{"name": "quota4",
		"spec": map[string]any{"type": "grove.policy.quota", "version": "1.0", "properties": map[string]any{"max_nodes": 4}}}}, nil)
	a.waitAction(a.createCluster("files", "files", 3, nil))
	a.waitAction(a.clusterAction("files", "policy_attach", map[string]any{"policy_id": "quota4"}))
	entries, _ := os.ReadDir(out)
	if len(entries) != 3 {
		t.Fatalf("3 node files expected, found %d", len(entries))
	}
	refused, err := a.client.WaitAction(t.Context(), a.clusterAction("files", "scale_out", map[string]any{"count": 2}), nil)
	if err == nil || !strings.Contains(refused.StatusReason, "quota of 4 nodes would be exceeded") {
		t.Fatalf("quota refusal: %v", err)
	}
	a.waitAction(a.clusterAction("files", "scale_out", map[string]any{"count": 1}))
	if entries, _ = os.ReadDir(out); len(entries) != 4 {
		t.Fatalf("4 node files expected, found %d", len(entries))
	}
	r, err := a.do(http.MethodDelete, "/v1/clusters/files", nil)
	if err != nil {
		t.Fatal(err)
	}
	a.waitAction(r.ActionID())
	if entries, _ = os.ReadDir(out); len(entries) != 0 {
		t.Fatalf("deleting the cluster removes its files, %d left", len(entries))
	}
}
