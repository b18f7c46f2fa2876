// Package schema describes the properties of profile and policy types once, so
// that the same description drives validation in the plugin, in the engine at
// submit time, in the API's type endpoints and in the CLI and Terraform
// diagnostics.
//
// The JSON form of a Schema is the `schema` object of Senlin's
// /v1/profile-types/{type} answer: property name to
// {type, description, required, updatable, default, constraints, schema}.
package schema

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"regexp"
	"sort"
	"strconv"
	"strings"
)

// Type names follow Senlin's spelling.
const (
	String  = "String"
	Integer = "Integer"
	Number  = "Number"
	Boolean = "Boolean"
	List    = "List"
	Map     = "Map"
)

// Schema maps property names to their descriptions.
type Schema map[string]*Property

// Property describes one property.
type Property struct {
	Type        string       `json:"type"`
	Description string       `json:"description,omitempty"`
	Required    bool         `json:"required"`
	Updatable   bool         `json:"updatable"`
	Sensitive   bool         `json:"sensitive,omitempty"`
	Default     any          `json:"default,omitempty"`
	Constraints []Constraint `json:"constraints,omitempty"`
	// Schema holds the fields of a Map with fixed keys. A Map without Schema
	// accepts any keys; Elem, when set, describes each value.
	Schema Schema `json:"schema,omitempty"`
	// Elem describes the items of a List, or the values of a free-form Map.
	Elem *Property `json:"elem,omitempty"`
}

// Constraint restricts a property's value.
type Constraint struct {
	// Type is AllowedValues, Range, Length or Pattern.
	Type string `json:"type"`
	// Constraint is the list of allowed values for AllowedValues, the
	// expression for Pattern.
	Constraint any      `json:"constraint,omitempty"`
	Min        *float64 `json:"min,omitempty"`
	Max        *float64 `json:"max,omitempty"`
}

// Diagnostic is one validation failure. Field is a dotted path such as
// "properties.command[0]".
type Diagnostic struct {
	Field   string `json:"field"`
	Message string `json:"message"`
}

func (d Diagnostic) Error() string {
	if d.Field == "" {
		return d.Message
	}
	return fmt.Sprintf("%s: %s", d.Field, d.Message)
}

// Diagnostics is a list of failures that is also an error.
type Diagnostics []Diagnostic

func (ds Diagnostics) Error() string {
	parts := make([]string, len(ds))
	for i, d := range ds {
		parts[i] = d.Error()
	}
	return strings.Join(parts, "; ")
}

// Err returns nil for an empty list, so callers can write `return ds.Err()`.
func (ds Diagnostics) Err() error {
	if len(ds) == 0 {
		return nil
	}
	return ds
}

// AllowedValues builds an AllowedValues constraint.
func AllowedValues(values ...any) Constraint {
	return Constraint{Type: "AllowedValues", Constraint: values}
}

// Range builds a Range constraint; nil means unbounded on that side.
func Range(min, max *float64) Constraint { return Constraint{Type: "Range", Min: min, Max: max} }

// Length builds a Length constraint on strings, lists and maps.
func Length(min, max *float64) Constraint { return Constraint{Type: "Length", Min: min, Max: max} }

// MaxExactInteger is the largest magnitude of an Integer property: the
// largest integer a JSON number (a float64) holds exactly, 2^53-1.
const MaxExactInteger = 1<<53 - 1

// F returns a pointer to f, for Range and Length bounds.
func F(f float64) *float64 { return &f }

// Validate checks props against the schema, fills defaults and returns the
// normalised properties. prefix names the enclosing field in diagnostics
// (usually "properties"). Unknown properties are errors: a typo should not be
// silently ignored.
func (s Schema) Validate(prefix string, props map[string]any) (map[string]any, Diagnostics) {
	out := make(map[string]any, len(s))
	var diags Diagnostics
	for _, k := range sortedKeys(props) {
		if _, ok := s[k]; !ok {
			diags = append(diags, Diagnostic{Field: join(prefix, k), Message: fmt.Sprintf("%q is not a property of this type; known properties are %s.", k, strings.Join(s.names(), ", "))})
		}
	}
	for _, name := range s.names() {
		p := s[name]
		v, present := props[name]
		if !present || v == nil {
			if p.Required {
				diags = append(diags, Diagnostic{Field: join(prefix, name), Message: "is required."})
				continue
			}
			if p.Default != nil {
				// The default is the plugin author's, and the driver is
				// promised values its schema allows: one that breaks the
				// property's own rules is refused here, naming the field
				// the user can set, rather than reaching the driver.
				if _, ds := p.validate(join(prefix, name), p.Default); len(ds) > 0 {
					diags = append(diags, Diagnostic{Field: join(prefix, name), Message: fmt.Sprintf(
						"is not set, and the default this type gives it breaks the type's own schema (%s); set it.", strings.TrimSuffix(ds[0].Message, "."))})
					continue
				}
				out[name] = p.Default
			}
			continue
		}
		nv, ds := p.validate(join(prefix, name), v)
		diags = append(diags, ds...)
		if ds == nil {
			out[name] = nv
		}
	}
	return out, diags
}

// NotUpdatable returns the names of properties that differ between old and
// new and are not marked updatable, sorted. Both maps should be normalised.
func (s Schema) NotUpdatable(old, new map[string]any) []string {
	var names []string
	for _, name := range s.names() {
		if s[name].Updatable {
			continue
		}
		a, _ := json.Marshal(old[name])
		b, _ := json.Marshal(new[name])
		if string(a) != string(b) {
			names = append(names, name)
		}
	}
	return names
}

func (s Schema) names() []string {
	names := make([]string, 0, len(s))
	for k := range s {
		names = append(names, k)
	}
	sort.Strings(names)
	return names
}

func (p *Property) validate(field string, v any) (any, Diagnostics) {
	if p.Type == Integer || p.Type == Number {
		// Range constraints see the number as sent, before it is converted:
		// 1e20 is "at most 3600, got 1e+20", not a wrapped int64.
		for _, c := range p.Constraints {
			if c.Type != "Range" {
				continue
			}
			if d := c.check(field, v); d != nil {
				return nil, Diagnostics{*d}
			}
		}
	}
	nv, err := p.coerce(field, v)
	if err != nil {
		return nil, Diagnostics{*err}
	}
	for _, c := range p.Constraints {
		if d := c.check(field, nv); d != nil {
			return nil, Diagnostics{*d}
		}
	}
	switch p.Type {
	case List:
		if p.Elem == nil {
			return nv, nil
		}
		items := nv.([]any)
		var diags Diagnostics
		outItems := make([]any, len(items))
		for i, it := range items {
			iv, ds := p.Elem.validate(fmt.Sprintf("%s[%d]", field, i), it)
			diags = append(diags, ds...)
			outItems[i] = iv
		}
		return outItems, diags
	case Map:
		m := nv.(map[string]any)
		if p.Schema != nil {
			return p.Schema.Validate(field, m)
		}
		if p.Elem == nil {
			return m, nil
		}
		var diags Diagnostics
		outMap := make(map[string]any, len(m))
		for _, k := range sortedKeys(m) {
			iv, ds := p.Elem.validate(join(field, k), m[k])
			diags = append(diags, ds...)
			outMap[k] = iv
		}
		return outMap, diags
	}
	return nv, nil
}

// coerce converts JSON-decoded values to the property's type. Like Senlin it
// accepts numeric strings for numbers and "true"/"false" for booleans, since
// CLIs and webhooks send strings.
func (p *Property) coerce(field string, v any) (any, *Diagnostic) {
	bad := func(want string) *Diagnostic {
		return &Diagnostic{Field: field, Message: fmt.Sprintf("must be %s, got %s.", want, describe(v))}
	}
	switch p.Type {
	case String:
		switch x := v.(type) {
		case string:
			return x, nil
		case float64, int, int64, json.Number, bool:
			return fmt.Sprint(x), nil
		}
		return nil, bad("a string")
	case Integer:
		f, ok := toFloat(v)
		if !ok || !finite(f) || f != math.Trunc(f) {
			return nil, bad("an integer")
		}
		// Beyond 2^53 a JSON number is no longer an exact integer, and
		// beyond 2^63 int64(f) wraps.
		if math.Abs(f) > MaxExactInteger {
			return nil, &Diagnostic{Field: field, Message: fmt.Sprintf("must be an integer from %d to %d, got %s.", -MaxExactInteger, MaxExactInteger, number(f))}
		}
		return int64(f), nil
	case Number:
		f, ok := toFloat(v)
		if !ok {
			return nil, bad("a number")
		}
		// NaN passes every Range check (all its comparisons are false) and
		// an infinity is no amount a plugin can act on.
		if !finite(f) {
			return nil, bad("a finite number")
		}
		return f, nil
	case Boolean:
		switch x := v.(type) {
		case bool:
			return x, nil
		case string:
			if b, err := strconv.ParseBool(x); err == nil {
				return b, nil
			}
		}
		return nil, bad("a boolean")
	case List:
		if x, ok := v.([]any); ok {
			return x, nil
		}
		if x, ok := v.([]string); ok {
			out := make([]any, len(x))
			for i, s := range x {
				out[i] = s
			}
			return out, nil
		}
		return nil, bad("a list")
	case Map:
		if x, ok := v.(map[string]any); ok {
			return x, nil
		}
		if x, ok := v.(map[string]string); ok {
			out := make(map[string]any, len(x))
			for k, s := range x {
				out[k] = s
			}
			return out, nil
		}
		return nil, bad("a map")
	}
	return v, nil
}

func (c Constraint) check(field string, v any) *Diagnostic {
	switch c.Type {
	case "AllowedValues":
		allowed, _ := c.Constraint.([]any)
		for _, a := range allowed {
			if fmt.Sprint(a) == fmt.Sprint(v) {
				return nil
			}
		}
		strs := make([]string, len(allowed))
		for i, a := range allowed {
			strs[i] = fmt.Sprint(a)
		}
		return &Diagnostic{Field: field, Message: fmt.Sprintf("%q is not one of the allowed values: %s.", fmt.Sprint(v), strings.Join(strs, ", "))}
	case "Range":
		f, ok := toFloat(v)
		// A value that is not a finite number is left to coerce, whose
		// message says what the value should be rather than how big.
		if !ok || !finite(f) {
			return nil
		}
		if c.Min != nil && f < *c.Min {
			return &Diagnostic{Field: field, Message: fmt.Sprintf("must be at least %s, got %s.", number(*c.Min), number(f))}
		}
		if c.Max != nil && f > *c.Max {
			return &Diagnostic{Field: field, Message: fmt.Sprintf("must be at most %s, got %s.", number(*c.Max), number(f))}
		}
	case "Length":
		var n int
		switch x := v.(type) {
		case string:
			n = len(x)
		case []any:
			n = len(x)
		case map[string]any:
			n = len(x)
		default:
			return nil
		}
		if c.Min != nil && float64(n) < *c.Min {
			return &Diagnostic{Field: field, Message: fmt.Sprintf("must have a length of at least %v, got %d.", *c.Min, n)}
		}
		if c.Max != nil && float64(n) > *c.Max {
			return &Diagnostic{Field: field, Message: fmt.Sprintf("must have a length of at most %v, got %d.", *c.Max, n)}
		}
	case "Pattern":
		s, ok := v.(string)
		expr, _ := c.Constraint.(string)
		if !ok || expr == "" {
			return nil
		}
		re, err := regexp.Compile(expr)
		if err == nil && !re.MatchString(s) {
			return &Diagnostic{Field: field, Message: fmt.Sprintf("%q does not match the pattern %s.", s, expr)}
		}
	}
	return nil
}

// number writes a number for a message: whole numbers in full
// (1073741824, not 1.073741824e+09), others as Go reads them.
func number(f float64) string {
	if f == math.Trunc(f) && math.Abs(f) < 1e21 {
		return strconv.FormatFloat(f, 'f', 0, 64)
	}
	return strconv.FormatFloat(f, 'g', -1, 64)
}

func finite(f float64) bool { return !math.IsNaN(f) && !math.IsInf(f, 0) }

func toFloat(v any) (float64, bool) {
	switch x := v.(type) {
	case float64:
		return x, true
	case float32:
		return float64(x), true
	case int:
		return float64(x), true
	case int32:
		return float64(x), true
	case int64:
		return float64(x), true
	case json.Number:
		return decimalOrNonFinite(string(x))
	case string:
		return decimalOrNonFinite(strings.TrimSpace(x))
	}
	return 0, false
}

// decimalOrNonFinite reads s with ParseDecimal, but hands back NaN and the
// infinities as numbers so that coerce can say "must be a finite number"
// rather than "must be a number".
func decimalOrNonFinite(s string) (float64, bool) {
	f, err := ParseDecimal(s)
	return f, err == nil || errors.Is(err, ErrNotFinite)
}

// ErrNotDecimal is ParseDecimal's error for a string that is not a number
// written in plain decimal.
var ErrNotDecimal = errors.New("not a plain decimal number")

// ErrNotFinite is ParseDecimal's error for "NaN", "Inf", "Infinity" (any
// case, either sign) and for decimals too large for a float64.
var ErrNotFinite = errors.New("not a finite number")

// ParseDecimal reads a numeric string written in plain decimal: an optional
// sign, digits with at most one decimal point, and an optional exponent
// ("12", "-0.5", "+3", "1e3"). It is the one rule for numbers that arrive as
// strings: strconv.ParseFloat also takes Go literal syntax, so "1_0" would
// be 10 and "0x1p3" 8, which no client writing a count means.
//
// The error wraps ErrNotDecimal or ErrNotFinite; with ErrNotFinite the
// value is NaN or the infinity the string names.
func ParseDecimal(s string) (float64, error) {
	body := strings.TrimLeft(s, "+-")
	if len(s)-len(body) <= 1 {
		for _, name := range []string{"nan", "inf", "infinity"} {
			if strings.EqualFold(body, name) {
				f, _ := strconv.ParseFloat(s, 64)
				return f, fmt.Errorf("%q is %w", s, ErrNotFinite)
			}
		}
	}
	if !isDecimal(s) {
		return 0, fmt.Errorf("%q is %w", s, ErrNotDecimal)
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil {
		// isDecimal leaves ParseFloat only ErrRange: too large for a
		// float64, and f is the infinity it rounds to.
		return f, fmt.Errorf("%q is %w", s, ErrNotFinite)
	}
	return f, nil
}

// isDecimal reports whether s is [+-]digits[.digits][(e|E)[+-]digits], with
// digits on at least one side of the point.
func isDecimal(s string) bool {
	i := 0
	digits := func() int {
		n := 0
		for i < len(s) && s[i] >= '0' && s[i] <= '9' {
			i++
			n++
		}
		return n
	}
	if i < len(s) && (s[i] == '+' || s[i] == '-') {
		i++
	}
	n := digits()
	if i < len(s) && s[i] == '.' {
		i++
		n += digits()
	}
	if n == 0 {
		return false
	}
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		i++
		if i < len(s) && (s[i] == '+' || s[i] == '-') {
			i++
		}
		if digits() == 0 {
			return false
		}
	}
	return i == len(s)
}

func describe(v any) string {
	switch x := v.(type) {
	case string:
		return fmt.Sprintf("the string %q", x)
	case bool:
		return fmt.Sprintf("the boolean %v", x)
	case float64, int, int64:
		return fmt.Sprintf("the number %v", x)
	case []any:
		return "a list"
	case map[string]any:
		return "a map"
	}
	return fmt.Sprintf("%T", v)
}

func join(prefix, name string) string {
	if prefix == "" {
		return name
	}
	return prefix + "." + name
}

func sortedKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
