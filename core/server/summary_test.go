package server_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/gophercloud/gophercloud"
	"github.com/gophercloud/gophercloud/openstack/clustering/v1/actions"
	"github.com/gophercloud/gophercloud/openstack/clustering/v1/clusters"
	"github.com/gophercloud/gophercloud/openstack/clustering/v1/nodes"
	"github.com/hashicorp/go-hclog"

	"github.com/grovehq/grove/api"
	"github.com/grovehq/grove/core/engine"
	"github.com/grovehq/grove/core/model"
	"github.com/grovehq/grove/core/server"
	"github.com/grovehq/grove/core/store"
	"github.com/grovehq/grove/core/store/sqlite"
	"github.com/grovehq/grove/plugins/host"
)

// storeServer serves the API of a real engine (not started) on a real
// SQLite store the test writes to directly.
func storeServer(t *testing.T) (*store.SQL, *httptest.Server) {
	t.Helper()
	st, err := sqlite.Open(t.Context(), filepath.Join(t.TempDir(), "grove.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	h := host.New(hclog.NewNullLogger(), t.TempDir())
	e := engine.New(st, h, hclog.NewNullLogger(), engine.Config{EngineID: "summary-test"})
	ts := httptest.NewServer(server.New(e, server.Options{Host: h, Dev: true}))
	t.Cleanup(ts.Close)
	return st, ts
}

// family writes a cluster of n nodes and a CLUSTER_CREATE action with one
// NODE_CREATE child per node; every tenth node and child failed. It
// returns the cluster's and the action's ids and the node and child ids
// in the order the API inlines them.
func family(t *testing.T, st store.Store, n int) (clusterID, actionID string, nodeIDs, childIDs []string) {
	t.Helper()
	ctx := t.Context()
	now := time.Now().UTC()
	clusterID, actionID = uuid.NewString(), uuid.NewString()
	cl := &model.Cluster{ID: clusterID, Name: "c" + clusterID[:8], ProfileID: "p", Project: model.DefaultProject, InitAt: now,
		DesiredCapacity: n, MaxSize: -1, Status: "ACTIVE"}
	if err := st.CreateCluster(ctx, cl); err != nil {
		t.Fatal(err)
	}
	parent := &model.Action{ID: actionID, Name: "create", ClusterID: clusterID, Target: clusterID, Action: "CLUSTER_CREATE",
		Cause: "RPC Request", Status: model.ActionSucceeded, Project: model.DefaultProject, CreatedAt: now}
	ns := make([]*model.Node, n)
	kids := make([]*model.Action, n)
	for i := range n {
		status, kidStatus := "ACTIVE", model.ActionSucceeded
		if i%10 == 0 {
			status, kidStatus = "ERROR", model.ActionFailed
		}
		ns[i] = &model.Node{ID: uuid.NewString(), Name: fmt.Sprintf("n-%d", i), ClusterID: clusterID, ProfileID: "p", Project: model.DefaultProject,
			Index: i + 1, InitAt: now, Status: status}
		kids[i] = &model.Action{ID: uuid.NewString(), Name: "node_create", ClusterID: clusterID, Target: ns[i].ID, Action: model.NodeCreateAction,
			Cause: model.CauseDerived, Status: kidStatus, ParentID: actionID, Project: model.DefaultProject, CreatedAt: now.Add(time.Duration(i) * time.Microsecond)}
		nodeIDs = append(nodeIDs, ns[i].ID)
		childIDs = append(childIDs, kids[i].ID)
	}
	if err := st.CreateNodes(ctx, ns); err != nil {
		t.Fatal(err)
	}
	if err := st.CreateActions(ctx, append([]*model.Action{parent}, kids...)); err != nil {
		t.Fatal(err)
	}
	return clusterID, actionID, nodeIDs, childIDs
}

// childPage lists an action's children with gophercloud's Senlin client:
// its actions.ListOpts has no parent_id, so a ListOptsBuilder adds it.
type childPage struct{ parent, marker string }

func (o childPage) ToActionListQuery() (string, error) {
	q := url.Values{"parent_id": {o.parent}, "limit": {fmt.Sprint(api.MaxInlineIDs)}}
	if o.marker != "" {
		q.Set("marker", o.marker)
	}
	return "?" + q.Encode(), nil
}

// TestLargeReadsAreSummarised: past api.MaxInlineIDs, GET /v1/clusters/{id}
// inlines its first node ids and GET /v1/actions/{id} its first child ids,
// each with a summary counting the whole list by status and the request
// that pages the rest; gophercloud's unmodified Senlin client decodes both
// the small and the summarised shapes and pages the rest. Neither read
// decodes a node or child row: only ids and counts are selected.
func TestLargeReadsAreSummarised(t *testing.T) {
	st, ts := storeServer(t)
	const big = api.MaxInlineIDs + 500
	bigCluster, bigAction, bigNodes, bigKids := family(t, st, big)
	smallCluster, smallAction, smallNodes, smallKids := family(t, st, 3)

	var mu sync.Mutex
	var queries []string
	st.TraceQueries(func(q string, _ []any) { mu.Lock(); queries = append(queries, q); mu.Unlock() })
	defer st.TraceQueries(nil)

	sc := &gophercloud.ServiceClient{
		ProviderClient: &gophercloud.ProviderClient{HTTPClient: http.Client{Timeout: time.Minute}},
		Endpoint:       ts.URL + "/",
		Type:           "clustering",
		Microversion:   "1.12",
	}
	raw := func(path string, into any) {
		t.Helper()
		resp, err := ts.Client().Get(ts.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("GET %s: HTTP %d", path, resp.StatusCode)
		}
		if err := json.NewDecoder(resp.Body).Decode(into); err != nil {
			t.Fatalf("GET %s: %v", path, err)
		}
	}

	// Small: the full lists, no summary.
	cl, err := clusters.Get(sc, smallCluster).Extract()
	if err != nil {
		t.Fatalf("gophercloud clusters.Get of a small cluster: %v", err)
	}
	if !slices.Equal(cl.Nodes, smallNodes) {
		t.Errorf("small cluster nodes %v, want %v", cl.Nodes, smallNodes)
	}
	act, err := actions.Get(sc, smallAction).Extract()
	if err != nil {
		t.Fatalf("gophercloud actions.Get of a small action: %v", err)
	}
	if !slices.Equal(act.DependsOn, smallKids) {
		t.Errorf("small action depends_on %v, want %v", act.DependsOn, smallKids)
	}
	var small struct {
		Cluster api.Cluster `json:"cluster"`
	}
	raw("/v1/clusters/"+smallCluster, &small)
	if small.Cluster.NodesSummary != nil {
		t.Errorf("a 3-node cluster has a nodes_summary: %+v", small.Cluster.NodesSummary)
	}

	// Large cluster: the first page inline, the summary, the rest by marker.
	mu.Lock()
	queries = queries[:0]
	mu.Unlock()
	cl, err = clusters.Get(sc, bigCluster).Extract()
	if err != nil {
		t.Fatalf("gophercloud clusters.Get of a %d-node cluster: %v", big, err)
	}
	if !slices.Equal(cl.Nodes, bigNodes[:api.MaxInlineIDs]) {
		t.Errorf("the large cluster inlines %d node ids, want its first %d by index", len(cl.Nodes), api.MaxInlineIDs)
	}
	var got struct {
		Cluster api.Cluster `json:"cluster"`
	}
	raw("/v1/clusters/"+bigCluster, &got)
	want := &api.IDsSummary{Total: big, Shown: api.MaxInlineIDs, ByStatus: map[string]int{"ACTIVE": big - big/10, "ERROR": big / 10},
		Next: fmt.Sprintf("/v1/nodes?cluster_id=%s&limit=%d&marker=%s&sort=index", bigCluster, api.MaxInlineIDs, bigNodes[api.MaxInlineIDs-1])}
	if s := got.Cluster.NodesSummary; s == nil || s.Total != want.Total || s.Shown != want.Shown || s.Next != want.Next ||
		fmt.Sprint(s.ByStatus) != fmt.Sprint(want.ByStatus) {
		t.Errorf("nodes_summary = %+v, want %+v", s, want)
	}
	next, _ := url.ParseQuery(strings.SplitN(want.Next, "?", 2)[1])
	pages, err := nodes.List(sc, nodes.ListOpts{ClusterID: next.Get("cluster_id"), Sort: next.Get("sort"), Limit: api.MaxInlineIDs,
		Marker: next.Get("marker")}).AllPages()
	if err != nil {
		t.Fatalf("gophercloud nodes.List from the summary's marker: %v", err)
	}
	rest, err := nodes.ExtractNodes(pages)
	if err != nil {
		t.Fatal(err)
	}
	restIDs := make([]string, len(rest))
	for i, n := range rest {
		restIDs[i] = n.ID
	}
	if !slices.Equal(restIDs, bigNodes[api.MaxInlineIDs:]) {
		t.Errorf("paging from the summary's marker returned %d nodes, want the other %d in index order", len(restIDs), big-api.MaxInlineIDs)
	}

	// Grove's Go client (the CLI's, the Terraform provider's) follows the
	// summary to every id.
	gc := api.NewClient(ts.URL)
	full, err := gc.GetCluster(t.Context(), bigCluster)
	if err != nil {
		t.Fatal(err)
	}
	all, err := gc.ClusterNodeIDs(t.Context(), full)
	if err != nil {
		t.Fatalf("api.Client.ClusterNodeIDs: %v", err)
	}
	if !slices.Equal(all, bigNodes) {
		t.Errorf("api.Client.ClusterNodeIDs returned %d ids, want all %d in index order", len(all), big)
	}

	// Large action: likewise, paged through GET /v1/actions?parent_id=.
	act, err = actions.Get(sc, bigAction).Extract()
	if err != nil {
		t.Fatalf("gophercloud actions.Get of an action with %d children: %v", big, err)
	}
	if !slices.Equal(act.DependsOn, bigKids[:api.MaxInlineIDs]) {
		t.Errorf("the large action inlines %d child ids, want its first %d by creation", len(act.DependsOn), api.MaxInlineIDs)
	}
	var gotA struct {
		Action api.Action `json:"action"`
	}
	raw("/v1/actions/"+bigAction, &gotA)
	wantA := &api.IDsSummary{Total: big, Shown: api.MaxInlineIDs,
		ByStatus: map[string]int{model.ActionSucceeded: big - big/10, model.ActionFailed: big / 10},
		Next:     fmt.Sprintf("/v1/actions?limit=%d&marker=%s&parent_id=%s", api.MaxInlineIDs, bigKids[api.MaxInlineIDs-1], bigAction)}
	if s := gotA.Action.DependsOnSummary; s == nil || s.Total != wantA.Total || s.Shown != wantA.Shown || s.Next != wantA.Next ||
		fmt.Sprint(s.ByStatus) != fmt.Sprint(wantA.ByStatus) {
		t.Errorf("depends_on_summary = %+v, want %+v", s, wantA)
	}
	if p := gotA.Action.Progress; p == nil || p.Nodes != big || p.Done != big-big/10 || p.Failed != big/10 {
		t.Errorf("progress = %+v, want %d nodes, %d done, %d failed", p, big, big-big/10, big/10)
	}
	apages, err := actions.List(sc, childPage{parent: bigAction, marker: bigKids[api.MaxInlineIDs-1]}).AllPages()
	if err != nil {
		t.Fatalf("gophercloud actions.List from the summary's marker: %v", err)
	}
	restA, err := actions.ExtractActions(apages)
	if err != nil {
		t.Fatal(err)
	}
	restAIDs := make([]string, len(restA))
	for i, a := range restA {
		restAIDs[i] = a.ID
	}
	if !slices.Equal(restAIDs, bigKids[api.MaxInlineIDs:]) {
		t.Errorf("paging children from the summary's marker returned %d actions, want the other %d in creation order", len(restAIDs), big-api.MaxInlineIDs)
	}

	// The show requests selected ids and counts, never whole node or child rows.
	mu.Lock()
	defer mu.Unlock()
	for _, q := range queries {
		if strings.Contains(q, "parent_id = ?") && strings.Contains(q, "inputs") && !strings.Contains(q, "LIMIT "+fmt.Sprint(api.MaxInlineIDs)) {
			t.Errorf("a show request decoded child actions: %s", q)
		}
		if strings.Contains(q, "FROM nodes WHERE cluster_id = ?") && strings.Contains(q, "state") {
			t.Errorf("a show request decoded nodes: %s", q)
		}
	}
}

// TestListDoesNotWaitForWrites: GET /v1/nodes answers while the engine
// holds a write transaction open, from the last committed state.
func TestListDoesNotWaitForWrites(t *testing.T) {
	st, ts := storeServer(t)
	clusterID, _, nodeIDs, _ := family(t, st, 3)
	ctx := t.Context()
	inTx := make(chan error, 1)
	release := make(chan struct{})
	done := make(chan error, 1)
	go func() {
		done <- st.InTx(ctx, func(tx store.Store) error {
			err := tx.SetNodeStatus(ctx, nodeIDs, "WARNING", "held by the test")
			inTx <- err
			<-release
			return err
		})
	}()
	if err := <-inTx; err != nil {
		close(release)
		t.Fatal(err)
	}
	deadline, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(deadline, http.MethodGet, ts.URL+"/v1/nodes?limit=10&cluster_id="+clusterID, nil)
	resp, err := ts.Client().Do(req)
	var body struct {
		Nodes []api.Node `json:"nodes"`
	}
	if err == nil {
		err = json.NewDecoder(resp.Body).Decode(&body)
		resp.Body.Close()
	}
	close(release)
	if txErr := <-done; txErr != nil {
		t.Fatal(txErr)
	}
	if err != nil {
		t.Fatalf("GET /v1/nodes waited for the open write transaction: %v", err)
	}
	if len(body.Nodes) != 3 {
		t.Fatalf("GET /v1/nodes listed %d nodes, want 3", len(body.Nodes))
	}
	for _, n := range body.Nodes {
		if n.Status == "WARNING" {
			t.Errorf("node %s shows the uncommitted status", n.ID)
		}
	}
}
