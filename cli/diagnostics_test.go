package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func runCLI(t *testing.T, args ...string) (string, string, int) {
	t.Helper()
	var out, errOut bytes.Buffer
	code := Run(context.Background(), &Env{Stdin: strings.NewReader(""), Stdout: &out, Stderr: &errOut}, args)
	return out.String(), errOut.String(), code
}

func writeDef(t *testing.T, src string) string {
	t.Helper()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "main.hcl"), []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

const oneBadSetting = `profile "web" {
  type    = "local.process"
  version = "1.0"
  properties {
    command = ["/bin/true"]
  }
}

cluster "web" {
  profile = profile.web
  restart {
    condition = "sometimes"
  }
}
`

// TestValidateErrorCounts: "(1 error)" for one, "(2 errors)" for two, and
// the diagnostics in Terraform's text form on stderr.
func TestValidateErrorCounts(t *testing.T) {
	_, errOut, code := runCLI(t, "validate", "-address", "127.0.0.1:1", writeDef(t, oneBadSetting))
	if code != 1 || !strings.Contains(errOut, "is not valid (1 error)\n") || !strings.Contains(errOut, `on `) || !strings.Contains(errOut, `main.hcl line 12, in cluster "web":`) {
		t.Errorf("one error: %d\n%s", code, errOut)
	}
	two := strings.Replace(oneBadSetting, "restart {", "restart {\n    delay = \"soon\"", 1)
	_, errOut, code = runCLI(t, "validate", "-address", "127.0.0.1:1", writeDef(t, two))
	if code != 1 || !strings.Contains(errOut, "is not valid (2 errors)\n") {
		t.Errorf("two errors: %d\n%s", code, errOut)
	}
	if strings.Contains(errOut, "\x1b[") {
		t.Errorf("colour on a writer that is not a terminal:\n%q", errOut)
	}
}

// TestValidateCountsInWords: the valid message says "1 profile", not
// "1 profiles".
func TestValidateCountsInWords(t *testing.T) {
	ok := strings.Replace(oneBadSetting, `"sometimes"`, `"on-failure"`, 1)
	out, errOut, code := runCLI(t, "validate", "-set", "s", "-address", "127.0.0.1:1", writeDef(t, ok))
	if code != 0 || !strings.Contains(out, `The definition set "s" is valid: 1 profile, 0 policies, 1 cluster.`) {
		t.Errorf("validate: %d\n%s%s", code, out, errOut)
	}
}

// TestValidateJSON: -json prints terraform validate -json's document on
// stdout, for a valid definition and an invalid one (exit 1), and a
// syntax error is a diagnostic in it too.
func TestValidateJSON(t *testing.T) {
	type doc struct {
		FormatVersion string           `json:"format_version"`
		Valid         bool             `json:"valid"`
		ErrorCount    int              `json:"error_count"`
		WarningCount  int              `json:"warning_count"`
		Diagnostics   []map[string]any `json:"diagnostics"`
	}
	parse := func(out string) doc {
		t.Helper()
		var d doc
		if err := json.Unmarshal([]byte(out), &d); err != nil {
			t.Fatalf("stdout is not one JSON document: %v\n%s", err, out)
		}
		return d
	}
	ok := strings.Replace(oneBadSetting, `"sometimes"`, `"on-failure"`, 1)
	out, _, code := runCLI(t, "validate", "-json", "-address", "127.0.0.1:1", writeDef(t, ok))
	if d := parse(out); code != 0 || !d.Valid || d.FormatVersion != "1.0" || d.ErrorCount != 0 || d.Diagnostics == nil || len(d.Diagnostics) != 0 {
		t.Errorf("valid: %d %+v", code, d)
	}
	out, errOut, code := runCLI(t, "validate", "-json", "-address", "127.0.0.1:1", writeDef(t, oneBadSetting))
	d := parse(out)
	if code != 1 || d.Valid || d.ErrorCount != 1 || len(d.Diagnostics) != 1 || d.Diagnostics[0]["severity"] != "error" {
		t.Errorf("invalid: %d %+v", code, d)
	}
	if strings.Contains(errOut, "Error:") {
		t.Errorf("-json also printed text diagnostics:\n%s", errOut)
	}
	out, _, code = runCLI(t, "validate", "-json", writeDef(t, "profile \"x\" {\n  type = \n}\n"))
	d = parse(out)
	rng, _ := d.Diagnostics[0]["range"].(map[string]any)
	if code != 1 || d.ErrorCount != 1 || rng == nil || filepath.Base(rng["filename"].(string)) != "main.hcl" {
		t.Errorf("syntax error: %d %s", code, out)
	}
}

func TestPlural(t *testing.T) {
	for n, want := range map[int]string{0: "0 errors", 1: "1 error", 2: "2 errors"} {
		if got := plural(n, "error", "errors"); got != want {
			t.Errorf("plural(%d) = %q, want %q", n, got, want)
		}
	}
}
