package hcl

import (
	"context"
	"net/http"
	"path/filepath"
	"testing"

	"github.com/hashicorp/go-hclog"

	"github.com/grovehq/grove/api"
	"github.com/grovehq/grove/core/agent"
	"github.com/grovehq/grove/internal/testbin"
)

// startAgent starts a real agent in the test (SQLite, the built-in plugins
// out of process, dev mode on loopback) and stops it at the test's end.
func startAgent(t *testing.T) *api.Client {
	t.Helper()
	dir := t.TempDir()
	bin := filepath.Join(dir, "grove")
	if err := testbin.Build(bin, "../"); err != nil {
		t.Fatal(err)
	}
	a, err := agent.Start(context.Background(), &agent.Config{Bind: "127.0.0.1:0", DataDir: filepath.Join(dir, "data"),
		Builtin: []string{bin, "plugin", "serve"}, Dev: true}, "test", hclog.NewNullLogger())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(a.Close)
	return api.NewClient(a.Addr)
}

// TestRacedAppliesConverge runs what two applies of one definition that
// raced leave behind: both planned to create the profile, so the set owns
// two profiles of the same content and name. The next apply must name the
// profile and the policy to the agent by id (their names are ambiguous),
// create the cluster, and delete the duplicates, after which the plan is
// empty.
func TestRacedAppliesConverge(t *testing.T) {
	c := startAgent(t)
	ctx := t.Context()
	const specs = `
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
`
	first, diags := load(t, specs, Options{Set: "shop"})
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	// Both applies plan before either creates anything.
	var plans []*Plan
	for range 2 {
		p, err := MakePlan(ctx, c, first, false)
		if err != nil {
			t.Fatal(err)
		}
		plans = append(plans, p)
	}
	for _, p := range plans {
		if err := (&Applier{Client: c}).Apply(ctx, p, false); err != nil {
			t.Fatal(err)
		}
	}
	var profiles struct {
		Profiles []api.Profile `json:"profiles"`
	}
	if _, err := c.Do(ctx, http.MethodGet, "/v1/profiles", nil, nil, &profiles); err != nil || len(profiles.Profiles) != 2 {
		t.Fatalf("the raced applies must leave two profiles of one name: %v %+v", err, profiles)
	}

	def, diags := load(t, specs+`
cluster "web" {
  profile          = profile.web
  desired_capacity = 0
  binding {
    policy = policy.del
  }
}
`, Options{Set: "shop"})
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	p, err := MakePlan(ctx, c, def, false)
	if err != nil {
		t.Fatal(err)
	}
	if err := (&Applier{Client: c}).Apply(ctx, p, false); err != nil {
		t.Fatalf("the apply after the race: %v", err)
	}
	cl, err := c.GetCluster(ctx, "web")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Do(ctx, http.MethodGet, "/v1/profiles", nil, nil, &profiles); err != nil || len(profiles.Profiles) != 1 || profiles.Profiles[0].ID != cl.ProfileID {
		t.Fatalf("the duplicate profile must go and the cluster's stay: %v %+v, cluster on %s", err, profiles, cl.ProfileID)
	}
	var bound []api.ClusterPolicy
	if _, err := get(ctx, c, "/v1/clusters/web/policies", "cluster_policies", &bound); err != nil || len(bound) != 1 {
		t.Fatalf("the cluster must have its policy bound: %v %+v", err, bound)
	}
	var policies struct {
		Policies []api.Policy `json:"policies"`
	}
	if _, err := c.Do(ctx, http.MethodGet, "/v1/policies", nil, nil, &policies); err != nil || len(policies.Policies) != 1 || policies.Policies[0].ID != bound[0].PolicyID {
		t.Fatalf("the duplicate policy must go and the bound one stay: %v %+v", err, policies)
	}
	p, err = MakePlan(ctx, c, def, false)
	if err != nil || !p.Empty() {
		t.Fatalf("the plan after converging must be empty: %v %+v", err, p)
	}
}
