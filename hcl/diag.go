package hcl

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"maps"
	"strings"
	"unicode"
	"unicode/utf8"

	hclv2 "github.com/hashicorp/hcl/v2"
)

// TextStyle says how WriteDiagnosticsStyled renders for its destination.
type TextStyle struct {
	// Width wraps the detail text at this many columns; 0 does not wrap.
	Width uint
	// Color uses VT100 colours and highlights the subject in the snippet;
	// set it only for a terminal.
	Color bool
}

// WriteDiagnostics prints diagnostics as plain text for a destination that is
// not a terminal: no colour, no wrapping. See WriteDiagnosticsStyled.
func WriteDiagnostics(w io.Writer, diags hclv2.Diagnostics, files map[string]*hclv2.File) error {
	return WriteDiagnosticsStyled(w, diags, files, TextStyle{})
}

// WriteDiagnosticsStyled prints diagnostics with hcl/v2's own text writer,
// Terraform's form: the summary, "on FILE line N, in BLOCK:", the source
// snippet and the detail. Without colour the writer would not say where on
// the line the problem is (it highlights the subject with colour only), so
// the subject is then underlined with carets beneath its line, as grove's
// earlier writer did.
func WriteDiagnosticsStyled(w io.Writer, diags hclv2.Diagnostics, files map[string]*hclv2.File, style TextStyle) error {
	files = printable(files)
	var buf bytes.Buffer
	tw := hclv2.NewDiagnosticTextWriter(&buf, files, style.Width, style.Color)
	for _, d := range diags {
		buf.Reset()
		if err := tw.WriteDiagnostic(withoutValues(d)); err != nil {
			return err
		}
		out := buf.Bytes()
		if !style.Color {
			out = underline(out, d, files)
		}
		if _, err := w.Write(out); err != nil {
			return err
		}
	}
	return nil
}

// printable returns files whose source can be printed as snippets: each
// character a terminal would act on rather than show (an escape sequence's
// ESC, any other control character but tab and newline, a bidirectional
// override that reorders what follows, a byte that is not UTF-8) becomes
// as many '?' as it has bytes. The byte offsets of every range stay true,
// so the writer's snippets and highlights, and the carets, still fall on
// their subjects; the definition itself is not changed. Files with
// nothing to replace are shared, not copied.
func printable(files map[string]*hclv2.File) map[string]*hclv2.File {
	var out map[string]*hclv2.File
	for name, f := range files {
		if f == nil || !bytes.ContainsFunc(f.Bytes, unprintable) && utf8.Valid(f.Bytes) {
			continue
		}
		if out == nil {
			out = maps.Clone(files)
		}
		clean := make([]byte, 0, len(f.Bytes))
		for src := f.Bytes; len(src) > 0; {
			r, n := utf8.DecodeRune(src)
			if r == utf8.RuneError && n <= 1 || unprintable(r) {
				clean = append(clean, bytes.Repeat([]byte{'?'}, max(n, 1))...)
			} else {
				clean = append(clean, src[:n]...)
			}
			src = src[max(n, 1):]
		}
		c := *f
		c.Bytes = clean
		out[name] = &c
	}
	if out == nil {
		return files
	}
	return out
}

// unprintable reports whether a terminal would act on r rather than show
// it: a control character other than tab, newline and carriage return, or
// a bidirectional control.
func unprintable(r rune) bool {
	if r == '\t' || r == '\n' || r == '\r' {
		return false
	}
	return unicode.IsControl(r) || unicode.Is(unicode.Bidi_Control, r)
}

// withoutValues drops the expression and its evaluation context, with which
// the writer would print the values of the variables involved ("with
// var.x as ..."): a definition does not mark secrets, and -var values are
// often secrets.
func withoutValues(d *hclv2.Diagnostic) *hclv2.Diagnostic {
	if d == nil || d.Expression == nil {
		return d
	}
	c := *d
	c.Expression, c.EvalContext = nil, nil
	return &c
}

// underline inserts a caret line under the snippet line where the
// diagnostic's subject starts, in the writer's output for that diagnostic.
func underline(out []byte, d *hclv2.Diagnostic, files map[string]*hclv2.File) []byte {
	if d.Subject == nil {
		return out
	}
	f := files[d.Subject.Filename]
	if f == nil || f.Bytes == nil {
		return out
	}
	start, end := d.Subject.Start, d.Subject.End
	src := f.Bytes
	if start.Byte < 0 || start.Byte > len(src) {
		return out
	}
	lineStart := bytes.LastIndexByte(src[:start.Byte], '\n') + 1
	lineEnd := len(src)
	if i := bytes.IndexByte(src[start.Byte:], '\n'); i >= 0 {
		lineEnd = start.Byte + i
	}
	hiEnd := lineEnd
	if end.Line == start.Line && end.Byte >= start.Byte && end.Byte <= lineEnd {
		hiEnd = end.Byte
	}
	// Keep the line's tabs so the carets line up with what a terminal shows.
	var carets strings.Builder
	carets.WriteString("      ") // the writer's "%4d: " gutter
	for _, r := range string(src[lineStart:start.Byte]) {
		if r == '\t' {
			carets.WriteByte('\t')
		} else {
			carets.WriteByte(' ')
		}
	}
	carets.WriteString(strings.Repeat("^", max(utf8.RuneCount(bytes.TrimRight(src[start.Byte:hiEnd], "\r")), 1)))
	carets.WriteByte('\n')

	prefix := []byte(fmt.Sprintf("%4d: ", start.Line))
	// The snippet follows the "  on FILE line N" header; find the subject's
	// line there, not in the summary.
	at := bytes.Index(out, []byte("\n  on "))
	if at < 0 {
		return out
	}
	for at < len(out) {
		nl := bytes.IndexByte(out[at:], '\n')
		if nl < 0 {
			break
		}
		lineAt := at + nl + 1
		if bytes.HasPrefix(out[lineAt:], prefix) {
			e := bytes.IndexByte(out[lineAt:], '\n')
			if e < 0 {
				return out
			}
			ins := lineAt + e + 1
			res := make([]byte, 0, len(out)+carets.Len())
			res = append(res, out[:ins]...)
			res = append(res, carets.String()...)
			return append(res, out[ins:]...)
		}
		at = lineAt
	}
	return out
}

// ValidateOutput is `grove validate -json`'s document, the shape of
// `terraform validate -json`.
type ValidateOutput struct {
	FormatVersion string           `json:"format_version"`
	Valid         bool             `json:"valid"`
	ErrorCount    int              `json:"error_count"`
	WarningCount  int              `json:"warning_count"`
	Diagnostics   []DiagnosticJSON `json:"diagnostics"`
}

// DiagnosticJSON is one diagnostic in Terraform's machine-readable form.
type DiagnosticJSON struct {
	Severity string             `json:"severity"`
	Summary  string             `json:"summary"`
	Detail   string             `json:"detail"`
	Range    *RangeJSON         `json:"range,omitempty"`
	Snippet  *DiagnosticSnippet `json:"snippet,omitempty"`
}

// RangeJSON is a source range: the file and the start and end positions.
type RangeJSON struct {
	Filename string  `json:"filename"`
	Start    PosJSON `json:"start"`
	End      PosJSON `json:"end"`
}

// PosJSON is a position: 1-based line and column, 0-based byte offset.
type PosJSON struct {
	Line   int `json:"line"`
	Column int `json:"column"`
	Byte   int `json:"byte"`
}

// DiagnosticSnippet is the source around a diagnostic: Code holds whole
// lines starting at StartLine, and the highlight offsets are byte offsets
// into Code.
type DiagnosticSnippet struct {
	Context              *string           `json:"context"`
	Code                 string            `json:"code"`
	StartLine            int               `json:"start_line"`
	HighlightStartOffset int               `json:"highlight_start_offset"`
	HighlightEndOffset   int               `json:"highlight_end_offset"`
	Values               []ExpressionValue `json:"values"`
}

// ExpressionValue says what a variable in the failing expression held.
// Grove leaves Values empty, for the reason withoutValues gives.
type ExpressionValue struct {
	Traversal string `json:"traversal"`
	Statement string `json:"statement"`
}

// ValidateJSON builds the -json document for diagnostics over files.
func ValidateJSON(diags hclv2.Diagnostics, files map[string]*hclv2.File) ValidateOutput {
	out := ValidateOutput{FormatVersion: "1.0", Diagnostics: []DiagnosticJSON{}}
	for _, d := range diags {
		if d.Severity == hclv2.DiagError {
			out.ErrorCount++
		} else {
			out.WarningCount++
		}
		out.Diagnostics = append(out.Diagnostics, diagnosticJSON(d, files))
	}
	out.Valid = out.ErrorCount == 0
	return out
}

func diagnosticJSON(d *hclv2.Diagnostic, files map[string]*hclv2.File) DiagnosticJSON {
	j := DiagnosticJSON{Severity: "error", Summary: d.Summary, Detail: d.Detail}
	if d.Severity == hclv2.DiagWarning {
		j.Severity = "warning"
	}
	if d.Subject == nil {
		return j
	}
	hi := *d.Subject
	if hi.End == (hclv2.Pos{}) {
		hi.End = hi.Start
	}
	j.Range = &RangeJSON{Filename: hi.Filename,
		Start: PosJSON{hi.Start.Line, hi.Start.Column, hi.Start.Byte},
		End:   PosJSON{hi.End.Line, hi.End.Column, hi.End.Byte}}
	f := files[hi.Filename]
	if f == nil || f.Bytes == nil {
		return j
	}
	// As Terraform does: the snippet covers the context and the subject,
	// and an empty range grows to one byte so there is something to show.
	snip := hi
	if d.Context != nil {
		snip = hclv2.RangeOver(*d.Context, hi)
	}
	if snip.Empty() {
		snip.End.Byte++
		snip.End.Column++
	}
	if hi.Empty() {
		hi.End.Byte++
		hi.End.Column++
	}
	s := &DiagnosticSnippet{StartLine: snip.Start.Line, Values: []ExpressionValue{}}
	if nav, ok := f.Nav.(interface{ ContextString(int) string }); ok {
		if c := nav.ContextString(hi.Start.Byte); c != "" {
			s.Context = &c
		}
	}
	var code strings.Builder
	codeStart := -1
	sc := hclv2.NewRangeScanner(f.Bytes, hi.Filename, bufio.ScanLines)
	for sc.Scan() {
		lr := sc.Range()
		if lr.Overlaps(snip) {
			if codeStart < 0 {
				codeStart = lr.Start.Byte
			}
			code.Write(lr.SliceBytes(f.Bytes))
			code.WriteByte('\n')
		}
	}
	s.Code = strings.TrimSuffix(code.String(), "\n")
	start := hi.Start.Byte - max(codeStart, 0)
	end := start + hi.End.Byte - hi.Start.Byte
	s.HighlightStartOffset = min(max(start, 0), len(s.Code))
	s.HighlightEndOffset = min(max(end, 0), len(s.Code))
	j.Snippet = s
	return j
}
