package server_test

import (
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/grovehq/grove/core/model"
	"github.com/grovehq/grove/core/server"
)

// TestClusterAttrs: collect evaluates a JSONPath over each node (Senlin's
// cluster_attributes), leaves out nodes it matches nothing in, answers
// wildcards in a stable order, and refuses paths that are too long, too
// deep or hold filters, naming the rule.
func TestClusterAttrs(t *testing.T) {
	a := newAuthAPI(t, server.Options{})
	member := a.token("p", model.RoleMember)
	cl := a.newCluster(member, "web", 2)
	var nodes struct {
		Nodes []struct {
			ID    string `json:"id"`
			Index int    `json:"index"`
		} `json:"nodes"`
	}
	a.must(member, http.MethodGet, "/v1/nodes?cluster_id="+cl+"&sort=index", nil, &nodes)
	if len(nodes.Nodes) != 2 {
		t.Fatalf("nodes: %+v", nodes)
	}
	// Tag one node's metadata so a path matches it alone.
	a.waitAction(member, a.must(member, http.MethodPatch, "/v1/nodes/"+nodes.Nodes[1].ID, map[string]any{"node": map[string]any{"metadata": map[string]any{"zone": "b", "rack": "r1"}}}, nil))

	type attrs struct {
		Attrs []struct {
			ID    string `json:"id"`
			Value any    `json:"value"`
		} `json:"cluster_attributes"`
	}
	get := func(path string) attrs {
		t.Helper()
		var out attrs
		a.must(member, http.MethodGet, "/v1/clusters/web/attrs/"+url.PathEscape(path), nil, &out)
		return out
	}
	if got := get("index"); len(got.Attrs) != 2 || got.Attrs[0].ID != nodes.Nodes[0].ID || got.Attrs[0].Value != float64(1) || got.Attrs[1].Value != float64(2) {
		t.Errorf("index: %+v", got)
	}
	if got := get("$.metadata.zone"); len(got.Attrs) != 1 || got.Attrs[0].ID != nodes.Nodes[1].ID || got.Attrs[0].Value != "b" {
		t.Errorf("metadata.zone matches one node: %+v", got)
	}
	for range 5 {
		got := get("metadata.*")
		b, _ := json.Marshal(got.Attrs[0].Value)
		if len(got.Attrs) != 1 || string(b) != `["b","r1"]` {
			t.Fatalf("metadata.* must list every match in a stable order: %s", b)
		}
	}
	if got := get("metadata.nope"); len(got.Attrs) != 0 {
		t.Errorf("a path matching nothing: %+v", got)
	}

	for path, want := range map[string]string{
		strings.Repeat("a", 300):       "at most 256 bytes",
		strings.Repeat("a.", 20) + "a": "at most 16 are allowed",
		"metadata[?(@.zone == 'b')]":   "filter or script",
		"metadata[":                    "Illegal attribute path",
	} {
		ans := a.call(member, http.MethodGet, "/v1/clusters/web/attrs/"+url.PathEscape(path), nil)
		if ans.status != http.StatusBadRequest || !strings.Contains(ans.body, want) {
			t.Errorf("%q: %d %s; want 400 with %q", path, ans.status, ans.body, want)
		}
	}
	if ans := a.call(a.token("q", model.RoleMember), http.MethodGet, "/v1/clusters/"+cl+"/attrs/index", nil); ans.status != http.StatusNotFound {
		t.Errorf("another project's cluster: %d %s", ans.status, ans.body)
	}
}
