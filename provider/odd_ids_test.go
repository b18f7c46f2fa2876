package provider

import (
	"fmt"
	"net/http"
	"net/http/httptest"
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

// TestAccAttachmentImportErrors imports attachments that do not exist: the
// error names the cluster or the policy that is missing, or says the policy
// is not attached, rather than one sentence for every case.
func TestAccAttachmentImportErrors(t *testing.T) {
	precheck(t)
	base := providerBlock() + `
resource "grove_profile" "p" {
  name       = "tf-att-p"
  type       = "grove.noop"
  version    = "1.0"
  properties = jsonencode({})
}
resource "grove_policy" "del" {
  name       = "tf-att-del"
  type       = "senlin.policy.deletion"
  version    = "1.1"
  properties = jsonencode({ criteria = "OLDEST_FIRST" })
}
resource "grove_cluster" "c" {
  name             = "tf-att-c"
  profile_id       = grove_profile.p.id
  desired_capacity = 0
}
`
	withImport := func(id string) string {
		return base + fmt.Sprintf(`
import {
  to = grove_cluster_policy_attachment.a
  id = %q
}
resource "grove_cluster_policy_attachment" "a" {
  cluster_id = grove_cluster.c.id
  policy_id  = grove_policy.del.id
}
`, id)
	}
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: factories,
		Steps: []resource.TestStep{
			{Config: base},
			{Config: withImport("tf-att-c/tf-att-del"), ExpectError: regexp.MustCompile(`The policy "tf-att-del" is not attached to the cluster "tf-att-c"`)},
			{Config: withImport("tf-att-c/nosuch"), ExpectError: regexp.MustCompile(`No policy has the id or name "nosuch"`)},
			{Config: withImport("nosuch/tf-att-del"), ExpectError: regexp.MustCompile(`No cluster has the id or name "nosuch"`)},
			{Config: withImport("tf-att-c/"), ExpectError: regexp.MustCompile(`No policy has the id or name ""`)},
			{Config: base},
		},
	})
}

// TestAccAttachmentImportAgentError: an agent that fails the lookup (here a
// 500 for every policy) is reported with its reason, not as a missing
// cluster or policy.
func TestAccAttachmentImportAgentError(t *testing.T) {
	precheck(t)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		switch {
		case r.URL.Path == "/v1/build-info":
			w.Write([]byte(`{"build_info":{}}`))
		case r.URL.Path == "/v1/clusters/web":
			w.Write([]byte(`{"cluster":{"id":"c1","name":"web"}}`))
		default:
			w.WriteHeader(http.StatusInternalServerError)
			w.Write([]byte(`{"code":500,"error":{"code":500,"type":"StoreError","message":"The store is locked."}}`))
		}
	}))
	defer srv.Close()
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: factories,
		Steps: []resource.TestStep{{Config: fmt.Sprintf(`
provider "grove" {
  address = %q
}
import {
  to = grove_cluster_policy_attachment.a
  id = "web/del"
}
resource "grove_cluster_policy_attachment" "a" {
  cluster_id = "c1"
  policy_id  = "p1"
}
`, srv.URL), PlanOnly: true, ExpectError: regexp.MustCompile(`Reading the policy "del" failed: The store is locked\.`)}},
	})
}
