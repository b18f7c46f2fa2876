package provider

import (
	"context"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// legacyConfig is what wrote testdata/legacy.tfstate (the examples of
// grove_profile and grove_policy, renamed), except that the policy's
// properties are spelled as a JSON string with spaces rather than with
// jsonencode: the same document, which must plan nothing either.
const legacyConfig = `terraform {
  required_providers {
    grove = { source = "grovehq/grove" }
  }
}

resource "grove_profile" "web" {
  name    = "tf-legacy-web"
  type    = "local.process"
  version = "1.0"
  properties = jsonencode({
    command      = ["sleep", "3600"]
    env          = { MODE = "example" }
    stop_timeout = 5
  })
  metadata = { team = "web" }
  lifecycle {
    create_before_destroy = true
  }
}

resource "grove_policy" "oldest_first" {
  name       = "tf-legacy-oldest"
  type       = "senlin.policy.deletion"
  version    = "1.1"
  properties = "{ \"grace_period\": 0, \"criteria\": \"OLDEST_FIRST\" }"
}
`

// TestLegacyStateReads: a state written before properties became
// jsontypes.Normalized (testdata/legacy.tfstate: terraform 1.11.4 applied
// the grove_profile and grove_policy examples with the provider of commit
// 9baa97a; the ids are filled in here and terraform_version lowered to
// 1.5.7 so that every CLI the tests run with reads it) still reads: the
// attribute's type in the state is the same string, refresh keeps it, the
// plan is empty, and destroy works from it.
func TestLegacyStateReads(t *testing.T) {
	precheck(t)
	ctx := context.Background()
	c := client()
	ids := map[string]string{}
	for _, o := range []struct{ kind, name, placeholder string }{
		{"profile", "tf-legacy-web", "{{PROFILE_ID}}"}, {"policy", "tf-legacy-oldest", "{{POLICY_ID}}"},
	} {
		spec := map[string]any{"type": "local.process", "version": "1.0",
			"properties": map[string]any{"command": []any{"sleep", "3600"}, "env": map[string]any{"MODE": "example"}, "stop_timeout": 5}}
		body := map[string]any{"name": o.name, "spec": spec, "metadata": map[string]any{"team": "web"}}
		if o.kind == "policy" {
			body = map[string]any{"name": o.name, "spec": map[string]any{"type": "senlin.policy.deletion", "version": "1.1",
				"properties": map[string]any{"criteria": "OLDEST_FIRST", "grace_period": 0}}}
		}
		var out map[string]struct {
			ID string `json:"id"`
		}
		if _, err := c.Do(ctx, http.MethodPost, "/v1/"+collections[o.kind], nil, map[string]any{o.kind: body}, &out); err != nil {
			t.Fatal(err)
		}
		ids[o.placeholder] = out[o.kind].ID
		t.Cleanup(func() { _, _ = c.Do(ctx, http.MethodDelete, "/v1/"+collections[o.kind]+"/"+o.name, nil, nil, nil) })
	}
	state, err := os.ReadFile("testdata/legacy.tfstate")
	if err != nil {
		t.Fatal(err)
	}
	s := string(state)
	for k, v := range ids {
		s = strings.ReplaceAll(s, k, v)
	}
	work := t.TempDir()
	os.WriteFile(filepath.Join(work, "terraform.tfstate"), []byte(s), 0o644)
	os.WriteFile(filepath.Join(work, "main.tf"), []byte(legacyConfig), 0o644)
	cli := newDevCLI(t)
	if out, code := cli.run(work, "plan", "-detailed-exitcode", "-input=false", "-no-color"); code != 0 {
		t.Fatalf("the plan over the legacy state is not empty (exit %d):\n%s", code, out)
	}
	if out, code := cli.run(work, "apply", "-refresh-only", "-auto-approve", "-input=false", "-no-color"); code != 0 {
		t.Fatalf("terraform apply -refresh-only: exit %d\n%s", code, out)
	}
	// Refreshed by the new provider, the state keeps the spelling it had.
	after, _ := os.ReadFile(filepath.Join(work, "terraform.tfstate"))
	for _, want := range []string{`"{\"criteria\":\"OLDEST_FIRST\",\"grace_period\":0}"`, `"{\"command\":[\"sleep\",\"3600\"],\"env\":{\"MODE\":\"example\"},\"stop_timeout\":5}"`} {
		if !strings.Contains(string(after), want) {
			t.Errorf("the refreshed state lost the properties %s:\n%s", want, after)
		}
	}
	if out, code := cli.run(work, "destroy", "-auto-approve", "-input=false", "-no-color"); code != 0 || !strings.Contains(out, "2 destroyed") {
		t.Fatalf("terraform destroy: exit %d\n%s", code, out)
	}
}
