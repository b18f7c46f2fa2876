package provider

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/hashicorp/go-hclog"

	"github.com/grovehq/grove/core/agent"
	"github.com/grovehq/grove/internal/containertest"
	"github.com/grovehq/grove/internal/haproxytest"
	"github.com/grovehq/grove/internal/novatest"
	"github.com/grovehq/grove/internal/testbin"
	"github.com/grovehq/grove/internal/vcsimtest"
	"github.com/grovehq/grove/plugins/builtin/nova"
)

// devCLI runs the terraform CLI with the provider binary through
// dev_overrides, as docs/terraform.md tells users to, against the tests'
// agent.
type devCLI struct {
	tf, rc string
	env    []string
	// addr is the agent's address, when not the tests' shared agent.
	addr string
}

func newDevCLI(t *testing.T) *devCLI {
	t.Helper()
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
	return &devCLI{tf: os.Getenv("TF_ACC_TERRAFORM_PATH"), rc: rc}
}

// run runs terraform in dir and returns its output and exit code.
func (c *devCLI) run(dir string, args ...string) (string, int) {
	cmd := exec.Command(c.tf, args...)
	cmd.Dir = dir
	addr := agentURL
	if c.addr != "" {
		addr = c.addr
	}
	cmd.Env = append(os.Environ(), "TF_CLI_CONFIG_FILE="+c.rc, "GROVE_ADDR="+addr, "TF_VAR_grove="+groveBin,
		"CHECKPOINT_DISABLE=1", "TF_IN_AUTOMATION=1")
	cmd.Env = append(cmd.Env, c.env...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		code = -1
		out.WriteString(err.Error())
	}
	return out.String(), code
}

// importExample reports whether a file under examples/terraform is an
// import block for the docs (tfplugindocs's import-by-string-id.tf), which
// TestExampleImportBlocks runs against objects the example created.
func importExample(path string) bool { return strings.HasPrefix(filepath.Base(path), "import-by-") }

// copyExample copies an example's configuration, without its import
// blocks, into a new directory.
func copyExample(t *testing.T, dir string) string {
	work := t.TempDir()
	files, _ := filepath.Glob(filepath.Join(dir, "*.tf"))
	for _, f := range files {
		if importExample(f) {
			continue
		}
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		os.WriteFile(filepath.Join(work, filepath.Base(f)), b, 0o644)
	}
	return work
}

// TestExamples applies every example under examples/terraform with the real
// terraform CLI and the provider binary through dev_overrides, as
// docs/terraform.md tells users to: apply, an empty plan, destroy.
func TestExamples(t *testing.T) {
	precheck(t)
	cli := newDevCLI(t)
	var dirs []string
	filepath.WalkDir("../examples/terraform", func(path string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(path, ".tf") && !importExample(path) && !contains(dirs, filepath.Dir(path)) {
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
			cli := *cli
			if strings.Contains(dir, "nova") {
				// The real Nova; an agent of its own, whose plugin finds the
				// cloud through the harness's clouds.yaml, as a user's would.
				cli.addr = novaAgent(t)
				cli.env = append(cli.env, "TF_VAR_cloud=grove-nova")
			}
			if strings.Contains(dir, "haproxy") {
				// A real HAProxy whose backend the policy fills.
				cli.env = append(cli.env, "TF_VAR_haproxy_socket="+haproxytest.Start(t).Socket)
			}
			if strings.Contains(dir, "vsphere") {
				// The simulator, in this process; the profile carries its URL.
				cli.env = append(cli.env, "TF_VAR_vsphere_url="+vcsimtest.New(t).UserURL().String())
			}
			work := copyExample(t, dir)
			if out, code := cli.run(work, "apply", "-auto-approve", "-input=false"); code != 0 {
				t.Fatalf("terraform apply: exit %d\n%s", code, out)
			}
			if strings.HasSuffix(dir, "/dependencies") {
				checkDependenciesExample(t)
			}
			if out, code := cli.run(work, "plan", "-detailed-exitcode", "-input=false"); code != 0 {
				t.Errorf("the plan after apply is not empty (exit %d):\n%s", code, out)
			}
			if out, code := cli.run(work, "destroy", "-auto-approve", "-input=false"); code != 0 {
				t.Fatalf("terraform destroy: exit %d\n%s", code, out)
			}
		})
	}
}

// TestExampleImportBlocks runs the import block the docs show for each
// resource (examples/terraform/resources/*/import-by-string-id.tf, Terraform
// 1.5's import { to, id }): with the example applied and its resource gone
// from the state, the plan imports it by the id the block names and the
// apply brings it back (a profile with sensitive values is replaced as it
// is imported, as its block says), after which the plan is empty.
func TestExampleImportBlocks(t *testing.T) {
	precheck(t)
	cli := newDevCLI(t)
	blocks, _ := filepath.Glob("../examples/terraform/resources/*/import-by-string-id.tf")
	dirs, _ := filepath.Glob("../examples/terraform/resources/*")
	if len(blocks) == 0 || len(blocks) != len(dirs) {
		t.Fatalf("%d import blocks for %d resources: each resource's docs need one", len(blocks), len(dirs))
	}
	to := regexp.MustCompile(`(?m)^\s*to\s*=\s*(\S+)\s*$`)
	id := regexp.MustCompile(`\bid\s*=\s*"[^"]+"`)
	for _, block := range blocks {
		dir := filepath.Dir(block)
		t.Run(filepath.Base(dir), func(t *testing.T) {
			src, err := os.ReadFile(block)
			if err != nil {
				t.Fatal(err)
			}
			m := to.FindSubmatch(src)
			if m == nil {
				t.Fatalf("%s has no import block with a to", block)
			}
			addr := string(m[1])
			work := copyExample(t, dir)
			if out, code := cli.run(work, "apply", "-auto-approve", "-input=false"); code != 0 {
				t.Fatalf("terraform apply: exit %d\n%s", code, out)
			}
			defer func() {
				if out, code := cli.run(work, "destroy", "-auto-approve", "-input=false"); code != 0 {
					t.Errorf("terraform destroy: exit %d\n%s", code, out)
				}
			}()
			before, _ := cli.run(work, "state", "show", "-no-color", addr)
			if out, code := cli.run(work, "state", "rm", addr); code != 0 {
				t.Fatalf("terraform state rm %s: exit %d\n%s", addr, code, out)
			}
			os.WriteFile(filepath.Join(work, filepath.Base(block)), src, 0o644)
			// The API shows a profile's sensitive values (the example's env)
			// as "(sensitive)", so Terraform cannot know the imported ones
			// equal the configured ones: the import replaces the profile.
			replaced := addr == "grove_profile.web"
			out, code := cli.run(work, "plan", "-detailed-exitcode", "-input=false", "-no-color")
			if code != 2 || !strings.Contains(out, "1 to import") || strings.Contains(out, "must be replaced") != replaced {
				t.Fatalf("the plan with the import block does not import %s (replaced: %v) (exit %d):\n%s", addr, replaced, code, out)
			}
			if out, code := cli.run(work, "apply", "-auto-approve", "-input=false", "-no-color"); code != 0 || !strings.Contains(out, "1 imported") {
				t.Fatalf("terraform apply with the import block: exit %d\n%s", code, out)
			}
			after, _ := cli.run(work, "state", "show", "-no-color", addr)
			if !replaced && (id.FindString(after) != id.FindString(before) || id.FindString(before) == "") {
				t.Errorf("%s imported as\n%s\nbut was\n%s", addr, after, before)
			}
			if out, code := cli.run(work, "plan", "-detailed-exitcode", "-input=false", "-no-color"); code != 0 {
				t.Errorf("the plan after the import is not empty (exit %d):\n%s", code, out)
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

// checkDependenciesExample: the three-tier stack of
// examples/terraform/dependencies is declared as docs/dependencies.md
// says, every group satisfied and every cluster running.
func checkDependenciesExample(t *testing.T) {
	t.Helper()
	want := map[string]string{"tf-deps-app": "database require_all error [tf-deps-db]", "tf-deps-web": "backend require_all restart [tf-deps-app path:/etc/hosts]"}
	for name, group := range want {
		d, err := client().GetDependencies(context.Background(), name)
		if err != nil {
			t.Fatal(err)
		}
		if len(d.Groups) != 1 {
			t.Fatalf("%s holds %d groups, want 1: %+v", name, len(d.Groups), d.Groups)
		}
		g := d.Groups[0]
		if got := fmt.Sprintf("%s %s %s %v", g.Name, g.Grouping, g.RestartOn, g.Members); got != group || g.Result != "satisfied" {
			t.Errorf("%s holds %q (%s), want %q satisfied", name, got, g.Result, group)
		}
		if d.State != "running" {
			t.Errorf("%s is %s (%s), want running", name, d.State, d.Reason)
		}
	}
}
