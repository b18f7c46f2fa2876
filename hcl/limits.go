package hcl

import (
	"fmt"
	"math"

	hclv2 "github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/zclconf/go-cty/cty"
)

// Evaluation limits. A definition is evaluated by the CLI on a user's
// machine and may come from anywhere, so a hostile or mistaken one must end
// in a diagnostic, never in a Go stack overflow (which no recover catches) or
// an out-of-memory kill. docs/hcl.md lists them under "Limits".
const (
	// MaxSourceBytes caps the definition files, -var-file files and -var
	// values of one load, together.
	MaxSourceBytes = 1 << 20
	// MaxNesting caps how deep brackets, quotes, templates, operators and
	// conditionals nest in an expression, and how deep a value nests. The
	// parser and the evaluator recurse once per level.
	MaxNesting = 100
	// MaxValueBytes caps the string bytes of one value (all its strings and
	// object keys together).
	MaxValueBytes = 1 << 20
	// MaxValueElements caps the elements of one value (all its lists, sets,
	// tuples, maps and objects together).
	MaxValueElements = 100_000
	// MaxEvalBytes and MaxEvalElements cap everything the evaluation of one
	// load produces, intermediate values included, so memory stays bounded
	// however the values are combined.
	MaxEvalBytes    = 64 << 20
	MaxEvalElements = 1_000_000
	// MaxEvalSteps caps how many expressions one load evaluates (a for
	// expression's body counts once per element), bounding the time taken.
	MaxEvalSteps = 1_000_000
	// maxNumberExp bounds a number's binary exponent, about 1e±1000: a
	// number is printed in full, so 1e999999999 would be a gigabyte string.
	maxNumberExp = 3322
)

const limitsDoc = "see Limits in docs/hcl.md"

// CheckSource applies the limits on a source file that come before parsing
// (size and nesting), for tools that parse HCL themselves (grove fmt).
func CheckSource(src []byte, filename string) hclv2.Diagnostics {
	if len(src) > MaxSourceBytes {
		return hclv2.Diagnostics{sourceTooLarge(fmt.Sprintf("%s holds %d bytes", filename, len(src)))}
	}
	return checkSource(src, filename, hclv2.InitialPos)
}

// checkSource refuses a source before it is parsed when its brackets,
// quotes, templates, unary operators or conditionals nest deeper than
// MaxNesting: the parser recurses per level, and about 100,000 levels
// overflow the Go stack, a crash no recover catches.
func checkSource(src []byte, filename string, start hclv2.Pos) hclv2.Diagnostics {
	tokens, _ := hclsyntax.LexConfig(src, filename, start)
	// A frame is an open bracket; ops counts the unary operators and
	// conditionals since the frame's last separator: each is a parser level.
	var frames []int
	ops, outer := 0, 0
	for _, tok := range tokens {
		switch tok.Type {
		case hclsyntax.TokenOBrace, hclsyntax.TokenOBrack, hclsyntax.TokenOParen, hclsyntax.TokenOQuote,
			hclsyntax.TokenOHeredoc, hclsyntax.TokenTemplateInterp, hclsyntax.TokenTemplateControl:
			frames = append(frames, ops)
			outer += ops
			ops = 0
		case hclsyntax.TokenCBrace, hclsyntax.TokenCBrack, hclsyntax.TokenCParen, hclsyntax.TokenCQuote,
			hclsyntax.TokenCHeredoc, hclsyntax.TokenTemplateSeqEnd:
			if n := len(frames); n > 0 {
				ops = frames[n-1]
				outer -= ops
				frames = frames[:n-1]
			}
		case hclsyntax.TokenComma, hclsyntax.TokenNewline:
			ops = 0
		case hclsyntax.TokenBang, hclsyntax.TokenMinus, hclsyntax.TokenQuestion:
			ops++
		}
		if len(frames)+outer+ops > MaxNesting {
			return hclv2.Diagnostics{{Severity: hclv2.DiagError, Summary: "Expression nested too deeply",
				Detail: fmt.Sprintf("Brackets, quotes, templates, operators and conditionals nest more than %d levels deep here; the limit is %d (%s).",
					MaxNesting, MaxNesting, limitsDoc),
				Subject: tok.Range.Ptr()}}
		}
	}
	return nil
}

// budget meters one load's evaluation. Every expression node is wrapped so
// that each value it produces is measured and counted; the first limit
// reached stops the evaluation with one diagnostic at that expression.
type budget struct {
	steps, bytes, elems int
	diag                *hclv2.Diagnostic
}

func (b *budget) stop(summary, detail string, rng hclv2.Range) hclv2.Diagnostics {
	if b.diag == nil {
		b.diag = &hclv2.Diagnostic{Severity: hclv2.DiagError, Summary: summary, Detail: detail + " (" + limitsDoc + ").", Subject: rng.Ptr()}
	}
	return hclv2.Diagnostics{b.diag}
}

// charge measures a value an expression produced and adds it to the load's
// totals.
func (b *budget) charge(v cty.Value, rng hclv2.Range) hclv2.Diagnostics {
	var m measure
	m.walk(v, 0)
	if m.bad != "" {
		return b.stop("Value too large", "This expression's value "+m.bad, rng)
	}
	b.bytes += m.bytes
	b.elems += m.elems
	switch {
	case b.bytes > MaxEvalBytes:
		return b.stop("Evaluation too large", fmt.Sprintf("Evaluating the definition produces more than %d MiB of strings in all, the limit", MaxEvalBytes>>20), rng)
	case b.elems > MaxEvalElements:
		return b.stop("Evaluation too large", fmt.Sprintf("Evaluating the definition produces more than %d collection elements in all, the limit", MaxEvalElements), rng)
	}
	return nil
}

// measure sizes a value, stopping at the first limit it breaks.
type measure struct {
	bytes, elems int
	// text bounds the value's length when printed (format's %v, JSON).
	text int
	bad  string
}

func (m *measure) walk(v cty.Value, depth int) {
	if m.bad != "" || !v.IsKnown() || v.IsNull() {
		return
	}
	if depth > MaxNesting {
		m.bad = fmt.Sprintf("nests more than %d levels deep, the limit", MaxNesting)
		return
	}
	v, _ = v.Unmark()
	t := v.Type()
	switch {
	case t == cty.String:
		n := len(v.AsString())
		m.bytes += n
		m.text += 6*n + 2 // JSON may escape a byte as \u00XX
	case t == cty.Number:
		bf := v.AsBigFloat()
		exp := 0
		if !bf.IsInf() && bf.Sign() != 0 {
			exp = bf.MantExp(nil)
		}
		if exp > maxNumberExp || exp < -maxNumberExp {
			m.bad = "is a number beyond about 1e±1000, the limit of a number's magnitude"
			return
		}
		// Up to 155 significant digits (512-bit precision) plus the zeros
		// the exponent adds.
		m.text += 160 + int(math.Abs(float64(exp))*0.302)
	case t == cty.Bool:
		m.text += 5
	case t.IsListType() || t.IsSetType() || t.IsTupleType() || t.IsMapType() || t.IsObjectType():
		keyed := t.IsMapType() || t.IsObjectType()
		m.text += 2
		for it := v.ElementIterator(); it.Next() && m.bad == ""; {
			k, ev := it.Element()
			m.elems++
			m.text += 1
			if keyed {
				n := len(k.AsString())
				m.bytes += n
				m.text += 6*n + 3
			}
			if m.elems > MaxValueElements {
				m.bad = fmt.Sprintf("has more than %d elements, the limit of one value", MaxValueElements)
				return
			}
			m.walk(ev, depth+1)
		}
	}
	if m.bad == "" && m.bytes > MaxValueBytes {
		m.bad = fmt.Sprintf("holds more than %d MiB of strings, the limit of one value", MaxValueBytes>>20)
	}
}

// boundedExpr evaluates an expression under the load's budget. It is a
// ParenthesesExpr so that hclsyntax's walks (Variables, for references)
// see through it to the expression within.
type boundedExpr struct {
	*hclsyntax.ParenthesesExpr
	b *budget
}

// Value implements hcl.Expression.
func (w *boundedExpr) Value(ctx *hclv2.EvalContext) (cty.Value, hclv2.Diagnostics) {
	b := w.b
	if b.diag != nil {
		return cty.DynamicVal, nil // already stopped; the diagnostic is reported once
	}
	if b.steps++; b.steps > MaxEvalSteps {
		return cty.DynamicVal, b.stop("Evaluation too long", fmt.Sprintf("Evaluating the definition takes more than %d expression evaluations, the limit", MaxEvalSteps), w.Range())
	}
	v, diags := w.Expression.Value(ctx)
	if b.diag != nil {
		return cty.DynamicVal, diags
	}
	if ds := b.charge(v, w.Range()); ds != nil {
		return cty.DynamicVal, append(diags, ds...)
	}
	return v, diags
}

// UnwrapExpression lets hcl's static analysis (type constraints, keywords,
// traversals) see the expression within.
func (w *boundedExpr) UnwrapExpression() hclv2.Expression { return w.Expression }

// unbound returns the expression a boundedExpr wraps, for code that looks
// at expression syntax.
func unbound(e hclv2.Expression) hclv2.Expression {
	for {
		w, ok := e.(*boundedExpr)
		if !ok {
			return e
		}
		e = w.Expression
	}
}

// boundBody wraps every expression of a parsed body for the budget, and
// refuses expressions nested deeper than MaxNesting (binary operators chain
// without brackets, so checkSource does not see them).
func (b *budget) boundBody(body hclv2.Body) hclv2.Diagnostics {
	sb, ok := body.(*hclsyntax.Body)
	if !ok {
		return nil
	}
	var diags hclv2.Diagnostics
	for _, a := range sb.Attributes {
		a.Expr = b.bound(a.Expr, 0, &diags)
	}
	for _, blk := range sb.Blocks {
		diags = append(diags, b.boundBody(blk.Body)...)
	}
	return diags
}

func (b *budget) bound(e hclsyntax.Expression, depth int, diags *hclv2.Diagnostics) hclsyntax.Expression {
	if e == nil {
		return nil
	}
	if depth > MaxNesting {
		if !diags.HasErrors() {
			*diags = append(*diags, &hclv2.Diagnostic{Severity: hclv2.DiagError, Summary: "Expression nested too deeply",
				Detail:  fmt.Sprintf("This expression nests more than %d levels deep (operators count as levels); the limit is %d (%s).", MaxNesting, MaxNesting, limitsDoc),
				Subject: e.Range().Ptr()})
		}
		return e
	}
	sub := func(c hclsyntax.Expression) hclsyntax.Expression { return b.bound(c, depth+1, diags) }
	switch x := e.(type) {
	case *boundedExpr:
		return x
	case *hclsyntax.ParenthesesExpr:
		x.Expression = sub(x.Expression)
	case *hclsyntax.RelativeTraversalExpr:
		x.Source = sub(x.Source)
	case *hclsyntax.FunctionCallExpr:
		for i := range x.Args {
			x.Args[i] = sub(x.Args[i])
		}
	case *hclsyntax.ConditionalExpr:
		x.Condition, x.TrueResult, x.FalseResult = sub(x.Condition), sub(x.TrueResult), sub(x.FalseResult)
	case *hclsyntax.IndexExpr:
		x.Collection, x.Key = sub(x.Collection), sub(x.Key)
	case *hclsyntax.TupleConsExpr:
		for i := range x.Exprs {
			x.Exprs[i] = sub(x.Exprs[i])
		}
	case *hclsyntax.ObjectConsExpr:
		for i := range x.Items {
			// A key stays an ObjectConsKeyExpr, which tells a bare name
			// from an expression by its syntax; an expression within it is
			// bounded like any other.
			if k, ok := x.Items[i].KeyExpr.(*hclsyntax.ObjectConsKeyExpr); ok {
				if _, bare := k.Wrapped.(*hclsyntax.ScopeTraversalExpr); !bare {
					k.Wrapped = sub(k.Wrapped)
				}
			}
			x.Items[i].ValueExpr = sub(x.Items[i].ValueExpr)
		}
	case *hclsyntax.ForExpr:
		x.CollExpr, x.KeyExpr, x.ValExpr, x.CondExpr = sub(x.CollExpr), sub(x.KeyExpr), sub(x.ValExpr), sub(x.CondExpr)
	case *hclsyntax.SplatExpr:
		x.Source, x.Each = sub(x.Source), sub(x.Each)
	case *hclsyntax.BinaryOpExpr:
		x.LHS, x.RHS = sub(x.LHS), sub(x.RHS)
		if x.Op == hclsyntax.OpModulo {
			x.Op = calmModulo
		}
	case *hclsyntax.UnaryOpExpr:
		x.Val = sub(x.Val)
	case *hclsyntax.TemplateExpr:
		for i := range x.Parts {
			x.Parts[i] = sub(x.Parts[i])
		}
	case *hclsyntax.TemplateJoinExpr:
		x.Tuple = sub(x.Tuple)
	case *hclsyntax.TemplateWrapExpr:
		x.Wrapped = sub(x.Wrapped)
	}
	return &boundedExpr{ParenthesesExpr: &hclsyntax.ParenthesesExpr{Expression: e, SrcRange: e.Range()}, b: b}
}
