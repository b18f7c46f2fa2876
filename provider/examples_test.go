package provider

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hashicorp/go-hclog"

	"github.com/grovehq/grove/core/agent"
	"github.com/grovehq/grove/internal/containertest"
	"github.com/grovehq/grove/internal/novatest"
	"github.com/grovehq/grove/internal/testbin"
	"github.com/grovehq/grove/internal/vcsimtest"
	"github.com/grovehq/grove/plugins/builtin/nova"
)

// TestExamples applies every example under examples/terraform with the real
// terraform CLI and the provider binary through dev_overrides, as
// docs/terraform.md tells users to: apply, an empty plan, destroy.
func TestExamples(t *testing.T) {
	precheck(t)
	tf := os.Getenv("TF_ACC_TERRAFORM_PATH")
	bin := t.TempDir()
	if err := testbin.Build(filepath.Join(bin, "terraform-provider-grove"), "./cmd/terraform-provider-grove"); err != nil {
		t.Fatal(err)
	}
	rc := filepath.Join(t.TempDir(), "dev.tfrc")
	os.WriteFile(rc, []byte(fmt.Sprintf(`provider_installation {
  dev_overrides {
    "registry.terraform.io/grovehq/grove"   = %q
    "registry.terraform.io/hashicorp/grove" = %q
  }
  direct {}
}
`, bin, bin)), 0o644)
	var dirs []string
	filepath.WalkDir("../examples/terraform", func(path string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(path, ".tf") && !contains(dirs, filepath.Dir(path)) {
			dirs = append(dirs, filepath.Dir(path))
		}
		return nil
	})
	if len(dirs) < 10 {
		t.Fatalf("found only %d example directories", len(dirs))
	}
	for _, dir := range dirs {
		t.Run(strings.TrimPrefix(dir, "../examples/terraform/"), func(t *testing.T) {
			if strings.Contains(dir, "containers") {
				containertest.Require(t)
			}
			var extra []string
			addr := agentURL
			if strings.Contains(dir, "nova") {
				// The real Nova; an agent of its own, whose plugin finds the
				// cloud through the harness's clouds.yaml, as a user's would.
				addr = novaAgent(t)
				extra = append(extra, "TF_VAR_cloud=grove-nova")
			}
			if strings.Contains(dir, "vsphere") {
				// The simulator, in this process; the profile carries its URL.
				extra = append(extra, "TF_VAR_vsphere_url="+vcsimtest.New(t).UserURL().String())
			}
			work := t.TempDir()
			files, _ := filepath.Glob(filepath.Join(dir, "*.tf"))
			for _, f := range files {
				b, _ := os.ReadFile(f)
				os.WriteFile(filepath.Join(work, filepath.Base(f)), b, 0o644)
			}
			run := func(args ...string) (string, int) {
				cmd := exec.Command(tf, args...)
				cmd.Dir = work
				cmd.Env = append(os.Environ(), "TF_CLI_CONFIG_FILE="+rc, "GROVE_ADDR="+addr, "TF_VAR_grove="+groveBin,
					"CHECKPOINT_DISABLE=1", "TF_IN_AUTOMATION=1")
				cmd.Env = append(cmd.Env, extra...)
				var out bytes.Buffer
				cmd.Stdout, cmd.Stderr = &out, &out
				err := cmd.Run()
				code := 0
				if ee, ok := err.(*exec.ExitError); ok {
					code = ee.ExitCode()
				}
				return out.String(), code
			}
			if out, code := run("apply", "-auto-approve", "-input=false"); code != 0 {
				t.Fatalf("terraform apply: exit %d\n%s", code, out)
			}
			if out, code := run("plan", "-detailed-exitcode", "-input=false"); code != 0 {
				t.Errorf("the plan after apply is not empty (exit %d):\n%s", code, out)
			}
			if out, code := run("destroy", "-auto-approve", "-input=false"); code != 0 {
				t.Fatalf("terraform destroy: exit %d\n%s", code, out)
			}
		})
	}
}

func contains(ss []string, s string) bool {
	for _, x := range ss {
		if x == s {
			return true
		}
	}
	return false
}

// novaAgent starts an agent whose environment names the real Nova's
// clouds.yaml (OS_CLIENT_CONFIG_FILE, as an OpenStack user keeps one) and
// returns its address; the test ends it.
func novaAgent(t *testing.T) string {
	n := novatest.Shared(t)
	for _, k := range nova.EnvNames() {
		t.Setenv(k, "")
	}
	t.Setenv("OS_CLIENT_CONFIG_FILE", n.CloudsYAML)
	dir := t.TempDir()
	a, err := agent.Start(context.Background(), &agent.Config{Bind: "127.0.0.1:0", DataDir: filepath.Join(dir, "data"), Builtin: []string{groveBin, "plugin", "serve"}, Dev: true},
		"test", hclog.New(&hclog.LoggerOptions{Level: hclog.Warn, Output: os.Stderr}))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(a.Close)
	return a.Addr
}
