package host_test

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/hashicorp/go-hclog"

	"github.com/grovehq/grove/plugins/host"
)

// TestPluginGetsOnlyMinimalAndDeclaredEnv: a plugin started by a host whose
// environment holds credentials sees none of them; it gets the minimal set
// (PATH), what its config declares, and its GROVE_PLUGIN_* variables.
func TestPluginGetsOnlyMinimalAndDeclaredEnv(t *testing.T) {
	t.Setenv("GROVE_TOKEN", "canary-token")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "canary-aws")
	t.Setenv("DOCKER_HOST", "unix:///canary/undeclared.sock")
	h := host.New(hclog.NewNullLogger(), t.TempDir())
	defer h.Close()
	err := h.Start(context.Background(), host.Config{Name: "builtin", Command: builtin(), Env: map[string]string{"DOCKER_HOST": "unix:///declared.sock"}})
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/environ", h.PluginPID("builtin")))
	if err != nil {
		t.Fatal(err)
	}
	env := strings.Split(strings.TrimSuffix(string(b), "\x00"), "\x00")
	if strings.Contains(string(b), "canary") {
		t.Errorf("the plugin's environment holds the agent's secrets: %q", env)
	}
	for _, want := range []string{"PATH=" + os.Getenv("PATH"), "DOCKER_HOST=unix:///declared.sock", "GROVE_PLUGIN_NAME=builtin"} {
		if !slices.Contains(env, want) {
			t.Errorf("the plugin's environment lacks %s: %q", want, env)
		}
	}
	for _, kv := range env {
		name, _, _ := strings.Cut(kv, "=")
		if !slices.Contains(host.MinimalEnv(), name) && name != "DOCKER_HOST" && !strings.HasPrefix(name, "GROVE_PLUGIN_") &&
			!strings.HasPrefix(name, "PLUGIN_") {
			t.Errorf("the plugin's environment holds %s, which is neither minimal, declared nor the plugin's own", name)
		}
	}
}
