package provider

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/terraform-plugin-framework/providerserver"
	"github.com/hashicorp/terraform-plugin-go/tfprotov6"
	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"

	"github.com/grovehq/grove/api"
	"github.com/grovehq/grove/core/agent"
	"github.com/grovehq/grove/internal/containertest"
	"github.com/grovehq/grove/internal/testbin"
	"github.com/grovehq/grove/internal/tlstest"
)

var (
	groveBin string
	agentURL string
)

var factories = map[string]func() (tfprotov6.ProviderServer, error){
	"grove": providerserver.NewProtocol6WithError(New("test")()),
}

// TestMain starts a real agent (SQLite, the built-in plugins out of
// process) for the acceptance tests, and points them at the terraform CLI.
func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "grove-provider-test")
	if err != nil {
		panic(err)
	}
	groveBin = filepath.Join(dir, "grove")
	if err := testbin.Build(groveBin, "../"); err != nil {
		panic(err)
	}
	// The agent's plugins find the container engine through DOCKER_HOST, so
	// it is settled before they start.
	_, _ = containertest.Ensure() // a test needing the engine says why it is missing
	// Dev mode on loopback: the tests send no token.
	a, err := agent.Start(context.Background(), &agent.Config{Bind: "127.0.0.1:0", DataDir: filepath.Join(dir, "data"), Builtin: []string{groveBin, "plugin", "serve"}, Dev: true},
		"test", hclog.New(&hclog.LoggerOptions{Level: hclog.Warn, Output: os.Stderr}))
	if err != nil {
		panic(err)
	}
	agentURL = a.Addr
	rc := filepath.Join(dir, "empty.tfrc")
	os.WriteFile(rc, nil, 0o644)
	os.Setenv("TF_CLI_CONFIG_FILE", rc)
	os.Setenv("TF_ACC", "1")
	os.Setenv("CHECKPOINT_DISABLE", "1")
	if os.Getenv("TF_ACC_TERRAFORM_PATH") == "" {
		if p, err := exec.LookPath("terraform"); err == nil {
			os.Setenv("TF_ACC_TERRAFORM_PATH", p)
		}
	}
	code := m.Run()
	a.Close()
	os.RemoveAll(dir)
	os.Exit(code)
}

func precheck(t *testing.T) {
	if os.Getenv("TF_ACC_TERRAFORM_PATH") == "" {
		t.Fatal("the acceptance tests need the terraform CLI on PATH or in TF_ACC_TERRAFORM_PATH (.ci/run installs it)")
	}
}

func client() *api.Client { return api.NewClient(agentURL) }

func providerBlock() string {
	return fmt.Sprintf("provider \"grove\" {\n  address = %q\n}\n", agentURL)
}

func clusterConfig(command, clusterName string, desired int, metadataValue string) string {
	return providerBlock() + fmt.Sprintf(`
resource "grove_profile" "web" {
  name    = "tf-web"
  type    = "local.process"
  version = "1.0"
  properties = jsonencode({
    command      = [%q, "demo-http"]
    env          = { MODE = %q }
    stop_timeout = 5
  })
  lifecycle {
    create_before_destroy = true
  }
}

resource "grove_policy" "oldest" {
  name    = "tf-oldest"
  type    = "senlin.policy.deletion"
  version = "1.1"
  properties = jsonencode({ criteria = "OLDEST_FIRST" })
}

resource "grove_cluster" "web" {
  name             = %q
  profile_id       = grove_profile.web.id
  desired_capacity = %d
  max_size         = 10
  metadata         = { team = %q }
  config           = { "node.name.format" = "tf-$2I" }
  restart = {
    condition = "on-failure"
    delay     = "1s"
  }
  update = {
    parallelism = 1
    monitor     = "1s"
    order       = "start-first"
  }
}

resource "grove_cluster_policy_attachment" "oldest" {
  cluster_id = grove_cluster.web.id
  policy_id  = grove_policy.oldest.id
  priority   = 300
}

data "grove_nodes" "web" {
  cluster_id = grove_cluster.web.id
  depends_on = [grove_cluster.web]
}
`, groveBin, command, clusterName, desired, metadataValue)
}

func TestAccCluster(t *testing.T) {
	precheck(t)
	const res = "grove_cluster.web"
	ctx := context.Background()
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: factories,
		CheckDestroy: func(_ *terraform.State) error {
			if _, err := client().GetCluster(ctx, "tf-web"); !api.IsNotFound(err) {
				return fmt.Errorf("the cluster survived destroy: %v", err)
			}
			return nil
		},
		Steps: []resource.TestStep{
			// A bad property is refused at plan, naming the field.
			{Config: providerBlock() + `
resource "grove_profile" "bad" {
  name       = "bad"
  type       = "local.process"
  version    = "1.0"
  properties = jsonencode({ command = "not a list" })
}`, ExpectError: regexp.MustCompile(`spec\.properties\.command: must be a list`)},
			// Create.
			{Config: clusterConfig("v1", "tf-web", 2, "a"),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{plancheck.ExpectResourceAction(res, plancheck.ResourceActionCreate)}},
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue(res, tfjsonpath.New("status"), knownvalue.StringExact("ACTIVE")),
					statecheck.ExpectKnownValue(res, tfjsonpath.New("node_ids"), knownvalue.ListSizeExact(2)),
					statecheck.ExpectKnownValue("data.grove_nodes.web", tfjsonpath.New("nodes"), knownvalue.ListSizeExact(2)),
					statecheck.ExpectKnownValue("grove_cluster_policy_attachment.oldest", tfjsonpath.New("priority"), knownvalue.Int64Exact(300)),
				},
				// The API hides the env, a sensitive property; the state
				// keeps the configured value, so the next plan is empty.
				Check: resource.ComposeTestCheckFunc(
					resource.TestMatchResourceAttr("grove_profile.web", "properties", regexp.MustCompile(`"MODE":"v1"`)),
					func(*terraform.State) error {
						var out struct {
							Profile struct {
								Spec map[string]any `json:"spec"`
							} `json:"profile"`
						}
						if _, err := client().Do(ctx, http.MethodGet, "/v1/profiles/tf-web", nil, nil, &out); err != nil {
							return err
						}
						env, _ := out.Profile.Spec["properties"].(map[string]any)["env"].(map[string]any)
						if env["MODE"] != "(sensitive)" {
							return fmt.Errorf("the API shows the profile's env as %v, want (sensitive)", env)
						}
						return nil
					}),
			},
			// An empty plan after apply.
			{Config: clusterConfig("v1", "tf-web", 2, "a"), ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()}}},
			// Import by id and by name.
			{ResourceName: res, ImportState: true, ImportStateVerify: true, ImportStateVerifyIgnore: []string{"timeouts"}},
			{ResourceName: res, ImportState: true, ImportStateId: "tf-web", ImportStateVerify: true, ImportStateVerifyIgnore: []string{"timeouts"}},
			// An imported profile's env is what the API shows: "(sensitive)".
			{ResourceName: "grove_profile.web", ImportState: true, ImportStateVerify: true, ImportStateVerifyIgnore: []string{"properties"}},
			{ResourceName: "grove_cluster_policy_attachment.oldest", ImportState: true, ImportStateId: "tf-web/tf-oldest", ImportStateVerify: true,
				ImportStateVerifyIgnore: []string{"timeouts"}},
			// Update in place, and resize through desired_capacity.
			{Config: clusterConfig("v1", "tf-web", 3, "b"),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{plancheck.ExpectResourceAction(res, plancheck.ResourceActionUpdate)}},
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue(res, tfjsonpath.New("node_ids"), knownvalue.ListSizeExact(3)),
					statecheck.ExpectKnownValue(res, tfjsonpath.New("metadata").AtMapKey("team"), knownvalue.StringExact("b")),
				}},
			// A property change replaces the profile; the cluster rolls onto it in place.
			{Config: clusterConfig("v2", "tf-web", 3, "b"),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction("grove_profile.web", plancheck.ResourceActionCreateBeforeDestroy),
					plancheck.ExpectResourceAction(res, plancheck.ResourceActionUpdate),
				}}},
			// Drift: a node deleted through the API shows as a change of desired_capacity.
			{PreConfig: func() {
				cl, err := client().GetCluster(ctx, "tf-web")
				if err != nil {
					t.Fatal(err)
				}
				r, err := client().Do(ctx, http.MethodDelete, "/v1/nodes/"+cl.Nodes[0], nil, nil, nil)
				if err != nil {
					t.Fatal(err)
				}
				if _, err := client().WaitAction(ctx, r.ActionID(), nil); err != nil {
					t.Fatal(err)
				}
			}, Config: clusterConfig("v2", "tf-web", 3, "b"),
				ConfigPlanChecks:  resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{plancheck.ExpectResourceAction(res, plancheck.ResourceActionUpdate)}},
				ConfigStateChecks: []statecheck.StateCheck{statecheck.ExpectKnownValue(res, tfjsonpath.New("node_ids"), knownvalue.ListSizeExact(3))}},
			// Drift: a resize through the CLI is put back.
			{PreConfig: func() {
				out, err := exec.Command(groveBin, "cluster", "resize", "-capacity", "5", "-wait", "-address", agentURL, "tf-web").CombinedOutput()
				if err != nil {
					t.Fatalf("grove cluster resize: %v\n%s", err, out)
				}
			}, Config: clusterConfig("v2", "tf-web", 3, "b"),
				ConfigPlanChecks:  resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{plancheck.ExpectResourceAction(res, plancheck.ResourceActionUpdate)}},
				ConfigStateChecks: []statecheck.StateCheck{statecheck.ExpectKnownValue(res, tfjsonpath.New("desired_capacity"), knownvalue.Int64Exact(3))}},
			// Deleted outside Terraform: planned again as a creation.
			{PreConfig: func() {
				r, err := client().Do(ctx, http.MethodDelete, "/v1/clusters/tf-web", nil, nil, nil)
				if err != nil {
					t.Fatal(err)
				}
				if _, err := client().WaitAction(ctx, r.ActionID(), nil); err != nil {
					t.Fatal(err)
				}
			}, Config: clusterConfig("v2", "tf-web", 3, "b"),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{plancheck.ExpectResourceAction(res, plancheck.ResourceActionCreate)}}},
			{Config: clusterConfig("v2", "tf-web", 3, "b"), ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()}}},
		},
	})
}

// flexConfig is a flex cluster of the demo HTTP server, sized by its
// instance monitors (no desired_capacity), or by hand when desired is
// not empty.
func flexConfig(desired string) string {
	if desired != "" {
		desired = "desired_capacity = " + desired
	}
	return providerBlock() + fmt.Sprintf(`
resource "grove_profile" "flex" {
  name       = "tf-flex"
  type       = "local.process"
  version    = "1.0"
  properties = jsonencode({ command = [%q, "demo-http"], stop_timeout = 5 })
}

resource "grove_cluster" "flex" {
  name       = "tf-flex"
  profile_id = grove_profile.flex.id
  %s
  failover = {
    topology     = "flex"
    orchestrate  = "ha"
    flex_min     = 1
    flex_target  = 2
    ready_period = "16s"
  }
}
`, groveBin, desired)
}

// TestAccFlexCluster: a flex cluster's failover settings round-trip, and
// its size is its instance monitors' (docs/failover.md): one sized by
// hand is refused at apply, naming desired_capacity. The test's agent is
// a host (host_name defaults to the machine's hostname), the only one:
// with flex_target 2 and at most one instance per host, its monitor
// starts one instance, at once (a lone host has no ready contest), and
// the cluster's desired_capacity follows; the next plan is empty.
func TestAccFlexCluster(t *testing.T) {
	precheck(t)
	const res = "grove_cluster.flex"
	ctx := context.Background()
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: factories,
		Steps: []resource.TestStep{
			{Config: flexConfig("2"), ExpectError: regexp.MustCompile(`desired_capacity\s+and\s+min_size\s+must\s+be\s+left\s+out[\s\S]*topology\s+flex`)},
			{Config: flexConfig(""),
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue(res, tfjsonpath.New("failover").AtMapKey("topology"), knownvalue.StringExact("flex")),
					statecheck.ExpectKnownValue(res, tfjsonpath.New("failover").AtMapKey("flex_target"), knownvalue.Int64Exact(2)),
				}},
			// The monitor starts the one instance this host may run.
			{PreConfig: func() {
				deadline := time.Now().Add(time.Minute)
				for {
					cl, err := client().GetCluster(ctx, "tf-flex")
					if err != nil {
						t.Fatal(err)
					}
					if cl.DesiredCapacity == 1 && len(cl.Nodes) == 1 && len(cl.Instances) == 1 && cl.Instances[0].Status == "up" && cl.Instances[0].State == "idle" {
						return
					}
					if time.Now().After(deadline) {
						t.Fatalf("the flex cluster's monitor did not start one instance: desired %d, nodes %v, instances %+v", cl.DesiredCapacity, cl.Nodes, cl.Instances)
					}
					time.Sleep(100 * time.Millisecond)
				}
			}, Config: flexConfig(""),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()}},
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue(res, tfjsonpath.New("desired_capacity"), knownvalue.Int64Exact(1)),
					statecheck.ExpectKnownValue(res, tfjsonpath.New("node_ids"), knownvalue.ListSizeExact(1)),
				}},
			{ResourceName: res, ImportState: true, ImportStateId: "tf-flex", ImportStateVerify: true, ImportStateVerifyIgnore: []string{"timeouts"}},
		},
	})
}

// TestAccImportsAndNode covers grove_node and imports by name of the other
// resources.
func TestAccImportsAndNode(t *testing.T) {
	precheck(t)
	config := providerBlock() + `
resource "grove_profile" "noop" {
  name       = "tf-imp-noop"
  type       = "grove.noop"
  version    = "1.0"
  properties = jsonencode({ label = "a" })
}

resource "grove_policy" "del" {
  name       = "tf-imp-del"
  type       = "senlin.policy.deletion"
  version    = "1.0"
  properties = jsonencode({})
}

resource "grove_node" "n" {
  name       = "tf-imp-node"
  profile_id = grove_profile.noop.id
  role       = "primary"
}

data "grove_profile" "noop" {
  id_or_name = grove_profile.noop.name
}
`
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: factories,
		Steps: []resource.TestStep{
			{Config: config, ConfigStateChecks: []statecheck.StateCheck{
				statecheck.ExpectKnownValue("grove_node.n", tfjsonpath.New("status"), knownvalue.StringExact("ACTIVE")),
				statecheck.ExpectKnownValue("grove_node.n", tfjsonpath.New("index"), knownvalue.Int64Exact(-1)),
				statecheck.ExpectKnownValue("data.grove_profile.noop", tfjsonpath.New("type"), knownvalue.StringExact("grove.noop")),
			}},
			{ResourceName: "grove_node.n", ImportState: true, ImportStateId: "tf-imp-node", ImportStateVerify: true, ImportStateVerifyIgnore: []string{"timeouts"}},
			{ResourceName: "grove_policy.del", ImportState: true, ImportStateId: "tf-imp-del", ImportStateVerify: true},
			{ResourceName: "grove_profile.noop", ImportState: true, ImportStateId: "tf-imp-noop", ImportStateVerify: true},
			{Config: config, ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()}}},
		},
	})
}

// TestAccUnreachableAgent: a provider pointed at no agent says so.
func TestAccUnreachableAgent(t *testing.T) {
	precheck(t)
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: factories,
		Steps: []resource.TestStep{{Config: `
provider "grove" {
  address = "http://127.0.0.1:1"
}
data "grove_profile_types" "all" {}
`, ExpectError: regexp.MustCompile(`Cannot reach the Grove agent`)}},
	})
}

// TestAccFailedAction: a failed action's reason is the diagnostic, and the
// cluster it left is still tracked (and destroyed by the test's cleanup).
func TestAccFailedAction(t *testing.T) {
	precheck(t)
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: factories,
		Steps: []resource.TestStep{{Config: providerBlock() + `
resource "grove_profile" "broken" {
  name       = "tf-broken"
  type       = "local.process"
  version    = "1.0"
  properties = jsonencode({ command = ["/nonexistent/grove-tf-test"] })
}

resource "grove_cluster" "broken" {
  name             = "tf-broken"
  profile_id       = grove_profile.broken.id
  desired_capacity = 1
}
`, ExpectError: regexp.MustCompile(`(?s)creation failed.*Failed in creating node.*/nonexistent/grove-tf-test`)}},
	})
	if _, err := client().GetCluster(context.Background(), "tf-broken"); !api.IsNotFound(err) {
		t.Errorf("the failed cluster must be destroyed with the rest: %v", err)
	}
}

// TestAccTLSAgent: the provider reaches an HTTPS agent that requires client
// certificates when ca_cert and the client certificate are set (or
// tls_skip_verify), and refuses it, naming ca_cert, without them.
func TestAccTLSAgent(t *testing.T) {
	precheck(t)
	t.Setenv("GROVE_CACERT", "")
	pki := tlstest.Issue(t)
	a, err := agent.Start(context.Background(), &agent.Config{Bind: "127.0.0.1:0", DataDir: t.TempDir(), Builtin: []string{groveBin, "plugin", "serve"}, Dev: true,
		TLS: &agent.TLSConfig{CertFile: pki.ServerCert, KeyFile: pki.ServerKey, ClientCAFile: pki.CA}}, "test", hclog.NewNullLogger())
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	config := func(settings string) string {
		return fmt.Sprintf("provider \"grove\" {\n  address = %q\n  client_cert = %q\n  client_key = %q\n%s}\n", a.Addr, pki.ClientCert, pki.ClientKey, settings) +
			"data \"grove_profile_types\" \"all\" {}\n"
	}
	listsTypes := []statecheck.StateCheck{statecheck.ExpectKnownValue("data.grove_profile_types.all",
		tfjsonpath.New("types").AtSliceIndex(0).AtMapKey("name"), knownvalue.NotNull())}
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: factories,
		Steps: []resource.TestStep{
			{Config: config(fmt.Sprintf("  ca_cert = %q\n", pki.CA)), ConfigStateChecks: listsTypes},
			{Config: config(""), ExpectError: regexp.MustCompile(`(?s)does not trust.*ca_cert in the Terraform provider`)},
			{Config: config(fmt.Sprintf("  ca_cert = %q\n", pki.OtherCA)), ExpectError: regexp.MustCompile(`does not trust`)},
			{Config: config(fmt.Sprintf("  ca_cert = %q\n", filepath.Join(t.TempDir(), "none.pem"))), ExpectError: regexp.MustCompile(`(?s)Invalid TLS settings.*no such file`)},
			// Last: the test's final destroy runs with this configuration.
			{Config: config("  tls_skip_verify = true\n"), ConfigStateChecks: listsTypes},
		},
	})
}

// TestAccTokenAgent: against an agent started without dev mode, a project
// member's token in the provider's token applies and destroys a profile and
// a cluster in its project; an unknown token is a diagnostic saying the
// token is not valid.
func TestAccTokenAgent(t *testing.T) {
	precheck(t)
	t.Setenv("GROVE_TOKEN", "")
	ctx := context.Background()
	dir := t.TempDir()
	a, err := agent.Start(ctx, &agent.Config{Bind: "127.0.0.1:0", DataDir: dir, Builtin: []string{groveBin, "plugin", "serve"}}, "test", hclog.NewNullLogger())
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	bootstrap, err := os.ReadFile(filepath.Join(dir, agent.BootstrapTokenFile))
	if err != nil {
		t.Fatal(err)
	}
	admin := api.New(api.Options{Address: a.Addr, Token: strings.TrimSpace(string(bootstrap))})
	tok, err := admin.CreateToken(ctx, api.TokenCreate{Name: "tf", Project: "tf-team", Role: "member"})
	if err != nil {
		t.Fatal(err)
	}
	// An admin of "default" sees another project's objects only with
	// global_project=true: the checks read as the member.
	member := api.New(api.Options{Address: a.Addr, Token: tok.Secret})
	config := func(token string) string {
		return fmt.Sprintf("provider \"grove\" {\n  address = %q\n  token   = %q\n}\n", a.Addr, token) + `
resource "grove_profile" "noop" {
  name       = "tf-tok-noop"
  type       = "grove.noop"
  version    = "1.0"
  properties = jsonencode({})
}

resource "grove_cluster" "c" {
  name             = "tf-tok"
  profile_id       = grove_profile.noop.id
  desired_capacity = 2
}
`
	}
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: factories,
		CheckDestroy: func(*terraform.State) error {
			if _, err := member.GetCluster(ctx, "tf-tok"); !api.IsNotFound(err) {
				return fmt.Errorf("the cluster survived destroy: %v", err)
			}
			return nil
		},
		Steps: []resource.TestStep{
			{Config: config("grove_" + strings.Repeat("A", 43)), ExpectError: regexp.MustCompile(`(?s)Invalid token.*refused the\s+provider.s\s+token:\s+The\s+token\s+is\s+not\s+valid.*Set\s+the\s+provider.s\s+token\s+\(or\s+GROVE_TOKEN\)`)},
			{Config: config(tok.Secret),
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue("grove_cluster.c", tfjsonpath.New("status"), knownvalue.StringExact("ACTIVE")),
					statecheck.ExpectKnownValue("grove_cluster.c", tfjsonpath.New("node_ids"), knownvalue.ListSizeExact(2)),
				},
				Check: func(*terraform.State) error {
					cl, err := member.GetCluster(ctx, "tf-tok")
					if err != nil || cl.Project != "tf-team" {
						return fmt.Errorf("the cluster is not in the token's project: %+v %v", cl, err)
					}
					return nil
				}},
		},
	})
}
