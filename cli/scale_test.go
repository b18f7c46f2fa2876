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

// TestScaleCountExplicit: an explicit -count of 0 or less is refused
// before anything is sent (it once read as "not given", and scale-in
// removed a node), while a positive one is sent as given and no -count
// sends none.
func TestScaleCountExplicit(t *testing.T) {
	var mu sync.Mutex
	var posted []map[string]map[string]any
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost || r.URL.Path != "/v1/clusters/web/actions" {
			http.NotFound(w, r)
			return
		}
		var body map[string]map[string]any
		b, _ := io.ReadAll(r.Body)
		if err := json.Unmarshal(b, &body); err != nil {
			t.Errorf("action body %q: %v", b, err)
		}
		mu.Lock()
		posted = append(posted, body)
		mu.Unlock()
		w.Header().Set("Location", "/v1/actions/a1")
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusAccepted)
		w.Write([]byte(`{"action":"a1"}`))
	}))
	t.Cleanup(srv.Close)
	t.Setenv("GROVE_ADDR", srv.URL)
	t.Setenv("GROVE_TOKEN", "")

	for _, verb := range []string{"scale-in", "scale-out"} {
		for _, n := range []string{"0", "-1"} {
			_, errOut, code := grove(t, "cluster", verb, "-count", n, "web")
			if code != 2 || !strings.Contains(errOut, "-count must be a positive number of nodes, got "+n) {
				t.Errorf("grove cluster %s -count %s: exit %d, stderr %q; want 2 and the -count rule", verb, n, code, errOut)
			}
		}
	}
	mu.Lock()
	refused := len(posted)
	mu.Unlock()
	if refused != 0 {
		t.Fatalf("refused -count values still sent %d actions: %v", refused, posted)
	}

	for _, tc := range []struct {
		args []string
		want map[string]any
	}{
		{[]string{"cluster", "scale-in", "-count", "2", "web"}, map[string]any{"count": float64(2)}},
		{[]string{"cluster", "scale-out", "web"}, map[string]any{}},
	} {
		mu.Lock()
		posted = nil
		mu.Unlock()
		if _, errOut, code := grove(t, tc.args...); code != 0 {
			t.Errorf("grove %v: exit %d, stderr %q", tc.args, code, errOut)
		}
		mu.Lock()
		got := posted
		mu.Unlock()
		name := strings.ReplaceAll(tc.args[1], "-", "_")
		if len(got) != 1 || len(got[0][name]) != len(tc.want) || got[0][name]["count"] != tc.want["count"] {
			t.Errorf("grove %v sent %v; want one %s with %v", tc.args, got, name, tc.want)
		}
	}
}
