package engine

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/grovehq/grove/core/model"
)

// An action's inputs and data are JSON documents (model.Action.Inputs and
// Data) because the store, the API and policy plugins see them as such. The
// engine writes them only from the typed values of core/model and reads
// them only into those, with the helpers below: one decoding at the start
// of a handler, whatever Go types the document's values have (an action
// built in this process or read back from the store).

// inputsOf decodes an action's inputs into T, the inputs of its kind.
func inputsOf[T any](a *model.Action) (T, error) {
	var in T
	if err := decodeDoc(a.Inputs, &in); err != nil {
		return in, fmt.Errorf("The %s action %s has inputs Grove cannot read: %s.", a.Action, a.ID, docError("inputs", err))
	}
	return in, nil
}

// dataOf decodes the value under key in an action's data into T; ok is
// false when the key is absent. Policies write data, so an error names the
// key and what is wrong with it.
func dataOf[T any](a *model.Action, key string) (v T, ok bool, err error) {
	raw, ok := a.Data[key]
	if !ok || raw == nil {
		return v, false, nil
	}
	if err := decodeDoc(raw, &v); err != nil {
		return v, true, fmt.Errorf("The %s action %s has data Grove cannot read: %s.", a.Action, a.ID, docError("data."+key, err))
	}
	return v, true, nil
}

// setData stores v under key in an action's data, as a document.
func setData(a *model.Action, key string, v any) error {
	doc, err := document(v)
	if err != nil {
		return fmt.Errorf("record data.%s of action %s: %w", key, a.ID, err)
	}
	a.Data[key] = doc
	return nil
}

// document turns typed inputs or data into the JSON document stored: the
// same value a reader gets back from the store.
func document(v any) (map[string]any, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	var doc map[string]any
	if err := json.Unmarshal(b, &doc); err != nil {
		return nil, err
	}
	if doc == nil {
		doc = map[string]any{}
	}
	return doc, nil
}

// decodeDoc decodes a document into v, refusing keys v does not have.
func decodeDoc(doc any, v any) error {
	b, err := json.Marshal(doc)
	if err != nil {
		return err
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	return dec.Decode(v)
}

// docError words a decoding error with the path of the field at fault.
func docError(prefix string, err error) string {
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) {
		field := prefix
		if te.Field != "" {
			field += "." + te.Field
		}
		return fmt.Sprintf("%s is a JSON %s where %s belongs", field, te.Value, jsonKind(te.Type.Kind().String()))
	}
	msg := strings.TrimPrefix(err.Error(), "json: ")
	if strings.HasPrefix(msg, "unknown field ") {
		return fmt.Sprintf("%s has the %s, which its kind does not take", prefix, msg)
	}
	return prefix + ": " + msg
}

func jsonKind(goKind string) string {
	switch {
	case strings.HasPrefix(goKind, "int"), strings.HasPrefix(goKind, "uint"):
		return "an integer"
	case strings.HasPrefix(goKind, "float"):
		return "a number"
	case goKind == "bool":
		return "a boolean"
	case goKind == "string":
		return "a string"
	case goKind == "slice", goKind == "array":
		return "a list"
	case goKind == "map", goKind == "struct":
		return "an object"
	}
	return "a " + goKind
}
