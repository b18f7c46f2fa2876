package hcl

import (
	"errors"
	"fmt"
	"math"
	"math/big"
	"os"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	hclv2 "github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/ext/typeexpr"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/zclconf/go-cty/cty"
	"github.com/zclconf/go-cty/cty/convert"
	"github.com/zclconf/go-cty/cty/function"

	"github.com/grovehq/grove/api"
	"github.com/grovehq/grove/core/orchestrator/deps"
)

var rootSchema = &hclv2.BodySchema{Blocks: []hclv2.BlockHeaderSchema{
	{Type: "grove"},
	{Type: "variable", LabelNames: []string{"name"}},
	{Type: "locals"},
	{Type: "profile", LabelNames: []string{"name"}},
	{Type: "policy", LabelNames: []string{"name"}},
	{Type: "cluster", LabelNames: []string{"name"}},
	{Type: "milestone", LabelNames: []string{"name"}},
}}

var milestoneSchema = &hclv2.BodySchema{Attributes: []hclv2.AttributeSchema{{Name: "clusters", Required: true}, {Name: "description"}}}

var groveSchema = &hclv2.BodySchema{Attributes: []hclv2.AttributeSchema{{Name: "set"}}}

var variableSchema = &hclv2.BodySchema{
	Attributes: []hclv2.AttributeSchema{{Name: "type"}, {Name: "default"}, {Name: "description"}, {Name: "sensitive"}},
	Blocks:     []hclv2.BlockHeaderSchema{{Type: "validation"}},
}

var validationSchema = &hclv2.BodySchema{Attributes: []hclv2.AttributeSchema{{Name: "condition", Required: true}, {Name: "error_message", Required: true}}}

var specSchema = &hclv2.BodySchema{
	Attributes: []hclv2.AttributeSchema{{Name: "type", Required: true}, {Name: "version", Required: true}, {Name: "metadata"}, {Name: "description"}},
	Blocks:     []hclv2.BlockHeaderSchema{{Type: "properties"}},
}

var clusterSchema = &hclv2.BodySchema{
	Attributes: []hclv2.AttributeSchema{
		{Name: "profile", Required: true}, {Name: "desired_capacity"}, {Name: "min_size"}, {Name: "max_size"}, {Name: "timeout"},
		{Name: "metadata"}, {Name: "config"},
		{Name: "hard_affinity"}, {Name: "hard_anti_affinity"}, {Name: "soft_affinity"}, {Name: "soft_anti_affinity"},
	},
	Blocks: []hclv2.BlockHeaderSchema{
		{Type: "binding"}, {Type: "placement"}, {Type: "restart"}, {Type: "update"}, {Type: "failover"}, {Type: "dependency", LabelNames: []string{"name"}},
		{Type: "depends_on", LabelNames: []string{"name"}}, {Type: "dependent", LabelNames: []string{"name"}},
	},
}

var settingSchemas = map[string]*hclv2.BodySchema{
	"binding":   {Attributes: []hclv2.AttributeSchema{{Name: "policy", Required: true}, {Name: "enabled"}, {Name: "priority"}}},
	"placement": {Attributes: []hclv2.AttributeSchema{{Name: "policy"}, {Name: "hosts"}}},
	"restart":   {Attributes: []hclv2.AttributeSchema{{Name: "condition"}, {Name: "delay"}, {Name: "max_attempts"}, {Name: "window"}}},
	"update":    {Attributes: []hclv2.AttributeSchema{{Name: "parallelism"}, {Name: "delay"}, {Name: "failure_action"}, {Name: "monitor"}, {Name: "max_failure_ratio"}, {Name: "order"}}},
	"failover": {Attributes: []hclv2.AttributeSchema{{Name: "topology"}, {Name: "orchestrate"}, {Name: "flex_min"}, {Name: "flex_max"}, {Name: "flex_target"},
		{Name: "ready_period"}, {Name: "maintenance_grace_period"}, {Name: "rejoin_grace_period"}}},
	"dependency": {Attributes: []hclv2.AttributeSchema{{Name: "grouping", Required: true}, {Name: "restart_on"}, {Name: "clusters", Required: true}}},
	"depends_on": {Attributes: []hclv2.AttributeSchema{{Name: "grouping", Required: true}, {Name: "restart_on"}, {Name: "members", Required: true}}},
	"dependent":  {Attributes: []hclv2.AttributeSchema{{Name: "grouping", Required: true}, {Name: "restart_on"}, {Name: "members", Required: true}}},
}

type evaluator struct {
	def   *Definition
	opts  Options
	ctx   *hclv2.EvalContext
	funcs map[string]function.Function
	// declared blocks, by kind and name
	blocks map[Ref]*hclv2.Block
	budget *budget
	// srcLeft is what MaxSourceBytes leaves for variable files and values.
	srcLeft int
	// setRange is where a grove block named the set, for its diagnostic.
	setRange *hclv2.Range
}

func newEvaluator(def *Definition, opts Options, b *budget, srcLeft int) *evaluator {
	return &evaluator{def: def, opts: opts, funcs: functions(opts.Executable), blocks: map[Ref]*hclv2.Block{}, budget: b, srcLeft: srcLeft}
}

func (e *evaluator) run(files []*hclv2.File) hclv2.Diagnostics {
	var diags hclv2.Diagnostics
	var vars, locals []*hclv2.Block
	var order []Ref
	for _, f := range files {
		content, ds := f.Body.Content(rootSchema)
		diags = append(diags, ds...)
		for _, b := range content.Blocks {
			switch b.Type {
			case "grove":
				c, ds := b.Body.Content(groveSchema)
				diags = append(diags, ds...)
				// grove { set = "name" } names the set, unless -set did.
				if a, ok := c.Attributes["set"]; ok && e.opts.Set == "" {
					v, ds := a.Expr.Value(nil)
					diags = append(diags, ds...)
					if !ds.HasErrors() && v.Type() == cty.String {
						e.def.Set = v.AsString()
						e.setRange = a.Expr.Range().Ptr()
					}
				}
			case "variable":
				vars = append(vars, b)
			case "locals":
				locals = append(locals, b)
			default:
				ref := Ref{Kind: b.Type, Name: b.Labels[0]}
				if prev, dup := e.blocks[ref]; dup {
					diags = append(diags, &hclv2.Diagnostic{Severity: hclv2.DiagError, Summary: "Duplicate " + b.Type,
						Detail: fmt.Sprintf("%s is declared twice; the first is at %s.", ref, prev.DefRange), Subject: b.DefRange.Ptr()})
					continue
				}
				if rule := nameRule(b.Type, ref.Name); rule != "" {
					diags = append(diags, &hclv2.Diagnostic{Severity: hclv2.DiagError, Summary: "Invalid name",
						Detail: fmt.Sprintf("%q is not a valid %s name: %s.", ref.Name, b.Type, rule), Subject: b.LabelRanges[0].Ptr()})
				}
				e.blocks[ref] = b
				order = append(order, ref)
			}
		}
	}
	if diags.HasErrors() {
		return diags
	}
	varVals, ds := e.variables(vars)
	diags = append(diags, ds...)
	if diags.HasErrors() {
		return diags
	}
	e.ctx = &hclv2.EvalContext{Variables: map[string]cty.Value{"var": objectOf(varVals)}, Functions: e.funcs}
	for _, kind := range []string{"profile", "policy", "cluster"} {
		names := map[string]cty.Value{}
		for ref := range e.blocks {
			if ref.Kind == kind {
				names[ref.Name] = cty.ObjectVal(map[string]cty.Value{"name": cty.StringVal(ref.Name)})
			}
		}
		e.ctx.Variables[kind] = objectOf(names)
	}
	// milestone.NAME stands for the milestone as a dependency member.
	milestones := map[string]cty.Value{}
	for ref := range e.blocks {
		if ref.Kind == "milestone" {
			milestones[ref.Name] = cty.ObjectVal(map[string]cty.Value{"name": cty.StringVal(ref.Name), "member": cty.StringVal(deps.MilestonePrefix + ref.Name)})
		}
	}
	e.ctx.Variables["milestone"] = objectOf(milestones)
	localVals, ds := e.locals(locals)
	diags = append(diags, ds...)
	if diags.HasErrors() {
		return diags
	}
	e.ctx.Variables["local"] = objectOf(localVals)
	sorted, ds := e.graph(order)
	diags = append(diags, ds...)
	if diags.HasErrors() {
		return diags
	}
	e.def.Order = sorted
	for _, ref := range sorted {
		b := e.blocks[ref]
		switch ref.Kind {
		case "profile":
			p, ds := e.decodeSpec(b)
			diags = append(diags, ds...)
			if p != nil {
				e.def.Profiles[ref.Name] = &Profile{Name: ref.Name, Type: p.typ, Version: p.version, Properties: p.props, Metadata: p.metadata, decl: p.decl}
			}
		case "policy":
			p, ds := e.decodeSpec(b)
			diags = append(diags, ds...)
			if p != nil {
				e.def.Policies[ref.Name] = &Policy{Name: ref.Name, Type: p.typ, Version: p.version, Properties: p.props, decl: p.decl}
			}
		case "cluster":
			c, ds := e.decodeCluster(b)
			diags = append(diags, ds...)
			if c != nil {
				e.def.Clusters[ref.Name] = c
			}
		case "milestone":
			m, ds := e.decodeMilestone(b)
			diags = append(diags, ds...)
			if m != nil {
				e.def.Milestones[ref.Name] = m
			}
		}
	}
	if !diags.HasErrors() {
		diags = append(diags, e.dependencyCycles()...)
	}
	return diags
}

func objectOf(m map[string]cty.Value) cty.Value {
	if len(m) == 0 {
		return cty.EmptyObjectVal
	}
	return cty.ObjectVal(m)
}

// checkMetadata applies the agent's rules for metadata (api.ValidateMetadata)
// at the attribute, so that apply does not stop at the first object the
// agent refuses, after creating the ones before it.
func checkMetadata(a *hclv2.Attribute, m map[string]any) hclv2.Diagnostics {
	if err := api.ValidateMetadata("metadata", m); err != nil {
		return hclv2.Diagnostics{{Severity: hclv2.DiagError, Summary: "Invalid metadata", Detail: err.Error(), Subject: a.Expr.Range().Ptr()}}
	}
	return nil
}

// setNameRule returns the rule a definition set's name breaks, or "". The
// agent takes any name for a set, but the name travels in URL paths
// (/v1/sets/NAME), which cannot hold "." or "..", and is printed in plans.
func setNameRule(name string) string {
	switch {
	case name == "":
		return "a set's name cannot be empty"
	case name == "." || name == "..":
		return `"." and ".." cannot name a set, since a URL path cannot hold them`
	case utf8.RuneCountInString(name) > api.MaxNameChars:
		return fmt.Sprintf("a set's name may have at most %d characters", api.MaxNameChars)
	case strings.IndexFunc(name, unicode.IsControl) >= 0 || !utf8.ValidString(name):
		return "a set's name cannot hold control characters or invalid UTF-8"
	}
	return ""
}

// nameRE is the agent's rule for names (api.NamePattern): what validate
// accepts, the agent must accept too.
var nameRE = regexp.MustCompile(api.NamePattern)

// specNameSuffix is what AgentName adds to a profile's or policy's name: "-"
// and 8 hex digits of its spec.
const specNameSuffix = 9

// nameRule returns the rule a block's name breaks, or "". The name must be
// one the agent accepts as it will be sent: a profile's or policy's with the
// digest AgentName appends. "." and ".." match the agent's pattern but
// cannot be sent in a URL path, which clients clean of such segments, so
// the object could be created but never found again.
func nameRule(kind, name string) string {
	limit := api.MaxNameChars
	if kind == "profile" || kind == "policy" {
		limit -= specNameSuffix
	}
	switch {
	case name == "." || name == "..":
		return `"." and ".." cannot name an object, since a URL path cannot hold them`
	case !nameRE.MatchString(name):
		return "use 1 to 255 characters of letters, digits, '.', '_', '~' and '-'"
	case utf8.RuneCountInString(name) > limit:
		return fmt.Sprintf("a %s name may have at most %d characters, since the agent's name for it adds %d (\"-\" and a digest of the spec) to make at most %d", kind, limit, specNameSuffix, api.MaxNameChars)
	}
	return ""
}

// --- variables

type variable struct {
	name  string
	typ   cty.Type
	block *hclv2.Block
	def   *hclv2.Attribute
	vals  []*hclv2.Block
}

func (e *evaluator) variables(blocks []*hclv2.Block) (map[string]cty.Value, hclv2.Diagnostics) {
	var diags hclv2.Diagnostics
	decl := map[string]*variable{}
	for _, b := range blocks {
		name := b.Labels[0]
		if _, dup := decl[name]; dup {
			diags = append(diags, &hclv2.Diagnostic{Severity: hclv2.DiagError, Summary: "Duplicate variable", Detail: fmt.Sprintf("Variable %q is declared twice.", name), Subject: b.DefRange.Ptr()})
			continue
		}
		content, ds := b.Body.Content(variableSchema)
		diags = append(diags, ds...)
		v := &variable{name: name, typ: cty.DynamicPseudoType, block: b, vals: nil}
		if a, ok := content.Attributes["type"]; ok {
			t, ds := typeexpr.TypeConstraint(a.Expr)
			diags = append(diags, ds...)
			if !ds.HasErrors() {
				v.typ = t
			}
		}
		v.def = content.Attributes["default"]
		for _, vb := range content.Blocks {
			v.vals = append(v.vals, vb)
		}
		decl[name] = v
	}
	values := map[string]cty.Value{}
	raw := map[string]hclv2.Expression{}
	setRaw := func(name, value string, origin hclv2.Range) {
		v, ok := decl[name]
		if !ok {
			diags = append(diags, &hclv2.Diagnostic{Severity: hclv2.DiagError, Summary: "Value for undeclared variable",
				Detail: fmt.Sprintf("A value was given for %q (%s), but no variable of that name is declared.", name, origin.Filename), Subject: origin.Ptr()})
			return
		}
		// Strings are taken as they are; other types parse as HCL, unless the
		// value cannot be an expression, which conversion then explains.
		if e.srcLeft -= len(value); e.srcLeft < 0 {
			diags = append(diags, sourceTooLarge(fmt.Sprintf("The value given for %q (%s) takes the definition over the limit", name, origin.Filename)))
			return
		}
		if v.typ == cty.String || !looksLikeExpr(value) {
			raw[name] = hclv2.StaticExpr(cty.StringVal(value), origin)
			return
		}
		if ds := checkSource([]byte(value), origin.Filename, hclv2.InitialPos); ds.HasErrors() {
			diags = append(diags, &hclv2.Diagnostic{Severity: hclv2.DiagError, Summary: "Invalid value for variable",
				Detail: fmt.Sprintf("The value given for %q (%s) is not a valid expression: %s", name, origin.Filename, ds[0].Detail)})
			return
		}
		expr, ds := hclsyntax.ParseExpression([]byte(value), origin.Filename, hclv2.InitialPos)
		if ds.HasErrors() {
			diags = append(diags, &hclv2.Diagnostic{Severity: hclv2.DiagError, Summary: "Invalid value for variable",
				Detail: fmt.Sprintf("The value given for %q (%s) is not a valid expression: %s", name, origin.Filename, ds.Error())})
			return
		}
		var bds hclv2.Diagnostics
		raw[name] = e.budget.bound(expr, 0, &bds)
		diags = append(diags, bds...)
	}
	env := e.opts.Env
	if env == nil {
		env = os.Environ()
	}
	for _, kv := range env {
		if k, v, ok := strings.Cut(kv, "="); ok && strings.HasPrefix(k, "GROVE_VAR_") {
			if _, declared := decl[strings.TrimPrefix(k, "GROVE_VAR_")]; declared {
				setRaw(strings.TrimPrefix(k, "GROVE_VAR_"), v, hclv2.Range{Filename: "environment variable " + k})
			}
		}
	}
	for _, path := range e.opts.VarFiles {
		src, err := readLimited(path, e.srcLeft)
		if errors.Is(err, ErrTooLarge) {
			diags = append(diags, sourceTooLarge(fmt.Sprintf("Reading %s takes the definition over the limit", path)))
			continue
		}
		if err != nil {
			diags = append(diags, &hclv2.Diagnostic{Severity: hclv2.DiagError, Summary: "Cannot read a variables file", Detail: err.Error()})
			continue
		}
		e.srcLeft -= len(src)
		if ds := checkSource(src, path, hclv2.InitialPos); ds.HasErrors() {
			e.def.Files[path] = &hclv2.File{Bytes: src}
			diags = append(diags, ds...)
			continue
		}
		f, ds := hclsyntax.ParseConfig(src, path, hclv2.InitialPos)
		diags = append(diags, ds...)
		if ds.HasErrors() {
			continue
		}
		if ds := e.budget.boundBody(f.Body); ds.HasErrors() {
			diags = append(diags, ds...)
			continue
		}
		e.def.Files[path] = f
		attrs, ds := f.Body.JustAttributes()
		diags = append(diags, ds...)
		for name, a := range attrs {
			if _, ok := decl[name]; !ok {
				diags = append(diags, &hclv2.Diagnostic{Severity: hclv2.DiagError, Summary: "Value for undeclared variable",
					Detail: fmt.Sprintf("No variable named %q is declared.", name), Subject: a.NameRange.Ptr()})
				continue
			}
			raw[name] = a.Expr
		}
	}
	for _, kv := range e.opts.Vars {
		name, value, ok := strings.Cut(kv, "=")
		if !ok {
			diags = append(diags, &hclv2.Diagnostic{Severity: hclv2.DiagError, Summary: "Invalid -var option", Detail: fmt.Sprintf("%q is not NAME=VALUE.", kv)})
			continue
		}
		setRaw(name, value, hclv2.Range{Filename: "-var " + name})
	}
	fctx := &hclv2.EvalContext{Functions: e.funcs}
	names := make([]string, 0, len(decl))
	for n := range decl {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, name := range names {
		v := decl[name]
		expr, given := raw[name]
		if !given && v.def != nil {
			expr = v.def.Expr
		}
		if expr == nil {
			diags = append(diags, &hclv2.Diagnostic{Severity: hclv2.DiagError, Summary: "No value for required variable",
				Detail: fmt.Sprintf("Variable %q has no default: set it with -var %s=..., -var-file or GROVE_VAR_%s.", name, name, name), Subject: v.block.DefRange.Ptr()})
			continue
		}
		val, ds := expr.Value(fctx)
		diags = append(diags, ds...)
		if ds.HasErrors() {
			continue
		}
		conv, err := convert.Convert(val, v.typ)
		if err != nil {
			diags = append(diags, &hclv2.Diagnostic{Severity: hclv2.DiagError, Summary: "Invalid value for variable",
				Detail: fmt.Sprintf("Variable %q must be %s: %s.", name, v.typ.FriendlyName(), err), Subject: expr.Range().Ptr()})
			continue
		}
		values[name] = conv
	}
	if diags.HasErrors() {
		return values, diags
	}
	vctx := &hclv2.EvalContext{Variables: map[string]cty.Value{"var": objectOf(values)}, Functions: e.funcs}
	for _, name := range names {
		for _, vb := range decl[name].vals {
			c, ds := vb.Body.Content(validationSchema)
			diags = append(diags, ds...)
			if ds.HasErrors() {
				continue
			}
			ok, ds := c.Attributes["condition"].Expr.Value(vctx)
			diags = append(diags, ds...)
			msg, ds2 := c.Attributes["error_message"].Expr.Value(vctx)
			diags = append(diags, ds2...)
			if ds.HasErrors() || ds2.HasErrors() {
				continue
			}
			if ok.Type() != cty.Bool || ok.IsNull() {
				diags = append(diags, &hclv2.Diagnostic{Severity: hclv2.DiagError, Summary: "Invalid validation condition",
					Detail: "The condition must be true or false.", Subject: c.Attributes["condition"].Expr.Range().Ptr()})
				continue
			}
			if ok.False() {
				detail := fmt.Sprintf("The value of variable %q breaks a validation rule.", name)
				if msg.Type() == cty.String && !msg.IsNull() {
					detail = msg.AsString()
				}
				diags = append(diags, &hclv2.Diagnostic{Severity: hclv2.DiagError, Summary: "Invalid value for variable " + name,
					Detail: detail, Subject: c.Attributes["condition"].Expr.Range().Ptr()})
			}
		}
	}
	return values, diags
}

func looksLikeExpr(s string) bool {
	s = strings.TrimSpace(s)
	if s == "true" || s == "false" || s == "null" {
		return true
	}
	if _, err := strconv.ParseFloat(s, 64); err == nil {
		return true
	}
	return strings.HasPrefix(s, "[") || strings.HasPrefix(s, "{")
}

// --- locals

func (e *evaluator) locals(blocks []*hclv2.Block) (map[string]cty.Value, hclv2.Diagnostics) {
	var diags hclv2.Diagnostics
	attrs := map[string]*hclv2.Attribute{}
	for _, b := range blocks {
		as, ds := b.Body.JustAttributes()
		diags = append(diags, ds...)
		for n, a := range as {
			if prev, dup := attrs[n]; dup {
				diags = append(diags, &hclv2.Diagnostic{Severity: hclv2.DiagError, Summary: "Duplicate local value",
					Detail: fmt.Sprintf("local.%s is defined twice; the first is at %s.", n, prev.NameRange), Subject: a.NameRange.Ptr()})
				continue
			}
			attrs[n] = a
		}
	}
	values := map[string]cty.Value{}
	pending := map[string]bool{}
	for n := range attrs {
		pending[n] = true
	}
	for len(pending) > 0 {
		progress := false
		names := make([]string, 0, len(pending))
		for n := range pending {
			names = append(names, n)
		}
		sort.Strings(names)
		for _, n := range names {
			ready := true
			for _, t := range attrs[n].Expr.Variables() {
				if t.RootName() != "local" || len(t) < 2 {
					continue
				}
				dep := attrName(t[1])
				if _, declared := attrs[dep]; !declared {
					diags = append(diags, &hclv2.Diagnostic{Severity: hclv2.DiagError, Summary: "Reference to undeclared local value",
						Detail: fmt.Sprintf("No local value named %q is declared.", dep), Subject: t.SourceRange().Ptr()})
					delete(pending, n)
					ready = false
					break
				}
				if pending[dep] {
					ready = false
				}
			}
			if !ready || !pending[n] {
				continue
			}
			e.ctx.Variables["local"] = objectOf(values)
			v, ds := attrs[n].Expr.Value(e.ctx)
			diags = append(diags, ds...)
			values[n] = v
			delete(pending, n)
			progress = true
		}
		if !progress && len(pending) > 0 {
			var cyc []string
			for n := range pending {
				cyc = append(cyc, "local."+n)
			}
			sort.Strings(cyc)
			diags = append(diags, &hclv2.Diagnostic{Severity: hclv2.DiagError, Summary: "Cycle in local values",
				Detail: "These local values refer to each other: " + strings.Join(cyc, ", ") + ".", Subject: attrs[strings.TrimPrefix(cyc[0], "local.")].NameRange.Ptr()})
			break
		}
	}
	return values, diags
}

func attrName(t hclv2.Traverser) string {
	switch x := t.(type) {
	case hclv2.TraverseAttr:
		return x.Name
	case hclv2.TraverseIndex:
		if x.Key.Type() == cty.String {
			return x.Key.AsString()
		}
	}
	return ""
}

// --- the reference graph

// refsIn returns the blocks some expressions refer to, with where.
func (e *evaluator) refsIn(exprs []hclv2.Expression) ([]Ref, []hclv2.Range, hclv2.Diagnostics) {
	var diags hclv2.Diagnostics
	var refs []Ref
	var rngs []hclv2.Range
	for _, expr := range exprs {
		for _, t := range expr.Variables() {
			kind := t.RootName()
			if kind != "profile" && kind != "policy" && kind != "cluster" && kind != "milestone" || len(t) < 2 {
				continue
			}
			ref := Ref{Kind: kind, Name: attrName(t[1])}
			if _, ok := e.blocks[ref]; !ok {
				diags = append(diags, &hclv2.Diagnostic{Severity: hclv2.DiagError, Summary: "Reference to undeclared " + kind,
					Detail: fmt.Sprintf("No %s named %q is declared in this definition set.", kind, ref.Name), Subject: t.SourceRange().Ptr()})
				continue
			}
			refs = append(refs, ref)
			rngs = append(rngs, t.SourceRange())
		}
	}
	return refs, rngs, diags
}

// expressions lists every expression in a body, nested blocks included.
func expressions(body hclv2.Body) []hclv2.Expression {
	sb, ok := body.(*hclsyntax.Body)
	if !ok {
		return nil
	}
	var out []hclv2.Expression
	for _, a := range sb.Attributes {
		out = append(out, a.Expr)
	}
	for _, b := range sb.Blocks {
		out = append(out, expressions(b.Body)...)
	}
	return out
}

// splitDependents splits a block's expressions into those of its
// dependent blocks and the others.
func splitDependents(body hclv2.Body) (own, dependents []hclv2.Expression) {
	sb, ok := body.(*hclsyntax.Body)
	if !ok {
		return nil, nil
	}
	for _, a := range sb.Attributes {
		own = append(own, a.Expr)
	}
	for _, b := range sb.Blocks {
		if b.Type == "dependent" {
			dependents = append(dependents, expressions(b.Body)...)
		} else {
			own = append(own, expressions(b.Body)...)
		}
	}
	return own, dependents
}

// graph orders blocks so each follows what it references; a cycle is an
// error naming every block in it.
func (e *evaluator) graph(order []Ref) ([]Ref, hclv2.Diagnostics) {
	var diags hclv2.Diagnostics
	edges := map[Ref][]Ref{}
	for _, ref := range order {
		own, reverse := splitDependents(e.blocks[ref].Body)
		refs, _, ds := e.refsIn(own)
		diags = append(diags, ds...)
		edges[ref] = append(edges[ref], refs...)
		// A dependent block's members wait on this cluster: they come
		// after it.
		back, _, ds := e.refsIn(reverse)
		diags = append(diags, ds...)
		for _, m := range back {
			if m.Kind == "cluster" {
				edges[m] = append(edges[m], ref)
			} else {
				edges[ref] = append(edges[ref], m)
			}
		}
	}
	if diags.HasErrors() {
		return nil, diags
	}
	const (
		white = iota
		grey
		black
	)
	color := map[Ref]int{}
	var stack, sorted []Ref
	var visit func(r Ref) bool
	visit = func(r Ref) bool {
		color[r] = grey
		stack = append(stack, r)
		for _, d := range edges[r] {
			if d == r {
				continue // a block may mention itself harmlessly
			}
			switch color[d] {
			case grey:
				i := len(stack) - 1
				for stack[i] != d {
					i--
				}
				cycle := append(append([]Ref{}, stack[i:]...), d)
				names := make([]string, len(cycle))
				for j, c := range cycle {
					names[j] = c.String()
				}
				diags = append(diags, &hclv2.Diagnostic{Severity: hclv2.DiagError, Summary: "Dependency cycle",
					Detail: "These blocks depend on each other: " + strings.Join(names, " -> ") + ". Remove one of the references.", Subject: e.blocks[d].DefRange.Ptr()})
				return false
			case white:
				if !visit(d) {
					return false
				}
			}
		}
		stack = stack[:len(stack)-1]
		color[r] = black
		sorted = append(sorted, r)
		return true
	}
	rank := map[string]int{"profile": 0, "policy": 1, "cluster": 2, "milestone": 3}
	start := append([]Ref{}, order...)
	sort.SliceStable(start, func(i, j int) bool { return rank[start[i].Kind] < rank[start[j].Kind] })
	for _, r := range start {
		if color[r] == white && !visit(r) {
			break
		}
	}
	return sorted, diags
}

// --- blocks

type spec struct {
	typ, version string
	props        map[string]any
	metadata     map[string]any
	decl         blockInfo
}

func (e *evaluator) decodeSpec(b *hclv2.Block) (*spec, hclv2.Diagnostics) {
	content, diags := b.Body.Content(specSchema)
	if diags.HasErrors() {
		return nil, diags
	}
	s := &spec{props: map[string]any{}, decl: blockInfo{rng: b.DefRange, fields: map[string]hclv2.Range{}}}
	for n, a := range content.Attributes {
		s.decl.fields[n] = a.Expr.Range()
	}
	typ, ds := e.str(content.Attributes["type"])
	diags = append(diags, ds...)
	s.typ = typ
	if a := content.Attributes["version"]; a != nil {
		v, ds := a.Expr.Value(e.ctx)
		diags = append(diags, ds...)
		switch {
		case ds.HasErrors():
		case v.Type() == cty.String:
			s.version = v.AsString()
		case v.Type() == cty.Number:
			f, _ := v.AsBigFloat().Float64()
			s.version = strconv.FormatFloat(f, 'f', -1, 64)
			if !strings.Contains(s.version, ".") {
				s.version += ".0"
			}
		default:
			diags = append(diags, &hclv2.Diagnostic{Severity: hclv2.DiagError, Summary: "Invalid version", Detail: "version must be a string such as \"1.0\".", Subject: a.Expr.Range().Ptr()})
		}
	}
	if a := content.Attributes["metadata"]; a != nil {
		m, ds := e.object(a)
		diags = append(diags, ds...)
		diags = append(diags, checkMetadata(a, m)...)
		s.metadata = m
	}
	for i, pb := range content.Blocks {
		if i > 0 {
			diags = append(diags, &hclv2.Diagnostic{Severity: hclv2.DiagError, Summary: "Duplicate properties block", Detail: "A profile or policy has one properties block.", Subject: pb.DefRange.Ptr()})
			continue
		}
		attrs, ds := pb.Body.JustAttributes()
		diags = append(diags, ds...)
		s.decl.props = attrs
		for name, a := range attrs {
			v, ds := a.Expr.Value(e.ctx)
			diags = append(diags, ds...)
			if !ds.HasErrors() {
				s.props[name] = goValue(v)
			}
		}
	}
	return s, diags
}

func (e *evaluator) str(a *hclv2.Attribute) (string, hclv2.Diagnostics) {
	if a == nil {
		return "", nil
	}
	v, diags := a.Expr.Value(e.ctx)
	if diags.HasErrors() {
		return "", diags
	}
	if v.IsNull() || !v.Type().Equals(cty.String) {
		if c, err := convert.Convert(v, cty.String); err == nil && !c.IsNull() {
			return c.AsString(), diags
		}
		return "", append(diags, &hclv2.Diagnostic{Severity: hclv2.DiagError, Summary: "Invalid value", Detail: fmt.Sprintf("%s must be a string.", a.Name), Subject: a.Expr.Range().Ptr()})
	}
	return v.AsString(), diags
}

func (e *evaluator) object(a *hclv2.Attribute) (map[string]any, hclv2.Diagnostics) {
	v, diags := a.Expr.Value(e.ctx)
	if diags.HasErrors() {
		return nil, diags
	}
	m, ok := goValue(v).(map[string]any)
	if !ok && !v.IsNull() {
		return nil, append(diags, &hclv2.Diagnostic{Severity: hclv2.DiagError, Summary: "Invalid value", Detail: fmt.Sprintf("%s must be a map.", a.Name), Subject: a.Expr.Range().Ptr()})
	}
	return m, diags
}

func (e *evaluator) integer(a *hclv2.Attribute) (*int, hclv2.Diagnostics) {
	if a == nil {
		return nil, nil
	}
	v, diags := a.Expr.Value(e.ctx)
	if diags.HasErrors() || v.IsNull() {
		return nil, diags
	}
	bad := &hclv2.Diagnostic{Severity: hclv2.DiagError, Summary: "Invalid value", Detail: fmt.Sprintf("%s must be a whole number.", a.Name), Subject: a.Expr.Range().Ptr()}
	c, err := convert.Convert(v, cty.Number)
	if err != nil {
		return nil, append(diags, bad)
	}
	bf := c.AsBigFloat()
	if !bf.IsInt() {
		return nil, append(diags, bad)
	}
	i, acc := bf.Int64()
	if acc != big.Exact {
		bad.Detail = fmt.Sprintf("%s must be a whole number between %d and %d, got %s.", a.Name, math.MinInt64, math.MaxInt64, bf.Text('g', 20))
		return nil, append(diags, bad)
	}
	n := int(i)
	return &n, diags
}

// refName reads a reference (profile.web) or a plain name.
func (e *evaluator) refName(a *hclv2.Attribute, kind string) (string, hclv2.Diagnostics) {
	v, diags := a.Expr.Value(e.ctx)
	if diags.HasErrors() {
		return "", diags
	}
	return refValue(v, kind, a.Expr.Range(), &diags), diags
}

func refValue(v cty.Value, kind string, rng hclv2.Range, diags *hclv2.Diagnostics) string {
	switch {
	case v.IsNull():
	case v.Type() == cty.String:
		return v.AsString()
	case v.Type().IsObjectType() && v.Type().HasAttribute("name"):
		if n := v.GetAttr("name"); n.Type() == cty.String {
			return n.AsString()
		}
	}
	*diags = append(*diags, &hclv2.Diagnostic{Severity: hclv2.DiagError, Summary: "Invalid reference",
		Detail: fmt.Sprintf("Expected a %s reference such as %s.name, or a %s name.", kind, kind, kind), Subject: rng.Ptr()})
	return ""
}

func (e *evaluator) refList(a *hclv2.Attribute, kind string) ([]any, hclv2.Diagnostics) {
	v, diags := a.Expr.Value(e.ctx)
	if diags.HasErrors() || v.IsNull() {
		return nil, diags
	}
	if !v.CanIterateElements() || v.Type().IsMapType() || v.Type().IsObjectType() {
		return nil, append(diags, &hclv2.Diagnostic{Severity: hclv2.DiagError, Summary: "Invalid value",
			Detail: fmt.Sprintf("%s must be a list of %s references.", a.Name, kind), Subject: a.Expr.Range().Ptr()})
	}
	out := []any{}
	for it := v.ElementIterator(); it.Next(); {
		_, ev := it.Element()
		if n := refValue(ev, kind, a.Expr.Range(), &diags); n != "" {
			out = append(out, n)
		}
	}
	return out, diags
}

func (e *evaluator) decodeCluster(b *hclv2.Block) (*Cluster, hclv2.Diagnostics) {
	content, diags := b.Body.Content(clusterSchema)
	if diags.HasErrors() {
		return nil, diags
	}
	c := &Cluster{Name: b.Labels[0], Config: map[string]any{}, decl: blockInfo{rng: b.DefRange, fields: map[string]hclv2.Range{}}}
	at := func(field string, r hclv2.Range) { c.decl.fields[field] = r }
	name, ds := e.refName(content.Attributes["profile"], "profile")
	diags = append(diags, ds...)
	c.Profile = name
	if name != "" {
		if _, ok := e.blocks[Ref{Kind: "profile", Name: name}]; !ok {
			diags = append(diags, &hclv2.Diagnostic{Severity: hclv2.DiagError, Summary: "Unknown profile",
				Detail: fmt.Sprintf("No profile named %q is declared in this definition set.", name), Subject: content.Attributes["profile"].Expr.Range().Ptr()})
		}
	}
	var sizeDiags hclv2.Diagnostics
	for field, dst := range map[string]**int{"desired_capacity": &c.DesiredCapacity, "min_size": &c.MinSize, "max_size": &c.MaxSize, "timeout": &c.Timeout} {
		v, ds := e.integer(content.Attributes[field])
		sizeDiags = append(sizeDiags, ds...)
		*dst = v
	}
	if !sizeDiags.HasErrors() {
		sizeDiags = append(sizeDiags, checkSizes(c, content.Attributes)...)
	}
	diags = append(diags, sizeDiags...)
	if a := content.Attributes["metadata"]; a != nil {
		m, ds := e.object(a)
		diags = append(diags, ds...)
		diags = append(diags, checkMetadata(a, m)...)
		c.Metadata = m
	}
	if a := content.Attributes["config"]; a != nil {
		m, ds := e.object(a)
		diags = append(diags, ds...)
		for k, v := range m {
			c.Config[k] = v
			at("config."+k, a.Expr.Range())
		}
	}
	affinity := map[string]any{}
	for _, k := range []string{"hard_affinity", "hard_anti_affinity", "soft_affinity", "soft_anti_affinity"} {
		if a := content.Attributes[k]; a != nil {
			l, ds := e.refList(a, "cluster")
			diags = append(diags, ds...)
			if len(l) > 0 {
				affinity[k] = l
			}
			at(k, a.Expr.Range())
		}
	}
	if len(affinity) > 0 {
		c.Config[api.ConfigAffinity] = affinity
	}
	deps := map[string]any{}
	seenBlock := map[string]bool{}
	for _, sb := range content.Blocks {
		attrs, ds := sb.Body.Content(settingSchemas[sb.Type])
		diags = append(diags, ds...)
		if ds.HasErrors() {
			continue
		}
		if sb.Type == "depends_on" || sb.Type == "dependent" {
			g, ds := e.decodeDependsOn(c, sb, attrs)
			diags = append(diags, ds...)
			if g == nil {
				continue
			}
			if sb.Type == "dependent" {
				at("dependent."+g.Name, sb.DefRange)
				at("dependent."+g.Name+".members", attrs.Attributes["members"].Expr.Range())
				c.Dependents = append(c.Dependents, *g)
			} else {
				c.DependsOn = append(c.DependsOn, *g)
			}
			continue
		}
		if sb.Type != "binding" && sb.Type != "dependency" {
			if seenBlock[sb.Type] {
				diags = append(diags, &hclv2.Diagnostic{Severity: hclv2.DiagError, Summary: "Duplicate " + sb.Type + " block",
					Detail: fmt.Sprintf("A cluster has at most one %s block.", sb.Type), Subject: sb.DefRange.Ptr()})
				continue
			}
			seenBlock[sb.Type] = true
		}
		prefix := sb.Type
		if sb.Type == "dependency" {
			prefix = "dependency." + sb.Labels[0]
		}
		at(prefix, sb.DefRange)
		values := map[string]any{}
		for n, a := range attrs.Attributes {
			at(prefix+"."+n, a.Expr.Range())
			switch {
			case sb.Type == "binding" && n == "policy":
				name, ds := e.refName(a, "policy")
				diags = append(diags, ds...)
				if name != "" {
					if _, ok := e.blocks[Ref{Kind: "policy", Name: name}]; !ok {
						diags = append(diags, &hclv2.Diagnostic{Severity: hclv2.DiagError, Summary: "Unknown policy",
							Detail: fmt.Sprintf("No policy named %q is declared in this definition set.", name), Subject: a.Expr.Range().Ptr()})
					}
				}
				values[n] = name
			case sb.Type == "dependency" && n == "clusters":
				l, ds := e.refList(a, "cluster")
				diags = append(diags, ds...)
				values[n] = l
			case sb.Type == "placement" && n == "hosts":
				v, ds := a.Expr.Value(e.ctx)
				diags = append(diags, ds...)
				values[n] = goValue(v)
			default:
				v, ds := a.Expr.Value(e.ctx)
				diags = append(diags, ds...)
				if !ds.HasErrors() {
					values[n] = goValue(v)
				}
			}
		}
		switch sb.Type {
		case "binding":
			bd := Binding{Enabled: true}
			bd.Policy, _ = values["policy"].(string)
			if en, ok := values["enabled"].(bool); ok {
				bd.Enabled = en
			} else if values["enabled"] != nil {
				diags = append(diags, &hclv2.Diagnostic{Severity: hclv2.DiagError, Summary: "Invalid value", Detail: "enabled must be true or false.", Subject: attrs.Attributes["enabled"].Expr.Range().Ptr()})
			}
			if a := attrs.Attributes["priority"]; a != nil {
				p, ds := e.integer(a)
				diags = append(diags, ds...)
				if p != nil && (*p < 0 || *p > api.MaxCount) {
					diags = append(diags, &hclv2.Diagnostic{Severity: hclv2.DiagError, Summary: "Invalid value",
						Detail: fmt.Sprintf("priority must be a non-negative integer of at most %d, got %d.", api.MaxCount, *p), Subject: a.Expr.Range().Ptr()})
				}
				bd.Priority = p
			}
			for _, other := range c.Bindings {
				if other.Policy == bd.Policy {
					diags = append(diags, &hclv2.Diagnostic{Severity: hclv2.DiagError, Summary: "Duplicate binding",
						Detail: fmt.Sprintf("policy.%s is bound to cluster %q twice.", bd.Policy, c.Name), Subject: sb.DefRange.Ptr()})
					continue
				}
				// The agent refuses a second policy of a type on a cluster,
				// after apply created the cluster and bound the first.
				if p, q := e.def.Policies[bd.Policy], e.def.Policies[other.Policy]; p != nil && q != nil && p.Type == q.Type {
					diags = append(diags, &hclv2.Diagnostic{Severity: hclv2.DiagError, Summary: "Two policies of one type",
						Detail:  fmt.Sprintf("policy.%s and policy.%s are both of type %s; a cluster takes at most one policy of a type, so bind one of them to cluster %q.", other.Policy, bd.Policy, p.Type, c.Name),
						Subject: sb.DefRange.Ptr()})
				}
			}
			c.Bindings = append(c.Bindings, bd)
		case "dependency":
			deps[sb.Labels[0]] = values
		case "placement":
			c.Config[api.ConfigPlacement] = values
		case "restart":
			c.Config[api.ConfigRestart] = values
		case "update":
			c.Config[api.ConfigUpdate] = values
		case "failover":
			c.Config[api.ConfigFailover] = values
		}
	}
	if len(deps) > 0 {
		c.Config[api.ConfigDependencies] = deps
	}
	if diags.HasErrors() {
		return c, diags
	}
	for _, fe := range api.ValidateSettings(c.Config) {
		rng := c.decl.rng
		for f := fe.Field; f != ""; {
			if r, ok := c.decl.fields[f]; ok {
				rng = r
				break
			}
			i := strings.LastIndexAny(f, ".[")
			if i < 0 {
				break
			}
			f = f[:i]
		}
		diags = append(diags, &hclv2.Diagnostic{Severity: hclv2.DiagError, Summary: "Invalid orchestration setting",
			Detail: fe.Field + ": " + fe.Rule, Subject: rng.Ptr()})
	}
	return c, diags
}

// goValue converts a cty value to plain Go values as JSON would give them.
func goValue(v cty.Value) any {
	if v.IsNull() || !v.IsKnown() {
		return nil
	}
	t := v.Type()
	switch {
	case t == cty.String:
		return v.AsString()
	case t == cty.Number:
		f, _ := v.AsBigFloat().Float64()
		return f
	case t == cty.Bool:
		return v.True()
	case t.IsListType() || t.IsTupleType() || t.IsSetType():
		out := []any{}
		for it := v.ElementIterator(); it.Next(); {
			_, ev := it.Element()
			out = append(out, goValue(ev))
		}
		return out
	case t.IsMapType() || t.IsObjectType():
		out := map[string]any{}
		for it := v.ElementIterator(); it.Next(); {
			k, ev := it.Element()
			out[k.AsString()] = goValue(ev)
		}
		return out
	}
	return nil
}
