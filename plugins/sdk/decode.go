package sdk

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"reflect"
	"strconv"
	"strings"
)

// A spec's properties, an action's inputs and data, and binding data are
// JSON documents, and what a plugin sees of them is what JSON decoding
// gives: numbers as float64 (or int64 for a validated Integer property),
// lists as []any. Rather than unpack them key by key, a plugin decodes a
// document once into a struct of its own, whose json tags are the
// document's keys, with Spec.Decode, Action.DecodeInputs, Action.DecodeData
// or Decode. A value of the wrong type is a *DecodeError naming the field,
// never a silent zero. Keys the struct has no field for are ignored, so a
// struct may read a subset of a document, and a plugin keeps working when
// Grove adds keys to an action's inputs.
//
// Decoding is encoding/json's, as the engine's own reading of these
// documents is. The types in inputs.go are the inputs and data of the
// actions policies check most, as the engine writes them, including the
// forms of actions stored by older engines.

// DecodeError says which field of a document could not be decoded, and why.
type DecodeError struct {
	// Field is the dotted path of the value at fault, such as
	// "properties.adjustment.cooldown" or "inputs.count". Inside a list it
	// names the list.
	Field string
	// Problem says what is wrong, such as "must be an integer, got a string".
	Problem string
	// Err is the decoder's own error.
	Err error
}

func (e *DecodeError) Error() string { return e.Field + " " + e.Problem }
func (e *DecodeError) Unwrap() error { return e.Err }

// Diagnostic is the error as a validation failure, for a Validate hook
// that decodes the properties it checks.
func (e *DecodeError) Diagnostic() Diagnostic {
	return Diagnostic{Field: e.Field, Message: e.Problem + "."}
}

// Decode decodes the spec's properties into v, a pointer to a struct (or
// anything encoding/json decodes into). The host validated the properties
// against the component's schema and filled its defaults, so an error here
// means v's fields do not match the schema; it names the property.
func (s Spec) Decode(v any) error { return Decode("properties", s.Properties, v) }

// DecodeInputs decodes the action's inputs into v, a pointer to a struct
// such as ClusterResizeInputs; an error names the input at fault.
func (a Action) DecodeInputs(v any) error { return Decode("inputs", a.Inputs, v) }

// DecodeData decodes the value under key in the action's data (what the
// policies checked before this one decided, such as DataDeletion) into v.
// ok is false, and v untouched, when the key is absent or null.
func (a Action) DecodeData(key string, v any) (ok bool, err error) {
	raw, ok := a.Data[key]
	if !ok || raw == nil {
		return false, nil
	}
	return true, Decode("data."+key, raw, v)
}

// Decode decodes a document, or any value of one, into v; field names doc
// in the error, e.g. "binding_data" or "params". Spec.Decode,
// Action.DecodeInputs and Action.DecodeData are this with their field.
func Decode(field string, doc any, v any) error {
	if m, ok := doc.(map[string]any); ok && m == nil {
		// The wire carries an empty document as none at all; it decodes
		// as the empty object it stands for, with a type's defaults.
		doc = map[string]any{}
	}
	b, err := json.Marshal(doc)
	if err != nil {
		// Documents hold what JSON decoding gives or what a plugin built
		// of plain values; anything else cannot have come from the engine.
		return &DecodeError{Field: field, Problem: fmt.Sprintf("cannot be read as JSON: %v", err), Err: err}
	}
	if err := json.NewDecoder(bytes.NewReader(b)).Decode(v); err != nil {
		return decodeError(field, err)
	}
	return nil
}

// decodeError names the field of a decoding error under field.
func decodeError(field string, err error) error {
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) {
		if te.Field != "" {
			field += "." + te.Field
		}
		return &DecodeError{Field: field, Problem: typeProblem(te), Err: err}
	}
	var fe *fieldError
	if errors.As(err, &fe) {
		return &DecodeError{Field: field + "." + fe.field, Problem: fe.problem, Err: err}
	}
	var ie *json.InvalidUnmarshalError
	if errors.As(err, &ie) {
		// A programming error in the plugin, not in the document.
		return fmt.Errorf("decode %s: %w", field, err)
	}
	return &DecodeError{Field: field, Problem: "cannot be decoded: " + strings.TrimPrefix(err.Error(), "json: "), Err: err}
}

// fieldError is a decoding error of the legacy readers in inputs.go, which
// know the key at fault.
type fieldError struct {
	field, problem string
}

func (e *fieldError) Error() string { return e.field + " " + e.problem }

// typeProblem words what is wrong with a value of the wrong type.
func typeProblem(te *json.UnmarshalTypeError) string {
	if n, ok := strings.CutPrefix(te.Value, "number "); ok {
		// A whole number that overflowed the field, not a fraction.
		if f, err := strconv.ParseFloat(n, 64); err == nil && f == math.Trunc(f) {
			return fmt.Sprintf("must be %s that fits a Go %s, got the number %s", kindOf(te.Type), te.Type, n)
		}
	}
	return fmt.Sprintf("must be %s, got %s", kindOf(te.Type), valueOf(te.Value))
}

// kindOf words the Go type a value should have had as a JSON kind.
func kindOf(t reflect.Type) string {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch t.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return "an integer"
	case reflect.Float32, reflect.Float64:
		return "a number"
	case reflect.Bool:
		return "a boolean"
	case reflect.String:
		return "a string"
	case reflect.Slice, reflect.Array:
		return "a list"
	case reflect.Map, reflect.Struct:
		return "an object"
	}
	return "a " + t.String()
}

// valueOf words encoding/json's description of the value it found.
func valueOf(v string) string {
	switch {
	case v == "string":
		return "a string"
	case v == "number":
		return "a number"
	case strings.HasPrefix(v, "number "):
		return "the " + v
	case v == "bool":
		return "a boolean"
	case v == "array":
		return "a list"
	case v == "object":
		return "an object"
	}
	return v
}
