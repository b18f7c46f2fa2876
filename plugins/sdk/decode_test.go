package sdk_test

import (
	"errors"
	"reflect"
	"testing"

	json "github.com/goccy/go-json"

	"github.com/grovehq/grove/plugins/sdk"
	"github.com/grovehq/grove/plugins/sdk/scaling"
)

func ptr[T any](v T) *T { return &v }

// wire gives back a document as a plugin receives it: through JSON, so
// numbers are float64 and lists []any.
func wire(t *testing.T, doc map[string]any) map[string]any {
	t.Helper()
	b, err := json.Marshal(doc)
	if err != nil {
		t.Fatal(err)
	}
	var out map[string]any
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	return out
}

type adjustment struct {
	Type       string  `json:"type"`
	Number     float64 `json:"number"`
	Cooldown   int     `json:"cooldown"`
	BestEffort bool    `json:"best_effort"`
}

type scalingProps struct {
	Event      string     `json:"event"`
	Adjustment adjustment `json:"adjustment"`
}

// TestSpecDecode decodes properties as the SDK hands them to a policy,
// validated against the schema (integers are int64) and with defaults.
func TestSpecDecode(t *testing.T) {
	sc := sdk.Schema{
		"event": {Type: sdk.String, Required: true},
		"adjustment": {Type: sdk.Map, Default: map[string]any{}, Schema: sdk.Schema{
			"type":        {Type: sdk.String, Default: "CHANGE_IN_CAPACITY"},
			"number":      {Type: sdk.Number, Default: float64(1)},
			"cooldown":    {Type: sdk.Integer, Default: int64(0)},
			"best_effort": {Type: sdk.Boolean, Default: false},
			"ignored":     {Type: sdk.String, Default: "a key the struct does not read"},
		}},
	}
	props, diags := sc.Validate("properties", map[string]any{"event": "CLUSTER_SCALE_IN",
		"adjustment": map[string]any{"cooldown": "60", "number": 2.5, "best_effort": "true"}})
	if diags != nil {
		t.Fatal(diags)
	}
	var got scalingProps
	if err := (sdk.Spec{Properties: props}).Decode(&got); err != nil {
		t.Fatal(err)
	}
	want := scalingProps{Event: "CLUSTER_SCALE_IN", Adjustment: adjustment{Type: "CHANGE_IN_CAPACITY", Number: 2.5, Cooldown: 60, BestEffort: true}}
	if got != want {
		t.Fatalf("decoded %+v, want %+v", got, want)
	}
}

// TestDecodeNamesTheField: a value of the wrong type is an error naming its
// field and what it should be, never a silent zero.
func TestDecodeNamesTheField(t *testing.T) {
	cases := []struct {
		name  string
		do    func() error
		field string
		msg   string
	}{
		{"nested property", func() error {
			var p scalingProps
			return sdk.Spec{Properties: map[string]any{"adjustment": map[string]any{"cooldown": "soon"}}}.Decode(&p)
		}, "properties.adjustment.cooldown", "properties.adjustment.cooldown must be an integer, got a string"},
		{"fraction for an integer", func() error {
			var p scalingProps
			return sdk.Spec{Properties: map[string]any{"adjustment": map[string]any{"cooldown": 1.5}}}.Decode(&p)
		}, "properties.adjustment.cooldown", "properties.adjustment.cooldown must be an integer, got the number 1.5"},
		{"integer too large", func() error {
			var p struct {
				N int32 `json:"n"`
			}
			return sdk.Spec{Properties: map[string]any{"n": int64(1) << 40}}.Decode(&p)
		}, "properties.n", "properties.n must be an integer that fits a Go int32, got the number 1099511627776"},
		{"object for a struct", func() error {
			var p scalingProps
			return sdk.Spec{Properties: map[string]any{"adjustment": "none"}}.Decode(&p)
		}, "properties.adjustment", "properties.adjustment must be an object, got a string"},
		{"scale count", func() error {
			var in sdk.ClusterScaleInputs
			return sdk.Action{Inputs: map[string]any{"count": true}}.DecodeInputs(&in)
		}, "inputs.count", "inputs.count must be an integer, got a boolean"},
		{"candidates", func() error {
			var in sdk.ClusterDelNodesInputs
			return sdk.Action{Inputs: map[string]any{"candidates": []any{"a", 3.0}}}.DecodeInputs(&in)
		}, "inputs.candidates", "inputs.candidates must be a string, got a number"},
		{"resize number string", func() error {
			var in sdk.ClusterResizeInputs
			return sdk.Action{Inputs: map[string]any{"number": "three"}}.DecodeInputs(&in)
		}, "inputs.number", `inputs.number must be a number, got the string "three"`},
		{"resize number Go literal", func() error {
			var in sdk.ClusterResizeInputs
			return sdk.Action{Inputs: map[string]any{"number": "0x1p3"}}.DecodeInputs(&in)
		}, "inputs.number", `inputs.number must be a number, got the string "0x1p3"`},
		{"resize min_size digit separator", func() error {
			var in sdk.ClusterResizeInputs
			return sdk.Action{Inputs: map[string]any{"min_size": "1_0"}}.DecodeInputs(&in)
		}, "inputs.min_size", `inputs.min_size must be a number, got the string "1_0"`},
		{"resize number NaN", func() error {
			var in sdk.ClusterResizeInputs
			return sdk.Action{Inputs: map[string]any{"number": "NaN"}}.DecodeInputs(&in)
		}, "inputs.number", `inputs.number must be a finite number, got the string "NaN"`},
		{"resize strict string", func() error {
			var in sdk.ClusterResizeInputs
			return sdk.Action{Inputs: map[string]any{"strict": "maybe"}}.DecodeInputs(&in)
		}, "inputs.strict", `inputs.strict must be a boolean, got the string "maybe"`},
		{"resize min_size fraction", func() error {
			var in sdk.ClusterResizeInputs
			return sdk.Action{Inputs: map[string]any{"min_size": "1.5"}}.DecodeInputs(&in)
		}, "inputs.min_size", "inputs.min_size must be an integer, got the number 1.5"},
		{"resize adjustment type", func() error {
			var in sdk.ClusterResizeInputs
			return sdk.Action{Inputs: map[string]any{"adjustment_type": 3.0}}.DecodeInputs(&in)
		}, "inputs.adjustment_type", "inputs.adjustment_type must be a string, got a number"},
		{"deletion count", func() error {
			var d sdk.DeletionData
			_, err := sdk.Action{Data: map[string]any{sdk.DataDeletion: map[string]any{"count": "2"}}}.DecodeData(sdk.DataDeletion, &d)
			return err
		}, "data.deletion.count", "data.deletion.count must be an integer, got a string"},
		{"other documents", func() error {
			var b struct {
				Seen []string `json:"seen"`
			}
			return sdk.Decode("binding_data", map[string]any{"seen": map[string]any{}}, &b)
		}, "binding_data.seen", "binding_data.seen must be a list, got an object"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := c.do()
			var de *sdk.DecodeError
			if !errors.As(err, &de) {
				t.Fatalf("error %v (%T), want a *sdk.DecodeError", err, err)
			}
			if de.Field != c.field || err.Error() != c.msg {
				t.Fatalf("field %q, error %q\nwant field %q, error %q", de.Field, err.Error(), c.field, c.msg)
			}
		})
	}
}

// TestDecodeInputsAsTheEngineSendsThem decodes the inputs of the actions
// policies check in every form the engine sends: as it writes them now, and
// as engines before typed inputs stored them (the values below are those of
// core/engine/testdata/legacy_actions.json), numeric strings included.
func TestDecodeInputsAsTheEngineSendsThem(t *testing.T) {
	cases := []struct {
		name   string
		inputs map[string]any
		into   any
		want   any
	}{
		{"resize exact", map[string]any{"adjustment_type": "EXACT_CAPACITY", "max_size": nil, "min_size": nil, "min_step": nil, "number": 3, "strict": true},
			&sdk.ClusterResizeInputs{}, &sdk.ClusterResizeInputs{AdjustmentType: ptr("EXACT_CAPACITY"), Number: ptr(3.0), Strict: true}},
		{"resize percentage", map[string]any{"adjustment_type": "CHANGE_IN_PERCENTAGE", "max_size": 10, "min_size": nil, "min_step": 1, "number": 40, "strict": false},
			&sdk.ClusterResizeInputs{}, &sdk.ClusterResizeInputs{AdjustmentType: ptr("CHANGE_IN_PERCENTAGE"), Number: ptr(40.0), MaxSize: ptr(10), MinStep: ptr(1)}},
		{"resize strings", map[string]any{"adjustment_type": "CHANGE_IN_CAPACITY", "max_size": nil, "min_size": "1", "min_step": nil, "number": "-1", "strict": "true"},
			&sdk.ClusterResizeInputs{}, &sdk.ClusterResizeInputs{AdjustmentType: ptr("CHANGE_IN_CAPACITY"), Number: ptr(-1.0), MinSize: ptr(1), Strict: true}},
		{"resize bounds only", map[string]any{"adjustment_type": nil, "max_size": 20, "min_size": 0, "min_step": nil, "number": nil, "strict": true},
			&sdk.ClusterResizeInputs{}, &sdk.ClusterResizeInputs{MinSize: ptr(0), MaxSize: ptr(20), Strict: true}},
		{"resize without strict is strict", map[string]any{"adjustment_type": "EXACT_CAPACITY", "number": 4},
			&sdk.ClusterResizeInputs{}, &sdk.ClusterResizeInputs{AdjustmentType: ptr("EXACT_CAPACITY"), Number: ptr(4.0), Strict: true}},
		{"resize null strict is strict", map[string]any{"strict": nil},
			&sdk.ClusterResizeInputs{}, &sdk.ClusterResizeInputs{Strict: true}},
		{"resize with no inputs at all", nil, &sdk.ClusterResizeInputs{}, &sdk.ClusterResizeInputs{Strict: true}},
		{"scale-out", map[string]any{"count": 2}, &sdk.ClusterScaleInputs{}, &sdk.ClusterScaleInputs{Count: ptr(2)}},
		{"scale-out without count", map[string]any{}, &sdk.ClusterScaleInputs{}, &sdk.ClusterScaleInputs{}},
		{"add-nodes", map[string]any{"nodes": []string{"n1"}}, &sdk.ClusterAddNodesInputs{}, &sdk.ClusterAddNodesInputs{Nodes: []string{"n1"}}},
		{"del-nodes", map[string]any{"candidates": []string{"n2"}, "count": 1, "destroy_after_deletion": false},
			&sdk.ClusterDelNodesInputs{}, &sdk.ClusterDelNodesInputs{Candidates: []string{"n2"}, Count: 1}},
		{"a key added by a later engine", map[string]any{"count": 2, "reason": "load"}, &sdk.ClusterScaleInputs{}, &sdk.ClusterScaleInputs{Count: ptr(2)}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if err := (sdk.Action{Inputs: wire(t, c.inputs)}).DecodeInputs(c.into); err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(c.into, c.want) {
				t.Fatalf("decoded %+v, want %+v", c.into, c.want)
			}
		})
	}
}

// TestResizeOfInputs: the typed inputs make the resize request that
// ResizeFromInputs made of the map.
func TestResizeOfInputs(t *testing.T) {
	for _, inputs := range []map[string]any{
		{"adjustment_type": "CHANGE_IN_PERCENTAGE", "number": "40", "max_size": 10, "min_step": "2", "strict": "false"},
		{"adjustment_type": "EXACT_CAPACITY", "number": 4},
		{"min_size": 0, "max_size": 20, "strict": true},
	} {
		var in sdk.ClusterResizeInputs
		if err := (sdk.Action{Inputs: wire(t, inputs)}).DecodeInputs(&in); err != nil {
			t.Fatal(err)
		}
		want, err := scaling.ResizeFromInputs(wire(t, inputs))
		if err != nil {
			t.Fatal(err)
		}
		if got := in.Resize(); !reflect.DeepEqual(got, want) {
			t.Errorf("%v: resize %+v, want %+v", inputs, got, want)
		}
	}
}

// TestDecodeData reads the decisions of the policies checked before: a
// missing key is not an error, a present one decodes.
func TestDecodeData(t *testing.T) {
	a := sdk.Action{Data: wire(t, map[string]any{
		sdk.DataDeletion: map[string]any{"count": 2, "candidates": []string{"a", "b"}, "destroy_after_deletion": false, "grace_period": 5},
		sdk.DataCreation: nil,
	})}
	var d sdk.DeletionData
	ok, err := a.DecodeData(sdk.DataDeletion, &d)
	if err != nil || !ok {
		t.Fatalf("deletion: ok %v, err %v", ok, err)
	}
	want := sdk.DeletionData{Candidates: []string{"a", "b"}, Count: ptr(2), DestroyAfterDeletion: ptr(false), GracePeriod: ptr(5)}
	if !reflect.DeepEqual(d, want) {
		t.Fatalf("deletion %+v, want %+v", d, want)
	}
	var c sdk.CreationData
	for _, key := range []string{sdk.DataCreation, sdk.DataPlacement} {
		if ok, err := a.DecodeData(key, &c); ok || err != nil {
			t.Fatalf("%s: ok %v, err %v; want absent", key, ok, err)
		}
	}
}
