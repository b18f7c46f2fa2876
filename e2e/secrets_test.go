package e2e

import (
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// environOf returns a process's environment.
func environOf(t *testing.T, pid int) []string {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/environ", pid))
	if err != nil {
		t.Fatal(err)
	}
	return strings.Split(strings.TrimSuffix(string(b), "\x00"), "\x00")
}

// TestNodesAndPluginsGetACleanEnvironment: an agent whose environment holds
// a token and cloud credentials starts a node and the built-in plugin; the
// node's process sees its profile's env, PATH and the GROVE_NODE_*
// variables only, the plugin its minimal set and its own variables; neither
// sees the agent's secrets. The profile's env is shown as (sensitive), and
// neither the store nor the agent's log hold it in clear.
func TestNodesAndPluginsGetACleanEnvironment(t *testing.T) {
	dir := t.TempDir()
	a := startAgentWith(t, agentOptions{env: []string{"GROVE_TOKEN=canary-grove-token", "AWS_SECRET_ACCESS_KEY=canary-aws-secret"}}, dir)
	t.Cleanup(func() { killProcessesOf("envy") })
	const secret = "canary-profile-secret"
	a.createProfile("envy", map[string]any{"command": []any{groveBin, "demo-http"}, "stop_timeout": 5,
		"env": map[string]any{"DB_PASSWORD": secret, "APP_MODE": "blue"}})
	a.waitAction(a.createCluster("envy", "envy", 1, nil))

	var pids []int
	eventually(t, 10*time.Second, "the node's process", func() (bool, string) {
		pids = processesOf("envy")
		return len(pids) == 1, fmt.Sprint(pids)
	})
	env := environOf(t, pids[0])
	n := a.nodes("envy")[0]
	want := []string{"DB_PASSWORD=" + secret, "APP_MODE=blue", "PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
		"GROVE_CLUSTER_NAME=envy", "GROVE_NODE_NAME=" + n.Name, "GROVE_NODE_INDEX=1", fmt.Sprintf("GROVE_NODE_PORT=%v", n.Data["port"])}
	for _, kv := range want {
		if !slices.Contains(env, kv) {
			t.Errorf("the node's environment lacks %s: %q", kv, env)
		}
	}
	if len(env) != len(want)+1 { // and GROVE_NODE_ID
		t.Errorf("the node's environment holds more than its profile's env, PATH and GROVE_NODE_*: %q", env)
	}

	var plugins struct {
		Plugins []struct {
			Name string `json:"name"`
			PID  int    `json:"pid"`
		} `json:"plugins"`
	}
	a.mustDo(http.MethodGet, "/v1/plugins", nil, &plugins)
	checked := 0
	for _, p := range plugins.Plugins {
		if p.PID == 0 {
			continue
		}
		checked++
		penv := environOf(t, p.PID)
		for _, kv := range penv {
			if strings.Contains(kv, "canary") || strings.HasPrefix(kv, "GROVE_TOKEN=") {
				t.Errorf("plugin %s's environment holds the agent's %s", p.Name, kv)
			}
		}
		if !slices.Contains(penv, "GROVE_PLUGIN_NAME="+p.Name) {
			t.Errorf("plugin %s's environment lacks its name: %q", p.Name, penv)
		}
	}
	if checked == 0 {
		t.Fatalf("no running plugin listed: %+v", plugins)
	}

	var prof struct {
		Profile struct {
			Spec map[string]any `json:"spec"`
		} `json:"profile"`
	}
	a.mustDo(http.MethodGet, "/v1/profiles/envy", nil, &prof)
	props := prof.Profile.Spec["properties"].(map[string]any)
	if e := props["env"].(map[string]any); e["DB_PASSWORD"] != "(sensitive)" || e["APP_MODE"] != "(sensitive)" {
		t.Errorf("the API shows env as %v", e)
	}
	a.stop()
	for _, f := range []string{"grove.db", "grove.db-wal", "agent-test.log"} {
		b, _ := os.ReadFile(filepath.Join(dir, f))
		if strings.Contains(string(b), secret) {
			t.Errorf("%s holds the profile's sensitive value in clear", f)
		}
	}
	if fi, err := os.Stat(filepath.Join(dir, "secrets.key")); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("the agent's secrets key: %v (%v), want a 0600 file", fi, err)
	}
}
