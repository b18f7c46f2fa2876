package hcl

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	hclv2 "github.com/hashicorp/hcl/v2"
)

// caretColumn finds, in rendered diagnostics, the snippet of FILE line LINE
// and returns the column its carets start at (0 when there are none).
func caretColumn(out, file string, line int) int {
	_, rest, ok := strings.Cut(out, fmt.Sprintf("  on %s line %d", file, line))
	if !ok {
		return 0
	}
	lines := strings.Split(rest, "\n")
	prefix := fmt.Sprintf("%4d: ", line)
	for i, l := range lines[:len(lines)-1] {
		if strings.HasPrefix(l, prefix) {
			carets := lines[i+1]
			at := strings.IndexByte(carets, '^')
			if at < 6 || strings.TrimSpace(carets[:at]) != "" {
				return 0
			}
			return at - 6 + 1
		}
	}
	return 0
}

const badSrc = `profile "web" {
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

// TestDiagnosticsTerraformText: diagnostics print in hcl/v2's (Terraform's)
// form, "on FILE line N, in BLOCK:" with the snippet, and without colour the
// subject is underlined where it starts.
func TestDiagnosticsTerraformText(t *testing.T) {
	def, diags := load(t, badSrc, Options{})
	if !diags.HasErrors() {
		t.Fatal("the definition loaded without errors")
	}
	var buf strings.Builder
	if err := WriteDiagnostics(&buf, diags, def.Files); err != nil {
		t.Fatal(err)
	}
	out := buf.String()
	for _, want := range []string{
		"Error: Invalid orchestration setting\n\n",
		"  on main.hcl line 12, in cluster \"web\":\n",
		"  12:     condition = \"sometimes\"\n",
		`restart.condition: "sometimes" is not one of "none", "on-failure", "any".`,
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	if got := caretColumn(out, "main.hcl", 12); got != 17 {
		t.Errorf("carets at column %d, want 17:\n%s", got, out)
	}
	if strings.Contains(out, "\x1b[") {
		t.Errorf("plain output has escape sequences:\n%q", out)
	}

	// On a terminal: colour, the subject highlighted instead of
	// underlined, and the detail wrapped to the width.
	buf.Reset()
	long := &hclv2.Diagnostic{Severity: hclv2.DiagWarning, Summary: "Large cluster",
		Detail: strings.Repeat("word ", 30), Subject: diags[0].Subject}
	if err := WriteDiagnosticsStyled(&buf, hclv2.Diagnostics{long}, def.Files, TextStyle{Width: 40, Color: true}); err != nil {
		t.Fatal(err)
	}
	out = buf.String()
	if !strings.HasPrefix(out, "\x1b[33mWarning\x1b[0m: Large cluster") || !strings.Contains(out, "\x1b[1;4m\"sometimes\"\x1b[0m") || strings.Contains(out, "^") {
		t.Errorf("coloured output:\n%q", out)
	}
	for _, l := range strings.Split(out, "\n") {
		if strings.HasPrefix(l, "word") && len(l) > 40 {
			t.Errorf("detail line not wrapped at 40 columns: %q", l)
		}
	}
}

// TestDiagnosticsWithoutSource: a diagnostic without a range or whose file
// is unknown still prints its summary and detail.
func TestDiagnosticsWithoutSource(t *testing.T) {
	var buf strings.Builder
	WriteDiagnostics(&buf, hclv2.Diagnostics{
		{Severity: hclv2.DiagError, Summary: "Cannot read the definition", Detail: "no .hcl files in x"},
		{Severity: hclv2.DiagError, Summary: "Elsewhere", Subject: &hclv2.Range{Filename: "gone.hcl", Start: hclv2.Pos{Line: 3, Column: 1}}},
	}, nil)
	want := "Error: Cannot read the definition\n\nno .hcl files in x\n\nError: Elsewhere\n\n  on gone.hcl line 3:\n  (source code not available)\n\n"
	if buf.String() != want {
		t.Errorf("got\n%q\nwant\n%q", buf.String(), want)
	}
}

// TestDiagnosticsHideValues: the writer would show the values of the
// variables in a failing expression; grove never does (they may be secrets).
func TestDiagnosticsHideValues(t *testing.T) {
	def, diags := load(t, `variable "token" {}
profile "web" {
  type    = "local.process"
  version = "1.0"
  properties {
    command = ["/bin/true", var.token + 1]
  }
}
`, Options{Vars: []string{"token=s3cret"}})
	if !diags.HasErrors() {
		t.Fatal("the definition loaded without errors")
	}
	withValues := false
	for _, d := range diags {
		withValues = withValues || (d.Expression != nil && d.EvalContext != nil)
	}
	if !withValues {
		t.Fatalf("no diagnostic carries its expression's values, so this test shows nothing: %v", diags)
	}
	var buf strings.Builder
	WriteDiagnostics(&buf, diags, def.Files)
	b, _ := json.Marshal(ValidateJSON(diags, def.Files))
	if strings.Contains(buf.String(), "s3cret") || strings.Contains(string(b), "s3cret") {
		t.Errorf("a variable's value is shown:\n%s\n%s", buf.String(), b)
	}
}

// TestValidateJSONShape: the -json document has terraform validate -json's
// fields, and the snippet's highlight offsets select the subject.
func TestValidateJSONShape(t *testing.T) {
	def, diags := load(t, badSrc, Options{})
	diags = append(diags, &hclv2.Diagnostic{Severity: hclv2.DiagWarning, Summary: "No range"})
	b, err := json.Marshal(ValidateJSON(diags, def.Files))
	if err != nil {
		t.Fatal(err)
	}
	var doc map[string]any
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	if doc["format_version"] != "1.0" || doc["valid"] != false || doc["error_count"] != 1.0 || doc["warning_count"] != 1.0 {
		t.Fatalf("header: %s", b)
	}
	ds := doc["diagnostics"].([]any)
	if len(ds) != 2 {
		t.Fatalf("diagnostics: %s", b)
	}
	d := ds[0].(map[string]any)
	if d["severity"] != "error" || d["summary"] != "Invalid orchestration setting" || !strings.Contains(d["detail"].(string), "restart.condition") {
		t.Errorf("diagnostic: %v", d)
	}
	rng := d["range"].(map[string]any)
	start, end := rng["start"].(map[string]any), rng["end"].(map[string]any)
	if rng["filename"] != "main.hcl" || start["line"] != 12.0 || start["column"] != 17.0 || start["byte"] != float64(strings.Index(badSrc, `"sometimes"`)) ||
		end["line"] != 12.0 || end["column"] != 28.0 {
		t.Errorf("range: %v", rng)
	}
	sn := d["snippet"].(map[string]any)
	code := sn["code"].(string)
	if sn["context"] != `cluster "web"` || code != `    condition = "sometimes"` || sn["start_line"] != 12.0 {
		t.Errorf("snippet: %v", sn)
	}
	if hs, he := int(sn["highlight_start_offset"].(float64)), int(sn["highlight_end_offset"].(float64)); code[hs:he] != `"sometimes"` {
		t.Errorf("highlight %d..%d selects %q", hs, he, code[hs:he])
	}
	if v, ok := sn["values"].([]any); !ok || len(v) != 0 {
		t.Errorf("values: %v", sn["values"])
	}
	w := ds[1].(map[string]any)
	if w["severity"] != "warning" || w["detail"] != "" || w["range"] != nil || w["snippet"] != nil {
		t.Errorf("a diagnostic without a range: %v", w)
	}

	ok, _ := json.Marshal(ValidateJSON(nil, nil))
	if string(ok) != `{"format_version":"1.0","valid":true,"error_count":0,"warning_count":0,"diagnostics":[]}` {
		t.Errorf("a valid definition: %s", ok)
	}
}

// TestNodeNameFormatDiagnostic: a definition's node.name.format is held to
// the rule the agent holds it to, so `grove validate` refuses what an apply
// would.
func TestNodeNameFormatDiagnostic(t *testing.T) {
	src := `profile "web" {
  type    = "local.process"
  version = "1.0"
  properties {
    command = ["/bin/true"]
  }
}

cluster "web" {
  profile = profile.web
  config  = { "node.name.format" = "web $I" }
}
`
	_, diags := load(t, src, Options{})
	for _, d := range diags {
		if strings.Contains(d.Detail, "config.node.name.format: ") && strings.Contains(d.Detail, "the character ' '") {
			return
		}
	}
	t.Errorf("no diagnostic names config.node.name.format and the space: %v", diags)
}

// TestDiagnosticsShowHostileSourceHarmlessly: a snippet of a definition
// holding an escape sequence or a bidirectional override shows each such
// character as '?' (one per byte), in plain text and in colour, so a
// definition cannot drive the terminal or reorder what the reader sees;
// the carets still fall under the subject.
func TestDiagnosticsShowHostileSourceHarmlessly(t *testing.T) {
	src := strings.Replace(badSrc, `"sometimes"`, "\"\u202esometimes\x1b[2J\"", 1)
	def, diags := load(t, src, Options{})
	if !diags.HasErrors() {
		t.Fatal("the definition loaded without errors")
	}
	for _, style := range []TextStyle{{}, {Color: true, Width: 80}} {
		var buf strings.Builder
		if err := WriteDiagnosticsStyled(&buf, diags, def.Files, style); err != nil {
			t.Fatal(err)
		}
		out := buf.String()
		if strings.ContainsRune(out, '\u202e') || strings.Contains(out, "\x1b[2J") {
			t.Errorf("color %v: the snippet carries the source's control characters:\n%q", style.Color, out)
		}
		if !strings.Contains(out, `???sometimes?[2J`) {
			t.Errorf("color %v: the snippet does not show them as '?':\n%q", style.Color, out)
		}
		if !style.Color {
			if got := caretColumn(out, "main.hcl", 12); got != 17 {
				t.Errorf("carets at column %d, want 17:\n%s", got, out)
			}
		}
	}
	if def.Files["main.hcl"] != nil && !strings.ContainsRune(string(def.Files["main.hcl"].Bytes), '\u202e') {
		t.Error("the definition's own source was changed")
	}
}
