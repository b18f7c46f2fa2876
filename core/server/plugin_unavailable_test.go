package server_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/grovehq/grove/core/engine"
	"github.com/grovehq/grove/core/server"
	"github.com/grovehq/grove/core/store/sqlite"
	"github.com/grovehq/grove/internal/proctest"
	"github.com/grovehq/grove/internal/testbin"
	"github.com/grovehq/grove/plugins/host"
)

var testPlugin string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "grove-server-test")
	if err != nil {
		panic(err)
	}
	testPlugin = filepath.Join(dir, "testplugin")
	if err := testbin.Build(testPlugin, "../../plugins/host/testdata/testplugin"); err != nil {
		panic(err)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// apiServer is a real API server over a real store and a real plugin process
// ("tp", the host's testplugin, serving the grove.noop profile type).
type apiServer struct {
	t    *testing.T
	url  string
	host *host.Host
	dir  string // holds the store, grove.db
	eng  *engine.Engine
}

func newAPI(t *testing.T, healthEvery, callTimeout time.Duration) *apiServer {
	t.Helper()
	ctx := context.Background()
	dir := t.TempDir()
	st, err := sqlite.Open(ctx, filepath.Join(dir, "grove.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	h := host.New(hclog.NewNullLogger(), dir)
	h.SetHealthEvery(healthEvery)
	h.SetCallTimeout(callTimeout)
	t.Cleanup(h.Close)
	if err := h.Start(ctx, host.Config{Name: "tp", Command: []string{testPlugin}}); err != nil {
		t.Fatal(err)
	}
	e := engine.New(st, h, hclog.NewNullLogger(), engine.Config{CheckInterval: -1})
	srv := httptest.NewServer(server.New(e, server.Options{Host: h, Dev: true}))
	t.Cleanup(srv.Close)
	return &apiServer{t: t, url: srv.URL, host: h, dir: dir, eng: e}
}

type reply struct {
	status     int
	retryAfter string
	body       string
}

func (a *apiServer) do(method, path string, body any) reply {
	a.t.Helper()
	var r io.Reader
	if body != nil {
		b, _ := json.Marshal(body)
		r = bytes.NewReader(b)
	}
	req, _ := http.NewRequest(method, a.url+path, r)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		a.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return reply{resp.StatusCode, resp.Header.Get("Retry-After"), string(b)}
}

func (a *apiServer) lastError() string {
	a.t.Helper()
	var out struct {
		Plugins []struct {
			Name      string `json:"name"`
			LastError string `json:"last_error"`
		} `json:"plugins"`
	}
	if err := json.Unmarshal([]byte(a.do(http.MethodGet, "/v1/plugins", nil).body), &out); err != nil {
		a.t.Fatal(err)
	}
	for _, p := range out.Plugins {
		if p.Name == "tp" {
			return p.LastError
		}
	}
	a.t.Fatal("plugin tp is not listed")
	return ""
}

var noopSpec = map[string]any{"type": "grove.noop", "version": "1.0"}

// want503 checks that a reply is the plugin-unavailable answer: 503, a
// Retry-After in whole seconds, and a message naming the plugin.
func want503(t *testing.T, what string, r reply) {
	t.Helper()
	if r.status != http.StatusServiceUnavailable {
		t.Errorf("%s: status %d, want 503; body %s", what, r.status, r.body)
		return
	}
	if n, err := strconv.Atoi(r.retryAfter); err != nil || n < 1 {
		t.Errorf("%s: Retry-After %q, want a number of seconds", what, r.retryAfter)
	}
	if !strings.Contains(r.body, "plugin tp") || !strings.Contains(r.body, "PluginUnavailable") {
		t.Errorf("%s: the message names the plugin: %s", what, r.body)
	}
}

// An API request that needs a hung plugin answers 503 with Retry-After
// within the call timeout, naming the plugin, and succeeds again once the
// plugin answers, which clears the plugin's last error.
func TestHungPluginRequestAnswers503(t *testing.T) {
	// No health check fails while the test runs: the plugin stays the
	// same process, stopped and continued.
	a := newAPI(t, time.Hour, 500*time.Millisecond)
	validate := func() reply {
		return a.do(http.MethodPost, "/v1/profiles/validate", map[string]any{"profile": map[string]any{"spec": noopSpec}})
	}
	if r := validate(); r.status != http.StatusOK {
		t.Fatalf("validate with a healthy plugin: %d %s", r.status, r.body)
	}
	pid := a.host.PluginPID("tp")
	if err := syscall.Kill(pid, syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	continued := false
	defer func() {
		if !continued {
			syscall.Kill(pid, syscall.SIGCONT)
		}
	}()
	proctest.WaitStopped(t, pid)
	for _, req := range []struct {
		what string
		path string
		body any
	}{
		{"validate a profile", "/v1/profiles/validate", map[string]any{"profile": map[string]any{"spec": noopSpec}}},
		{"create a profile", "/v1/profiles", map[string]any{"profile": map[string]any{"name": "p", "spec": noopSpec}}},
		{"validate a policy", "/v1/policies/validate", map[string]any{"policy": map[string]any{"spec": map[string]any{
			"type": "senlin.policy.deletion", "version": "1.0"}}}},
		{"list the hosts of a profile type", "/v1/profile-types/grove.noop/hosts", nil},
	} {
		method := http.MethodPost
		if req.body == nil {
			method = http.MethodGet
		}
		start := time.Now()
		r := a.do(method, req.path, req.body)
		// A guard against hanging, not a measurement: without the call
		// timeout the request would never be answered.
		if took := time.Since(start); took > 15*time.Second {
			t.Errorf("%s: took %s with a call timeout of 500ms: it hung", req.what, took)
		}
		want503(t, req.what, r)
	}
	if le := a.lastError(); !strings.Contains(le, "no answer within 500ms") {
		t.Errorf("the plugin's last error tells of the unanswered call: %q", le)
	}
	if err := syscall.Kill(pid, syscall.SIGCONT); err != nil {
		t.Fatal(err)
	}
	continued = true
	if r := validate(); r.status != http.StatusOK {
		t.Fatalf("validate once the plugin answers again: %d %s", r.status, r.body)
	}
	if le := a.lastError(); le != "" {
		t.Errorf("a plugin that answers again has no last error, got %q", le)
	}
}

// A plugin in a crash loop is 503 with Retry-After for every request that
// needs it: validating a spec (was 500) and changing a cluster whose
// profile it serves (was 409).
func TestUnhealthyPluginIs503Everywhere(t *testing.T) {
	a := newAPI(t, time.Hour, 2*time.Second)
	if r := a.do(http.MethodPost, "/v1/profiles", map[string]any{"profile": map[string]any{"name": "p", "spec": noopSpec}}); r.status != http.StatusCreated {
		t.Fatalf("create profile: %d %s", r.status, r.body)
	}
	// Five exits within a minute are a crash loop.
	for i := 0; i < 5; i++ {
		var pid int
		waitFor(t, 30*time.Second, "the plugin runs", func() bool { pid = a.host.PluginPID("tp"); return pid != 0 })
		if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
			t.Fatal(err)
		}
		waitFor(t, 30*time.Second, "the plugin exits", func() bool { return a.host.PluginPID("tp") != pid })
	}
	waitFor(t, 30*time.Second, "the plugin is unhealthy", func() bool {
		for _, st := range a.host.Statuses() {
			if st.Name == "tp" && st.State == "unhealthy" {
				return true
			}
		}
		return false
	})
	want503(t, "validate a profile", a.do(http.MethodPost, "/v1/profiles/validate", map[string]any{"profile": map[string]any{"spec": noopSpec}}))
	want503(t, "create a cluster", a.do(http.MethodPost, "/v1/clusters", map[string]any{"cluster": map[string]any{"name": "c", "profile_id": "p",
		"desired_capacity": 1}}))
	want503(t, "list the hosts of a profile type", a.do(http.MethodGet, "/v1/profile-types/grove.noop/hosts", nil))
}

func waitFor(t *testing.T, within time.Duration, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(within); !cond(); {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %s waiting until %s", within, what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
