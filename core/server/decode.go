package server

import (
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/grovehq/grove/api"
	"github.com/grovehq/grove/core/engine"
	"github.com/grovehq/grove/plugins/sdk/schema"
)

// Request limits, documented in docs/api.md "Request limits". The body
// limit is per agent (Options.MaxRequestBytes); the others are fixed so that
// every agent accepts the same requests.
const (
	// DefaultMaxRequestBytes bounds a request body when the agent config
	// does not say otherwise.
	DefaultMaxRequestBytes = 1 << 20
	// MaxDepth is how deeply objects and arrays may nest in a body.
	MaxDepth = 32
	// MaxKeyBytes bounds every object key in a body.
	MaxKeyBytes = 255
	// MaxStringBytes bounds every string value in a body, spec properties
	// included.
	MaxStringBytes = 64 << 10
	// MaxNameChars bounds names, roles and references to other objects
	// (ids or names), as Senlin's 255-character names.
	MaxNameChars = 255
	// MaxMetadataKeys bounds the entries of a metadata object
	// (api.ValidateMetadata, which the CLI and the provider apply too).
	MaxMetadataKeys = api.MaxMetadataKeys
	// MaxMetadataValueBytes bounds one metadata value written as JSON.
	MaxMetadataValueBytes = api.MaxMetadataValueBytes
)

// bodyTooLarge is the 413 for a body over the limit.
func bodyTooLarge(limit int64) error {
	return &engine.Error{Status: http.StatusRequestEntityTooLarge, Type: "RequestEntityTooLarge",
		Message: fmt.Sprintf("The request body is larger than the limit of %d bytes; send less, or raise api.max_request_bytes in the agent config.", limit)}
}

// readBody reads exactly one JSON object from r: no data may follow it, no
// object may repeat a key, and the nesting, key and string limits hold.
// Numbers become float64; one that does not fit is refused with its path.
func readBody(r io.Reader) (map[string]any, error) {
	dec := jsontext.NewDecoder(r) // refuses duplicate keys and invalid UTF-8 by default
	if k := dec.PeekKind(); k != '{' {
		if _, err := dec.ReadToken(); err != nil {
			return nil, jsonError(err)
		}
		return nil, engine.BadRequest("The request body must be a JSON object.")
	}
	v, err := readValue(dec, "", 1)
	if err != nil {
		return nil, err
	}
	if _, err := dec.ReadToken(); !errors.Is(err, io.EOF) {
		var mb *http.MaxBytesError
		if errors.As(err, &mb) {
			return nil, bodyTooLarge(mb.Limit)
		}
		return nil, engine.BadRequest("The request body has data after its JSON object; send exactly one JSON object.")
	}
	return v.(map[string]any), nil
}

func readValue(dec *jsontext.Decoder, path string, depth int) (any, error) {
	tok, err := dec.ReadToken()
	if err != nil {
		return nil, jsonError(err)
	}
	switch tok.Kind() {
	case '{':
		if depth > MaxDepth {
			return nil, engine.BadRequest("%s: the request body nests objects and arrays more than %d deep.", where(path), MaxDepth)
		}
		m := map[string]any{}
		for dec.PeekKind() != '}' {
			kt, err := dec.ReadToken()
			if err != nil {
				return nil, jsonError(err)
			}
			k := kt.String()
			if len(k) > MaxKeyBytes {
				return nil, engine.BadRequest("%s: a key of %d bytes is longer than the limit of %d bytes.", where(path), len(k), MaxKeyBytes)
			}
			if m[k], err = readValue(dec, join(path, k), depth+1); err != nil {
				return nil, err
			}
		}
		if _, err := dec.ReadToken(); err != nil {
			return nil, jsonError(err)
		}
		return m, nil
	case '[':
		if depth > MaxDepth {
			return nil, engine.BadRequest("%s: the request body nests objects and arrays more than %d deep.", where(path), MaxDepth)
		}
		l := []any{}
		for dec.PeekKind() != ']' {
			v, err := readValue(dec, fmt.Sprintf("%s[%d]", path, len(l)), depth+1)
			if err != nil {
				return nil, err
			}
			l = append(l, v)
		}
		if _, err := dec.ReadToken(); err != nil {
			return nil, jsonError(err)
		}
		return l, nil
	case '"':
		s := tok.String()
		if len(s) > MaxStringBytes {
			return nil, engine.BadRequest("%s: a string of %d bytes is longer than the limit of %d bytes.", where(path), len(s), MaxStringBytes)
		}
		return s, nil
	case '0':
		f, err := tok.Float()
		if err != nil || math.IsInf(f, 0) {
			return nil, engine.BadRequest("%s: the number %s is too large.", where(path), tok.String())
		}
		return f, nil
	case 't', 'f':
		return tok.Bool(), nil
	case 'n':
		return nil, nil
	}
	// jsontext only returns the kinds above from a successful read; a
	// delimiter here means the grammar was broken, which it reports itself.
	return nil, engine.BadRequest("%s: unexpected %s in the request body.", where(path), tok.Kind())
}

// jsonError turns a decoder error into a 400 (or the 413 of a body over
// the limit) that says what is wrong and where.
func jsonError(err error) error {
	var mb *http.MaxBytesError
	if errors.As(err, &mb) {
		return bodyTooLarge(mb.Limit)
	}
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		return engine.BadRequest("The request body is not a JSON object: it ends before the JSON does.")
	}
	var se *jsontext.SyntacticError
	if errors.As(err, &se) {
		ptr := se.JSONPointer
		if errors.Is(se.Err, jsontext.ErrDuplicateName) {
			return engine.BadRequest("%s: the key %q appears twice in one object; each key may appear once.", where(pointerPath(ptr.Parent())), ptr.LastToken())
		}
		msg := strings.TrimPrefix(se.Err.Error(), "jsontext: ")
		return engine.BadRequest("The request body is not valid JSON: %s at byte %d (%s).", msg, se.ByteOffset, where(pointerPath(ptr)))
	}
	return engine.BadRequest("The request body could not be read: %v.", err)
}

// pointerPath writes a JSON pointer the way error messages name fields.
func pointerPath(p jsontext.Pointer) string {
	var path string
	for tok := range p.Tokens() {
		if _, err := strconv.Atoi(tok); err == nil && path != "" {
			path += "[" + tok + "]"
			continue
		}
		path = join(path, tok)
	}
	return path
}

func join(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

func where(path string) string {
	if path == "" {
		return "body"
	}
	return path
}

// decode reads a JSON object body; key, when set, is the envelope key.
func decode(r *http.Request, key string) (map[string]any, error) {
	body, err := readBody(r.Body)
	if err != nil {
		return nil, err
	}
	if key == "" {
		return body, nil
	}
	inner, ok := body[key].(map[string]any)
	if !ok {
		return nil, engine.BadRequest("The request body must be {\"%s\": {...}}.", key)
	}
	return inner, nil
}

// Body field helpers: each names the field and the rule when the type or
// size is wrong.

func str(body map[string]any, k string) (*string, error) {
	v, ok := body[k]
	if !ok || v == nil {
		return nil, nil
	}
	s, ok := v.(string)
	if !ok {
		return nil, engine.BadRequest("%s must be a string.", k)
	}
	return &s, nil
}

// nameField reads a name, role or reference to another object: a string of at
// most MaxNameChars characters.
func nameField(body map[string]any, k string) (*string, error) {
	s, err := str(body, k)
	if err != nil || s == nil {
		return s, err
	}
	if n := utf8.RuneCountInString(*s); n > MaxNameChars {
		return nil, engine.BadRequest("%s must be at most %d characters, got %d.", k, MaxNameChars, n)
	}
	return s, nil
}

// integer reads a whole number in [min, max]. The range is checked on the
// number as sent, before it becomes an int, so an error shows what the
// client sent rather than a wrapped value.
func integer(body map[string]any, k string, min, max int) (*int, error) {
	v, ok := body[k]
	if !ok || v == nil {
		return nil, nil
	}
	var f float64
	switch x := v.(type) {
	case float64:
		f = x
	case string:
		var err error
		f, err = schema.ParseDecimal(x)
		if err != nil {
			return nil, engine.BadRequest("%s must be an integer, got %q.", k, x)
		}
	default:
		return nil, engine.BadRequest("%s must be an integer.", k)
	}
	if f != math.Trunc(f) {
		return nil, engine.BadRequest("%s must be an integer, got %s.", k, engine.FormatNumber(f))
	}
	if f < float64(min) || f > float64(max) {
		return nil, engine.RangeError(k, min, max, engine.FormatNumber(f))
	}
	n := int(f)
	return &n, nil
}

func boolean(body map[string]any, k string) (*bool, error) {
	v, ok := body[k]
	if !ok || v == nil {
		return nil, nil
	}
	switch x := v.(type) {
	case bool:
		return &x, nil
	case string:
		b, err := strconv.ParseBool(x)
		if err == nil {
			return &b, nil
		}
	}
	return nil, engine.BadRequest("%s must be a boolean.", k)
}

func object(body map[string]any, k string) (map[string]any, error) {
	v, ok := body[k]
	if !ok || v == nil {
		return nil, nil
	}
	m, ok := v.(map[string]any)
	if !ok {
		return nil, engine.BadRequest("%s must be an object.", k)
	}
	return m, nil
}

// metadata reads a metadata object: at most MaxMetadataKeys entries, keys
// of 1 to MaxKeyBytes bytes, each value at most MaxMetadataValueBytes as
// JSON.
func metadata(body map[string]any, k string) (map[string]any, error) {
	m, err := object(body, k)
	if err != nil || m == nil {
		return m, err
	}
	if err := api.ValidateMetadata(k, m); err != nil {
		return nil, engine.BadRequest("%s", err.Error())
	}
	return m, nil
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}
