package e2e

import (
	"context"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gophercloud/gophercloud/v2"
	"github.com/gophercloud/gophercloud/v2/openstack/compute/v2/servers"
)

// TestNovaRegionPlacement: senlin.policy.region_placement over the two
// regions of a clouds.yaml cloud is followed by the Nova driver: with
// RegionTwo's compute endpoint a proxy in front of the same real Nova, the
// node placed in RegionTwo is booted, read and deleted through that
// endpoint and the RegionOne node never is. A region the cloud does not
// list fails the node creation naming it.
func TestNovaRegionPlacement(t *testing.T) {
	nv, c := nova(t)
	target, err := url.Parse(nv.Endpoint)
	if err != nil {
		t.Fatal(err)
	}
	target.Path = ""
	var mu sync.Mutex
	var seen []string
	proxy := httputil.NewSingleHostReverseProxy(target)
	two := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		seen = append(seen, r.Method+" "+r.URL.Path)
		mu.Unlock()
		proxy.ServeHTTP(w, r)
	}))
	t.Cleanup(two.Close)
	asked := func() string {
		mu.Lock()
		defer mu.Unlock()
		return strings.Join(seen, "\n")
	}
	dir := t.TempDir()
	clouds := `clouds:
  regional:
    auth_type: admin_token
    auth: {endpoint: "` + nv.Endpoint + `", token: "` + nv.Token + `"}
    image_endpoint_override: "` + nv.ImageEndpoint + `"
    region_name: RegionOne
    regions:
      - RegionOne
      - name: RegionTwo
        values: {auth: {endpoint: "` + two.URL + `/v2.1/"}}
`
	if err := os.WriteFile(filepath.Join(dir, "clouds.yaml"), []byte(clouds), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("OS_CLIENT_CONFIG_FILE", filepath.Join(dir, "clouds.yaml"))
	a := startAgent(t, dir, "-config", fastConfig(t, dir, ""))
	novaProfile(a, nv, "regional", map[string]any{"context": map[string]any{"cloud": "regional"}})
	a.waitAction(a.createCluster("rg", "regional", 0, nil))
	clusterID := a.cluster("rg").ID
	t.Cleanup(func() {
		for _, s := range clusterServers(t, c, clusterID) {
			_ = servers.Delete(context.Background(), c, s.ID).ExtractErr()
		}
	})
	policy := func(name string, regions ...string) {
		var list []any
		for _, r := range regions {
			list = append(list, map[string]any{"name": r})
		}
		a.mustDo(http.MethodPost, "/v1/policies", map[string]any{"policy": map[string]any{"name": name,
			"spec": map[string]any{"type": "senlin.policy.region_placement", "version": "1.0", "properties": map[string]any{"regions": list}}}}, nil)
	}
	policy("two-regions", "RegionOne", "RegionTwo")
	a.waitAction(a.clusterAction("rg", "policy_attach", map[string]any{"policy_id": "two-regions"}))
	a.waitAction(a.clusterAction("rg", "scale_out", map[string]any{"count": 2}))

	byRegion := map[string]string{}
	for _, n := range a.nodes(clusterID) {
		pl, _ := n.Data["placement"].(map[string]any)
		r, _ := pl["region_name"].(string)
		if n.Status != "ACTIVE" || n.PhysicalID == "" {
			t.Fatalf("node %s in %q: %s %s", n.Name, r, n.Status, n.StatusReason)
		}
		byRegion[r] = n.PhysicalID
	}
	one, two2 := byRegion["RegionOne"], byRegion["RegionTwo"]
	if len(byRegion) != 2 || one == "" || two2 == "" {
		t.Fatalf("servers by region %v, want one in each", byRegion)
	}
	got := asked()
	if strings.Count(got+"\n", "POST /v2.1/servers\n") != 1 || !strings.Contains(got, "GET /v2.1/servers/"+two2) {
		t.Errorf("RegionTwo's endpoint did not boot exactly one server and read server %s:\n%s", two2, got)
	}
	if strings.Contains(got, one) {
		t.Errorf("RegionTwo's endpoint touched RegionOne's server %s:\n%s", one, got)
	}

	a.waitAction(a.clusterAction("rg", "policy_detach", map[string]any{"policy_id": "two-regions"}))
	policy("mars", "Mars")
	a.waitAction(a.clusterAction("rg", "policy_attach", map[string]any{"policy_id": "mars"}))
	act := a.waitFailed(a.clusterAction("rg", "scale_out", map[string]any{"count": 1}))
	if !strings.Contains(act.StatusReason, `has no region "Mars"`) || !strings.Contains(act.StatusReason, "RegionOne, RegionTwo") {
		t.Errorf("a node placed in a region the cloud does not list: %s", act.StatusReason)
	}

	a.waitAction(a.mustDo(http.MethodDelete, "/v1/clusters/rg", nil, nil).ActionID())
	if got := asked(); !strings.Contains(got, "DELETE /v2.1/servers/"+two2) || strings.Contains(got, "DELETE /v2.1/servers/"+one) {
		t.Errorf("the cluster's deletion did not delete RegionTwo's server through RegionTwo's endpoint alone:\n%s", got)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	for _, id := range []string{one, two2} {
		eventually(t, time.Minute, "server "+id+" deleted", func() (bool, string) {
			s, err := servers.Get(ctx, c, id).Extract()
			return gophercloud.ResponseCodeIs(err, 404) || (err == nil && s.Status == "DELETED"), ""
		})
	}
}
