package hcl

import (
	"errors"
	"fmt"
	"math/big"
	"os"
	"regexp"
	"strings"
	"unicode/utf8"

	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/zclconf/go-cty/cty"
	"github.com/zclconf/go-cty/cty/function"
	"github.com/zclconf/go-cty/cty/function/stdlib"
)

// functions are the standard HCL functions (go-cty's stdlib, named as in
// Terraform) plus grove_executable(), the path of the grove binary running
// the definition, so examples can run Grove's own demo server as nodes.
// Functions whose result can be much larger than their arguments (or that
// take quadratic time) check the result's size before computing it: the
// evaluator's budget sees a value only once it exists.
func functions(executable string) map[string]function.Function {
	if executable == "" {
		executable, _ = os.Executable()
	}
	fns := map[string]function.Function{
		"abs": stdlib.AbsoluteFunc, "ceil": stdlib.CeilFunc, "floor": stdlib.FloorFunc, "log": stdlib.LogFunc,
		"max": stdlib.MaxFunc, "min": stdlib.MinFunc, "parseint": stdlib.ParseIntFunc, "pow": stdlib.PowFunc, "signum": stdlib.SignumFunc,
		"chomp": stdlib.ChompFunc, "format": guard(stdlib.FormatFunc, checkFormat), "formatlist": guard(stdlib.FormatListFunc, checkFormatList),
		"indent": guard(stdlib.IndentFunc, checkIndent), "join": guard(stdlib.JoinFunc, checkJoin), "lower": stdlib.LowerFunc, "upper": stdlib.UpperFunc, "replace": guard(stdlib.ReplaceFunc, checkReplace),
		"regex": stdlib.RegexFunc, "regexall": guard(stdlib.RegexAllFunc, checkRegexAll), "regex_replace": guard(stdlib.RegexReplaceFunc, checkRegexReplace),
		"split": guard(stdlib.SplitFunc, checkSplit), "strrev": stdlib.ReverseFunc, "substr": stdlib.SubstrFunc, "title": stdlib.TitleFunc,
		"trim": stdlib.TrimFunc, "trimprefix": stdlib.TrimPrefixFunc, "trimsuffix": stdlib.TrimSuffixFunc, "trimspace": stdlib.TrimSpaceFunc,
		"chunklist": stdlib.ChunklistFunc, "coalesce": stdlib.CoalesceFunc, "coalescelist": stdlib.CoalesceListFunc,
		"compact": stdlib.CompactFunc, "concat": stdlib.ConcatFunc, "contains": stdlib.ContainsFunc, "distinct": distinctFunc,
		"element": stdlib.ElementFunc, "flatten": stdlib.FlattenFunc, "index": stdlib.IndexFunc, "keys": stdlib.KeysFunc,
		"length": stdlib.LengthFunc, "lookup": stdlib.LookupFunc, "merge": stdlib.MergeFunc, "range": stdlib.RangeFunc,
		"reverse": stdlib.ReverseListFunc, "setintersection": stdlib.SetIntersectionFunc, "setproduct": guard(stdlib.SetProductFunc, checkSetProduct),
		"setsubtract": stdlib.SetSubtractFunc, "setunion": stdlib.SetUnionFunc, "slice": stdlib.SliceFunc, "sort": stdlib.SortFunc,
		"values": stdlib.ValuesFunc, "zipmap": stdlib.ZipmapFunc,
		"jsonencode": stdlib.JSONEncodeFunc, "jsondecode": guard(stdlib.JSONDecodeFunc, checkJSONDecode), "csvdecode": guard(stdlib.CSVDecodeFunc, checkCSVDecode),
		"formatdate": stdlib.FormatDateFunc, "timeadd": stdlib.TimeAddFunc,
		"tostring": stdlib.MakeToFunc(cty.String), "tonumber": stdlib.MakeToFunc(cty.Number), "tobool": stdlib.MakeToFunc(cty.Bool),
		"tolist": stdlib.MakeToFunc(cty.List(cty.DynamicPseudoType)), "tomap": stdlib.MakeToFunc(cty.Map(cty.DynamicPseudoType)),
		"toset": stdlib.MakeToFunc(cty.Set(cty.DynamicPseudoType)),
		"grove_executable": function.New(&function.Spec{
			Type: function.StaticReturnType(cty.String),
			Impl: func([]cty.Value, cty.Type) (cty.Value, error) { return cty.StringVal(executable), nil },
		}),
	}
	for name, f := range fns {
		fns[name] = calm(f)
	}
	return fns
}

// guard runs check on a function's arguments before the function.
func guard(f function.Function, check func(args []cty.Value) error) function.Function {
	return function.New(&function.Spec{
		Description: f.Description(),
		Params:      f.Params(),
		VarParam:    f.VarParam(),
		Type:        f.ReturnTypeForValues,
		Impl: func(args []cty.Value, _ cty.Type) (cty.Value, error) {
			if err := check(args); err != nil {
				return cty.NilVal, err
			}
			return f.Call(args)
		},
	})
}

// calm turns a panic in a function into an error that says what went wrong
// in a sentence. go-cty recovers such panics itself, but its error carries
// the Go stack trace, which the diagnostic would print whole; arithmetic
// whose result is not a number (log(-1, 10), pow(-1, 0.5), infinity % 2)
// panics in math/big.
func calm(f function.Function) function.Function {
	return function.New(&function.Spec{
		Description: f.Description(),
		Params:      f.Params(),
		VarParam:    f.VarParam(),
		Type: func(args []cty.Value) (cty.Type, error) {
			t, err := f.ReturnTypeForValues(args)
			return t, calmError(err)
		},
		Impl: func(args []cty.Value, _ cty.Type) (cty.Value, error) {
			v, err := f.Call(args)
			return v, calmError(err)
		},
	})
}

func calmError(err error) error {
	var pe function.PanicError
	if !errors.As(err, &pe) {
		return err
	}
	var nan big.ErrNaN
	if e, ok := pe.Value.(error); ok && errors.As(e, &nan) {
		return errors.New("the result is not a number (as the logarithm of a negative number, a negative number to a fractional power, or infinity divided by itself), which a definition cannot hold")
	}
	return errors.New("the result cannot be computed from these arguments")
}

// calmModulo is the % operator, refusing infinity, which has no remainder
// and panics in go-cty.
var calmModulo = &hclsyntax.Operation{Impl: calm(guard(stdlib.ModuloFunc, func(args []cty.Value) error {
	for _, a := range args {
		if a, _ := a.Unmark(); a.IsKnown() && !a.IsNull() && a.Type() == cty.Number && a.AsBigFloat().IsInf() {
			return errors.New("the % operator needs finite numbers: infinity (such as 1/0) has no remainder")
		}
	}
	return nil
})), Type: cty.Number}

func tooManyBytes(what string, n int) error {
	return fmt.Errorf("%s would be a string of about %d bytes; one value may hold at most %d MiB of strings (%s)", what, n, MaxValueBytes>>20, limitsDoc)
}

func tooManyElements(what string, n int) error {
	return fmt.Errorf("%s would have more than %d elements; one value may have at most %d (%s)", what, n, MaxValueElements, limitsDoc)
}

// str is a known string argument.
func str(v cty.Value) (string, bool) {
	v, _ = v.Unmark()
	if !v.IsKnown() || v.IsNull() || v.Type() != cty.String {
		return "", false
	}
	return v.AsString(), true
}

// addCapped adds without passing a cap, so that sizes of hostile inputs
// never overflow.
func addCapped(a, b, limit int) int {
	if a > limit-b {
		return limit + 1
	}
	return a + b
}

func mulCapped(a, b, limit int) int {
	if a != 0 && b > limit/a {
		return limit + 1
	}
	return a * b
}

// formatSize bounds the length of format(f, args) given the longest
// printed argument.
func formatSize(f string, argText int) (int, error) {
	n := len(f)
	for i := 0; i < len(f); i++ {
		if f[i] != '%' {
			continue
		}
		i++
		// flags, an argument index, then width and precision
		for i < len(f) && strings.IndexByte("+- #0", f[i]) >= 0 {
			i++
		}
		if i < len(f) && f[i] == '[' {
			for i < len(f) && f[i] != ']' {
				i++
			}
			i++
		}
		for _, part := range []bool{false, true} {
			if part {
				if i >= len(f) || f[i] != '.' {
					break
				}
				i++
			}
			w := 0
			for i < len(f) && f[i] >= '0' && f[i] <= '9' {
				w = addCapped(mulCapped(w, 10, MaxValueBytes), int(f[i]-'0'), MaxValueBytes)
				i++
			}
			n = addCapped(n, w, MaxValueBytes)
		}
		n = addCapped(n, argText, MaxValueBytes)
	}
	if n > MaxValueBytes {
		return n, tooManyBytes("The formatted result", n)
	}
	return n, nil
}

func textSize(v cty.Value) int {
	if s, ok := str(v); ok {
		return len(s)
	}
	var m measure
	m.walk(v, 0)
	return m.text
}

func checkFormat(args []cty.Value) error {
	f, ok := str(args[0])
	if !ok {
		return nil
	}
	longest := 0
	for _, a := range args[1:] {
		longest = max(longest, textSize(a))
	}
	_, err := formatSize(f, longest)
	return err
}

// checkFormatList bounds formatlist, which formats once per element of its
// list arguments.
func checkFormatList(args []cty.Value) error {
	f, ok := str(args[0])
	if !ok {
		return nil
	}
	rows, longest := 1, 0
	for _, a := range args[1:] {
		a, _ = a.Unmark()
		if !a.IsKnown() || a.IsNull() {
			continue
		}
		if t := a.Type(); t.IsListType() || t.IsTupleType() {
			rows = max(rows, a.LengthInt())
			for it := a.ElementIterator(); it.Next(); {
				_, ev := it.Element()
				longest = max(longest, textSize(ev))
			}
			continue
		}
		longest = max(longest, textSize(a))
	}
	if rows > MaxValueElements {
		return tooManyElements("The list", rows)
	}
	one, err := formatSize(f, longest)
	if err != nil {
		return err
	}
	if n := mulCapped(one, rows, MaxValueBytes); n > MaxValueBytes {
		return tooManyBytes("The formatted list", n)
	}
	return nil
}

func checkIndent(args []cty.Value) error {
	s, ok := str(args[1])
	if !ok || !args[0].IsKnown() || args[0].IsNull() {
		return nil
	}
	spaces, _ := args[0].AsBigFloat().Int64()
	if spaces > MaxValueBytes {
		return tooManyBytes("The indentation", int(min(spaces, 1<<40)))
	}
	if n := addCapped(len(s), mulCapped(int(max(spaces, 0)), strings.Count(s, "\n"), MaxValueBytes), MaxValueBytes); n > MaxValueBytes {
		return tooManyBytes("The indented string", n)
	}
	return nil
}

func checkJoin(args []cty.Value) error {
	sep, ok := str(args[0])
	if !ok {
		return nil
	}
	n, count := 0, 0
	for _, l := range args[1:] {
		l, _ = l.Unmark()
		if !l.IsKnown() || l.IsNull() {
			continue
		}
		for it := l.ElementIterator(); it.Next(); {
			_, ev := it.Element()
			s, _ := str(ev)
			n = addCapped(n, len(s), MaxValueBytes)
			count++
		}
	}
	if count > 1 {
		n = addCapped(n, mulCapped(len(sep), count-1, MaxValueBytes), MaxValueBytes)
	}
	if n > MaxValueBytes {
		return tooManyBytes("The joined string", n)
	}
	return nil
}

func checkReplace(args []cty.Value) error {
	s, ok1 := str(args[0])
	sub, ok2 := str(args[1])
	repl, ok3 := str(args[2])
	if !ok1 || !ok2 || !ok3 {
		return nil
	}
	matches := strings.Count(s, sub) // an empty substr matches around every character
	if n := addCapped(len(s), mulCapped(matches, len(repl), MaxValueBytes), MaxValueBytes); n > MaxValueBytes {
		return tooManyBytes("The replaced string", n)
	}
	return nil
}

func checkRegexReplace(args []cty.Value) error {
	s, ok1 := str(args[0])
	pattern, ok2 := str(args[1])
	repl, ok3 := str(args[2])
	if !ok1 || !ok2 || !ok3 || repl == "" {
		return nil
	}
	re, err := regexp.Compile(pattern)
	if err != nil {
		return nil // the function reports it
	}
	// Matches do not overlap, so the groups "$1" copies add at most the
	// string's length per "$" in the replacement.
	limit := MaxValueBytes/len(repl) + 1
	matches := len(re.FindAllStringIndex(s, limit))
	n := addCapped(len(s), mulCapped(matches, len(repl), MaxValueBytes), MaxValueBytes)
	n = addCapped(n, mulCapped(strings.Count(repl, "$"), len(s), MaxValueBytes), MaxValueBytes)
	if n > MaxValueBytes {
		return tooManyBytes("The replaced string", n)
	}
	return nil
}

func checkSplit(args []cty.Value) error {
	sep, ok1 := str(args[0])
	s, ok2 := str(args[1])
	if !ok1 || !ok2 {
		return nil
	}
	n := strings.Count(s, sep) + 1
	if sep == "" {
		n = utf8.RuneCountInString(s)
	}
	if n > MaxValueElements {
		return tooManyElements("The split list", n)
	}
	return nil
}

func checkRegexAll(args []cty.Value) error {
	pattern, ok1 := str(args[0])
	s, ok2 := str(args[1])
	if !ok1 || !ok2 {
		return nil
	}
	re, err := regexp.Compile(pattern)
	if err != nil {
		return nil // the function reports it
	}
	per := re.NumSubexp() + 1
	limit := MaxValueElements/per + 1
	if n := len(re.FindAllStringIndex(s, limit)); n*per > MaxValueElements {
		return tooManyElements("The list of matches", n*per)
	}
	return nil
}

func checkCSVDecode(args []cty.Value) error {
	s, ok := str(args[0])
	if !ok {
		return nil
	}
	if n := strings.Count(s, ",") + strings.Count(s, "\n") + 1; n > MaxValueElements {
		return tooManyElements("The decoded CSV", n)
	}
	return nil
}

// checkJSONDecode refuses JSON nested deeper than MaxNesting (the decoder
// recurses per level) or with more than MaxValueElements values.
func checkJSONDecode(args []cty.Value) error {
	s, ok := str(args[0])
	if !ok {
		return nil
	}
	depth, elems := 0, 0
	inString, escaped := false, false
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case inString:
			switch {
			case escaped:
				escaped = false
			case c == '\\':
				escaped = true
			case c == '"':
				inString = false
			}
		case c == '"':
			inString = true
		case c == '[' || c == '{':
			if depth++; depth > MaxNesting {
				return fmt.Errorf("the JSON nests more than %d levels deep; the limit is %d (%s)", MaxNesting, MaxNesting, limitsDoc)
			}
			elems++
		case c == ']' || c == '}':
			depth--
		case c == ',':
			elems++
		}
		if elems > MaxValueElements {
			return tooManyElements("The decoded JSON", elems)
		}
	}
	return nil
}

func checkSetProduct(args []cty.Value) error {
	n := 1
	for _, a := range args {
		a, _ = a.Unmark()
		if !a.IsKnown() || a.IsNull() {
			return nil
		}
		n = mulCapped(n, a.LengthInt(), MaxValueElements)
	}
	if n = mulCapped(n, len(args)+1, MaxValueElements); n > MaxValueElements {
		return tooManyElements("The product", n)
	}
	return nil
}

// distinctFunc is stdlib's distinct in linear time: stdlib compares each
// element with every one kept, which takes minutes on a list that fits the
// value limits.
var distinctFunc = function.New(&function.Spec{
	Description: stdlib.DistinctFunc.Description(),
	Params:      stdlib.DistinctFunc.Params(),
	Type:        stdlib.DistinctFunc.ReturnTypeForValues,
	Impl: func(args []cty.Value, retType cty.Type) (cty.Value, error) {
		l := args[0]
		if !l.IsWhollyKnown() || l.LengthInt() < 2 {
			return stdlib.DistinctFunc.Call(args)
		}
		seen := map[int][]cty.Value{}
		var out []cty.Value
	next:
		for it := l.ElementIterator(); it.Next(); {
			_, v := it.Element()
			h := v.Hash()
			for _, s := range seen[h] {
				if eq := s.Equals(v); eq.IsKnown() && eq.True() {
					continue next
				}
			}
			seen[h] = append(seen[h], v)
			out = append(out, v)
		}
		return cty.ListVal(out), nil
	},
})
