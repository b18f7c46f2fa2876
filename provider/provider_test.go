package provider

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"testing"

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
	a, err := agent.Start(context.Background(), &agent.Config{Bind: "127.0.0.1:0", Dev: true, DataDir: filepath.Join(dir, "data"), Builtin: []string{groveBin, "plugin", "serve"}},
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
				}},
			// An empty plan after apply.
			{Config: clusterConfig("v1", "tf-web", 2, "a"), ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()}}},
			// Import by id and by name.
			{ResourceName: res, ImportState: true, ImportStateVerify: true, ImportStateVerifyIgnore: []string{"timeouts"}},
			{ResourceName: res, ImportState: true, ImportStateId: "tf-web", ImportStateVerify: true, ImportStateVerifyIgnore: []string{"timeouts"}},
			{ResourceName: "grove_profile.web", ImportState: true, ImportStateVerify: true},
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
