package sdk

import (
	stdjson "encoding/json"
	"reflect"
	"testing"
)

// The SDK's documents are encoded and decoded with goccy/go-json for speed;
// plugins and the engine must still see exactly what encoding/json would
// give them. The fuzz target compares both on arbitrary input.
func FuzzWireJSONMatchesStdlib(f *testing.F) {
	for _, seed := range []string{
		`{}`, `{"a":1}`, `{"count":1,"candidates":["a","b"],"nested":{"x":[1,2.5,-3e10,null,true]}}`,
		`{"big":12345678901234567890,"tiny":1e-300,"neg":-0,"u":"\u00e9\u2028<>&","esc":"a\"b\\c\n"}`,
		`{"dup":1,"dup":2}`, `{"a":{"b":{"c":{"d":[[],{}]}}}}`, `{"s":"\ud83d\ude00"}`, `{"bad":"\ud800"}`,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		var want map[string]any
		if err := stdjson.Unmarshal(b, &want); err != nil || len(want) == 0 {
			return
		}
		if got := decodeMap(b); !reflect.DeepEqual(got, want) {
			t.Fatalf("decode %q: got %#v, encoding/json gives %#v", b, got, want)
		}
		var again map[string]any
		if err := stdjson.Unmarshal(encodeJSON(want), &again); err != nil || !reflect.DeepEqual(again, want) {
			t.Fatalf("encode %#v: encoding/json reads back %#v (%v)", want, again, err)
		}
	})
}
