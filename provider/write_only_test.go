package provider

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"reflect"
	"regexp"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-go/tfprotov6"
	"github.com/hashicorp/terraform-plugin-go/tftypes"
	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"

	"github.com/grovehq/grove/api"
)

// writeOnlyTerraformEnv names the terraform 1.11+ CLI the write-only test runs
// with: the one the tests use otherwise may be older (.ci/run builds 1.11.4
// into .ci/tmp/terraform-1.11 with .ci/terraform-wo.sh and exports the variable).
const writeOnlyTerraformEnv = "GROVE_TF_WRITE_ONLY_PATH"

func writeOnlyConfig(secret string, version int) string {
	return providerBlock() + fmt.Sprintf(`
resource "grove_profile" "wo" {
  name    = "tf-wo"
  type    = "local.process"
  version = "1.0"
  properties = jsonencode({
    command = [%q, "demo-http"]
    env     = { MODE = "plain" }
  })
  properties_wo         = jsonencode({ env = { GROVE_WO_SECRET = %q } })
  properties_wo_version = %d
  lifecycle {
    create_before_destroy = true
  }
}

resource "grove_node" "wo" {
  name       = "tf-wo-node"
  profile_id = grove_profile.wo.id
}
`, groveBin, secret, version)
}

// noTrace is a plan and state check: the JSON Terraform shows of the plan
// or the state (sensitive values included, in clear) does not contain s.
type noTrace struct{ s string }

func (c noTrace) CheckPlan(_ context.Context, req plancheck.CheckPlanRequest, resp *plancheck.CheckPlanResponse) {
	b, err := json.Marshal(req.Plan)
	if err != nil {
		resp.Error = err
	} else if strings.Contains(string(b), c.s) {
		resp.Error = fmt.Errorf("the plan holds the write-only secret %q", c.s)
	}
}

func (c noTrace) CheckState(_ context.Context, req statecheck.CheckStateRequest, resp *statecheck.CheckStateResponse) {
	b, err := json.Marshal(req.State)
	if err != nil {
		resp.Error = err
	} else if strings.Contains(string(b), c.s) {
		resp.Error = fmt.Errorf("the state holds the write-only secret %q", c.s)
	}
}

// nodeEnvHas checks the environment of the node's process (its wrapper,
// which passes it on to the command) through /proc.
func nodeEnvHas(want ...string) resource.TestCheckFunc {
	return func(*terraform.State) error {
		n, err := client().GetNode(context.Background(), "tf-wo-node")
		if err != nil {
			return err
		}
		pid, _ := n.Data["pid"].(float64)
		env, err := os.ReadFile(fmt.Sprintf("/proc/%d/environ", int(pid)))
		if err != nil {
			return fmt.Errorf("the node's process %v: %w", n.Data["pid"], err)
		}
		vars := strings.Split(string(env), "\x00")
		for _, w := range want {
			found := false
			for _, v := range vars {
				found = found || v == w
			}
			if !found {
				return fmt.Errorf("the node's process has no %s in its environment", strings.SplitN(w, "=", 2)[0]+"=…")
			}
		}
		return nil
	}
}

// profileShowsSecretRedacted: the agent keeps the write-only value (the API
// shows it as "(sensitive)"), beside the configured one.
func profileShowsSecretRedacted(*terraform.State) error {
	var out struct {
		Profile struct {
			Spec struct {
				Properties map[string]any `json:"properties"`
			} `json:"spec"`
		} `json:"profile"`
	}
	if _, err := client().Do(context.Background(), http.MethodGet, "/v1/profiles/tf-wo", nil, nil, &out); err != nil {
		return err
	}
	env, _ := out.Profile.Spec.Properties["env"].(map[string]any)
	if want := map[string]any{"MODE": redacted, "GROVE_WO_SECRET": redacted}; !reflect.DeepEqual(env, want) {
		return fmt.Errorf("the agent's profile has env %v, want %v", env, want)
	}
	return nil
}

// TestAccWriteOnlyProperties applies, with terraform 1.11 or later, a
// profile whose env value comes only from properties_wo: the node's process
// gets it, no plan or state holds it, the next plan is empty, a changed
// value alone changes nothing, and bumping properties_wo_version rolls the
// new value in.
func TestAccWriteOnlyProperties(t *testing.T) {
	tf := os.Getenv(writeOnlyTerraformEnv)
	if tf == "" {
		msg := writeOnlyTerraformEnv + " is not set: this test needs a terraform CLI 1.11 or later (.ci/terraform-wo.sh builds one)"
		if os.Getenv("CI") == "true" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	if _, err := os.Stat(tf); err != nil {
		t.Fatalf("%s: %v", writeOnlyTerraformEnv, err)
	}
	t.Setenv("TF_ACC_TERRAFORM_PATH", tf)
	var b [8]byte
	rand.Read(b[:])
	secret1, secret2, secret3 := "wo-one-"+hex.EncodeToString(b[:]), "wo-two-"+hex.EncodeToString(b[:]), "wo-three-"+hex.EncodeToString(b[:])
	ctx := context.Background()
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: factories,
		CheckDestroy: func(*terraform.State) error {
			if _, err := client().GetNode(ctx, "tf-wo-node"); !api.IsNotFound(err) {
				return fmt.Errorf("the node survived destroy: %v", err)
			}
			return nil
		},
		Steps: []resource.TestStep{
			// Only sensitive properties are write-only...
			{Config: providerBlock() + `
resource "grove_profile" "bad" {
  name          = "tf-wo-bad"
  type          = "local.process"
  version       = "1.0"
  properties    = jsonencode({ command = ["sleep", "60"] })
  properties_wo = jsonencode({ stop_timeout = 5 })
}`, ExpectError: regexp.MustCompile(`properties_wo\.stop_timeout: local\.process-1\.0 does not mark this property\s+sensitive`)},
			// ...that the type has...
			{Config: providerBlock() + `
resource "grove_profile" "bad" {
  name          = "tf-wo-bad"
  type          = "local.process"
  version       = "1.0"
  properties    = jsonencode({ command = ["sleep", "60"] })
  properties_wo = jsonencode({ nope = { A = "b" } })
}`, ExpectError: regexp.MustCompile(`properties_wo\.nope: local\.process-1\.0 has no such property`)},
			// ...and not also set in properties.
			{Config: providerBlock() + `
resource "grove_profile" "bad" {
  name          = "tf-wo-bad"
  type          = "local.process"
  version       = "1.0"
  properties    = jsonencode({ command = ["sleep", "60"], env = { A = "1" } })
  properties_wo = jsonencode({ env = { A = "2" } })
}`, ExpectError: regexp.MustCompile(`properties_wo\.env\.A is set in both properties and properties_wo`)},
			// A version without the value it versions.
			{Config: providerBlock() + `
resource "grove_profile" "bad" {
  name                  = "tf-wo-bad"
  type                  = "local.process"
  version               = "1.0"
  properties            = jsonencode({ command = ["sleep", "60"] })
  properties_wo_version = 1
}`, ExpectError: wrapped(`Attribute "properties_wo" must be specified when "properties_wo_version" is specified`)},
			// Create: the secret reaches the node, not the plan or the state.
			{Config: writeOnlyConfig(secret1, 1),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{noTrace{secret1},
					plancheck.ExpectResourceAction("grove_profile.wo", plancheck.ResourceActionCreate)}},
				ConfigStateChecks: []statecheck.StateCheck{noTrace{secret1},
					statecheck.ExpectKnownValue("grove_profile.wo", tfjsonpath.New("properties_wo"), knownvalue.Null()),
					statecheck.ExpectKnownValue("grove_profile.wo", tfjsonpath.New("properties_wo_version"), knownvalue.Int64Exact(1)),
					statecheck.ExpectKnownValue("grove_node.wo", tfjsonpath.New("status"), knownvalue.StringExact("ACTIVE")),
				},
				Check: resource.ComposeTestCheckFunc(
					// The state's properties are the configured ones, without the write-only key.
					resource.TestCheckResourceAttr("grove_profile.wo", "properties",
						fmt.Sprintf(`{"command":[%q,"demo-http"],"env":{"MODE":"plain"}}`, groveBin)),
					profileShowsSecretRedacted,
					nodeEnvHas("GROVE_WO_SECRET="+secret1, "MODE=plain")),
			},
			// Nothing to do on the next plan.
			{Config: writeOnlyConfig(secret1, 1), ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()}}},
			// Terraform cannot see a write-only value change: a new value
			// alone is no change, which is what the version is for.
			{Config: writeOnlyConfig(secret2, 1), ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()}},
				Check: nodeEnvHas("GROVE_WO_SECRET=" + secret1)},
			// A new version replaces the profile; the node moves onto it with the new value.
			{Config: writeOnlyConfig(secret3, 2),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{noTrace{secret3},
					plancheck.ExpectResourceAction("grove_profile.wo", plancheck.ResourceActionCreateBeforeDestroy),
					plancheck.ExpectResourceAction("grove_node.wo", plancheck.ResourceActionUpdate)}},
				ConfigStateChecks: []statecheck.StateCheck{noTrace{secret3}, noTrace{secret1},
					statecheck.ExpectKnownValue("grove_profile.wo", tfjsonpath.New("properties_wo_version"), knownvalue.Int64Exact(2))},
				Check: resource.ComposeTestCheckFunc(profileShowsSecretRedacted, nodeEnvHas("GROVE_WO_SECRET="+secret3, "MODE=plain")),
			},
			{Config: writeOnlyConfig(secret3, 2), ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()}}},
		},
	})
}

// TestWriteOnlyNeedsTerraform111: a Terraform too old for write-only
// attributes (it says so in its client capabilities; the CLI on this
// machine is newer, so the provider server is asked directly) gets an error
// naming properties_wo, not a profile without its secret; without
// properties_wo it sees no error.
func TestWriteOnlyNeedsTerraform111(t *testing.T) {
	ctx := context.Background()
	srv, err := factories["grove"]()
	if err != nil {
		t.Fatal(err)
	}
	sch, err := srv.GetProviderSchema(ctx, &tfprotov6.GetProviderSchemaRequest{})
	if err != nil {
		t.Fatal(err)
	}
	typ := sch.ResourceSchemas["grove_profile"].ValueType().(tftypes.Object)
	config := func(wo tftypes.Value) *tfprotov6.DynamicValue {
		vals := map[string]tftypes.Value{}
		for name, at := range typ.AttributeTypes {
			vals[name] = tftypes.NewValue(at, nil)
		}
		vals["name"] = tftypes.NewValue(tftypes.String, "old")
		vals["type"] = tftypes.NewValue(tftypes.String, "local.process")
		vals["version"] = tftypes.NewValue(tftypes.String, "1.0")
		vals["properties_wo"] = wo
		dv, err := tfprotov6.NewDynamicValue(typ, tftypes.NewValue(typ, vals))
		if err != nil {
			t.Fatal(err)
		}
		return &dv
	}
	for _, c := range []struct {
		wo   tftypes.Value
		caps bool
		want string
	}{
		{tftypes.NewValue(tftypes.String, `{"env":{"A":"b"}}`), false, "WriteOnly Attribute Not Allowed"},
		{tftypes.NewValue(tftypes.String, `{"env":{"A":"b"}}`), true, ""},
		{tftypes.NewValue(tftypes.String, nil), false, ""},
	} {
		resp, err := srv.ValidateResourceConfig(ctx, &tfprotov6.ValidateResourceConfigRequest{TypeName: "grove_profile", Config: config(c.wo),
			ClientCapabilities: &tfprotov6.ValidateResourceConfigClientCapabilities{WriteOnlyAttributesAllowed: c.caps}})
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, d := range resp.Diagnostics {
			got = append(got, d.Summary+": "+d.Detail)
		}
		switch {
		case c.want == "" && len(got) > 0:
			t.Errorf("properties_wo %v, write-only allowed %v: unexpected diagnostics %q", c.wo, c.caps, got)
		case c.want != "" && (len(got) != 1 || !strings.Contains(got[0], c.want) || !strings.Contains(got[0], "properties_wo")):
			t.Errorf("properties_wo %v, write-only allowed %v: diagnostics %q, want one saying %q about properties_wo", c.wo, c.caps, got, c.want)
		}
	}
}

// TestStripWriteOnly: Read puts the configured values back where the API
// shows "(sensitive)" and leaves out what only properties_wo set.
func TestStripWriteOnly(t *testing.T) {
	for _, c := range []struct{ remote, known, want string }{
		{`{"env":{"A":"(sensitive)","S":"(sensitive)"}}`, `{"env":{"A":"a"}}`, `{"env":{"A":"a"}}`},
		{`{"command":["x"],"env":{"S":"(sensitive)"}}`, `{"command":["x"]}`, `{"command":["x"]}`},
		{`{"env":{"S":"(sensitive)"}}`, `{"env":{}}`, `{"env":{}}`},
		{`{"env":{}}`, `{}`, `{"env":{}}`},
		{`{"l":[{"p":"(sensitive)"}]}`, `{"l":[{"p":"q"}]}`, `{"l":[{"p":"q"}]}`},
	} {
		var remote, known any
		json.Unmarshal([]byte(c.remote), &remote)
		json.Unmarshal([]byte(c.known), &known)
		got, _ := stripWriteOnly(remote, known, true)
		if s := toJSON(got); s != c.want {
			t.Errorf("stripWriteOnly(%s, %s) = %s, want %s", c.remote, c.known, s, c.want)
		}
	}
}
