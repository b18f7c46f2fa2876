package server_test

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hashicorp/go-hclog"

	"github.com/grovehq/grove/api"
	"github.com/grovehq/grove/core/engine"
	"github.com/grovehq/grove/core/server"
	"github.com/grovehq/grove/core/store/sqlite"
	"github.com/grovehq/grove/internal/hostile"
	"github.com/grovehq/grove/plugins/host"
)

// newServer serves the API of a real engine on a real SQLite store. No
// plugin runs: the limits under test are checked before any plugin is asked.
func newServer(t *testing.T, opts server.Options) *httptest.Server {
	t.Helper()
	st, err := sqlite.Open(t.Context(), filepath.Join(t.TempDir(), "grove.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	h := host.New(hclog.NewNullLogger(), t.TempDir())
	e := engine.New(st, h, hclog.NewNullLogger(), engine.Config{EngineID: "limits-test"})
	opts.Host = h
	// Dev mode: these tests are about limits, not tokens.
	opts.Dev = true
	ts := httptest.NewServer(server.New(e, opts))
	t.Cleanup(ts.Close)
	return ts
}

// send posts body and returns the status and the Senlin fault body.
func send(t *testing.T, ts *httptest.Server, method, path string, body io.Reader, length int64) (int, api.ErrorBody) {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), method, ts.URL+path, body)
	if err != nil {
		t.Fatal(err)
	}
	req.ContentLength = length
	req.Header.Set("Content-Type", "application/json")
	resp, err := ts.Client().Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	var eb api.ErrorBody
	if resp.StatusCode >= 400 {
		if err := json.NewDecoder(resp.Body).Decode(&eb); err != nil {
			t.Fatalf("%s %s: HTTP %d with a body that is not Senlin's fault body: %v", method, path, resp.StatusCode, err)
		}
	}
	return resp.StatusCode, eb
}

// TestBodyLimit: a body over the limit is a 413 in Senlin's fault shape,
// answered without reading the body, whether or not it declares its length.
func TestBodyLimit(t *testing.T) {
	ts := newServer(t, server.Options{})
	const huge = 200 << 20
	for _, declared := range []bool{true, false} {
		t.Run(fmt.Sprintf("declared length %v", declared), func(t *testing.T) {
			r := &hostile.Endless{Prefix: `{"profile": {"name": "`}
			length := int64(-1) // chunked
			var body io.Reader = io.LimitReader(r, huge)
			if declared {
				length = huge
			}
			status, eb := send(t, ts, http.MethodPost, "/v1/profiles", body, length)
			if status != http.StatusRequestEntityTooLarge || eb.Code != 413 || eb.Error.Type != "RequestEntityTooLarge" ||
				!strings.Contains(eb.Error.Message, "1048576 bytes") || !strings.Contains(eb.Error.Message, "max_request_bytes") {
				t.Fatalf("want a 413 naming the limit and its setting, got %d %+v", status, eb)
			}
			// The client stops sending once answered; what it sent is the
			// server's read plus what sat in socket buffers.
			if n := r.Sent(); n > 32<<20 {
				t.Errorf("the client was made to send %d bytes of a %d-byte body", n, huge)
			}
		})
	}
}

// TestBodyLimitConfigurable: Options.MaxRequestBytes replaces the default,
// and a body under the limit is read as usual.
func TestBodyLimitConfigurable(t *testing.T) {
	ts := newServer(t, server.Options{MaxRequestBytes: 4096})
	meta := map[string]any{"k": strings.Repeat("x", 5000)}
	b, _ := json.Marshal(map[string]any{"cluster": map[string]any{"name": "c", "profile_id": "p", "metadata": meta}})
	if status, eb := send(t, ts, http.MethodPost, "/v1/clusters", strings.NewReader(string(b)), -1); status != 413 || !strings.Contains(eb.Error.Message, "4096 bytes") {
		t.Errorf("a 5 KB chunked body under a 4 KiB limit: %d %+v", status, eb)
	}
	small := `{"cluster": {"name": "c", "profile_id": "p"}}`
	if status, eb := send(t, ts, http.MethodPost, "/v1/clusters", strings.NewReader(small), int64(len(small))); status != 400 || !strings.Contains(eb.Error.Message, "profile_id") {
		t.Errorf("a small body is read and reaches the engine: %d %+v", status, eb)
	}
}

// TestRequestLimits sends each broken rule of docs/api.md "Request limits"
// that needs no plugin: a 400 whose message names the field and the rule,
// and nothing is written.
func TestRequestLimits(t *testing.T) {
	ts := newServer(t, server.Options{})
	nested := `"x"`
	for range 40 {
		nested = `{"a": ` + nested + `}`
	}
	manyKeys := map[string]any{}
	for i := range server.MaxMetadataKeys + 1 {
		manyKeys[fmt.Sprintf("k%d", i)] = i
	}
	cluster := func(fields map[string]any) string {
		c := map[string]any{"name": "c", "profile_id": "p"}
		for k, v := range fields {
			c[k] = v
		}
		b, _ := json.Marshal(map[string]any{"cluster": c})
		return string(b)
	}
	profile := func(props map[string]any) string {
		b, _ := json.Marshal(map[string]any{"profile": map[string]any{"name": "p",
			"spec": map[string]any{"type": "local.process", "version": "1.0", "properties": props}}})
		return string(b)
	}
	long := strings.Repeat("n", 256)
	cases := []struct {
		name   string
		method string
		path   string
		body   string
		want   []string
	}{
		{"trailing object", "POST", "/v1/clusters", `{"cluster": {"name": "c", "profile_id": "p"}} {"cluster": {}}`, []string{"data after its JSON object"}},
		{"trailing garbage", "POST", "/v1/profiles", `{"profile": {"name": "p"}}xyz`, []string{"data after its JSON object"}},
		{"duplicate key", "POST", "/v1/clusters", `{"cluster": {"name": "a", "profile_id": "p", "name": "b"}}`, []string{"cluster", `"name" appears twice`}},
		{"duplicate envelope", "POST", "/v1/clusters", `{"cluster": {"name": "a"}, "cluster": {"name": "b", "profile_id": "p"}}`, []string{`"cluster" appears twice`}},
		{"duplicate nested key", "POST", "/v1/clusters/x/actions", `{"scale_out": {"count": 1, "count": 2}}`, []string{"scale_out", `"count" appears twice`}},
		{"too deep", "POST", "/v1/clusters", `{"cluster": {"name": "c", "profile_id": "p", "metadata": ` + nested + `}}`, []string{"cluster.metadata.a", "more than 32 deep"}},
		{"long key", "POST", "/v1/clusters", cluster(map[string]any{"metadata": map[string]any{strings.Repeat("k", 300): 1}}), []string{"cluster.metadata", "key of 300 bytes", "255"}},
		{"long string", "POST", "/v1/profiles", profile(map[string]any{"command": []any{strings.Repeat("s", 70000)}}), []string{"profile.spec.properties.command[0]", "string of 70000 bytes", "65536"}},
		{"number out of float range", "POST", "/v1/clusters", `{"cluster": {"name": "c", "profile_id": "p", "timeout": 1e400}}`, []string{"cluster.timeout", "1e400", "too large"}},
		{"not an object", "POST", "/v1/clusters", `[{"cluster": {}}]`, []string{"must be a JSON object"}},
		{"invalid JSON", "POST", "/v1/clusters", `{"cluster": {"name": }}`, []string{"not valid JSON"}},
		{"empty body", "POST", "/v1/clusters", ``, []string{"ends before"}},
		{"long cluster name", "POST", "/v1/clusters", cluster(map[string]any{"name": long}), []string{"name must be at most 255 characters, got 256"}},
		{"long profile name", "POST", "/v1/profiles", `{"profile": {"name": "` + long + `"}}`, []string{"name must be at most 255 characters, got 256"}},
		{"long profile reference", "POST", "/v1/clusters", cluster(map[string]any{"profile_id": long}), []string{"profile_id must be at most 255 characters"}},
		{"long node role", "POST", "/v1/nodes", `{"node": {"name": "n", "profile_id": "p", "role": "` + long + `"}}`, []string{"role must be at most 255 characters"}},
		{"NUL in node role", "POST", "/v1/nodes", `{"node": {"name": "n", "profile_id": "p", "role": "db\u0000"}}`, []string{`role "db\x00" is not valid`, "control characters"}},
		{"ESC in adopted role", "POST", "/v1/nodes/adopt", `{"identity": "1", "type": "local.process-1.0", "role": "\u001b[31mred"}`, []string{`role "\x1b[31mred" is not valid`, "control characters"}},
		{"long rename", "PATCH", "/v1/clusters/x", `{"cluster": {"name": "` + long + `"}}`, []string{"name must be at most 255 characters"}},
		{"too many metadata keys", "POST", "/v1/clusters", cluster(map[string]any{"metadata": manyKeys}), []string{"metadata has 129 keys", "at most 128"}},
		{"large metadata value", "POST", "/v1/clusters", cluster(map[string]any{"metadata": map[string]any{"big": []any{strings.Repeat("v", 9000), strings.Repeat("v", 9000)}}}), []string{"metadata.big", "at most 16384 bytes"}},
		{"empty metadata key", "PATCH", "/v1/profiles/x", `{"profile": {"metadata": {"": 1}}}`, []string{"metadata", "keys must not be empty"}},
		{"timeout wraps a duration", "POST", "/v1/clusters", cluster(map[string]any{"timeout": 18446744074}), []string{"timeout", "at most 2147483647", "got 18446744074"}},
		{"huge desired", "POST", "/v1/clusters", cluster(map[string]any{"desired_capacity": 1e20}), []string{"desired_capacity", "at most 2147483647", "got 100000000000000000000"}},
		{"huge min_size", "POST", "/v1/clusters", cluster(map[string]any{"min_size": 9223372036854775807}), []string{"min_size", "at most 2147483647", "got 9223372036854775808"}},
		{"huge max_size as a string", "POST", "/v1/clusters", cluster(map[string]any{"max_size": "4294967296"}), []string{"max_size must be at least -1 and at most 2147483647, got 4294967296"}},
		{"very negative max_size", "POST", "/v1/clusters", cluster(map[string]any{"max_size": -1e19}), []string{"max_size", "at least -1", "got -10000000000000000000"}},
		{"digit separator in a numeric string", "POST", "/v1/clusters", cluster(map[string]any{"desired_capacity": "1_0"}), []string{`desired_capacity must be an integer, got "1_0".`}},
		{"hexadecimal float string", "POST", "/v1/clusters", cluster(map[string]any{"min_size": "0x1p3"}), []string{`min_size must be an integer, got "0x1p3".`}},
		{"NaN string", "PATCH", "/v1/clusters/x", `{"cluster": {"timeout": "NaN"}}`, []string{`timeout must be an integer, got "NaN".`}},
		{"huge update timeout", "PATCH", "/v1/clusters/x", `{"cluster": {"timeout": 18446744074}}`, []string{"timeout", "at most 2147483647", "got 18446744074"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			status, eb := send(t, ts, c.method, c.path, strings.NewReader(c.body), int64(len(c.body)))
			if status != http.StatusBadRequest || eb.Error.Type != "BadRequest" {
				t.Fatalf("want a 400 BadRequest, got %d %+v", status, eb)
			}
			for _, w := range c.want {
				if !strings.Contains(eb.Error.Message, w) {
					t.Errorf("message %q does not contain %q", eb.Error.Message, w)
				}
			}
		})
	}
	for _, coll := range []string{"profiles", "clusters", "nodes", "actions"} {
		resp, err := ts.Client().Get(ts.URL + "/v1/" + coll)
		if err != nil {
			t.Fatal(err)
		}
		var body map[string][]any
		if err := json.NewDecoder(resp.Body).Decode(&body); err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if len(body[coll]) != 0 {
			t.Errorf("a refused request wrote %s: %v", coll, body[coll])
		}
	}
}
