package e2e

import (
	"net/http"
	"regexp"
	"strconv"
	"testing"

	"github.com/grovehq/grove/api"
)

// TestNodeNames covers node naming through the API as Senlin has it since
// Queens (conductor node_create: "we use requested name only when cluster is
// not specified"): a node created into a cluster is named by the cluster's
// node.name.format at the cluster's next index, whatever name the request
// gave; an orphan keeps its name. $I and $R without a width are the index
// unpadded and 8 random characters.
func TestNodeNames(t *testing.T) {
	a := startAgent(t, t.TempDir())
	noopProfile(a, "p", 0)
	a.waitAction(a.createCluster("named", "p", 2, map[string]any{"config": map[string]any{"node.name.format": "db-$I-$R"}}))
	format := regexp.MustCompile(`^db-(\d+)-[A-Za-z][A-Za-z0-9]{7}$`)
	for _, n := range a.nodes(a.cluster("named").ID) {
		if m := format.FindStringSubmatch(n.Name); m == nil || m[1] != strconv.Itoa(n.Index) {
			t.Errorf("cluster node %d is named %q, want db-%d-<8 random>", n.Index, n.Name, n.Index)
		}
	}

	var created struct {
		Node api.Node `json:"node"`
	}
	r := a.mustDo(http.MethodPost, "/v1/nodes", map[string]any{"node": map[string]any{"name": "chosen", "profile_id": "p", "cluster_id": "named"}}, &created)
	a.waitAction(r.ActionID())
	var got struct {
		Node api.Node `json:"node"`
	}
	a.mustDo(http.MethodGet, "/v1/nodes/"+created.Node.ID, nil, &got)
	if m := format.FindStringSubmatch(got.Node.Name); m == nil || m[1] != "3" || got.Node.Index != 3 {
		t.Errorf("node created into the cluster: name %q index %d, want db-3-<8 random> at index 3", got.Node.Name, got.Node.Index)
	}
	if created.Node.Name != got.Node.Name {
		t.Errorf("POST /v1/nodes answered the name %q but the node is named %q", created.Node.Name, got.Node.Name)
	}

	r = a.mustDo(http.MethodPost, "/v1/nodes", map[string]any{"node": map[string]any{"name": "loner", "profile_id": "p"}}, &created)
	a.waitAction(r.ActionID())
	a.mustDo(http.MethodGet, "/v1/nodes/"+created.Node.ID, nil, &got)
	if got.Node.Name != "loner" || got.Node.Index != -1 {
		t.Errorf("orphan node: name %q index %d, want loner at index -1", got.Node.Name, got.Node.Index)
	}
}
