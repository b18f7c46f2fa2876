package engine_test

import (
	"errors"
	"fmt"
	"sync"
	"testing"

	"github.com/grovehq/grove/core/engine"
	"github.com/grovehq/grove/core/store"
)

// TestDeleteProfileRacingCreates: a profile deleted while clusters and
// nodes are being created from it either refuses (in use) or makes the
// creations fail (not found); it never does both, which used to leave a
// cluster or node whose profile was gone and that nothing could delete.
func TestDeleteProfileRacingCreates(t *testing.T) {
	h := newHarness(t, nil)
	for i := range 20 {
		name := fmt.Sprintf("racy-%d", i)
		h.profile(name)
		var wg sync.WaitGroup
		var delErr, clErr, nodeErr error
		wg.Go(func() { delErr = h.eng.DeleteProfile(h.ctx(), caller, name) })
		wg.Go(func() {
			zero := 0
			_, _, clErr = h.eng.CreateCluster(h.ctx(), caller, engine.ClusterCreate{Name: name, Profile: name, DesiredCapacity: &zero})
		})
		wg.Go(func() {
			_, _, nodeErr = h.eng.CreateNode(h.ctx(), caller, engine.NodeCreate{Name: name, Profile: name})
		})
		wg.Wait()
		if delErr == nil && (clErr == nil || nodeErr == nil) {
			t.Fatalf("round %d: the profile was deleted and a creation from it accepted (cluster: %v, node: %v)", i, clErr, nodeErr)
		}
	}
	clusters, err := h.store.ListClusters(h.ctx(), store.ListOpts{})
	if err != nil {
		t.Fatal(err)
	}
	nodes, err := h.store.ListNodes(h.ctx(), store.ListOpts{})
	if err != nil {
		t.Fatal(err)
	}
	var refs []string
	for _, cl := range clusters {
		refs = append(refs, cl.ProfileID)
	}
	for _, n := range nodes {
		refs = append(refs, n.ProfileID)
	}
	for _, id := range refs {
		if _, err := h.store.GetProfile(h.ctx(), id); errors.Is(err, store.ErrNotFound) {
			t.Errorf("profile %s is gone but still referenced", id)
		}
	}
}

// TestDeleteProfileOfAnUpdateUnderWay: the profile an update moves a
// cluster to is in use from the update's submission, before any node has
// it: deleted then, the update would go on writing nodes with a profile
// that is gone.
func TestDeleteProfileOfAnUpdateUnderWay(t *testing.T) {
	h := newHarness(t, nil)
	h.profile("p")
	h.profile("p2")
	cl := h.cluster("web", 1, 60)
	h.gate.close("update")
	h.gate.close("create")
	p2 := "p2"
	if _, _, err := h.eng.UpdateCluster(h.ctx(), caller, cl.ID, engine.ClusterUpdate{Profile: &p2}); err != nil {
		t.Fatal(err)
	}
	<-h.gate.entered
	err := h.eng.DeleteProfile(h.ctx(), caller, "p2")
	var ee *engine.Error
	if !errors.As(err, &ee) || ee.Status != 409 {
		t.Fatalf("deleting the profile an update under way moves to: %v, want a 409 (in use)", err)
	}
}

// TestDeletePolicyOfAnAttachUnderWay: a policy being attached is in use
// from the attach's submission: the binding is written once the plugin's
// Attach returns, and a delete in between left the cluster bound to a
// policy that was gone.
func TestDeletePolicyOfAnAttachUnderWay(t *testing.T) {
	h := newHarness(t, nil)
	h.profile("p")
	cl := h.cluster("web", 0, 60)
	pol := h.policy("held", "test.hold", "1.0", `{}`)
	h.gate.close("attach")
	if _, err := h.act(cl, `{"policy_attach": {"policy_id": "`+pol.ID+`"}}`); err != nil {
		t.Fatal(err)
	}
	<-h.gate.entered
	err := h.eng.DeletePolicy(h.ctx(), caller, pol.ID)
	var ee *engine.Error
	if !errors.As(err, &ee) || ee.Status != 409 {
		t.Fatalf("deleting a policy being attached: %v, want a 409 (in use)", err)
	}
}
