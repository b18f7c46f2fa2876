package provider

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"
)

func depsConfig(restartOn, member string) string {
	ro := ""
	if restartOn != "" {
		ro = fmt.Sprintf("restart_on = %q", restartOn)
	}
	return providerBlock() + fmt.Sprintf(`
resource "grove_profile" "noop" {
  name       = "tf-deps-noop"
  type       = "grove.noop"
  version    = "1.0"
  properties = jsonencode({})
}

resource "grove_cluster" "db" {
  name             = "tf-deps-db"
  profile_id       = grove_profile.noop.id
  desired_capacity = 1
}

resource "grove_cluster" "web" {
  name             = "tf-deps-web"
  profile_id       = grove_profile.noop.id
  desired_capacity = 1
  dependency_groups = {
    database = {
      grouping = "require_all"
      %s
      members  = [%s, "path:/etc/hosts"]
    }
  }
}
`, ro, member)
}

// TestAccClusterDependencyGroups: dependency_groups are declared on the
// agent after the cluster exists, restart_on defaults to none, a member
// given as an id stays as written, a change is an update in place, and
// import reads the groups back (members by name).
func TestAccClusterDependencyGroups(t *testing.T) {
	precheck(t)
	const res = "grove_cluster.web"
	ctx := context.Background()
	groups := func(want string) resource.TestCheckFunc {
		return func(*terraform.State) error {
			d, err := client().GetDependencies(ctx, "tf-deps-web")
			if err != nil {
				return err
			}
			var got []string
			for _, g := range d.Groups {
				got = append(got, fmt.Sprintf("%s %s %s %s %s", g.Name, g.Grouping, g.RestartOn, strings.Join(g.Members, ","), g.Result))
			}
			if strings.Join(got, "; ") != want {
				return fmt.Errorf("the agent holds %q, want %q", strings.Join(got, "; "), want)
			}
			return nil
		}
	}
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: factories,
		Steps: []resource.TestStep{
			{Config: depsConfig("", "grove_cluster.db.id"),
				Check: groups("database require_all none tf-deps-db,path:/etc/hosts satisfied"),
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue(res, tfjsonpath.New("dependency_groups").AtMapKey("database").AtMapKey("restart_on"), knownvalue.StringExact("none")),
				}},
			{Config: depsConfig("", "grove_cluster.db.id"), ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()}}},
			{Config: depsConfig("error", "grove_cluster.db.name"),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{plancheck.ExpectResourceAction(res, plancheck.ResourceActionUpdate)}},
				Check:            groups("database require_all error tf-deps-db,path:/etc/hosts satisfied")},
			{ResourceName: res, ImportState: true, ImportStateId: "tf-deps-web", ImportStateVerify: true, ImportStateVerifyIgnore: []string{"timeouts"}},
		},
	})
}
