package sdk

import (
	"reflect"
	"testing"

	json "github.com/goccy/go-json"
	"google.golang.org/protobuf/proto"

	pb "github.com/grovehq/grove/plugins/sdk/proto"
)

// jsonRoundTrip is what the host reads when data travels as JSON.
func jsonRoundTrip(t *testing.T, m map[string]any) map[string]any {
	t.Helper()
	return decodeMap(encodeJSON(m))
}

// Whatever travels typed must reach the host exactly as the JSON path would
// have delivered it, and whatever does not fit a Decision stays JSON.
func TestCheckResultTypedMatchesJSON(t *testing.T) {
	cases := []struct {
		name               string
		data               map[string]any
		deletion, creation bool // expected to travel typed
		json               bool // expected leftover JSON
	}{
		{name: "nothing", data: nil},
		{name: "deletion from the deletion policy", data: map[string]any{"deletion": map[string]any{"count": 2, "candidates": []string{"a", "b"},
			"destroy_after_deletion": true, "grace_period": int64(5), "reduce_desired_capacity": false}}, deletion: true},
		{name: "count only, as the scaling policy decides", data: map[string]any{"creation": map[string]any{"count": 3}}, creation: true},
		{name: "decoded JSON values", data: map[string]any{"deletion": map[string]any{"count": float64(1), "candidates": []any{"x"}}}, deletion: true},
		{name: "both, with other keys", data: map[string]any{"deletion": map[string]any{"count": 1}, "creation": map[string]any{"count": 1},
			"placement": map[string]any{"count": 1, "placements": []any{map[string]any{"host": "h1"}}}}, deletion: true, creation: true, json: true},
		{name: "an unknown key keeps the map in JSON", data: map[string]any{"deletion": map[string]any{"count": 1, "hooks": "x"}}, json: true},
		{name: "a fractional count stays JSON", data: map[string]any{"deletion": map[string]any{"count": 1.5}}, json: true},
		{name: "a count beyond float64's integers stays JSON", data: map[string]any{"deletion": map[string]any{"count": int64(1) << 60}}, json: true},
		{name: "an empty candidate list stays JSON", data: map[string]any{"deletion": map[string]any{"candidates": []any{}}}, json: true},
		{name: "a null flag stays JSON", data: map[string]any{"deletion": map[string]any{"destroy_after_deletion": nil}}, json: true},
		{name: "a non-string candidate stays JSON", data: map[string]any{"deletion": map[string]any{"candidates": []any{"a", 1}}}, json: true},
		{name: "not a map", data: map[string]any{"deletion": "all"}, json: true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			want := jsonRoundTrip(t, c.data)
			for _, typed := range []bool{false, true} {
				resp, err := checkResultToProto(c.data, typed)
				if err != nil {
					t.Fatal(err)
				}
				// Through the wire, as a host would receive it.
				b, err := resp.MarshalVT()
				if err != nil {
					t.Fatal(err)
				}
				var got pb.CheckResponse
				if err := proto.Unmarshal(b, &got); err != nil {
					t.Fatal(err)
				}
				if typed {
					if (got.Deletion != nil) != c.deletion || (got.Creation != nil) != c.creation || (len(got.ActionDataJson) > 0) != c.json {
						t.Errorf("typed: deletion %v creation %v json %q; want deletion %v creation %v json %v",
							got.Deletion != nil, got.Creation != nil, got.ActionDataJson, c.deletion, c.creation, c.json)
					}
				} else if got.Deletion != nil || got.Creation != nil {
					t.Errorf("policy API 1 got typed decisions: %v", &got)
				}
				if data := checkResultFromProto(&got); !reflect.DeepEqual(data, want) {
					gj, _ := json.Marshal(data)
					wj, _ := json.Marshal(want)
					t.Errorf("typed=%v: host read %s (%#v), want %s (%#v)", typed, gj, data, wj, want)
				}
			}
		})
	}
}

// The policy's own map is never changed by splitting it for the wire.
func TestCheckResultLeavesPolicyDataAlone(t *testing.T) {
	data := map[string]any{"deletion": map[string]any{"count": 1}, "other": 1}
	if _, err := checkResultToProto(data, true); err != nil {
		t.Fatal(err)
	}
	if len(data) != 2 || data["deletion"] == nil {
		t.Fatalf("data changed: %v", data)
	}
}

func TestNegotiatedPolicyAPIChoosesTypedDecisions(t *testing.T) {
	p := &Plugin{Name: "t", Policies: []PolicyType{{Type: "t.policy", Versions: []string{"1.0"}}}}
	for _, c := range []struct {
		host  []string
		typed bool
	}{{[]string{"1"}, false}, {[]string{"1", "2"}, true}, {PolicyAPIVersions(), true}} {
		s := newServer(p)
		resp, err := s.Configure(t.Context(), &pb.ConfigureRequest{PolicyApiVersions: c.host})
		if err != nil {
			t.Fatal(err)
		}
		if s.typedDecisions.Load() != c.typed {
			t.Errorf("host speaking %v (agreed %s): typed decisions %v, want %v", c.host, resp.PolicyApiVersion, !c.typed, c.typed)
		}
	}
}
