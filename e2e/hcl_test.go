package e2e

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/grovehq/grove/api"
	"github.com/grovehq/grove/hcl"
)

// TestHCLApply drives grove validate, plan, apply and destroy against a real
// agent with the quickstart example, as a user would.
func TestHCLApply(t *testing.T) {
	a := startAgent(t, t.TempDir())
	t.Cleanup(func() { killProcessesOf("quickstart") })
	ex := "../examples/hcl/quickstart"

	out, errOut, code := a.grove("validate", ex)
	if code != 0 || !strings.Contains(out, `"quickstart" is valid`) {
		t.Fatalf("validate: %d %s %s", code, out, errOut)
	}
	out, _, code = a.grove("plan", "-detailed-exitcode", "-var", "nodes=2", ex)
	if code != 2 || !strings.Contains(out, "Plan: 3 to add, 0 to change, 0 to replace, 0 to destroy.") {
		t.Fatalf("first plan: %d\n%s", code, out)
	}
	_, errOut, code = a.grove("apply", "-var", "nodes=2", ex)
	if code != 2 || !strings.Contains(errOut, "pass -auto-approve") {
		t.Fatalf("apply without a terminal must ask for -auto-approve: %d %s", code, errOut)
	}
	out, errOut, code = a.grove("apply", "-auto-approve", "-var", "nodes=2", ex)
	if code != 0 || !strings.Contains(out, "Apply complete! Resources: 3 added") {
		t.Fatalf("apply: %d\n%s\n%s", code, out, errOut)
	}
	cl := a.cluster("quickstart")
	if cl.Status != "ACTIVE" || len(cl.Nodes) != 2 || cl.Config["grove.restart"] == nil || len(cl.Policies) != 1 {
		t.Fatalf("cluster after apply: %+v", cl)
	}
	for _, n := range a.nodes(cl.ID) {
		nodeAnswers(t, n)
	}
	out, _, code = a.grove("plan", "-detailed-exitcode", "-var", "nodes=2", ex)
	if code != 0 || !strings.Contains(out, "No changes.") {
		t.Fatalf("a second plan after apply must be empty: %d\n%s", code, out)
	}

	// A saved plan applies exactly; a stale one is refused.
	planFile := filepath.Join(t.TempDir(), "grow.plan")
	out, _, code = a.grove("plan", "-var", "nodes=3", "-out", planFile, ex)
	if code != 0 || !strings.Contains(out, "desired_capacity = 2 -> 3") {
		t.Fatalf("plan -out: %d\n%s", code, out)
	}
	stale := filepath.Join(t.TempDir(), "stale.plan")
	a.grove("plan", "-var", "nodes=4", "-out", stale, ex)
	out, errOut, code = a.grove("apply", planFile)
	if code != 0 || len(a.cluster("quickstart").Nodes) != 3 {
		t.Fatalf("apply a saved plan: %d\n%s\n%s", code, out, errOut)
	}
	_, errOut, code = a.grove("apply", stale)
	if code != 1 || !strings.Contains(errOut, "stale") {
		t.Fatalf("a stale plan must be refused: %d %s", code, errOut)
	}

	// A profile change replaces the profile and rolls the cluster onto it.
	src, _ := os.ReadFile(filepath.Join(ex, "main.hcl"))
	changed := filepath.Join(t.TempDir(), "main.hcl")
	os.WriteFile(changed, []byte(strings.Replace(string(src), `GREETING = "hello"`, `GREETING = "bonjour"`, 1)), 0o644)
	out, _, code = a.grove("plan", "-var", "nodes=3", changed)
	if code != 0 || !strings.Contains(out, "profile.web must be replaced") || !strings.Contains(out, "# forces replacement") ||
		!strings.Contains(out, "cluster.quickstart will be updated in place") {
		t.Fatalf("plan of a profile change:\n%s", out)
	}
	out, errOut, code = a.grove("apply", "-auto-approve", "-var", "nodes=3", changed)
	if code != 0 {
		t.Fatalf("apply a profile change: %s %s", out, errOut)
	}
	out, _, code = a.grove("plan", "-detailed-exitcode", "-var", "nodes=3", changed)
	if code != 0 {
		t.Fatalf("plan after the profile change: %d\n%s", code, out)
	}

	// Another set may not take over this set's objects.
	_, errOut, code = a.grove("plan", "-set", "intruder", "-var", "nodes=3", changed)
	if code != 1 || !strings.Contains(errOut, `owned by definition set "quickstart"`) {
		t.Fatalf("another set's objects: %d %s", code, errOut)
	}

	// Destroy removes exactly what the set owns.
	a.webProfile("unrelated")
	out, errOut, code = a.grove("destroy", "-auto-approve", ex)
	if code != 0 || !strings.Contains(out, "Destroy complete! Resources: 3 destroyed.") || strings.Contains(out, "Apply complete") {
		t.Fatalf("destroy: %d\n%s\n%s", code, out, errOut)
	}
	if _, err := a.client.GetCluster(t.Context(), "quickstart"); err == nil {
		t.Fatal("the cluster survived destroy")
	}
	var profiles map[string][]map[string]any
	a.mustDo("GET", "/v1/profiles", nil, &profiles)
	if len(profiles["profiles"]) != 1 || profiles["profiles"][0]["name"] != "unrelated" {
		t.Fatalf("destroy must leave objects it does not own: %v", profiles)
	}
	eventually(t, 15*time.Second, "the quickstart processes to go", func() (bool, string) {
		n := len(processesOf("quickstart"))
		return n == 0, strconv.Itoa(n)
	})
}

// TestHCLDiagnostics checks that validate points at the exact character.
func TestHCLDiagnostics(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "bad.hcl"), []byte(`profile "web" {
  type    = "local.process"
  version = "1.0"
  properties {
    command = "not a list"
  }
}

cluster "web" {
  profile = profile.web
  restart {
    condition = "sometimes"
  }
}
`), 0o644)
	cmd := exec.Command(groveBin, "validate", "-address", "127.0.0.1:1", dir)
	out, _ := cmd.CombinedOutput()
	s := string(out)
	if cmd.ProcessState.ExitCode() != 1 {
		t.Fatalf("validate of a bad definition must exit 1:\n%s", s)
	}
	for _, want := range []string{
		"Error: Invalid orchestration setting", `bad.hcl line 12, in cluster "web":`, `condition = "sometimes"`,
		`restart.condition: "sometimes" is not one of "none", "on-failure", "any".`, "is not valid (1 error)",
	} {
		if !strings.Contains(s, want) {
			t.Errorf("validate output lacks %q:\n%s", want, s)
		}
	}
	if !pointsAt(s, "bad.hcl", 12, 17) {
		t.Errorf("validate output does not underline line 12 from column 17:\n%s", s)
	}
	// -json: terraform validate -json's document on stdout, exit 1.
	cmd = exec.Command(groveBin, "validate", "-json", "-address", "127.0.0.1:1", dir)
	stdout, _ := cmd.Output()
	var doc struct {
		FormatVersion string `json:"format_version"`
		Valid         bool   `json:"valid"`
		ErrorCount    int    `json:"error_count"`
		WarningCount  int    `json:"warning_count"`
		Diagnostics   []struct {
			Severity, Summary, Detail string
			Range                     struct {
				Filename   string
				Start, End struct{ Line, Column, Byte int }
			}
			Snippet struct {
				Code                 string
				StartLine            int `json:"start_line"`
				HighlightStartOffset int `json:"highlight_start_offset"`
				HighlightEndOffset   int `json:"highlight_end_offset"`
			}
		}
	}
	if err := json.Unmarshal(stdout, &doc); err != nil || cmd.ProcessState.ExitCode() != 1 {
		t.Fatalf("validate -json: exit %d, %v:\n%s", cmd.ProcessState.ExitCode(), err, stdout)
	}
	if doc.FormatVersion != "1.0" || doc.Valid || doc.ErrorCount != 1 || doc.WarningCount != 0 || len(doc.Diagnostics) != 1 {
		t.Fatalf("validate -json:\n%s", stdout)
	}
	jd := doc.Diagnostics[0]
	if jd.Severity != "error" || !strings.Contains(jd.Detail, "restart.condition") || filepath.Base(jd.Range.Filename) != "bad.hcl" ||
		jd.Range.Start.Line != 12 || jd.Range.Start.Column != 17 || jd.Snippet.StartLine != 12 ||
		jd.Snippet.Code[jd.Snippet.HighlightStartOffset:jd.Snippet.HighlightEndOffset] != `"sometimes"` {
		t.Errorf("validate -json diagnostic:\n%s", stdout)
	}
	os.WriteFile(filepath.Join(dir, "bad.hcl"), []byte(`profile "web" {
  type    = "local.process"
  version = "1.0"
  properties {
    command = "not a list"
  }
}
`), 0o644)
	out, _ = exec.Command(groveBin, "validate", "-address", "127.0.0.1:1", dir).CombinedOutput()
	if !pointsAt(string(out), "bad.hcl", 5, 15) || !strings.Contains(string(out), "properties.command: must be a list") {
		t.Errorf("a property error points at the value:\n%s", out)
	}
	unformatted := filepath.Join(dir, "fmt.hcl")
	os.WriteFile(unformatted, []byte("cluster \"x\" {\nprofile=profile.y\n}\n"), 0o644)
	cmd = exec.Command(groveBin, "fmt", "-check", unformatted)
	out, _ = cmd.CombinedOutput()
	if cmd.ProcessState.ExitCode() != 3 || !strings.Contains(string(out), "fmt.hcl") {
		t.Fatalf("fmt -check: %d %s", cmd.ProcessState.ExitCode(), out)
	}
	if err := exec.Command(groveBin, "fmt", unformatted).Run(); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(unformatted)
	if !strings.Contains(string(b), "  profile = profile.y") {
		t.Fatalf("fmt output:\n%s", b)
	}
}

// TestHCLApplyFailsMidway runs an apply that the agent refuses midway (its
// node limit refuses the cluster after the profile and policy exist): the
// apply must say exactly what it created and left, those objects must be
// the set's (so plan continues from them and destroy removes them), and an
// object left unowned is adopted by the next apply.
func TestHCLApplyFailsMidway(t *testing.T) {
	dir := t.TempDir()
	cfg := filepath.Join(dir, "agent.hcl")
	os.WriteFile(cfg, []byte("workers {\n  max_nodes_per_cluster = 2\n}\n"), 0o644)
	a := startAgent(t, dir, "-config", cfg)
	const profile = `profile "web" {
  type    = "local.process"
  version = "1.0"
  properties {
    command = ["/bin/sleep", "1000"]
  }
}
`
	def := filepath.Join(t.TempDir(), "midway")
	os.MkdirAll(def, 0o755)
	os.WriteFile(filepath.Join(def, "main.hcl"), []byte(profile+`
policy "oldest_first" {
  type    = "senlin.policy.deletion"
  version = "1.1"
  properties {
    criteria = "OLDEST_FIRST"
  }
}

cluster "midway" {
  profile          = profile.web
  desired_capacity = 3
  binding {
    policy = policy.oldest_first
  }
}
`), 0o644)
	if out, errOut, code := a.grove("validate", def); code != 0 {
		t.Fatalf("the definition must validate (only the agent's configured node limit refuses it): %d %s %s", code, out, errOut)
	}
	out, errOut, code := a.grove("apply", "-auto-approve", def)
	if code != 1 {
		t.Fatalf("apply must fail: %d\n%s\n%s", code, out, errOut)
	}
	profileName := hcl.AgentName("profile", "web", "local.process", "1.0", map[string]any{"command": []any{"/bin/sleep", "1000"}})
	for _, want := range []string{
		"create cluster.midway", "maximum number of nodes allowed per cluster (2)",
		"The apply stopped after creating these objects, which remain on the agent:",
		"profile.web " + profileName + " (id ", "policy.oldest_first oldest_first-", `owned by definition set "midway"`,
		"`grove apply` continues, and `grove destroy` removes them.",
	} {
		if !strings.Contains(errOut, want) {
			t.Errorf("apply's report lacks %q:\n%s", want, errOut)
		}
	}
	if strings.Contains(errOut, "cluster.midway midway") || strings.Contains(errOut, "NOT recorded") {
		t.Errorf("apply reports a cluster it did not create, or an unowned object:\n%s", errOut)
	}
	var set struct {
		Set api.Set `json:"set"`
	}
	a.mustDo("GET", "/v1/sets/midway", nil, &set)
	kinds := map[string]int{}
	for _, o := range set.Set.Objects {
		kinds[o.Kind]++
	}
	if len(set.Set.Objects) != 2 || kinds["profile"] != 1 || kinds["policy"] != 1 {
		t.Fatalf("the set must own exactly the profile and policy the failed apply created: %+v", set.Set.Objects)
	}
	out, _, code = a.grove("plan", "-detailed-exitcode", def)
	if code != 2 || !strings.Contains(out, "cluster.midway will be created") || !strings.Contains(out, "Plan: 1 to add, 0 to change, 0 to replace, 0 to destroy.") {
		t.Fatalf("the next plan continues from what the failed apply left: %d\n%s", code, out)
	}
	out, errOut, code = a.grove("destroy", "-auto-approve", def)
	if code != 0 || !strings.Contains(out, "2 destroyed") {
		t.Fatalf("destroy removes what the failed apply left: %d\n%s\n%s", code, out, errOut)
	}

	// A profile left unowned (an apply that died between creating it and
	// recording it) is adopted, then destroyed with the set.
	a.createProfile(profileName, map[string]any{"command": []any{"/bin/sleep", "1000"}})
	only := filepath.Join(t.TempDir(), "midway")
	os.MkdirAll(only, 0o755)
	os.WriteFile(filepath.Join(only, "main.hcl"), []byte(profile), 0o644)
	out, _, code = a.grove("plan", "-detailed-exitcode", only)
	if code != 2 || !strings.Contains(out, "profile.web will be adopted") || !strings.Contains(out, "1 to adopt") {
		t.Fatalf("plan of a leftover profile: %d\n%s", code, out)
	}
	out, errOut, code = a.grove("apply", "-auto-approve", only)
	if code != 0 || !strings.Contains(out, "1 adopted") {
		t.Fatalf("apply adopts the leftover: %d\n%s\n%s", code, out, errOut)
	}
	out, _, code = a.grove("destroy", "-auto-approve", only)
	if code != 0 || !strings.Contains(out, "1 destroyed") {
		t.Fatalf("destroy after adoption: %d\n%s", code, out)
	}
	var profiles map[string][]map[string]any
	a.mustDo("GET", "/v1/profiles", nil, &profiles)
	if len(profiles["profiles"]) != 0 {
		t.Fatalf("destroy must remove the adopted profile: %v", profiles)
	}
}

// TestHCLLimits checks that the CLI turns hostile definitions into
// diagnostics instead of crashing: validate and fmt on a file nested
// 100,000 brackets deep, and validate on a timeout that would wrap.
func TestHCLLimits(t *testing.T) {
	dir := t.TempDir()
	deep := filepath.Join(dir, "deep.hcl")
	os.WriteFile(deep, []byte("locals {\n  x = "+strings.Repeat("[", 100_000)+strings.Repeat("]", 100_000)+"\n}\n"), 0o644)
	for _, args := range [][]string{{"validate", "-address", "127.0.0.1:1", deep}, {"fmt", "-check", deep}} {
		cmd := exec.Command(groveBin, args...)
		out, _ := cmd.CombinedOutput()
		if cmd.ProcessState.ExitCode() != 1 || !strings.Contains(string(out), "Expression nested too deeply") || !strings.Contains(string(out), "on "+deep+" line 2") {
			t.Errorf("grove %s on a deeply nested file: %d\n%.3000s", args[0], cmd.ProcessState.ExitCode(), out)
		}
	}
	os.Remove(deep)
	os.WriteFile(filepath.Join(dir, "main.hcl"), []byte(`profile "web" {
  type    = "local.process"
  version = "1.0"
  properties {
    command = ["/bin/true"]
  }
}

cluster "web" {
  profile = profile.web
  timeout = 18446744074
}
`), 0o644)
	cmd := exec.Command(groveBin, "validate", "-address", "127.0.0.1:1", dir)
	out, _ := cmd.CombinedOutput()
	if cmd.ProcessState.ExitCode() != 1 || !pointsAt(string(out), "main.hcl", 11, 13) || !strings.Contains(string(out), "timeout must be at most 2147483647 seconds") {
		t.Errorf("validate of a timeout that would wrap:\n%s", out)
	}
}

// pointsAt reports whether rendered diagnostics show FILE (any directory)
// line LINE with carets under it from column COL.
func pointsAt(out, file string, line, col int) bool {
	for _, part := range strings.Split(out, "  on ")[1:] {
		head, rest, _ := strings.Cut(part, "\n")
		if !strings.Contains(head, file+" line "+strconv.Itoa(line)) {
			continue
		}
		lines := strings.Split(rest, "\n")
		for i := 0; i+1 < len(lines); i++ {
			if strings.HasPrefix(lines[i], fmt.Sprintf("%4d: ", line)) {
				carets := lines[i+1]
				at := strings.IndexByte(carets, '^')
				return at >= 6 && strings.TrimSpace(carets[:at]) == "" && at-6+1 == col
			}
		}
	}
	return false
}
