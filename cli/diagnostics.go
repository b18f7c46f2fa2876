package cli

import (
	"context"
	"fmt"
	"os"

	hclv2 "github.com/hashicorp/hcl/v2"
	"golang.org/x/term"

	"github.com/grovehq/grove/hcl"
)

// printDiagnostics writes HCL diagnostics to the command's stderr in
// Terraform's text form: wrapped to the terminal's width and coloured when
// stderr is a terminal (and NO_COLOR is unset), plain otherwise.
func printDiagnostics(env *Env, diags hclv2.Diagnostics, files map[string]*hclv2.File) {
	_ = hcl.WriteDiagnosticsStyled(env.Stderr, diags, files, diagStyle(env))
}

func diagStyle(env *Env) hcl.TextStyle {
	f, ok := env.Stderr.(*os.File)
	if !ok || !env.Terminal || !isTerminal(f) {
		return hcl.TextStyle{}
	}
	style := hcl.TextStyle{Color: os.Getenv("NO_COLOR") == ""}
	if w, _, err := term.GetSize(int(f.Fd())); err == nil && w > 0 {
		style.Width = uint(w)
	}
	return style
}

// validateJSON is `grove validate -json`: every diagnostic of loading and
// validating, as `terraform validate -json` prints them, on stdout. It exits
// 1 when the definition is not valid, as terraform does.
func (d *defFlags) validateJSON(ctx context.Context, env *Env, path string) error {
	def, diags := hcl.Load(path, d.options())
	files := map[string]*hclv2.File{}
	if def != nil {
		files = def.Files
	}
	if !diags.HasErrors() {
		src, offline := d.schemas(ctx, env)
		diags = append(diags, hcl.Validate(def, src)...)
		if offline != nil {
			// Stdout is the document; the note is for the person.
			fmt.Fprintf(env.Stderr, "Note: no agent answered at %s; properties were checked against the built-in plugins' schemas only. (%s)\n", d.client().Address, describeError(offline))
		}
	}
	out := hcl.ValidateJSON(diags, files)
	if err := printJSON(env.Stdout, out); err != nil {
		return err
	}
	if !out.Valid {
		// The document says why, as terraform validate -json's does.
		return exitError{code: 1, answered: true}
	}
	return nil
}

// notValid is the error of a definition with errors, counted in words.
func notValid(what string, diags hclv2.Diagnostics) error {
	return exitError{code: 1, msg: fmt.Sprintf("%s is not valid (%s)", what, plural(errCount(diags), "error", "errors"))}
}

// plural says "1 error", "2 errors", "0 errors".
func plural(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return fmt.Sprintf("%d %s", n, many)
}
