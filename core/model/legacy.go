package model

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
)

// Actions stored before inputs were typed kept some parameters as the
// client sent them, and Senlin's API takes "3" for 3 and "true" for true.
// Such an action must still resume after an upgrade, so these inputs read a
// numeric or boolean string as the value it stands for. New actions store
// the values themselves.

// UnmarshalJSON reads resize inputs, also as stored before typed inputs.
func (in *ClusterResizeInputs) UnmarshalJSON(b []byte) error {
	type plain ClusterResizeInputs
	return decodeLoose(b, (*plain)(in), []string{"number", "min_size", "max_size", "min_step"}, []string{"strict"}, nil)
}

// UnmarshalJSON reads recover inputs, also as stored before typed inputs,
// which kept operation_params even when it was not an object (it was
// ignored then, and is dropped now).
func (in *RecoverInputs) UnmarshalJSON(b []byte) error {
	type plain RecoverInputs
	return decodeLoose(b, (*plain)(in), []string{"delete_timeout"}, []string{"check", "check_capacity", "force_recreate"}, []string{"operation_params"})
}

// decodeLoose decodes b into v after turning the strings of numbers and
// booleans in the given keys into JSON numbers and booleans, and dropping
// the given object keys whose value is not an object. Unknown keys are
// refused, as inputs are.
func decodeLoose(b []byte, v any, numbers, bools, objects []string) error {
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(b, &raw); err != nil {
		return err
	}
	if raw == nil {
		return nil
	}
	for _, k := range numbers {
		s, ok := jsonString(raw[k])
		if !ok {
			continue
		}
		f, err := strconv.ParseFloat(s, 64)
		if err != nil {
			return fmt.Errorf("%s must be a number, got %q", k, s)
		}
		raw[k] = json.RawMessage(strconv.FormatFloat(f, 'f', -1, 64))
	}
	for _, k := range bools {
		s, ok := jsonString(raw[k])
		if !ok {
			continue
		}
		t, err := strconv.ParseBool(s)
		if err != nil {
			return fmt.Errorf("%s must be a boolean, got %q", k, s)
		}
		raw[k] = json.RawMessage(strconv.FormatBool(t))
	}
	for _, k := range objects {
		if r, ok := raw[k]; ok && !bytes.HasPrefix(bytes.TrimSpace(r), []byte("{")) {
			delete(raw, k)
		}
	}
	norm, err := json.Marshal(raw)
	if err != nil {
		return err
	}
	dec := json.NewDecoder(bytes.NewReader(norm))
	dec.DisallowUnknownFields()
	return dec.Decode(v)
}

// jsonString returns the string a JSON value is, if it is one.
func jsonString(r json.RawMessage) (string, bool) {
	var s string
	if !bytes.HasPrefix(bytes.TrimSpace(r), []byte(`"`)) || json.Unmarshal(r, &s) != nil {
		return "", false
	}
	return s, true
}
