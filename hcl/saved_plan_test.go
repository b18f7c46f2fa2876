package hcl

import (
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/grovehq/grove/api"
)

// emptyAgent answers every read with a 404, as an agent holding nothing for
// the set does, and records every other request; those fail.
type emptyAgent struct {
	mu     sync.Mutex
	writes []string
}

func (a *emptyAgent) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	if r.Method == http.MethodGet {
		w.WriteHeader(http.StatusNotFound)
		w.Write([]byte(`{"code":404,"error":{"code":404,"type":"NotFound","message":"Nothing is at ` + r.URL.Path + `."}}`))
		return
	}
	a.mu.Lock()
	a.writes = append(a.writes, r.Method+" "+r.URL.Path)
	a.mu.Unlock()
	w.WriteHeader(http.StatusInternalServerError)
	w.Write([]byte(`{"code":500,"error":{"code":500,"type":"Test","message":"This agent takes no writes."}}`))
}

func (a *emptyAgent) sent() []string {
	a.mu.Lock()
	defer a.mu.Unlock()
	return append([]string(nil), a.writes...)
}

// TestSavedPlanTampered applies saved plans edited after `grove plan -out`
// wrote them: each is refused with ErrDamagedPlan, naming what is wrong,
// before any request changes the agent, and none panics.
func TestSavedPlanTampered(t *testing.T) {
	def, diags := load(t, `
profile "web" {
  type    = "local.process"
  version = "1.0"
  properties {
    command = ["/bin/true"]
  }
}
policy "del" {
  type    = "senlin.policy.deletion"
  version = "1.1"
}
cluster "web" {
  profile          = profile.web
  desired_capacity = 1
  binding {
    policy = policy.del
  }
}
`, Options{Set: "shop"})
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	agent := &emptyAgent{}
	srv := httptest.NewServer(agent)
	defer srv.Close()
	c := api.NewClient(strings.TrimPrefix(srv.URL, "http://"))
	plan, err := MakePlan(t.Context(), c, def, false)
	if err != nil {
		t.Fatal(err)
	}
	saved, _ := json.Marshal(plan)

	for name, tc := range map[string]struct {
		edit func(m map[string]any)
		want string
	}{
		"profile removed from the desired state": {func(m map[string]any) { delete(desired(m, "profiles"), "web") }, "its order lists profile.web, which its desired state does not hold"},
		"clusters null":                          {func(m map[string]any) { m["desired"].(map[string]any)["clusters"] = nil }, "its order lists cluster.web, which its desired state does not hold"},
		"cluster renamed":                        {func(m map[string]any) { desired(m, "clusters")["web"].(map[string]any)["name"] = "other" }, `cluster.web of its desired state is named "other"`},
		"cluster on an undeclared profile":       {func(m map[string]any) { desired(m, "clusters")["web"].(map[string]any)["profile"] = "ghost" }, `cluster.web uses profile "ghost"`},
		"binding of an undeclared policy": {func(m map[string]any) {
			desired(m, "clusters")["web"].(map[string]any)["bindings"] = []any{map[string]any{"policy": "ghost", "enabled": true}}
		}, `cluster.web binds policy "ghost"`},
		"block in the order twice": {func(m map[string]any) {
			d := m["desired"].(map[string]any)
			d["order"] = append(d["order"].([]any), map[string]any{"kind": "profile", "name": "web"})
		}, "its order lists profile.web twice"},
		"block missing from the order": {func(m map[string]any) {
			d := m["desired"].(map[string]any)
			d["order"] = d["order"].([]any)[1:]
		}, "holds 3 blocks but its order lists 2"},
		"unknown kind in the order": {func(m map[string]any) {
			d := m["desired"].(map[string]any)
			d["order"] = append(d["order"].([]any), map[string]any{"kind": "node", "name": "x"})
		}, `its order lists a "node"`},
		"unknown action": {func(m map[string]any) { m["changes"].([]any)[0].(map[string]any)["action"] = "obliterate" }, `a change "obliterate"`},
		"change of an undeclared cluster": {func(m map[string]any) {
			m["changes"] = append(m["changes"].([]any), map[string]any{"action": "create", "ref": map[string]any{"kind": "cluster", "name": "ghost"}})
		}, "its changes are not the ones its desired state calls for"},
		"delete added by hand": {func(m map[string]any) {
			m["changes"] = append(m["changes"].([]any), map[string]any{"action": "delete", "ref": map[string]any{"kind": "cluster", "name": "victim"}, "id": "0b9a", "name": "victim"})
		}, "its changes are not the ones its desired state calls for"},
		"change dropped": {func(m map[string]any) { m["changes"] = m["changes"].([]any)[:1] }, "its changes are not the ones its desired state calls for"},
	} {
		t.Run(name, func(t *testing.T) {
			var m map[string]any
			if err := json.Unmarshal(saved, &m); err != nil {
				t.Fatal(err)
			}
			tc.edit(m)
			b, _ := json.Marshal(m)
			var p Plan
			if err := json.Unmarshal(b, &p); err != nil {
				t.Fatal(err)
			}
			err := (&Applier{Client: c}).Apply(t.Context(), &p, true)
			if !errors.Is(err, ErrDamagedPlan) || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("want ErrDamagedPlan saying %q, got %v", tc.want, err)
			}
			if w := agent.sent(); len(w) > 0 {
				t.Errorf("a damaged plan changed the agent: %v", w)
			}
		})
	}

	// The plan as saved passes the checks: its first write reaches the agent.
	var p Plan
	if err := json.Unmarshal(saved, &p); err != nil {
		t.Fatal(err)
	}
	if err := (&Applier{Client: c}).Apply(t.Context(), &p, true); errors.Is(err, ErrDamagedPlan) || errors.Is(err, ErrStalePlan) {
		t.Fatalf("the plan as saved is refused: %v", err)
	}
	if w := agent.sent(); len(w) == 0 || w[0] != "POST /v1/profiles" && w[0] != "POST /v1/policies" {
		t.Fatalf("the plan as saved sent %v", w)
	}
}

func desired(m map[string]any, kind string) map[string]any {
	return m["desired"].(map[string]any)[kind].(map[string]any)
}
