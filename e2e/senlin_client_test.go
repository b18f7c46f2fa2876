package e2e

import (
	"net/http"
	"testing"
	"time"

	"github.com/gophercloud/gophercloud"
	"github.com/gophercloud/gophercloud/openstack/clustering/v1/actions"
	"github.com/gophercloud/gophercloud/openstack/clustering/v1/clusters"
	"github.com/gophercloud/gophercloud/openstack/clustering/v1/nodes"
	"github.com/gophercloud/gophercloud/openstack/clustering/v1/policies"
	"github.com/gophercloud/gophercloud/openstack/clustering/v1/profiles"
	"github.com/gophercloud/gophercloud/openstack/clustering/v1/profiletypes"
)

// TestSenlinClient drives the agent with gophercloud's unmodified Senlin
// (clustering v1) client: Grove's API must be wire-compatible with it.
func TestSenlinClient(t *testing.T) {
	a := startAgent(t, t.TempDir())
	t.Cleanup(func() { killProcessesOf("senlin") })
	sc := &gophercloud.ServiceClient{
		ProviderClient: &gophercloud.ProviderClient{HTTPClient: http.Client{Timeout: time.Minute}},
		Endpoint:       a.addr + "/", // gophercloud adds v1/ itself
		Type:           "clustering",
		Microversion:   "1.12",
	}
	wait := func(id string) {
		t.Helper()
		eventually(t, time.Minute, "action "+id, func() (bool, string) {
			act, err := actions.Get(sc, id).Extract()
			if err != nil {
				return false, err.Error()
			}
			if act.Status == "FAILED" || act.Status == "CANCELLED" {
				t.Fatalf("action %s %s: %s", act.Action, act.Status, act.StatusReason)
			}
			return act.Status == "SUCCEEDED", act.Status
		})
	}

	pages, err := profiletypes.List(sc).AllPages()
	if err != nil {
		t.Fatal(err)
	}
	types, err := profiletypes.ExtractProfileTypes(pages)
	if err != nil || len(types) == 0 {
		t.Fatalf("profile types: %v %v", types, err)
	}

	prof, err := profiles.Create(sc, profiles.CreateOpts{Name: "senlin-web", Spec: profiles.Spec{
		Type: "local.process", Version: "1.0", Properties: map[string]interface{}{"command": []interface{}{groveBin, "demo-http"}},
	}}).Extract()
	if err != nil {
		t.Fatalf("create profile: %v", err)
	}
	if prof.Type != "local.process-1.0" {
		t.Errorf("profile type %q", prof.Type)
	}
	_, err = policies.Create(sc, policies.CreateOpts{Name: "senlin-del", Spec: policies.Spec{
		Type: "senlin.policy.deletion", Version: "1.1", Properties: map[string]interface{}{"criteria": "YOUNGEST_FIRST"},
	}}).Extract()
	if err != nil {
		t.Fatalf("create policy: %v", err)
	}

	res := clusters.Create(sc, clusters.CreateOpts{Name: "senlin", ProfileID: "senlin-web", DesiredCapacity: 2, MaxSize: 5})
	cl, err := res.Extract()
	if err != nil || cl.Name != "senlin" {
		t.Fatalf("create cluster: %+v %v", cl, err)
	}
	loc := res.Header.Get("Location")
	if len(loc) < len("/v1/actions/") {
		t.Fatalf("no Location header: %v", res.Header)
	}
	wait(loc[len("/v1/actions/"):])
	cl, err = clusters.Get(sc, "senlin").Extract()
	if err != nil || cl.Status != "ACTIVE" || len(cl.Nodes) != 2 {
		t.Fatalf("get cluster: %+v %v", cl, err)
	}

	id, err := clusters.AttachPolicy(sc, cl.ID, clusters.AttachPolicyOpts{PolicyID: "senlin-del"}).Extract()
	if err != nil {
		t.Fatalf("attach policy: %v", err)
	}
	wait(id)
	three := 3 // nodes to add
	id, err = clusters.ScaleOut(sc, cl.ID, clusters.ScaleOutOpts{Count: three}).Extract()
	if err != nil {
		t.Fatalf("scale out: %v", err)
	}
	wait(id)
	number := 4
	id, err = clusters.Resize(sc, cl.ID, clusters.ResizeOpts{AdjustmentType: clusters.ExactCapacityAdjustment, Number: number}).Extract()
	if err != nil {
		t.Fatalf("resize: %v", err)
	}
	wait(id)
	pages, err = nodes.List(sc, nodes.ListOpts{ClusterID: cl.ID}).AllPages()
	if err != nil {
		t.Fatal(err)
	}
	ns, err := nodes.ExtractNodes(pages)
	if err != nil || len(ns) != 4 {
		t.Fatalf("nodes after resize: %d %v", len(ns), err)
	}
	id, err = clusters.Check(sc, cl.ID).Extract()
	if err != nil {
		t.Fatalf("check: %v", err)
	}
	wait(id)
	// Node operations, as Senlin's client sends them ({"stop": null}).
	for _, step := range []struct {
		op     nodes.OperationName
		status string
	}{{"stop", "WARNING"}, {"start", "ACTIVE"}} {
		id, err = nodes.Ops(sc, ns[0].ID, nodes.OperationOpts{Operation: step.op}).Extract()
		if err != nil {
			t.Fatalf("node op %s: %v", step.op, err)
		}
		wait(id)
		if n, err := nodes.Get(sc, ns[0].ID).Extract(); err != nil || n.Status != step.status {
			t.Fatalf("node after %s: %+v %v, want %s", step.op, n, err, step.status)
		}
	}
	all, err := clusters.List(sc, clusters.ListOpts{Name: "senlin"}).AllPages()
	if err != nil {
		t.Fatal(err)
	}
	list, err := clusters.ExtractClusters(all)
	if err != nil || len(list) != 1 || list[0].DesiredCapacity != 4 {
		t.Fatalf("list clusters: %+v %v", list, err)
	}
	dres := clusters.Delete(sc, cl.ID)
	if dres.Err != nil {
		t.Fatalf("delete: %v", dres.Err)
	}
	eventually(t, time.Minute, "the cluster to be deleted", func() (bool, string) {
		_, err := clusters.Get(sc, cl.ID).Extract()
		_, gone := err.(gophercloud.ErrDefault404)
		return gone, ""
	})
}
