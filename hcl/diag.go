package hcl

import (
	"fmt"
	"io"
	"strings"

	hclv2 "github.com/hashicorp/hcl/v2"
)

// WriteDiagnostics prints diagnostics as terraform validate does: the
// summary, file:line:column, the source line with the range underlined, and
// the rule that failed.
func WriteDiagnostics(w io.Writer, diags hclv2.Diagnostics, files map[string]*hclv2.File) {
	for _, d := range diags {
		sev := "Error"
		if d.Severity == hclv2.DiagWarning {
			sev = "Warning"
		}
		fmt.Fprintf(w, "%s: %s\n", sev, d.Summary)
		if d.Subject != nil && d.Subject.Filename != "" {
			r := d.Subject
			fmt.Fprintf(w, "\n  on %s:%d:%d:\n", r.Filename, r.Start.Line, r.Start.Column)
			if f, ok := files[r.Filename]; ok && f != nil {
				lines := strings.Split(string(f.Bytes), "\n")
				if r.Start.Line-1 < len(lines) {
					line := strings.ReplaceAll(lines[r.Start.Line-1], "\t", " ")
					fmt.Fprintf(w, "  %4d: %s\n", r.Start.Line, line)
					end := r.End.Column
					if r.End.Line != r.Start.Line || end > len(line)+1 {
						end = len(line) + 1
					}
					width := max(end-r.Start.Column, 1)
					fmt.Fprintf(w, "        %s%s\n", strings.Repeat(" ", max(r.Start.Column-1, 0)), strings.Repeat("^", width))
				}
			}
		}
		if d.Detail != "" {
			fmt.Fprintf(w, "\n%s\n", d.Detail)
		}
		fmt.Fprintln(w)
	}
}
