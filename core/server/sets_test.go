package server_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/grovehq/grove/core/model"
	"github.com/grovehq/grove/core/server"
)

// TestSetClaimsResolveReferences: a claim names its object by id, short id
// or name, and is recorded and looked up by the object's id in the
// caller's project, so one object has one owner whatever it is called, and
// another project's object of the same name is its own.
func TestSetClaimsResolveReferences(t *testing.T) {
	a := newAuthAPI(t, server.Options{})
	p1, p2 := a.token("p1", model.RoleMember), a.token("p2", model.RoleMember)
	id1 := a.newCluster(p1, "c1", 0)
	id2 := a.newCluster(p2, "c1", 0)
	claim := func(token, set, ref string) answer {
		return a.call(token, http.MethodPut, "/v1/sets/"+set+"/objects/cluster/"+ref, map[string]any{"object": map[string]any{"name": "web"}})
	}

	var out struct {
		Object struct{ ID string } `json:"object"`
	}
	a.must(p1, http.MethodPut, "/v1/sets/setA/objects/cluster/"+id1, map[string]any{"object": map[string]any{"name": "web"}}, &out)
	if out.Object.ID != id1 {
		t.Errorf("claim by id answered id %q, want %q", out.Object.ID, id1)
	}
	for _, ref := range []string{"c1", id1[:8]} {
		if ans := claim(p1, "setB", ref); ans.status != http.StatusConflict || !strings.Contains(ans.body, `owned by definition set \"setA\"`) {
			t.Errorf("setB claims %s, which setA owns: %d %s; want 409 naming setA", ref, ans.status, ans.body)
		}
	}
	a.must(p1, http.MethodPut, "/v1/sets/setA/objects/cluster/c1", map[string]any{"object": map[string]any{"name": "web"}}, &out)
	if out.Object.ID != id1 {
		t.Errorf("claim by name answered id %q, want the cluster's id %q", out.Object.ID, id1)
	}
	var set struct {
		Set struct {
			Objects []struct{ ID string } `json:"objects"`
		} `json:"set"`
	}
	a.must(p1, http.MethodGet, "/v1/sets/setA", nil, &set)
	if len(set.Set.Objects) != 1 || set.Set.Objects[0].ID != id1 {
		t.Errorf("setA after claims by id and by name: %+v, want one record of %s", set.Set.Objects, id1)
	}
	var owner struct {
		Owner struct{ Set, ID string } `json:"owner"`
	}
	a.must(p1, http.MethodGet, "/v1/owners/cluster/c1", nil, &owner)
	if owner.Owner.Set != "setA" || owner.Owner.ID != id1 {
		t.Errorf("owner of c1: %+v, want setA, %s", owner.Owner, id1)
	}

	// Another project's c1 is another cluster, free to claim.
	a.must(p2, http.MethodPut, "/v1/sets/setA/objects/cluster/c1", map[string]any{"object": map[string]any{"name": "web"}}, &out)
	if out.Object.ID != id2 {
		t.Errorf("p2's claim of its c1 answered id %q, want %q", out.Object.ID, id2)
	}

	if ans := claim(p1, "setA", "nope"); ans.status != http.StatusNotFound {
		t.Errorf("claim of a cluster that does not exist: %d %s; want 404", ans.status, ans.body)
	}
	if ans := a.call(p1, http.MethodDelete, "/v1/sets/setA/objects/cluster/c1", nil); ans.status != http.StatusNoContent {
		t.Fatalf("release by name: %d %s", ans.status, ans.body)
	}
	a.must(p1, http.MethodGet, "/v1/sets/setA", nil, &set)
	if len(set.Set.Objects) != 0 {
		t.Errorf("setA after release: %+v, want empty", set.Set.Objects)
	}
}
