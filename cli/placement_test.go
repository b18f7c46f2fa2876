package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
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
	if _, errOut, code := grove(t, "placement", "simulate", "-f", filepath.Join(dir, "missing.json")); code != 1 || !strings.Contains(errOut, "reading the snapshot") {
		t.Errorf("missing file: exit %d, %q", code, errOut)
	}
}
