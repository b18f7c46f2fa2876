package cli

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
)

// TestClusterInstanceCommands: grove cluster freeze, thaw and clear send
// the action with the host when -host names one and with no parameters
// otherwise, and print the action's id.
func TestClusterInstanceCommands(t *testing.T) {
	var mu sync.Mutex
	var bodies []map[string]any
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		if r.Method != http.MethodPost || r.URL.Path != "/v1/clusters/ha/actions" {
			w.WriteHeader(http.StatusNotFound)
			w.Write([]byte(`{"code":404,"error":{"code":404,"type":"ResourceNotFound","message":"not here"}}`))
			return
		}
		b, _ := io.ReadAll(r.Body)
		var m map[string]any
		if err := json.Unmarshal(b, &m); err != nil {
			w.WriteHeader(http.StatusBadRequest)
			return
		}
		mu.Lock()
		bodies = append(bodies, m)
		mu.Unlock()
		w.Header().Set("Location", "/v1/actions/a1b2c3d4-0000-4000-8000-000000000001")
		w.WriteHeader(http.StatusAccepted)
		w.Write([]byte(`{"action":"a1b2c3d4-0000-4000-8000-000000000001"}`))
	}))
	t.Cleanup(srv.Close)
	t.Setenv("GROVE_ADDR", srv.URL)
	t.Setenv("GROVE_TOKEN", "")
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"cluster", "freeze", "ha"}, `{"freeze":{}}`},
		{[]string{"cluster", "freeze", "-host", "h1", "ha"}, `{"freeze":{"host":"h1"}}`},
		{[]string{"cluster", "thaw", "--host", "h2", "ha"}, `{"thaw":{"host":"h2"}}`},
		{[]string{"cluster", "clear", "ha"}, `{"clear":{}}`},
		{[]string{"cluster", "switch", "-host", "h2", "ha"}, `{"switch":{"host":"h2"}}`},
		{[]string{"cluster", "giveback", "ha"}, `{"giveback":{}}`},
		{[]string{"cluster", "start", "ha"}, `{"start":{}}`},
		{[]string{"cluster", "stop", "ha"}, `{"stop":{}}`},
	} {
		mu.Lock()
		bodies = nil
		mu.Unlock()
		out, errOut, code := grove(t, c.args...)
		if code != 0 || !strings.Contains(out+errOut, "a1b2c3d4") {
			t.Fatalf("grove %v: exit %d, %q %q", c.args, code, out, errOut)
		}
		mu.Lock()
		got, _ := json.Marshal(bodies)
		mu.Unlock()
		if string(got) != "["+c.want+"]" {
			t.Errorf("grove %v sent %s; want %s", c.args, got, c.want)
		}
	}
	if _, errOut, code := grove(t, "cluster", "clear"); code == 0 || !strings.Contains(errOut, "usage: grove cluster clear [-host HOST] <cluster>") {
		t.Errorf("grove cluster clear with no cluster: exit %d %q", code, errOut)
	}
}

// TestClusterSwitchWait: with -wait, switch waits past its action until
// the cluster's expectation ended: reached exits 0, failed or cancelled (a
// freeze of the cluster) exits non-zero with the reason. Without -host it is a usage error.
func TestClusterSwitchWait(t *testing.T) {
	const id = "a1b2c3d4-0000-4000-8000-000000000002"
	var mu sync.Mutex
	polls, result := 0, ""
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		mu.Lock()
		defer mu.Unlock()
		switch {
		case r.Method == http.MethodPost && r.URL.Path == "/v1/clusters/ha/actions":
			w.Header().Set("Location", "/v1/actions/"+id)
			w.WriteHeader(http.StatusAccepted)
			w.Write([]byte(`{"action":"` + id + `"}`))
		case r.URL.Path == "/v1/actions/"+id:
			w.Write([]byte(`{"action":{"id":"` + id + `","name":"cluster_switch","action":"CLUSTER_SWITCH","status":"SUCCEEDED","status_reason":"set"}}`))
		case r.URL.Path == "/v1/clusters/ha":
			// Pending for two polls, then ended with the result.
			polls++
			x := `{"kind":"switch","host":"h2","action":"` + id + `"}`
			if polls > 2 {
				x = `{"kind":"","action":"` + id + `","result":"` + result + `"}`
			}
			w.Write([]byte(`{"cluster":{"id":"c1","name":"ha","expect":` + x + `}}`))
		default:
			w.WriteHeader(http.StatusNotFound)
			w.Write([]byte(`{"code":404,"error":{"code":404,"type":"ResourceNotFound","message":"not here"}}`))
		}
	}))
	t.Cleanup(srv.Close)
	t.Setenv("GROVE_ADDR", srv.URL)
	t.Setenv("GROVE_TOKEN", "")
	for _, c := range []struct {
		result string
		code   int
		reason string
	}{{"reached: up on h2", 0, ""}, {"failed: the start on h2 failed", 1, "the start on h2 failed"},
		{"cancelled: the cluster was frozen by action f00", 1, "the cluster was frozen by action f00"}} {
		mu.Lock()
		polls, result = 0, c.result
		mu.Unlock()
		out, errOut, code := grove(t, "cluster", "switch", "-host", "h2", "-wait", "ha")
		if (code == 0) != (c.code == 0) {
			t.Errorf("%s: exit %d, %q %q", c.result, code, out, errOut)
		}
		mu.Lock()
		if polls < 3 {
			t.Errorf("%s: the cluster was read %d times; want it waited for past the pending reads", c.result, polls)
		}
		mu.Unlock()
		if c.code != 0 && !strings.Contains(errOut, c.reason) {
			t.Errorf("%s: %q, want the reason", c.result, errOut)
		}
	}
	if _, errOut, code := grove(t, "cluster", "switch", "ha"); code == 0 || !strings.Contains(errOut, "usage: grove cluster switch -host HOST <cluster>") {
		t.Errorf("switch without -host: exit %d %q", code, errOut)
	}
}
