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
