package server_test

import (
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/grovehq/grove/api"
	"github.com/grovehq/grove/core/model"
	"github.com/grovehq/grove/core/server"
)

func depsOf(t *testing.T, a *authAPI, token, cluster string) api.ClusterDependencies {
	t.Helper()
	var out struct {
		Dependencies api.ClusterDependencies `json:"dependencies"`
	}
	a.must(token, http.MethodGet, "/v1/clusters/"+cluster+"/dependencies", nil, &out)
	return out.Dependencies
}

func putDeps(a *authAPI, token, cluster string, groups, dependents []map[string]any) answer {
	body := map[string]any{}
	if groups != nil {
		body["groups"] = groups
	}
	if dependents != nil {
		body["dependents"] = dependents
	}
	return a.call(token, http.MethodPut, "/v1/clusters/"+cluster+"/dependencies", map[string]any{"dependencies": body})
}

// TestDependenciesDeclaredAndShownOnBothSides: web's dependency on db is
// evaluated (db runs: satisfied; a missing path: unsatisfiable, named);
// mon's dependent on web is stored as a group web holds, shown on web as
// declared by mon and on mon as a dependent; db shows who requires it.
func TestDependenciesDeclaredAndShownOnBothSides(t *testing.T) {
	a := newAuthAPI(t, server.Options{})
	member := a.token("p", model.RoleMember)
	a.newCluster(member, "db", 1)
	a.newCluster(member, "web", 1)
	a.newCluster(member, "mon", 0)
	ready := filepath.Join(t.TempDir(), "ready")

	ans := putDeps(a, member, "web", []map[string]any{
		{"name": "database", "grouping": "require_all", "restart_on": "error", "members": []string{"db"}},
		{"name": "config", "grouping": "require_all", "members": []string{"path:" + ready}},
	}, nil)
	if ans.status != http.StatusOK {
		t.Fatalf("put: %d %s", ans.status, ans.body)
	}
	ans = putDeps(a, member, "mon", nil, []map[string]any{
		{"name": "mon_first", "grouping": "optional_all", "restart_on": "none", "members": []string{"web"}},
	})
	if ans.status != http.StatusOK {
		t.Fatalf("put mon: %d %s", ans.status, ans.body)
	}

	web := depsOf(t, a, member, "web")
	if web.Result != "unsatisfiable" || web.Reason != "waiting on path:"+ready+": does not exist" {
		t.Errorf("web: %s %q", web.Result, web.Reason)
	}
	got := map[string]api.HeldGroup{}
	for _, g := range web.Groups {
		got[g.Name] = g
	}
	if g := got["database"]; g.Result != "satisfied" || g.DeclaredBy != "web" || strings.Join(g.Members, ",") != "db" || g.RestartOn != "error" {
		t.Errorf("database: %+v", g)
	}
	if g := got["mon_first"]; g.DeclaredBy != "mon" || strings.Join(g.Members, ",") != "mon" || g.Grouping != "optional_all" {
		t.Errorf("mon_first: %+v", g)
	}
	mon := depsOf(t, a, member, "mon")
	if len(mon.Dependents) != 1 || mon.Dependents[0].Name != "mon_first" || strings.Join(mon.Dependents[0].Members, ",") != "web" || len(mon.Groups) != 0 {
		t.Errorf("mon: %+v", mon)
	}
	db := depsOf(t, a, member, "db")
	if len(db.RequiredBy) != 1 || db.RequiredBy[0] != (api.RequiredBy{Cluster: "web", Group: "database", Grouping: "require_all", RestartOn: "error"}) {
		t.Errorf("db required by %+v", db.RequiredBy)
	}

	// The path appears: the group is satisfied at the next evaluation.
	if err := os.WriteFile(ready, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if web := depsOf(t, a, member, "web"); web.Result != "satisfied" || web.Reason != "" {
		t.Errorf("web once the path exists: %s %q", web.Result, web.Reason)
	}

	// db replaced (deleted, then created again under its name) is still
	// web's member: members are kept by name.
	a.waitAction(member, a.call(member, http.MethodDelete, "/v1/clusters/db", nil))
	if web := depsOf(t, a, member, "web"); web.Reason != "waiting on db: no such cluster" || web.Result != "unsatisfiable" {
		t.Errorf("web without db: %s %q", web.Result, web.Reason)
	}
	a.newCluster(member, "db", 1)
	if web := depsOf(t, a, member, "web"); web.Result != "satisfied" {
		t.Errorf("web once db is back: %s %q", web.Result, web.Reason)
	}

	// web's redeclaration replaces its own groups, not mon's dependent.
	if ans := putDeps(a, member, "web", []map[string]any{}, nil); ans.status != http.StatusOK {
		t.Fatalf("clear: %d %s", ans.status, ans.body)
	}
	web = depsOf(t, a, member, "web")
	if len(web.Groups) != 1 || web.Groups[0].Name != "mon_first" {
		t.Errorf("after clearing web's own groups: %+v", web.Groups)
	}
}

// TestDependencyCycleRefused: a declaration closing a cycle, directly or
// through a dependent or a milestone, is refused with the whole cycle
// named; an exclude_all cycle is allowed.
func TestDependencyCycleRefused(t *testing.T) {
	a := newAuthAPI(t, server.Options{})
	member := a.token("p", model.RoleMember)
	for _, n := range []string{"a", "b", "c"} {
		a.newCluster(member, n, 0)
	}
	req := func(members ...string) []map[string]any {
		return []map[string]any{{"name": "g", "grouping": "require_all", "restart_on": "error", "members": members}}
	}
	if ans := putDeps(a, member, "a", req("b"), nil); ans.status != http.StatusOK {
		t.Fatalf("a: %d %s", ans.status, ans.body)
	}
	if ans := putDeps(a, member, "b", req("c"), nil); ans.status != http.StatusOK {
		t.Fatalf("b: %d %s", ans.status, ans.body)
	}
	ans := putDeps(a, member, "c", req("a"), nil)
	if ans.status != http.StatusConflict || !strings.Contains(ans.body, "DependencyCycle") || !strings.Contains(ans.body, "c → a → b → c") {
		t.Errorf("c on a: %d %s", ans.status, ans.body)
	}
	// A dependent declared by a on c: c would wait on a.
	ans = putDeps(a, member, "a", req("b"), []map[string]any{{"name": "a_first", "grouping": "require_all", "restart_on": "none", "members": []string{"c"}}})
	if ans.status != http.StatusConflict || !strings.Contains(ans.body, "a → b → c → a") {
		t.Errorf("dependent c on a: %d %s", ans.status, ans.body)
	}
	// Through a milestone holding a.
	var ms struct {
		Milestone api.Milestone `json:"milestone"`
	}
	a.must(member, http.MethodPost, "/v1/milestones", map[string]any{"milestone": map[string]any{"name": "front", "clusters": []string{"a"}}}, &ms)
	ans = putDeps(a, member, "c", req("milestone:front"), nil)
	if ans.status != http.StatusConflict || !strings.Contains(ans.body, "c → milestone:front → a → b → c") {
		t.Errorf("c on milestone:front: %d %s", ans.status, ans.body)
	}
	ans = putDeps(a, member, "c", []map[string]any{{"name": "g", "grouping": "exclude_all", "restart_on": "restart", "members": []string{"a"}}}, nil)
	if ans.status != http.StatusOK {
		t.Errorf("an exclusion cycle: %d %s", ans.status, ans.body)
	}
}

// TestDependencyDeclarationErrors: each bad field is named with its rule.
func TestDependencyDeclarationErrors(t *testing.T) {
	a := newAuthAPI(t, server.Options{})
	member := a.token("p", model.RoleMember)
	a.newCluster(member, "web", 0)
	cases := []struct {
		groups, dependents []map[string]any
		want               string
	}{
		{[]map[string]any{{"name": "g", "grouping": "require_some", "members": []string{}}}, nil, "dependencies.groups[0].grouping: Dependency group \\\"g\\\": grouping must be one of"},
		{[]map[string]any{{"name": "g", "grouping": "require_all", "restart_on": "always"}}, nil, "dependencies.groups[0].restart_on: Dependency group \\\"g\\\": restart_on must be one of none, error, restart or refresh"},
		{[]map[string]any{{"name": "g", "grouping": "require_all", "members": []string{"nosuch"}}}, nil, "dependencies.groups[0].members[0]: the cluster \\\"nosuch\\\" could not be found."},
		{[]map[string]any{{"name": "g", "grouping": "require_all", "members": []string{"milestone:nosuch"}}}, nil, "there is no milestone \\\"nosuch\\\""},
		{[]map[string]any{{"name": "g", "grouping": "require_all", "members": []string{"path:relative"}}}, nil, "dependencies.groups[0].members[0]: Dependency group \\\"g\\\": member \\\"path:relative\\\" must be an absolute path"},
		{[]map[string]any{{"name": "g", "grouping": "require_all"}, {"name": "h", "grouping": "require_all", "members": []string{"web", "db", "web"}}}, nil, "dependencies.groups[1].members[2]: Dependency group \\\"h\\\": member \\\"web\\\" is listed twice."},
		{[]map[string]any{{"name": "g", "grouping": "require_all", "colour": "red"}}, nil, "dependencies.groups[0].colour is not a recognised field"},
		{nil, []map[string]any{{"name": "d", "grouping": "require_all", "members": []string{"path:/x"}}}, "a dependent names the clusters that wait on this one"},
		{[]map[string]any{{"name": "g", "grouping": "require_all"}, {"name": "g", "grouping": "require_any"}}, nil, "would hold two dependency groups named \\\"g\\\""},
	}
	for _, c := range cases {
		ans := putDeps(a, member, "web", c.groups, c.dependents)
		if ans.status < 400 || ans.status >= 500 || !strings.Contains(ans.body, c.want) {
			t.Errorf("%v %v: %d %s, want %q", c.groups, c.dependents, ans.status, ans.body, c.want)
		}
	}
}

// TestMilestonesCRUD: milestones are named sets of clusters shown by name;
// all and none are reserved; one in use by a group is neither renamed nor
// deleted.
func TestMilestonesCRUD(t *testing.T) {
	a := newAuthAPI(t, server.Options{})
	member := a.token("p", model.RoleMember)
	a.newCluster(member, "db", 0)
	a.newCluster(member, "web", 0)
	var ms struct {
		Milestone api.Milestone `json:"milestone"`
	}
	ans := a.call(member, http.MethodPost, "/v1/milestones", map[string]any{"milestone": map[string]any{"name": "multi-user", "clusters": []string{"db", "web"}}})
	if ans.status != http.StatusCreated {
		t.Fatalf("create: %d %s", ans.status, ans.body)
	}
	if err := json.Unmarshal([]byte(ans.body), &ms); err != nil {
		t.Fatal(err)
	}
	if strings.Join(ms.Milestone.Clusters, ",") != "db,web" || ms.Milestone.Project != "p" {
		t.Errorf("created %+v", ms.Milestone)
	}
	for _, bad := range []map[string]any{{"name": "all"}, {"name": "none"}, {"name": "a:b"}, {"name": "x", "clusters": []string{"nosuch"}}, {"name": "multi-user"}} {
		if ans := a.call(member, http.MethodPost, "/v1/milestones", map[string]any{"milestone": bad}); ans.status != http.StatusBadRequest && ans.status != http.StatusConflict {
			t.Errorf("%v: %d %s", bad, ans.status, ans.body)
		}
	}
	if ans := putDeps(a, member, "web", []map[string]any{{"name": "g", "grouping": "require_all", "members": []string{"milestone:multi-user"}}}, nil); ans.status != http.StatusConflict {
		t.Errorf("web on a milestone holding web: %d %s", ans.status, ans.body)
	}
	a.must(member, http.MethodPatch, "/v1/milestones/multi-user", map[string]any{"milestone": map[string]any{"clusters": []string{"db"}}}, &ms)
	if strings.Join(ms.Milestone.Clusters, ",") != "db" || ms.Milestone.UpdatedAt == nil {
		t.Errorf("updated %+v", ms.Milestone)
	}
	if ans := putDeps(a, member, "web", []map[string]any{{"name": "g", "grouping": "require_all", "members": []string{"milestone:multi-user"}}}, nil); ans.status != http.StatusOK {
		t.Fatalf("web on multi-user: %d %s", ans.status, ans.body)
	}
	if ans := a.call(member, http.MethodPatch, "/v1/milestones/multi-user", map[string]any{"milestone": map[string]any{"clusters": []string{"db", "web"}}}); ans.status != http.StatusConflict || !strings.Contains(ans.body, "web → milestone:multi-user → web") {
		t.Errorf("a milestone update closing a cycle: %d %s", ans.status, ans.body)
	}
	if ans := a.call(member, http.MethodDelete, "/v1/milestones/multi-user", nil); ans.status != http.StatusConflict {
		t.Errorf("deleting a milestone in use: %d %s", ans.status, ans.body)
	}
	putDeps(a, member, "web", []map[string]any{}, nil)
	if ans := a.call(member, http.MethodDelete, "/v1/milestones/multi-user", nil); ans.status != http.StatusNoContent {
		t.Errorf("delete: %d %s", ans.status, ans.body)
	}
	var list struct {
		Milestones []api.Milestone `json:"milestones"`
	}
	a.must(member, http.MethodGet, "/v1/milestones", nil, &list)
	if len(list.Milestones) != 0 {
		t.Errorf("after delete: %+v", list.Milestones)
	}
}
