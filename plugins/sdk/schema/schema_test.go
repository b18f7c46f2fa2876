package schema

import (
	"errors"
	"math"
	"strings"
	"testing"
)

func testSchema() Schema {
	return Schema{
		"command": {Type: List, Required: true, Elem: &Property{Type: String}, Constraints: []Constraint{Length(F(1), nil)}},
		"count":   {Type: Integer, Default: int64(3), Constraints: []Constraint{Range(F(0), F(10))}},
		"mode":    {Type: String, Default: "a", Constraints: []Constraint{AllowedValues("a", "b")}},
		"ratio":   {Type: Number},
		"on":      {Type: Boolean},
		"env":     {Type: Map, Elem: &Property{Type: String}},
		"nested": {Type: Map, Schema: Schema{
			"port": {Type: Integer, Required: true},
		}},
		"name": {Type: String, Constraints: []Constraint{{Type: "Pattern", Constraint: "^[a-z]+$"}}},
	}
}

func TestValidateDefaultsAndCoercion(t *testing.T) {
	out, diags := testSchema().Validate("properties", map[string]any{
		"command": []any{"a", 1.0}, "ratio": "0.5", "on": "true", "count": 4.0, "env": map[string]any{"A": "x"},
	})
	if len(diags) != 0 {
		t.Fatalf("unexpected diagnostics: %v", diags)
	}
	if out["count"] != int64(4) || out["mode"] != "a" || out["ratio"] != 0.5 || out["on"] != true {
		t.Errorf("normalised: %v", out)
	}
	if cmd := out["command"].([]any); cmd[1] != "1" {
		t.Errorf("numbers in a string list become strings: %v", cmd)
	}
	if _, ok := out["nested"]; ok {
		t.Errorf("an absent optional map without default stays absent")
	}
}

func TestValidateErrorsNameFieldAndRule(t *testing.T) {
	cases := []struct {
		props map[string]any
		field string
		rule  string
	}{
		{map[string]any{}, "properties.command", "is required"},
		{map[string]any{"command": "x"}, "properties.command", "must be a list"},
		{map[string]any{"command": []any{}}, "properties.command", "length of at least 1"},
		{map[string]any{"command": []any{map[string]any{}}}, "properties.command[0]", "must be a string"},
		{map[string]any{"command": []any{"x"}, "count": 11.0}, "properties.count", "at most 10"},
		{map[string]any{"command": []any{"x"}, "count": 1.5}, "properties.count", "must be an integer"},
		{map[string]any{"command": []any{"x"}, "mode": "c"}, "properties.mode", "allowed values: a, b"},
		{map[string]any{"command": []any{"x"}, "on": "perhaps"}, "properties.on", "must be a boolean"},
		{map[string]any{"command": []any{"x"}, "nested": map[string]any{}}, "properties.nested.port", "is required"},
		{map[string]any{"command": []any{"x"}, "env": map[string]any{"A": []any{}}}, "properties.env.A", "must be a string"},
		{map[string]any{"command": []any{"x"}, "name": "ABC"}, "properties.name", "does not match"},
		{map[string]any{"command": []any{"x"}, "colour": "red"}, "properties.colour", "not a property"},
	}
	for _, c := range cases {
		_, diags := testSchema().Validate("properties", c.props)
		if len(diags) != 1 {
			t.Errorf("%v: want one diagnostic, got %v", c.props, diags)
			continue
		}
		if diags[0].Field != c.field || !strings.Contains(diags[0].Message, c.rule) {
			t.Errorf("%v: got %s %q, want %s %q", c.props, diags[0].Field, diags[0].Message, c.field, c.rule)
		}
	}
}

func TestNotUpdatable(t *testing.T) {
	s := Schema{"image": {Type: String}, "env": {Type: Map, Updatable: true}}
	got := s.NotUpdatable(map[string]any{"image": "a", "env": map[string]any{"x": 1}}, map[string]any{"image": "b", "env": map[string]any{"x": 2}})
	if len(got) != 1 || got[0] != "image" {
		t.Errorf("NotUpdatable = %v", got)
	}
}

// TestIntegerRangeAsSent: a huge number is judged as sent, never after
// int64 has wrapped it.
func TestIntegerRangeAsSent(t *testing.T) {
	for _, c := range []struct {
		props map[string]any
		want  string
	}{
		{map[string]any{"command": []any{"x"}, "count": 1e20}, "properties.count: must be at most 10, got 100000000000000000000."},
		{map[string]any{"command": []any{"x"}, "count": "-1e300"}, "properties.count: must be at least 0, got -1e+300."},
		{map[string]any{"command": []any{"x"}, "nested": map[string]any{"port": 1e20}}, "properties.nested.port: must be an integer from -9007199254740991 to 9007199254740991, got 100000000000000000000."},
		{map[string]any{"command": []any{"x"}, "nested": map[string]any{"port": -9.3e18}}, "got -9300000000000000000"},
	} {
		_, diags := testSchema().Validate("properties", c.props)
		if len(diags) != 1 || !strings.Contains(diags.Error(), c.want) {
			t.Errorf("%v: want %q, got %v", c.props, c.want, diags)
		}
	}
}

// TestNonFiniteNumbersRefused: NaN compares false with every bound, so
// without its own rule it would pass any Range; infinities are no amount.
func TestNonFiniteNumbersRefused(t *testing.T) {
	s := Schema{"adjustment": {Type: Map, Schema: Schema{
		"number": {Type: Number, Constraints: []Constraint{Range(F(0), F(100))}},
		"ratio":  {Type: Number},
		"count":  {Type: Integer, Constraints: []Constraint{Range(F(0), F(10))}},
	}}}
	for _, c := range []struct {
		adj  map[string]any
		want string
	}{
		{map[string]any{"number": "NaN"}, `properties.adjustment.number: must be a finite number, got the string "NaN".`},
		{map[string]any{"number": "nan"}, `properties.adjustment.number: must be a finite number, got the string "nan".`},
		{map[string]any{"number": "Inf"}, `properties.adjustment.number: must be a finite number, got the string "Inf".`},
		{map[string]any{"number": "-Infinity"}, `properties.adjustment.number: must be a finite number, got the string "-Infinity".`},
		{map[string]any{"ratio": "+Inf"}, `properties.adjustment.ratio: must be a finite number, got the string "+Inf".`},
		{map[string]any{"ratio": math.NaN()}, `properties.adjustment.ratio: must be a finite number, got the number NaN.`},
		{map[string]any{"ratio": math.Inf(-1)}, `properties.adjustment.ratio: must be a finite number, got the number -Inf.`},
		{map[string]any{"count": "NaN"}, `properties.adjustment.count: must be an integer, got the string "NaN".`},
		{map[string]any{"count": "Inf"}, `properties.adjustment.count: must be an integer, got the string "Inf".`},
	} {
		_, diags := s.Validate("properties", map[string]any{"adjustment": c.adj})
		if len(diags) != 1 || diags.Error() != c.want {
			t.Errorf("%v: want %q, got %v", c.adj, c.want, diags)
		}
	}
}

// TestParseDecimal: only plain decimal is a number; Go's literal syntax
// (digit separators, hexadecimal, octal and binary prefixes) is not.
func TestParseDecimal(t *testing.T) {
	for _, c := range []struct {
		in   string
		want float64
		err  error
	}{
		{"10", 10, nil},
		{"-3", -3, nil},
		{"+3", 3, nil},
		{"0.5", 0.5, nil},
		{".5", 0.5, nil},
		{"5.", 5, nil},
		{"1e3", 1000, nil},
		{"2.5E-1", 0.25, nil},
		{"007", 7, nil},
		{"1_0", 0, ErrNotDecimal},
		{"0x1p3", 0, ErrNotDecimal},
		{"0x10", 0, ErrNotDecimal},
		{"0b1", 0, ErrNotDecimal},
		{"0o7", 0, ErrNotDecimal},
		{"", 0, ErrNotDecimal},
		{"-", 0, ErrNotDecimal},
		{".", 0, ErrNotDecimal},
		{"1e", 0, ErrNotDecimal},
		{"e3", 0, ErrNotDecimal},
		{"--1", 0, ErrNotDecimal},
		{"1.2.3", 0, ErrNotDecimal},
		{" 1", 0, ErrNotDecimal},
		{"1 ", 0, ErrNotDecimal},
		{"NaN", math.NaN(), ErrNotFinite},
		{"-inf", math.Inf(-1), ErrNotFinite},
		{"+Infinity", math.Inf(1), ErrNotFinite},
		{"--inf", 0, ErrNotDecimal},
		{"1e999", math.Inf(1), ErrNotFinite},
	} {
		got, err := ParseDecimal(c.in)
		if !errors.Is(err, c.err) || (c.err == nil) != (err == nil) {
			t.Errorf("ParseDecimal(%q) error = %v, want %v", c.in, err, c.err)
			continue
		}
		if got != c.want && !(math.IsNaN(got) && math.IsNaN(c.want)) {
			t.Errorf("ParseDecimal(%q) = %v, want %v", c.in, got, c.want)
		}
	}
}

// TestGoLiteralStringsAreNotNumbers: a numeric string in a spec is read as
// plain decimal, so "1_0" is not ten.
func TestGoLiteralStringsAreNotNumbers(t *testing.T) {
	for _, c := range []struct {
		props map[string]any
		want  string
	}{
		{map[string]any{"command": []any{"x"}, "count": "1_0"}, `properties.count: must be an integer, got the string "1_0".`},
		{map[string]any{"command": []any{"x"}, "count": "0x1p3"}, `properties.count: must be an integer, got the string "0x1p3".`},
		{map[string]any{"command": []any{"x"}, "ratio": "0x1p-1"}, `properties.ratio: must be a number, got the string "0x1p-1".`},
		{map[string]any{"command": []any{"x"}, "ratio": "1e999"}, `properties.ratio: must be a finite number, got the string "1e999".`},
	} {
		_, diags := testSchema().Validate("properties", c.props)
		if len(diags) != 1 || diags.Error() != c.want {
			t.Errorf("%v: want %q, got %v", c.props, c.want, diags)
		}
	}
	out, diags := testSchema().Validate("properties", map[string]any{"command": []any{"x"}, "count": " 7 ", "ratio": "-2.5e-1"})
	if len(diags) != 0 || out["count"] != int64(7) || out["ratio"] != -0.25 {
		t.Errorf("plain decimal strings: got %v %v", out, diags)
	}
}

// A default that breaks its own property's rules (a plugin's schema that
// lies) is refused when it would be used, naming the field the user can
// set and the rule, instead of reaching the driver; set, the property is
// judged as usual.
func TestDefaultThatBreaksItsOwnSchemaRefused(t *testing.T) {
	s := Schema{
		"mode":  {Type: Integer, Default: "abc"},
		"level": {Type: Integer, Default: int64(9), Constraints: []Constraint{Range(F(0), F(5))}},
		"kind":  {Type: String, Default: "x", Constraints: []Constraint{AllowedValues("a", "b")}},
		"inner": {Type: Map, Default: map[string]any{}, Schema: Schema{"port": {Type: Integer, Required: true}}},
	}
	_, diags := s.Validate("properties", map[string]any{})
	want := []string{
		`properties.inner: is not set, and the default this type gives it breaks the type's own schema (is required); set it.`,
		`properties.kind: is not set, and the default this type gives it breaks the type's own schema ("x" is not one of the allowed values: a, b); set it.`,
		`properties.level: is not set, and the default this type gives it breaks the type's own schema (must be at most 5, got 9); set it.`,
		`properties.mode: is not set, and the default this type gives it breaks the type's own schema (must be an integer, got the string "abc"); set it.`,
	}
	if len(diags) != len(want) {
		t.Fatalf("got %d diagnostics (%v), want %d", len(diags), diags, len(want))
	}
	for i, d := range diags {
		if d.Error() != want[i] {
			t.Errorf("diagnostic %d:\n got %s\nwant %s", i, d.Error(), want[i])
		}
	}
	got, diags := s.Validate("properties", map[string]any{"mode": 1, "level": 2, "kind": "a", "inner": map[string]any{"port": 80}})
	if len(diags) != 0 || got["level"] != int64(2) {
		t.Errorf("set properties: %v %v, want them accepted", got, diags)
	}
}
