package hcl

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	hclv2 "github.com/hashicorp/hcl/v2"
)

// TestHostileDefinitions feeds definitions built to exhaust the parser's
// stack, memory or time: each must end in a diagnostic that names the limit
// and points into the source, quickly.
func TestHostileDefinitions(t *testing.T) {
	deep := func(open, mid, close string, n int) string {
		return strings.Repeat(open, n) + mid + strings.Repeat(close, n)
	}
	big := strings.Repeat("x", 200_000)
	doubling := "locals {\n  a0 = \"" + strings.Repeat("x", 1000) + "\"\n"
	for i := 1; i <= 20; i++ {
		doubling += "  a" + strconv.Itoa(i) + " = \"${local.a" + strconv.Itoa(i-1) + "}${local.a" + strconv.Itoa(i-1) + "}\"\n"
	}
	doubling += "}\n"
	cases := []struct {
		name, src, want string
	}{
		{"brackets", "locals {\n  x = " + deep("[", "", "]", 100_000) + "\n}\n", "nest more than 100 levels"},
		{"parentheses", "locals {\n  x = " + deep("(", "1", ")", 100_000) + "\n}\n", "nest more than 100 levels"},
		{"braces", "locals {\n  x = " + deep("{a=", "1", "}", 100_000) + "\n}\n", "nest more than 100 levels"},
		{"templates", "locals {\n  x = " + deep(`"${`, "1", `}"`, 100_000) + "\n}\n", "nest more than 100 levels"},
		{"negations", "locals {\n  x = " + strings.Repeat("!", 100_000) + "true\n}\n", "nest more than 100 levels"},
		{"conditionals", "locals {\n  x = " + strings.Repeat("true ? 1 : ", 50_000) + "2\n}\n", "nest more than 100 levels"},
		{"operator chain", "locals {\n  x = 1" + strings.Repeat(" + 1", 100_000) + "\n}\n", "nests more than 100 levels deep"},
		{"setproduct", "locals {\n  x = setproduct(range(1000), range(1000), range(1000))\n}\n", "at most 100000"},
		{"nested for", "locals {\n  x = [for a in range(1000) : [for b in range(1000) : [for c in range(1000) : c]]]\n}\n", "limit"},
		{"format width", "locals {\n  x = format(\"%999999999d\", 1)\n}\n", "at most 1 MiB"},
		{"format repetition", "locals {\n  s = \"" + strings.Repeat("y", 10_000) + "\"\n  x = format(\"" + strings.Repeat("%[1]s", 10_000) + "\", local.s)\n}\n", "at most 1 MiB"},
		{"formatlist", "locals {\n  s = \"" + strings.Repeat("y", 10_000) + "\"\n  x = formatlist(\"%s%s\", range(1000), local.s)\n}\n", "at most 1 MiB"},
		{"join", "locals {\n  s = \"" + strings.Repeat("y", 10_000) + "\"\n  x = join(local.s, formatlist(\"%d\", range(1000)))\n}\n", "at most 1 MiB"},
		{"replace", "locals {\n  s = \"" + strings.Repeat("y", 10_000) + "\"\n  x = replace(local.s, \"\", local.s)\n}\n", "at most 1 MiB"},
		{"regex_replace", "locals {\n  s = \"" + strings.Repeat("y", 10_000) + "\"\n  x = regex_replace(local.s, \"(y*)\", \"$1$1$1$1$1$1$1$1$1$1$1$1$1$1$1$1$1$1$1$1$1$1$1$1$1$1$1$1$1$1$1$1$1$1$1$1$1$1$1$1$1$1$1$1$1$1$1$1$1$1$1$1$1$1$1$1$1$1$1$1$1$1$1$1$1$1$1$1$1$1$1$1$1$1$1$1$1$1$1$1$1$1$1$1$1$1$1$1$1$1$1$1$1$1$1$1$1$1$1$1$1$1$1$1$1$1$1$1$1$1$1$1$1$1$1$1$1$1\")\n}\n", "at most 1 MiB"},
		{"indent", "locals {\n  x = indent(1000000000000, \"a\\nb\")\n}\n", "at most 1 MiB"},
		{"split", "locals {\n  x = split(\"\", \"" + big + "\")\n}\n", "at most 100000"},
		{"regexall", "locals {\n  x = regexall(\".\", \"" + big + "\")\n}\n", "at most 100000"},
		{"csvdecode", "locals {\n  x = csvdecode(\"a,b\\n" + strings.Repeat("1,2\\n", 100_000) + "\")\n}\n", "at most 100000"},
		{"jsondecode depth", "locals {\n  x = jsondecode(\"" + deep("[", "", "]", 200_000) + "\")\n}\n", "JSON nests more than 100 levels"},
		{"doubling strings", doubling, "more than 1 MiB of strings"},
		{"huge number", "locals {\n  x = 1e99999999\n}\n", "number beyond about 1e±1000"},
		{"growing number", "locals {\n  a = 1e300\n  b = local.a * local.a * local.a * local.a * local.a * local.a * local.a * local.a * local.a * local.a * local.a * local.a\n  x = \"${local.b}\"\n}\n", "number beyond about 1e±1000"},
		{"deep value", "locals {\n  x = jsondecode(\"" + deep("[", "", "]", 90) + "\")\n  y = [[[[[[[[[[[[[[[[[[[[local.x]]]]]]]]]]]]]]]]]]]]\n}\n", "nests more than 100 levels deep"},
		{"profile property", "profile \"p\" {\n  type = \"local.process\"\n  version = \"1.0\"\n  properties {\n    command = [for a in range(1000) : [for b in range(1000) : \"${a}-${b}\"]]\n  }\n}\n", "limit"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			def, diags := load(t, c.src, Options{Env: []string{}})
			d := limitDiag(diags, c.want)
			if d == nil {
				t.Fatalf("no diagnostic mentions %q; got %v", c.want, diags)
			}
			if !strings.Contains(d.Detail, "Limits in docs/hcl.md") && !strings.Contains(d.Summary+d.Detail, "limit") {
				t.Errorf("the diagnostic does not name the limit: %s: %s", d.Summary, d.Detail)
			}
			if d.Subject == nil || d.Subject.Filename != "main.hcl" || d.Subject.Start.Line < 1 {
				t.Errorf("the diagnostic has no source range: %+v", d)
			}
			if def == nil {
				t.Fatal("no definition returned")
			}
			// Every diagnostic renders, with its snippet.
			var sb strings.Builder
			WriteDiagnostics(&sb, diags, def.Files)
			if !strings.Contains(sb.String(), fmt.Sprintf("on main.hcl line %d", d.Subject.Start.Line)) {
				t.Errorf("rendered diagnostics lack the position:\n%.2000s", sb.String())
			}
		})
	}
}

func limitDiag(diags hclv2.Diagnostics, want string) *hclv2.Diagnostic {
	for _, d := range diags {
		if d.Severity == hclv2.DiagError && strings.Contains(d.Summary+" "+d.Detail, want) {
			return d
		}
	}
	return nil
}

// TestHostileInputsOutsideTheFiles covers the other ways in: -var values,
// -var-file files, and a definition over the size limit.
func TestHostileInputsOutsideTheFiles(t *testing.T) {
	src := "variable \"v\" {\n  type = any\n}\n"
	_, diags := load(t, src, Options{Env: []string{}, Vars: []string{"v=" + strings.Repeat("[", 100_000)}})
	if limitDiag(diags, "nest more than 100 levels") == nil {
		t.Errorf("a deeply nested -var value: %v", diags)
	}
	_, diags = load(t, src, Options{Env: []string{}, Vars: []string{"v=[for a in range(1000) : [for b in range(1000) : [for c in range(1000) : c]]]"}})
	if limitDiag(diags, "limit") == nil {
		t.Errorf("an exploding -var value: %v", diags)
	}
	dir := t.TempDir()
	vf := filepath.Join(dir, "vars.hcl")
	os.WriteFile(vf, []byte("v = "+strings.Repeat("(", 100_000)+"1"+strings.Repeat(")", 100_000)+"\n"), 0o600)
	_, diags = load(t, src, Options{Env: []string{}, VarFiles: []string{vf}})
	if d := limitDiag(diags, "nest more than 100 levels"); d == nil || d.Subject == nil || d.Subject.Filename != vf {
		t.Errorf("a deeply nested -var-file: %v", diags)
	}
	huge := filepath.Join(dir, "huge.hcl")
	os.WriteFile(huge, []byte("locals {\n  x = \""+strings.Repeat("z", MaxSourceBytes)+"\"\n}\n"), 0o600)
	_, diags = Load(huge, Options{Env: []string{}})
	if limitDiag(diags, "at most 1 MiB") == nil {
		t.Errorf("a definition over the size limit: %v", diags)
	}
	_, diags = load(t, src, Options{Env: []string{}, VarFiles: []string{huge}})
	if limitDiag(diags, "at most 1 MiB") == nil {
		t.Errorf("a -var-file over the size limit: %v", diags)
	}
}

// TestLimitsKeepOrdinaryDefinitions checks that bounding expressions
// changes nothing for ordinary ones: functions, for expressions, splats,
// templates, object keys, type constraints and references still work.
func TestLimitsKeepOrdinaryDefinitions(t *testing.T) {
	def, diags := load(t, `
variable "names" {
  type    = list(object({ name = string, port = optional(number) }))
  default = [{ name = "a", port = 80 }, { name = "b", port = 81 }]
}
locals {
  ports  = var.names[*].port
  by     = { for n in var.names : n.name => n.port if n.port > 0 }
  keyed  = { plain = 1, "quoted" = 2, (upper("x")) = 3 }
  text   = <<-EOT
    %{ for n in var.names }${n.name}:${n.port}
    %{ endfor }
  EOT
  uniq   = distinct(["a", "b", "a", "c", "b"])
  prod   = length(setproduct(["a", "b"], [1, 2, 3]))
  fmt    = format("%05d-%s", 42, "x")
  flat   = flatten([[1, 2], [3, [4]]])
  decode = jsondecode("{\"k\": [1, 2, {\"n\": null}]}")
  neg    = -1 - -2
}
profile "p" {
  type    = "local.process"
  version = "1.0"
  properties {
    command = ["/bin/echo", local.text, jsonencode(local.by), tostring(local.prod), local.fmt, join(",", local.uniq), tostring(local.neg)]
    env     = { for k, v in local.keyed : k => tostring(v) }
  }
}
cluster "c" {
  profile = profile.p
}
`, Options{Env: []string{}})
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	cmd := def.Profiles["p"].Properties["command"].([]any)
	want := []any{"/bin/echo", "a:80\nb:81\n\n", `{"a":80,"b":81}`, "6", "00042-x", "a,b,c", "1"}
	for i := range want {
		if cmd[i] != want[i] {
			t.Errorf("command[%d] = %q, want %q", i, cmd[i], want[i])
		}
	}
	env := def.Profiles["p"].Properties["env"].(map[string]any)
	if env["plain"] != "1" || env["quoted"] != "2" || env["X"] != "3" {
		t.Errorf("object keys: %v", env)
	}
	if def.Clusters["c"].Profile != "p" || len(def.Order) != 2 || def.Order[0] != (Ref{"profile", "p"}) {
		t.Errorf("references: %+v %v", def.Clusters["c"], def.Order)
	}
}

// TestArithmeticWithoutANumber evaluates arithmetic whose result is not a
// number: each is a diagnostic at the call that says so in a sentence,
// without the Go stack trace of the panic go-cty recovered from.
func TestArithmeticWithoutANumber(t *testing.T) {
	for expr, want := range map[string]string{
		"log(-1, 10)":       `Call to function "log" failed: the result is not a number`,
		"log(1, 1)":         `Call to function "log" failed: the result is not a number`,
		"log(1/0, 1/0)":     `Call to function "log" failed: the result is not a number`,
		"pow(-1, 0.5)":      `Call to function "pow" failed: the result is not a number`,
		"(1/0) % 2":         "the % operator needs finite numbers",
		"7 % (-1/0)":        "the % operator needs finite numbers",
		"floor(log(-8, 2))": `Call to function "log" failed`,
	} {
		t.Run(expr, func(t *testing.T) {
			_, diags := load(t, "locals {\n  x = "+expr+"\n}\n", Options{})
			if len(diags) != 1 || !strings.Contains(diags[0].Summary+": "+diags[0].Detail, want) {
				t.Fatalf("want one diagnostic saying %q, got %v", want, diags)
			}
			if d := diags[0]; strings.Contains(d.Detail, "goroutine") || strings.Contains(d.Detail, "panic") || d.Subject == nil || d.Subject.Start.Line != 2 {
				t.Errorf("the diagnostic must be a sentence at the expression: %q at %v", d.Detail, d.Subject)
			}
		})
	}
	// Arithmetic on ordinary numbers is untouched.
	def, diags := load(t, "profile \"p\" {\n  type = \"local.process\"\n  version = \"1.0\"\n  properties {\n    stop_timeout = floor(log(8, 2)) + pow(2, 3) + 7 % 4\n  }\n}\n", Options{})
	if diags.HasErrors() || def.Profiles["p"].Properties["stop_timeout"] != float64(14) && fmt.Sprint(def.Profiles["p"].Properties["stop_timeout"]) != "14" {
		t.Errorf("ordinary arithmetic: %v %v", diags, def.Profiles["p"])
	}
}
