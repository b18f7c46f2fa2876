package provider

import (
	"context"
	"fmt"
	"net/http"
	"regexp"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"

	"github.com/grovehq/grove/api"
)

// planCase is a configuration the plan refuses: tf is the body of a
// grove_cluster (or, with attach, of a grove_cluster_policy_attachment),
// want the words of the error (spaces match Terraform's line wrapping), and
// body the same mistake sent to the agent's API, which must refuse it too.
type planCase struct {
	name   string
	tf     string
	attach bool
	want   string
	body   map[string]any
}

func settings(key string, v map[string]any) map[string]any {
	return map[string]any{"config": map[string]any{key: v}}
}

var planCases = []planCase{
	{name: "restart.condition", tf: `restart = { condition = "bogus" }`,
		want: `Attribute restart.condition value must be one of: ["none" "on-failure" "any"], got: "bogus"`,
		body: settings(api.ConfigRestart, map[string]any{"condition": "bogus"})},
	{name: "restart.delay", tf: `restart = { delay = "5 seconds" }`,
		want: `restart.delay must be a non-negative duration such as "5s" or "1m", got "5 seconds".`,
		body: settings(api.ConfigRestart, map[string]any{"delay": "5 seconds"})},
	{name: "restart.window", tf: `restart = { window = "-1m" }`,
		want: `restart.window must be a non-negative duration such as "5s" or "1m", got "-1m".`,
		body: settings(api.ConfigRestart, map[string]any{"window": "-1m"})},
	{name: "restart.max_attempts", tf: `restart = { max_attempts = -1 }`,
		want: `Attribute restart.max_attempts value must be between 0 and 2147483647, got: -1`,
		body: settings(api.ConfigRestart, map[string]any{"max_attempts": -1})},
	{name: "update.parallelism", tf: `update = { parallelism = 2147483648 }`,
		want: `Attribute update.parallelism value must be between 0 and 2147483647, got: 2147483648`,
		body: settings(api.ConfigUpdate, map[string]any{"parallelism": 2147483648})},
	{name: "update.delay", tf: `update = { delay = "soon" }`,
		want: `update.delay must be a non-negative duration such as "5s" or "1m", got "soon".`,
		body: settings(api.ConfigUpdate, map[string]any{"delay": "soon"})},
	{name: "update.monitor", tf: `update = { monitor = "5" }`,
		want: `update.monitor must be a non-negative duration such as "5s" or "1m", got "5".`,
		body: settings(api.ConfigUpdate, map[string]any{"monitor": "5"})},
	{name: "update.failure_action", tf: `update = { failure_action = "explode" }`,
		want: `Attribute update.failure_action value must be one of: ["pause" "continue" "rollback"], got: "explode"`,
		body: settings(api.ConfigUpdate, map[string]any{"failure_action": "explode"})},
	{name: "update.max_failure_ratio", tf: `update = { max_failure_ratio = 1.5 }`,
		want: `Attribute update.max_failure_ratio value must be between 0.000000 and 1.000000, got: 1.500000`,
		body: settings(api.ConfigUpdate, map[string]any{"max_failure_ratio": 1.5})},
	{name: "update.order", tf: `update = { order = "whenever" }`,
		want: `Attribute update.order value must be one of: ["stop-first" "start-first"], got: "whenever"`,
		body: settings(api.ConfigUpdate, map[string]any{"order": "whenever"})},
	{name: "placement.policy", tf: `placement = { policy = "random" }`,
		want: `Attribute placement.policy value must be one of: ["nodes order" "load avg" "spread" "score" "shift" "none"], got: "random"`,
		body: settings(api.ConfigPlacement, map[string]any{"policy": "random"})},
	{name: "placement.hosts", tf: `placement = { hosts = ["a", ""] }`,
		want: `Attribute placement.hosts[1] string length must be at least 1, got: 0`,
		body: settings(api.ConfigPlacement, map[string]any{"hosts": []any{"a", ""}})},
	{name: "failover.topology", tf: `failover = { topology = "mesh" }`,
		want: `Attribute failover.topology value must be one of: ["failover" "flex" "replicated" "global"], got: "mesh"`,
		body: settings(api.ConfigFailover, map[string]any{"topology": "mesh"})},
	{name: "failover.orchestrate", tf: `failover = { orchestrate = "always" }`,
		want: `Attribute failover.orchestrate value must be one of: ["no" "start" "ha"], got: "always"`,
		body: settings(api.ConfigFailover, map[string]any{"orchestrate": "always"})},
	{name: "failover.ready_period", tf: `failover = { ready_period = "soon" }`,
		want: `failover.ready_period must be a non-negative duration such as "5s" or "1m", got "soon".`,
		body: settings(api.ConfigFailover, map[string]any{"ready_period": "soon"})},
	{name: "failover.flex_target", tf: `failover = { topology = "flex", flex_target = -1 }`,
		want: `Attribute failover.flex_target value must be between 0 and 2147483647, got: -1`,
		body: settings(api.ConfigFailover, map[string]any{"topology": "flex", "flex_target": -1})},
	{name: "hard_anti_affinity", tf: `hard_anti_affinity = [""]`,
		want: `Attribute hard_anti_affinity[0] string length must be at least 1, got: 0`,
		body: settings(api.ConfigAffinity, map[string]any{"hard_anti_affinity": []any{""}})},
	{name: "dependency.grouping", tf: `dependency = { db = { grouping = "some", clusters = ["db"] } }`,
		want: `Attribute dependency["db"].grouping value must be one of: ["require_all" "require_any" "optional_all" "exclude_all"], got: "some"`,
		body: settings(api.ConfigDependencies, map[string]any{"db": map[string]any{"grouping": "some", "clusters": []any{"db"}}})},
	{name: "dependency.restart_on", tf: `dependency = { db = { grouping = "require_all", restart_on = "never", clusters = ["db"] } }`,
		want: `Attribute dependency["db"].restart_on value must be one of: ["none" "error" "restart" "refresh"], got: "never"`,
		body: settings(api.ConfigDependencies, map[string]any{"db": map[string]any{"grouping": "require_all", "restart_on": "never", "clusters": []any{"db"}}})},
	{name: "dependency.clusters", tf: `dependency = { db = { grouping = "require_all", clusters = [""] } }`,
		want: `Attribute dependency["db"].clusters[0] string length must be at least 1, got: 0`,
		body: settings(api.ConfigDependencies, map[string]any{"db": map[string]any{"grouping": "require_all", "clusters": []any{""}}})},
	{name: "config", tf: `config = { "node.name.format" = "n-$2I", "grove.restart" = "any" }`,
		want: `Attribute config["grove.restart"] must not start with "grove.": the orchestration settings have their own attributes (restart, update, placement, failover, the affinities and dependency), got: grove.restart`,
		body: map[string]any{"config": map[string]any{"node.name.format": "n-$2I", "grove.restart": "any"}}},
	{name: "config", tf: `config = { "grove.other" = "x" }`,
		want: `Attribute config["grove.other"] must not start with "grove."`,
		body: map[string]any{"config": map[string]any{"grove.other": "x"}}},
	{name: "desired_capacity", tf: `desired_capacity = -1`,
		want: `Attribute desired_capacity value must be between 0 and 2147483647, got: -1`,
		body: map[string]any{"desired_capacity": -1}},
	{name: "min_size", tf: `min_size = -1`,
		want: `Attribute min_size value must be between 0 and 2147483647, got: -1`,
		body: map[string]any{"min_size": -1}},
	{name: "max_size", tf: `max_size = -2`,
		want: `Attribute max_size value must be between -1 and 2147483647, got: -2`,
		body: map[string]any{"max_size": -2}},
	{name: "timeout", tf: `timeout = -1`,
		want: `Attribute timeout value must be between 0 and 2147483647, got: -1`,
		body: map[string]any{"timeout": -1}},
	{name: "min_size > max_size", tf: "min_size = 5\nmax_size = 3",
		want: `min_size (5) must not be greater than max_size (3).`,
		body: map[string]any{"min_size": 5, "max_size": 3}},
	{name: "desired_capacity < min_size", tf: "desired_capacity = 1\nmin_size = 2",
		want: `desired_capacity (1) must not be less than min_size (2).`,
		body: map[string]any{"desired_capacity": 1, "min_size": 2}},
	{name: "desired_capacity > max_size", tf: "desired_capacity = 6\nmax_size = 5",
		want: `desired_capacity (6) must not be greater than max_size (5).`,
		body: map[string]any{"desired_capacity": 6, "max_size": 5}},
	{name: "name", tf: `name = "tf bad"`,
		want: `Attribute name must be 1 to 255 characters of letters, digits, '.', '_', '~' and '-', got: tf bad`,
		body: map[string]any{"name": "tf bad"}},
	{name: "name of dots", tf: `name = ".."`,
		want: `Attribute name value must be none of: ["." ".."], got: ".."`,
		body: map[string]any{"name": ".."}},
	{name: "metadata key", tf: `metadata = { "" = "x" }`,
		want: `metadata: keys must not be empty.`,
		body: map[string]any{"metadata": map[string]any{"": "x"}}},
	{name: "metadata keys", tf: `metadata = { for i in range(129) : "k${i}" => "v" }`,
		want: `metadata has 129 keys; at most 128 are allowed.`,
		body: map[string]any{"metadata": manyKeys(129)}},
	{name: "metadata value", tf: `metadata = { a = format("%16383s", "") }`,
		want: `metadata.a is 16385 bytes as JSON; a metadata value may be at most 16384 bytes.`,
		body: map[string]any{"metadata": map[string]any{"a": strings.Repeat(" ", 16383)}}},
	{name: "priority", attach: true, tf: `priority = -1`,
		want: `Attribute priority value must be between 0 and 2147483647, got: -1`,
		body: map[string]any{"priority": -1}},
}

// wrapped turns words into a pattern that matches them as Terraform prints
// them, its lines wrapped at any space.
func wrapped(words string) *regexp.Regexp {
	parts := strings.Fields(words)
	for i, p := range parts {
		parts[i] = regexp.QuoteMeta(p)
	}
	return regexp.MustCompile(strings.Join(parts, `\s+`))
}

// TestAccPlanValidators proves each plan-time check fires in `terraform
// plan`, naming the attribute and the rule, and that the agent refuses the
// same value when it is sent past the provider (so the two rules agree);
// the values at the edges of each rule plan.
func TestAccPlanValidators(t *testing.T) {
	precheck(t)
	ctx := context.Background()
	c := client()
	// The agent's side: a profile, a policy and an empty cluster the bad
	// requests refer to.
	for _, req := range []struct{ path, key string }{{"/v1/profiles", "profile"}, {"/v1/policies", "policy"}} {
		typ := map[string]string{"profile": "grove.noop", "policy": "senlin.policy.deletion"}[req.key]
		body := map[string]any{req.key: map[string]any{"name": "tf-agree", "spec": map[string]any{"type": typ, "version": "1.0", "properties": map[string]any{}}}}
		if _, err := c.Do(ctx, http.MethodPost, req.path, nil, body, nil); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _, _ = c.Do(ctx, http.MethodDelete, req.path+"/tf-agree", nil, nil, nil) })
	}
	res, err := c.Do(ctx, http.MethodPost, "/v1/clusters", nil, map[string]any{"cluster": map[string]any{"name": "tf-agree", "profile_id": "tf-agree"}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.WaitAction(ctx, res.ActionID(), nil); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if r, err := c.Do(ctx, http.MethodDelete, "/v1/clusters/tf-agree", nil, nil, nil); err == nil {
			_, _ = c.WaitAction(ctx, r.ActionID(), nil)
		}
	})

	var steps []resource.TestStep
	for _, pc := range planCases {
		var cfg string
		if pc.attach {
			cfg = fmt.Sprintf("resource \"grove_cluster_policy_attachment\" \"bad\" {\n  cluster_id = \"tf-agree\"\n  policy_id  = \"tf-agree\"\n  %s\n}\n", pc.tf)
		} else {
			name := `name = "tf-bad"`
			if strings.HasPrefix(pc.tf, "name") {
				name = ""
			}
			cfg = fmt.Sprintf("resource \"grove_cluster\" \"bad\" {\n  %s\n  profile_id = \"tf-agree\"\n  %s\n}\n", name, pc.tf)
		}
		steps = append(steps, resource.TestStep{Config: providerBlock() + cfg, PlanOnly: true, ExpectError: wrapped(pc.want)})

		// The agent refuses the same value with a 400 (and creates nothing).
		var err error
		if pc.attach {
			_, err = c.Do(ctx, http.MethodPost, "/v1/clusters/tf-agree/actions", nil,
				map[string]any{"policy_attach": mergeMaps(map[string]any{"policy_id": "tf-agree"}, pc.body)}, nil)
		} else {
			var r *api.Response
			r, err = c.Do(ctx, http.MethodPost, "/v1/clusters", nil, map[string]any{"cluster": mergeMaps(map[string]any{"name": "tf-bad", "profile_id": "tf-agree"}, pc.body)}, nil)
			if err == nil {
				if d, derr := c.Do(ctx, http.MethodDelete, "/v1/clusters/tf-bad", nil, nil, nil); derr == nil {
					_, _ = c.WaitAction(ctx, d.ActionID(), nil)
				}
				_ = r
			}
		}
		if ae, ok := err.(*api.Error); !ok || ae.Status != http.StatusBadRequest {
			t.Errorf("%s: the provider refuses it at plan, but the agent answers %v", pc.name, err)
		}
	}
	// properties and properties_wo are JSON (jsontypes.Normalized): a string
	// that is not is refused at plan, at the attribute.
	steps = append(steps, resource.TestStep{Config: providerBlock() + `
resource "grove_profile" "bad" {
  name       = "tf-bad"
  type       = "grove.noop"
  version    = "1.0"
  properties = "{\"label\": "
}
`, PlanOnly: true, ExpectError: regexp.MustCompile(`(?s)Invalid JSON String Value.*with grove_profile\.bad.*properties = `)})
	// A plugin's own value sets (a deletion policy's criteria) are checked
	// at plan by the agent, against the plugin's schema.
	steps = append(steps, resource.TestStep{Config: providerBlock() + `
resource "grove_policy" "bad" {
  name       = "tf-bad"
  type       = "senlin.policy.deletion"
  version    = "1.1"
  properties = jsonencode({ criteria = "BOGUS" })
}
`, PlanOnly: true, ExpectError: regexp.MustCompile(`(?s)Invalid policy spec.*spec\.properties\.criteria.*BOGUS`)})
	// The edges of each rule plan: the same values the agent accepts.
	steps = append(steps, resource.TestStep{Config: providerBlock() + `
resource "grove_cluster" "edges" {
  name             = "tf-edges"
  profile_id       = "tf-agree"
  desired_capacity = 2
  min_size         = 2
  max_size         = -1
  timeout          = 0
  config           = { g = "1", grove = "2", "grove-x" = "3", "grove_.y" = "4", "node.grove.x" = "5" }
  restart = {
    condition    = "none"
    delay        = "0s"
    max_attempts = 0
    window       = "1h30m"
  }
  update = {
    parallelism       = 2147483647
    max_failure_ratio = 1
    monitor           = "500ms"
  }
  dependency = {
    db = { grouping = "optional_all", restart_on = "refresh", clusters = ["db"] }
  }
}

resource "grove_cluster" "equal" {
  name             = "tf-equal"
  profile_id       = "tf-agree"
  desired_capacity = 3
  min_size         = 3
  max_size         = 3
  metadata         = { for i in range(128) : "k${i}" => "v" }
}

resource "grove_profile" "edges" {
  name       = "tf-edges"
  type       = "grove.noop"
  version    = "1.0"
  properties = jsonencode({})
  metadata   = { a = format("%16382s", "") }
}
`, PlanOnly: true, ExpectNonEmptyPlan: true})
	// The agent takes the same edges.
	edges := map[string]any{"name": "tf-edges", "profile_id": "tf-agree", "desired_capacity": 0, "min_size": 0, "max_size": -1, "timeout": 0,
		"metadata": mergeMaps(manyKeys(127), map[string]any{"a": strings.Repeat(" ", 16382)}),
		"config": map[string]any{
			"g": "1", "grove": "2", "grove-x": "3", "grove_.y": "4", "node.grove.x": "5",
			api.ConfigRestart:      map[string]any{"condition": "none", "delay": "0s", "max_attempts": 0, "window": "1h30m"},
			api.ConfigUpdate:       map[string]any{"parallelism": 2147483647, "max_failure_ratio": 1, "monitor": "500ms"},
			api.ConfigDependencies: map[string]any{"db": map[string]any{"grouping": "optional_all", "restart_on": "refresh", "clusters": []any{"db"}}},
		}}
	if r, err := c.Do(ctx, http.MethodPost, "/v1/clusters", nil, map[string]any{"cluster": edges}, nil); err != nil {
		t.Errorf("the provider plans the edges of its rules, but the agent refuses them: %v", err)
	} else if _, err := c.WaitAction(ctx, r.ActionID(), nil); err != nil {
		t.Errorf("creating a cluster at the edges of the rules: %v", err)
	} else if d, err := c.Do(ctx, http.MethodDelete, "/v1/clusters/tf-edges", nil, nil, nil); err == nil {
		_, _ = c.WaitAction(ctx, d.ActionID(), nil)
	}
	resource.Test(t, resource.TestCase{ProtoV6ProviderFactories: factories, Steps: steps})
}

func mergeMaps(a, b map[string]any) map[string]any {
	out := map[string]any{}
	for _, m := range []map[string]any{a, b} {
		for k, v := range m {
			out[k] = v
		}
	}
	return out
}

// manyKeys is a metadata object of n keys.
func manyKeys(n int) map[string]any {
	m := map[string]any{}
	for i := range n {
		m[fmt.Sprintf("k%d", i)] = "v"
	}
	return m
}
