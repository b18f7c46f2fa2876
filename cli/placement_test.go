package cli

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/grovehq/grove/core/orchestrator/placement"
)

// TestPlacementSimulate: the decision prints as a table or as JSON, and
// bad input is an error naming the file and the field.
func TestPlacementSimulate(t *testing.T) {
	dir := t.TempDir()
	write := func(name, body string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	good := write("good.json", `{"cluster":"web","add":2,"policy":{"hard_anti_affinity":["db"]},
		"hosts":[{"name":"a"},{"name":"b","frozen":true},{"name":"c"}],"instances":[{"cluster":"db","host":"a"}]}`)
	out, errOut, code := grove(t, "placement", "simulate", "-f", good)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	for _, want := range []string{"1     c     -      0\n", "-     a     AL     0      hard anti-affinity: db runs here\n", "-     b     F      0      frozen\n",
		"Leader: c (natural leader: a)\n", "New nodes: c, c\n"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	out, _, code = grove(t, "placement", "simulate", "-json", "-f", good)
	var d struct {
		Place  []string `json:"place"`
		Leader string   `json:"leader"`
	}
	if err := json.Unmarshal([]byte(out), &d); code != 0 || err != nil || d.Leader != "c" || strings.Join(d.Place, ",") != "c,c" {
		t.Errorf("-json: exit %d, %v, %+v\n%s", code, err, d, out)
	}
	for _, tc := range []struct{ name, body, want string }{
		{"unknown.json", `{"cluster":"web","hosts":[{"name":"a","labells":{}}]}`, `unknown.json: the snapshot has an unknown field "labells"`},
		{"constraint.json", `{"cluster":"web","policy":{"constraints":"labels.zone = \"a\""}}`, `constraint.json: policy.constraints: the expression does not compile`},
		{"policy.json", `{"cluster":"web","policy":{"placement":"load-avg"}}`, `policy.json: policy.placement: "load-avg" is not a placement policy`},
	} {
		_, errOut, code := grove(t, "placement", "simulate", "-f", write(tc.name, tc.body))
		if code != 1 || !strings.Contains(errOut, tc.want) {
			t.Errorf("%s: exit %d, stderr %q, want %q", tc.name, code, errOut, tc.want)
		}
	}
	if _, errOut, code := grove(t, "placement", "simulate"); code != 2 || !strings.Contains(errOut, "usage: grove placement simulate -f SNAPSHOT.json") {
		t.Errorf("without -f: exit %d, %q", code, errOut)
	}
	if _, errOut, code := grove(t, "placement", "simulate", "-f", filepath.Join(dir, "missing.json")); code != 1 || !strings.Contains(errOut, "Cannot read the snapshot -f: open "+filepath.Join(dir, "missing.json")) {
		t.Errorf("missing file: exit %d, %q", code, errOut)
	}
}

// TestPlacementSimulateMonitor: with a monitor object, -json prints the
// placement and every host's monitor step.
func TestPlacementSimulateMonitor(t *testing.T) {
	p := filepath.Join(t.TempDir(), "m.json")
	body := `{"cluster":"web","hosts":[{"name":"a"},{"name":"b"}],"monitor":{"orchestrate":"ha","instances":[
		{"host":"a","status":"down","state":"stop failed"},{"host":"b","status":"down","state":"idle"}]}}`
	if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	out, errOut, code := grove(t, "placement", "simulate", "-json", "-f", p)
	var got struct {
		Placement struct {
			Leader string `json:"leader"`
		} `json:"placement"`
		Monitor []struct {
			Host, Next, Action string
		} `json:"monitor"`
	}
	if err := json.Unmarshal([]byte(out), &got); code != 0 || err != nil {
		t.Fatalf("exit %d, %v: %s%s", code, err, out, errOut)
	}
	if got.Placement.Leader != "a" || len(got.Monitor) != 2 || got.Monitor[0].Next != "stop failed" || got.Monitor[1].Next != "ready" {
		t.Errorf("%+v", got)
	}
}

// TestClusterPlacement: grove cluster placement asks the agent's
// /v1/clusters/{id}/placement and prints the decision as simulate does.
func TestClusterPlacement(t *testing.T) {
	d, err := placement.Decide(placement.Snapshot{Cluster: "web", Add: 1, Policy: placement.Policy{Constraints: `labels.zone == "a"`},
		Hosts: []placement.Host{{Name: "h1", Labels: map[string]string{"zone": "b"}}, {Name: "h2", Labels: map[string]string{"zone": "a"}}}})
	if err != nil {
		t.Fatal(err)
	}
	var asked string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		asked = r.Method + " " + r.URL.Path
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]any{"cluster": "web", "placement": d})
	}))
	t.Cleanup(srv.Close)
	t.Setenv("GROVE_ADDR", srv.URL)
	t.Setenv("GROVE_TOKEN", "grove_test")
	out, errOut, code := grove(t, "cluster", "placement", "web")
	if code != 0 || asked != "GET /v1/clusters/web/placement" {
		t.Fatalf("exit %d, asked %q: %s", code, asked, errOut)
	}
	for _, want := range []string{`Cluster web, placement "nodes order": 1 of 2 hosts ranked.`, "1     h2    -      0\n",
		"-     h1    CL     0      the constraints are false on it\n", "Leader: h2 (natural leader: h1)\n", "New nodes: h2\n"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
}
