package scaling

import (
	"errors"
	"fmt"
	"strconv"

	"github.com/grovehq/grove/plugins/sdk/schema"
)

// ResizeFromInputs reads a CLUSTER_RESIZE action's inputs (adjustment_type,
// number, min_size, max_size, min_step, strict). Values may be numbers or
// numeric strings, as Senlin accepts both; an adjustment_type that is not a
// string is ignored.
//
// A policy reads its inputs with sdk.Action.DecodeInputs into
// sdk.ClusterResizeInputs instead, whose Resize method gives the same
// request and whose errors name the input at fault.
func ResizeFromInputs(in map[string]any) (Resize, error) {
	var r Resize
	r.AdjustmentType, _ = in["adjustment_type"].(string)
	if v, ok := in["number"]; ok && v != nil {
		f, err := Float(v)
		if err != nil {
			return r, fmt.Errorf("number: %w", err)
		}
		r.Number = &f
	}
	for key, dst := range map[string]**int{"min_size": &r.MinSize, "max_size": &r.MaxSize} {
		if v, ok := in[key]; ok && v != nil {
			n, err := Int(v)
			if err != nil {
				return r, fmt.Errorf("%s: %w", key, err)
			}
			*dst = &n
		}
	}
	if v, ok := in["min_step"]; ok && v != nil {
		n, err := Int(v)
		if err != nil {
			return r, fmt.Errorf("min_step: %w", err)
		}
		r.MinStep = n
	}
	r.Strict = true
	if v, ok := in["strict"]; ok && v != nil {
		b, err := Bool(v)
		if err != nil {
			return r, fmt.Errorf("strict: %w", err)
		}
		r.Strict = b
	}
	return r, nil
}

// Float reads a number or numeric string: one value Senlin's API takes in
// either form. To read a document (properties, inputs, data), decode it
// into a struct with sdk.Spec.Decode, sdk.Action.DecodeInputs or
// sdk.Decode, which name the field at fault.
func Float(v any) (float64, error) {
	switch x := v.(type) {
	case float64:
		return x, nil
	case int:
		return float64(x), nil
	case int64:
		return float64(x), nil
	case string:
		f, err := schema.ParseDecimal(x)
		if errors.Is(err, schema.ErrNotFinite) {
			return 0, fmt.Errorf("%q is not a finite number", x)
		}
		if err != nil {
			return 0, fmt.Errorf("%q is not a number", x)
		}
		return f, nil
	}
	return 0, fmt.Errorf("%v is not a number", v)
}

// Int reads an integer or integer string; see Float for reading documents.
func Int(v any) (int, error) {
	f, err := Float(v)
	if err != nil {
		return 0, err
	}
	if f != float64(int(f)) {
		return 0, fmt.Errorf("%v is not an integer", v)
	}
	return int(f), nil
}

// Bool reads a boolean or "true"/"false"; see Float for reading documents.
func Bool(v any) (bool, error) {
	switch x := v.(type) {
	case bool:
		return x, nil
	case string:
		b, err := strconv.ParseBool(x)
		if err != nil {
			return false, fmt.Errorf("%q is not a boolean", x)
		}
		return b, nil
	}
	return false, fmt.Errorf("%v is not a boolean", v)
}
