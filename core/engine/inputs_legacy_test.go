package engine

import (
	"encoding/json"
	"os"
	"reflect"
	"strings"
	"testing"

	"github.com/grovehq/grove/api"
	"github.com/grovehq/grove/core/model"
)

// testdata/legacy_actions.json holds the inputs and data that the engine
// stored for each action kind before inputs were typed (written by that
// engine running the requests named in each entry). Actions stored then
// must resume after an upgrade.

type legacyFixture struct {
	IDs     map[string]string `json:"ids"`
	Actions []struct {
		Kind   string         `json:"kind"`
		Action string         `json:"action"`
		Inputs map[string]any `json:"inputs"`
		Data   map[string]any `json:"data"`
	} `json:"actions"`
}

func readLegacy(t *testing.T) legacyFixture {
	t.Helper()
	b, err := os.ReadFile("testdata/legacy_actions.json")
	if err != nil {
		t.Fatal(err)
	}
	var f legacyFixture
	if err := json.Unmarshal(b, &f); err != nil {
		t.Fatal(err)
	}
	return f
}

func ptr[T any](v T) *T { return &v }

// decodeAs decodes a stored action's inputs with inputsOf into the typed
// inputs of its kind.
func decodeAs(t *testing.T, action string, inputs map[string]any) any {
	t.Helper()
	a := &model.Action{ID: "fixture", Action: action, Inputs: inputs}
	var got any
	var err error
	switch model.InputsFor(action).(type) {
	case *model.ClusterCreateInputs:
		got, err = inputsOf[model.ClusterCreateInputs](a)
	case *model.ClusterDeleteInputs:
		got, err = inputsOf[model.ClusterDeleteInputs](a)
	case *model.ClusterUpdateInputs:
		got, err = inputsOf[model.ClusterUpdateInputs](a)
	case *model.ClusterAddNodesInputs:
		got, err = inputsOf[model.ClusterAddNodesInputs](a)
	case *model.ClusterDelNodesInputs:
		got, err = inputsOf[model.ClusterDelNodesInputs](a)
	case *model.ClusterReplaceNodesInputs:
		got, err = inputsOf[model.ClusterReplaceNodesInputs](a)
	case *model.ClusterResizeInputs:
		got, err = inputsOf[model.ClusterResizeInputs](a)
	case *model.ClusterScaleInputs:
		got, err = inputsOf[model.ClusterScaleInputs](a)
	case *model.CheckInputs:
		got, err = inputsOf[model.CheckInputs](a)
	case *model.RecoverInputs:
		got, err = inputsOf[model.RecoverInputs](a)
	case *model.ClusterAttachPolicyInputs:
		got, err = inputsOf[model.ClusterAttachPolicyInputs](a)
	case *model.ClusterUpdatePolicyInputs:
		got, err = inputsOf[model.ClusterUpdatePolicyInputs](a)
	case *model.ClusterDetachPolicyInputs:
		got, err = inputsOf[model.ClusterDetachPolicyInputs](a)
	case *model.NodeCreateInputs:
		got, err = inputsOf[model.NodeCreateInputs](a)
	case *model.NodeDeleteInputs:
		got, err = inputsOf[model.NodeDeleteInputs](a)
	case *model.NodeUpdateInputs:
		got, err = inputsOf[model.NodeUpdateInputs](a)
	default:
		t.Fatalf("no typed inputs for %s", action)
	}
	if err != nil {
		t.Fatalf("%s: %v", action, err)
	}
	return got
}

// TestLegacyInputsDecode decodes the stored inputs of every action kind, as
// written before inputs were typed, into the typed inputs with the values
// the request gave.
func TestLegacyInputsDecode(t *testing.T) {
	f := readLegacy(t)
	id := f.IDs
	yes, no := ptr(true), ptr(false)
	want := map[string]any{
		"cluster create":        model.ClusterCreateInputs{},
		"node create (derived)": model.NodeCreateInputs{},
		"cluster resize exact":  model.ClusterResizeInputs{AdjustmentType: ptr("EXACT_CAPACITY"), Number: ptr(3.0), Strict: true},
		"cluster resize percentage": model.ClusterResizeInputs{AdjustmentType: ptr("CHANGE_IN_PERCENTAGE"), Number: ptr(40.0), MaxSize: ptr(10),
			MinStep: ptr(1), Strict: false},
		// Stored as the client sent them: numeric and boolean strings.
		"cluster resize strings":          model.ClusterResizeInputs{AdjustmentType: ptr("CHANGE_IN_CAPACITY"), Number: ptr(-1.0), MinSize: ptr(1), Strict: true},
		"cluster resize bounds only":      model.ClusterResizeInputs{MinSize: ptr(0), MaxSize: ptr(20), Strict: true},
		"cluster scale-out":               model.ClusterScaleInputs{Count: ptr(2)},
		"cluster scale-out without count": model.ClusterScaleInputs{},
		"cluster scale-in":                model.ClusterScaleInputs{Count: ptr(1)},
		"node delete (derived)":           model.NodeDeleteInputs{},
		"cluster scale-in without count":  model.ClusterScaleInputs{},
		"node create":                     model.NodeCreateInputs{},
		"cluster add-nodes":               model.ClusterAddNodesInputs{Nodes: []string{id["node_spare"]}},
		"cluster del-nodes":               model.ClusterDelNodesInputs{Candidates: []string{id["node_victim"]}, Count: 1, DestroyAfterDeletion: false},
		"cluster replace-nodes":           model.ClusterReplaceNodesInputs{Candidates: map[string]string{id["node_replaced"]: id["node_victim"]}},
		"cluster check":                   model.CheckInputs{},
		"node check (derived)":            model.CheckInputs{},
		"cluster recover": model.RecoverInputs{Operation: "RECREATE", OperationParams: map[string]any{"x": 1.0}, Check: yes,
			CheckCapacity: yes},
		"node recover (derived)":         model.RecoverInputs{Operation: "RECREATE", OperationParams: map[string]any{"x": 1.0}, Check: yes},
		"cluster recover empty":          model.RecoverInputs{},
		"cluster policy attach":          model.ClusterAttachPolicyInputs{PolicyID: id["policy"], Enabled: yes, Priority: ptr(30)},
		"cluster policy attach defaults": model.ClusterAttachPolicyInputs{PolicyID: id["policy"]},
		"cluster policy update":          model.ClusterUpdatePolicyInputs{PolicyID: id["policy"], Enabled: no, Priority: ptr(40)},
		"cluster policy detach":          model.ClusterDetachPolicyInputs{PolicyID: id["policy"]},
		"cluster update fields and size": model.ClusterUpdateInputs{Name: ptr("c2"), Metadata: map[string]any{"m": "n"},
			Config: map[string]any{"node.name.format": "n-$3I"}, Timeout: ptr(900),
			Size: &model.SizeInputs{DesiredCapacity: ptr(3), MinSize: ptr(1), MaxSize: ptr(10)}},
		"cluster update bounds only":  model.ClusterUpdateInputs{Size: &model.SizeInputs{MinSize: ptr(1), MaxSize: ptr(10)}},
		"cluster update profile":      model.ClusterUpdateInputs{NewProfileID: id["profile_p2"], ProfileOnly: no},
		"node update (derived)":       model.NodeUpdateInputs{NewProfileID: id["profile_p2"]},
		"cluster update profile only": model.ClusterUpdateInputs{NewProfileID: id["profile_p"], ProfileOnly: yes},
		"cluster update_resume": model.ClusterUpdateInputs{NewProfileID: id["profile_p2"], PreviousProfileID: id["profile_p"],
			RollingBack: no},
		"cluster update_rollback": model.ClusterUpdateInputs{NewProfileID: id["profile_p"], PreviousProfileID: id["profile_p2"],
			RollingBack: yes},
		"cluster update_rollback of a rollback": model.ClusterUpdateInputs{NewProfileID: id["profile_p2"], PreviousProfileID: id["profile_p"],
			RollingBack: yes},
		"node update": model.NodeUpdateInputs{Name: ptr("spare2"), Metadata: map[string]any{}, Tainted: yes},
		"node check":  model.CheckInputs{},
		"node recover": model.RecoverInputs{Operation: "RECREATE", OperationParams: map[string]any{}, Check: no, DeleteTimeout: ptr(30),
			ForceRecreate: yes},
		"node delete":                           model.NodeDeleteInputs{},
		"cluster delete":                        model.ClusterDeleteInputs{Force: false},
		"node delete (derived, cluster delete)": model.NodeDeleteInputs{},
	}
	kinds := map[string]bool{}
	for _, a := range f.Actions {
		kinds[a.Action] = true
		t.Run(a.Kind, func(t *testing.T) {
			w, ok := want[a.Kind]
			if !ok {
				t.Fatalf("no expected inputs for the fixture's %q", a.Kind)
			}
			got := decodeAs(t, a.Action, a.Inputs)
			if !reflect.DeepEqual(got, w) {
				t.Fatalf("decoded %s inputs\n got %#v\nwant %#v", a.Action, got, w)
			}
		})
	}
	for _, k := range []string{model.ClusterCreateAction, model.ClusterDeleteAction, model.ClusterUpdateAction, model.ClusterAddNodesAction,
		model.ClusterDelNodesAction, model.ClusterReplaceNodesAction, model.ClusterResizeAction, model.ClusterScaleOutAction, model.ClusterScaleInAction,
		model.ClusterCheckAction, model.ClusterRecoverAction, model.ClusterAttachPolicyAction, model.ClusterDetachPolicyAction, model.ClusterUpdatePolicyAction,
		model.NodeCreateAction, model.NodeDeleteAction, model.NodeUpdateAction, model.NodeCheckAction, model.NodeRecoverAction} {
		if !kinds[k] {
			t.Errorf("the fixture has no %s action", k)
		}
	}
}

// TestTypedInputsKeepTheDocuments encodes each decoded fixture again: the
// document is the one stored before, key for key, except that values the
// client sent as strings are now stored as what they stand for, and keys
// whose value was null are left out where the kind never requires them.
func TestTypedInputsKeepTheDocuments(t *testing.T) {
	f := readLegacy(t)
	canonical := map[string]map[string]any{
		"cluster resize strings": {"adjustment_type": "CHANGE_IN_CAPACITY", "number": -1.0, "min_size": 1.0, "max_size": nil, "min_step": nil, "strict": true},
		"cluster recover":        {"check": true, "check_capacity": true, "operation": "RECREATE", "operation_params": map[string]any{"x": 1.0}},
		"node recover":           {"check": false, "delete_timeout": 30.0, "force_recreate": true, "operation": "RECREATE", "operation_params": map[string]any{}},
	}
	for _, a := range f.Actions {
		t.Run(a.Kind, func(t *testing.T) {
			doc, err := document(decodeAs(t, a.Action, a.Inputs))
			if err != nil {
				t.Fatal(err)
			}
			want := a.Inputs
			if c, ok := canonical[a.Kind]; ok {
				want = c
			}
			if !reflect.DeepEqual(doc, want) {
				t.Fatalf("%s inputs document\n got %v\nwant %v", a.Action, doc, want)
			}
		})
	}
}

// TestLegacyDataDecode reads what stages stored in an action's data before
// it was typed: the size plan and the rolling update's progress.
func TestLegacyDataDecode(t *testing.T) {
	f := readLegacy(t)
	plans, updates := 0, 0
	for _, a := range f.Actions {
		act := &model.Action{ID: "fixture", Action: a.Action, Data: a.Data}
		if p, ok, err := dataOf[sizePlan](act, dataPlan); err != nil || (ok && p.Desired == 0) {
			t.Errorf("%s: plan %+v, %v", a.Kind, p, err)
		} else if ok {
			plans++
			doc, _ := document(p)
			if !reflect.DeepEqual(doc, a.Data[dataPlan]) {
				t.Errorf("%s: plan document\n got %v\nwant %v", a.Kind, doc, a.Data[dataPlan])
			}
		}
		if u, ok, err := dataOf[api.UpdateProgress](act, "update"); err != nil {
			t.Errorf("%s: update progress: %v", a.Kind, err)
		} else if ok {
			updates++
			if u.Status != api.UpdateCompleted && u.Status != api.UpdateRolledBack || u.Target == "" || u.FailedNodes == nil {
				t.Errorf("%s: update progress %+v", a.Kind, u)
			}
			doc, _ := document(u)
			if !reflect.DeepEqual(doc, a.Data["update"]) {
				t.Errorf("%s: update document\n got %v\nwant %v", a.Kind, doc, a.Data["update"])
			}
		}
	}
	if plans < 8 || updates < 4 {
		t.Fatalf("read %d plans and %d update progresses from the fixture, want at least 8 and 4", plans, updates)
	}
	scaleIn := &model.Action{Action: model.ClusterScaleInAction, Data: f.Actions[8].Data}
	if p, _, _ := dataOf[sizePlan](scaleIn, dataPlan); f.Actions[8].Kind != "cluster scale-in" || p.Desired != 5 || len(p.Victims) != 1 || !p.Destroy {
		t.Fatalf("scale-in plan %+v of %s", p, f.Actions[8].Kind)
	}
}

// TestInputsErrorNamesActionAndField: inputs that do not fit their kind
// fail with a sentence naming the action and the field.
func TestInputsErrorNamesActionAndField(t *testing.T) {
	for _, c := range []struct {
		action string
		inputs map[string]any
		want   []string
	}{
		{model.ClusterScaleOutAction, map[string]any{"count": "two"}, []string{"CLUSTER_SCALE_OUT action a1", "inputs.count", "integer"}},
		{model.ClusterScaleOutAction, map[string]any{"count": 1.5}, []string{"inputs.count", "integer"}},
		{model.ClusterAddNodesAction, map[string]any{"nodes": "n1"}, []string{"CLUSTER_ADD_NODES", "inputs.nodes", "a list"}},
		{model.ClusterDeleteAction, map[string]any{"forced": true}, []string{"CLUSTER_DELETE", `unknown field "forced"`}},
		{model.ClusterResizeAction, map[string]any{"number": "many"}, []string{"CLUSTER_RESIZE", "number must be a number"}},
	} {
		a := &model.Action{ID: "a1", Action: c.action, Inputs: c.inputs}
		var err error
		switch c.action {
		case model.ClusterScaleOutAction:
			_, err = inputsOf[model.ClusterScaleInputs](a)
		case model.ClusterAddNodesAction:
			_, err = inputsOf[model.ClusterAddNodesInputs](a)
		case model.ClusterDeleteAction:
			_, err = inputsOf[model.ClusterDeleteInputs](a)
		case model.ClusterResizeAction:
			_, err = inputsOf[model.ClusterResizeInputs](a)
		}
		if err == nil {
			t.Fatalf("%s %v: no error", c.action, c.inputs)
		}
		for _, w := range c.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%s %v: %q does not say %q", c.action, c.inputs, err, w)
			}
		}
		if !strings.HasPrefix(err.Error(), "The ") || !strings.HasSuffix(err.Error(), ".") {
			t.Errorf("not a sentence: %q", err)
		}
	}
}
