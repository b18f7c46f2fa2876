package provider

import (
	"fmt"
	"regexp"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
)

// TestAccOddImportIDs imports and looks up ids that are no object's but
// that a URL path cannot carry as they are ("." and ".." are cleaned away,
// to the collection or its parent): each is answered as an id that names
// nothing, naming it, never with a JSON decoding error.
func TestAccOddImportIDs(t *testing.T) {
	precheck(t)
	importBlock := func(typ, id string) string {
		return providerBlock() + fmt.Sprintf(`
import {
  to = %[1]s.x
  id = %[2]q
}
resource %[1]q "x" {
  name       = "odd"
  type       = "grove.noop"
  version    = "1.0"
  properties = jsonencode({})
}
`, typ, id)
	}
	var steps []resource.TestStep
	for _, id := range []string{".", ".."} {
		steps = append(steps, resource.TestStep{Config: importBlock("grove_profile", id), PlanOnly: true,
			ExpectError: regexp.MustCompile(fmt.Sprintf(`No profile has the id or name %q`, id))})
	}
	for _, id := range []string{".", "..", ""} {
		steps = append(steps,
			resource.TestStep{Config: providerBlock() + fmt.Sprintf("data \"grove_policy\" \"x\" {\n  id_or_name = %q\n}\n", id),
				ExpectError: regexp.MustCompile(fmt.Sprintf(`No policy has the id or name %q`, id))},
			// Before, the cluster data source read the list of clusters
			// as a cluster with no id, no name and no error.
			resource.TestStep{Config: providerBlock() + fmt.Sprintf("data \"grove_cluster\" \"x\" {\n  id_or_name = %q\n}\n", id),
				ExpectError: regexp.MustCompile(`No object (is named "\.\.?"|has an empty name or id)`)},
		)
	}
	resource.Test(t, resource.TestCase{ProtoV6ProviderFactories: factories, Steps: steps})
}
