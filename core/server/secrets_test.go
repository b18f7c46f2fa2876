package server_test

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/grovehq/grove/api"
)

// call sends a JSON request to the API server and decodes the answer into
// out (when not nil), returning the status and the raw body.
func (a *apiServer) call(method, path string, body any, out any) (int, string) {
	a.t.Helper()
	var r io.Reader
	if body != nil {
		b, _ := json.Marshal(body)
		r = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(a.t.Context(), method, a.url+path, r)
	if err != nil {
		a.t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		a.t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	if out != nil && resp.StatusCode < 300 {
		if err := json.Unmarshal(raw, out); err != nil {
			a.t.Fatalf("%s %s: %v in %s", method, path, err, raw)
		}
	}
	return resp.StatusCode, string(raw)
}

const canary = "hunter2-canary"

// TestSensitiveValuesRedacted: the API never shows a sensitive value: not
// in the answer to create or validate, not in show or list, not in events,
// and the store file does not hold it in clear; the plugin still gets it
// (test.secret copies its label into each node's data). A client that sends
// the object back whole, placeholders included, keeps the stored values;
// one that changes the spec is refused.
func TestSensitiveValuesRedacted(t *testing.T) {
	a := newAPI(t, time.Minute, 5*time.Second)
	if err := a.eng.Start(t.Context()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(a.eng.Stop)
	spec := map[string]any{"type": "test.secret", "version": "1.0",
		"properties": map[string]any{"label": canary, "env": map[string]any{"TOKEN": canary + "-env"}, "public": "shown"}}
	var created struct{ Profile api.Profile }
	status, body := a.call(http.MethodPost, "/v1/profiles", map[string]any{"profile": map[string]any{"name": "sec", "spec": spec}}, &created)
	if status != http.StatusCreated {
		t.Fatalf("create: %d %s", status, body)
	}
	var validated struct{ Profile api.Profile }
	_, vbody := a.call(http.MethodPost, "/v1/profiles/validate", map[string]any{"profile": map[string]any{"spec": spec}}, &validated)
	_, show := a.call(http.MethodGet, "/v1/profiles/sec", nil, nil)
	_, list := a.call(http.MethodGet, "/v1/profiles", nil, nil)
	for name, b := range map[string]string{"create": body, "validate": vbody, "show": show, "list": list} {
		if strings.Contains(b, canary) {
			t.Errorf("%s shows a sensitive value: %s", name, b)
		}
		if !strings.Contains(b, `"label":"(sensitive)"`) || !strings.Contains(b, `"env":{"TOKEN":"(sensitive)"}`) || !strings.Contains(b, `"public":"shown"`) {
			t.Errorf("%s must show sensitive values as (sensitive) and the others as they are: %s", name, b)
		}
	}

	// Read, modify the name, send it all back.
	got := created.Profile
	status, body = a.call(http.MethodPatch, "/v1/profiles/"+got.ID, map[string]any{"profile": map[string]any{"name": "sec2", "spec": got.Spec}}, nil)
	if status != http.StatusOK {
		t.Fatalf("an update sending the spec back unchanged: %d %s", status, body)
	}
	changed := map[string]any{"type": "test.secret", "version": "1.0", "properties": map[string]any{"label": "other", "env": map[string]any{"TOKEN": "(sensitive)"}, "public": "shown"}}
	status, body = a.call(http.MethodPatch, "/v1/profiles/"+got.ID, map[string]any{"profile": map[string]any{"spec": changed}}, nil)
	if status != http.StatusBadRequest || !strings.Contains(body, "spec cannot be changed") {
		t.Fatalf("an update changing the spec: want a 400, got %d %s", status, body)
	}

	// The plugin is given the stored value, after the round trip.
	status, body = a.call(http.MethodPost, "/v1/clusters", map[string]any{"cluster": map[string]any{"name": "c", "profile_id": "sec2", "desired_capacity": 1}}, nil)
	if status != http.StatusAccepted {
		t.Fatalf("create cluster: %d %s", status, body)
	}
	deadline := time.Now().Add(20 * time.Second)
	var nodes struct{ Nodes []api.Node }
	for {
		a.call(http.MethodGet, "/v1/nodes?cluster_id=c", nil, &nodes)
		if len(nodes.Nodes) == 1 && nodes.Nodes[0].Status == "ACTIVE" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the node did not become ACTIVE: %+v", nodes.Nodes)
		}
		time.Sleep(50 * time.Millisecond)
	}
	if label := nodes.Nodes[0].Data["label"]; label != canary {
		t.Errorf("the plugin was given label %v, want the stored value", label)
	}

	_, events := a.call(http.MethodGet, "/v1/events?limit=1000", nil, nil)
	_, actions := a.call(http.MethodGet, "/v1/actions?limit=1000", nil, nil)
	if strings.Contains(events, canary) || strings.Contains(actions, canary) {
		t.Errorf("events or actions carry a sensitive value: %s %s", events, actions)
	}
	db, err := os.ReadFile(filepath.Join(a.dir, "grove.db"))
	if err != nil {
		t.Fatal(err)
	}
	wal, _ := os.ReadFile(filepath.Join(a.dir, "grove.db-wal"))
	if bytes.Contains(db, []byte(canary+"-env")) || bytes.Contains(wal, []byte(canary+"-env")) {
		t.Error("the store file holds a sensitive value in clear")
	}
}
