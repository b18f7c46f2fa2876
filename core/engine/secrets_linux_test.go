package engine_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/grovehq/grove/core/engine"
	"github.com/grovehq/grove/core/model"
	"github.com/grovehq/grove/plugins/builtin/process"
)

const canary = "hunter2-canary"

// secretProps are the properties of a local.process profile whose env holds the canary.
func secretProps() map[string]any {
	return map[string]any{"command": []any{"sleep", "60"}, "stop_timeout": 0,
		"env": map[string]any{"DB_PASSWORD": canary, "MODE": "blue"}}
}

// nodeEnviron returns the environment of each node's process (its wrapper
// carries the same environment) and stops them at the test's end.
func (h *harness) nodeEnviron(clusterID string) []string {
	h.t.Helper()
	var out []string
	for _, pid := range h.pids(clusterID) {
		h.t.Cleanup(func() { killAll(h.t, []int{pid}) })
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/environ", pid))
		if err != nil {
			h.t.Fatal(err)
		}
		out = append(out, strings.Split(string(b), "\x00")...)
	}
	return out
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// assertSealed fails when a stored profile holds the canary in clear, and
// checks that the API's view of it shows the env's names, not its values.
func assertSealed(t *testing.T, p *model.Profile) {
	t.Helper()
	raw, _ := json.Marshal([]any{p.Spec, p.Properties})
	if bytes.Contains(raw, []byte(canary)) || bytes.Contains(raw, []byte("blue")) {
		t.Fatalf("the store holds a sensitive value in clear: %s", raw)
	}
	shown := engine.Redact(p.Spec)
	env := shown["properties"].(map[string]any)["env"].(map[string]any)
	if env["DB_PASSWORD"] != engine.Redacted || env["MODE"] != engine.Redacted || len(env) != 2 {
		t.Fatalf("the API would show env as %v, want each value %q", env, engine.Redacted)
	}
	if cmd := shown["properties"].(map[string]any)["command"].([]any); cmd[0] != "sleep" {
		t.Fatalf("a value that is not sensitive must show as it is: %v", cmd)
	}
}

// TestSensitiveValuesSealedAndOpenedForThePlugin: a local.process profile's
// env values are stored encrypted, shown as (sensitive), and reach the
// node's process in clear, with nothing of the engine's environment.
func TestSensitiveValuesSealedAndOpenedForThePlugin(t *testing.T) {
	t.Setenv("GROVE_TOKEN", "canary-agent-token")
	h := newHarness(t, nil)
	h.profileOf("secret", process.TypeName, secretProps())
	p, err := h.store.FindProfile(h.ctx(), caller.Project, "secret")
	if err != nil {
		t.Fatal(err)
	}
	assertSealed(t, p)

	desired := 1
	cl := h.create(engine.ClusterCreate{Name: "sec", Profile: "secret", DesiredCapacity: &desired})
	env := h.nodeEnviron(cl.ID)
	for _, want := range []string{"DB_PASSWORD=" + canary, "MODE=blue", "PATH=" + process.NodePath, "GROVE_CLUSTER_NAME=sec"} {
		if !contains(env, want) {
			t.Errorf("the node's environment lacks %s: %q", want, env)
		}
	}
	for _, kv := range env {
		if strings.Contains(kv, "canary-agent-token") || strings.HasPrefix(kv, "HOME=") {
			t.Errorf("the node's environment holds %s from the engine's", kv)
		}
	}
}

// TestPlaintextSpecsSealedAtStart: a profile stored in clear (by a Grove
// before sensitive values were encrypted) is encrypted when an engine
// starts, once, and its nodes still get the value.
func TestPlaintextSpecsSealedAtStart(t *testing.T) {
	h := newHarness(t, nil)
	props := secretProps()
	old := &model.Profile{ID: "00000000-0000-4000-8000-000000000001", Name: "legacy", Type: process.TypeName, Version: "1.0",
		Spec:       map[string]any{"type": process.TypeName, "version": "1.0", "properties": props},
		Properties: props, User: caller.User, Project: caller.Project, CreatedAt: epoch}
	if err := h.store.CreateProfile(h.ctx(), old); err != nil {
		t.Fatal(err)
	}
	h.eng.Stop()
	h.restart("", nil)
	p, err := h.store.GetProfile(h.ctx(), old.ID)
	if err != nil {
		t.Fatal(err)
	}
	assertSealed(t, p)
	if n, err := h.eng.SealStored(h.ctx()); err != nil || n != 0 {
		t.Fatalf("sealing again changed %d objects (%v); sealing is done once", n, err)
	}
	again, _ := h.store.GetProfile(h.ctx(), old.ID)
	if a, b := fmt.Sprint(again.Properties), fmt.Sprint(p.Properties); a != b {
		t.Fatalf("sealing again rewrote the values: %s, then %s", b, a)
	}
	desired := 1
	cl := h.create(engine.ClusterCreate{Name: "legacy", Profile: "legacy", DesiredCapacity: &desired})
	if env := h.nodeEnviron(cl.ID); !contains(env, "DB_PASSWORD="+canary) {
		t.Errorf("the node of a sealed legacy profile lacks its env: %q", env)
	}
}

// TestSealedValuesNeedTheSameKey: an engine with another key cannot open
// what the first sealed, and says which setting to fix, naming no value.
func TestSealedValuesNeedTheSameKey(t *testing.T) {
	h := newHarness(t, nil)
	h.profileOf("secret", process.TypeName, secretProps())
	h.eng.Stop()
	h.restart("", func(c *engine.Config) { c.SecretsKey = bytes.Repeat([]byte{1}, engine.SecretsKeySize) })
	desired := 1
	cl, a, err := h.eng.CreateCluster(h.ctx(), caller, engine.ClusterCreate{Name: "sec", Profile: "secret", DesiredCapacity: &desired})
	if err != nil {
		t.Fatal(err)
	}
	done := h.wait(a, err)
	if done.Status != model.ActionFailed || !strings.Contains(done.StatusReason, "secrets_key_file") || strings.Contains(done.StatusReason, canary) {
		t.Fatalf("cluster %s create with the wrong key: %s %q", cl.Name, done.Status, done.StatusReason)
	}
}

// TestPlaceholderAndSealedLookalikesRefused: a spec sent back with the
// API's placeholder would store "(sensitive)" as the secret, and a value
// that looks sealed would be opened: both are refused, naming the field.
func TestPlaceholderAndSealedLookalikesRefused(t *testing.T) {
	h := newIdleHarness(t, nil)
	for value, want := range map[string]string{
		engine.Redacted:        `spec.properties.env.DB_PASSWORD is "(sensitive)", the placeholder`,
		"grove:sealed:v1:AAAA": `spec.properties.env.DB_PASSWORD: values beginning with "grove:sealed:v1:" are reserved`,
	} {
		props := secretProps()
		props["env"] = map[string]any{"DB_PASSWORD": value}
		spec := map[string]any{"type": process.TypeName, "version": "1.0", "properties": props}
		_, err := h.eng.CreateProfile(h.ctx(), caller, "bad", spec, nil)
		var ee *engine.Error
		if !errors.As(err, &ee) || ee.Status != 400 || !strings.Contains(ee.Message, want) {
			t.Errorf("env value %q: want a 400 with %q, got %v", value, want, err)
		}
	}
}

// TestLoadSecretsKey: the agent's key file is created once, readable by its
// owner only, and read back the same; a configured file that does not
// exist, or holds no key, is an error that says what it must hold.
func TestLoadSecretsKey(t *testing.T) {
	path := filepath.Join(t.TempDir(), "secrets.key")
	if _, err := engine.LoadSecretsKey(path, false); err == nil {
		t.Fatal("a configured key file that does not exist must be an error, not created")
	}
	k1, err := engine.LoadSecretsKey(path, true)
	if err != nil || len(k1) != engine.SecretsKeySize {
		t.Fatalf("create: %d bytes, %v", len(k1), err)
	}
	fi, err := os.Stat(path)
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("the key file's mode is %v (%v), want 0600", fi.Mode().Perm(), err)
	}
	k2, err := engine.LoadSecretsKey(path, true)
	if err != nil || !bytes.Equal(k1, k2) {
		t.Fatalf("the key read back differs (%v)", err)
	}
	if err := os.WriteFile(path, []byte("short\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := engine.LoadSecretsKey(path, true); err == nil || !strings.Contains(err.Error(), "base64 of 32 random bytes") {
		t.Fatalf("a malformed key file: %v", err)
	}
}
