package sdk

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"

	"github.com/grovehq/grove/plugins/sdk/scaling"
	"github.com/grovehq/grove/plugins/sdk/schema"
)

// The inputs and data of the actions that policies check most, with the
// JSON keys the engine writes them under (Senlin's). Decode an action's
// inputs with Action.DecodeInputs and a policy's decision with
// Action.DecodeData:
//
//	var in sdk.ClusterScaleInputs
//	if err := req.Action.DecodeInputs(&in); err != nil { ... }
//
// They read the forms the engine sends, which include actions stored by
// older engines: those kept some resize parameters as the client sent them,
// "3" for 3 and "true" for true, as Senlin's API accepts.

// Keys of Action.Data under which policies pass decisions to the engine
// and to the policies checked after them.
const (
	DataDeletion  = "deletion"
	DataCreation  = "creation"
	DataPlacement = "placement"
	DataUpdate    = "update"
	// DataNodeWarnings is a map of node id to reason, in a check's
	// result (refusing or not): the engine marks those nodes of the
	// cluster WARNING with the reason, as Senlin's load-balancing policy
	// marks a node whose member could not be added or removed.
	DataNodeWarnings = "node_warnings"
)

// ClusterResizeInputs are CLUSTER_RESIZE's inputs. A key left out or null
// is nil; Strict is true unless given.
type ClusterResizeInputs struct {
	AdjustmentType *string  `json:"adjustment_type"`
	Number         *float64 `json:"number"`
	MinSize        *int     `json:"min_size"`
	MaxSize        *int     `json:"max_size"`
	MinStep        *int     `json:"min_step"`
	Strict         bool     `json:"strict"`
}

// UnmarshalJSON reads resize inputs, also in the string forms older engines
// stored, and makes strict true when it is not given.
func (in *ClusterResizeInputs) UnmarshalJSON(b []byte) error {
	type plain ClusterResizeInputs
	p := plain{Strict: true}
	if err := decodeLoose(b, &p, []string{"number", "min_size", "max_size", "min_step"}, []string{"strict"}); err != nil {
		return err
	}
	*in = ClusterResizeInputs(p)
	return nil
}

// Resize is the resize request of the inputs, for scaling.ParseResize.
func (in ClusterResizeInputs) Resize() scaling.Resize {
	r := scaling.Resize{Number: in.Number, MinSize: in.MinSize, MaxSize: in.MaxSize, Strict: in.Strict}
	if in.AdjustmentType != nil {
		r.AdjustmentType = *in.AdjustmentType
	}
	if in.MinStep != nil {
		r.MinStep = *in.MinStep
	}
	return r
}

// ClusterScaleInputs are the inputs of CLUSTER_SCALE_OUT and
// CLUSTER_SCALE_IN: the number of nodes, when the user gave one.
type ClusterScaleInputs struct {
	Count *int `json:"count,omitzero"`
}

// ClusterDelNodesInputs are CLUSTER_DEL_NODES's inputs: the nodes the user
// named.
type ClusterDelNodesInputs struct {
	Candidates           []string `json:"candidates"`
	Count                int      `json:"count"`
	DestroyAfterDeletion bool     `json:"destroy_after_deletion"`
}

// ClusterAddNodesInputs are CLUSTER_ADD_NODES's inputs: the ids of the
// orphan nodes that join.
type ClusterAddNodesInputs struct {
	Nodes []string `json:"nodes"`
}

// DeletionData is a deletion decision (data.deletion): which nodes leave,
// how many, and how. A key left out is nil, so a policy can tell what the
// policies before it decided; the engine reads a nil flag as true and a nil
// grace period as none.
type DeletionData struct {
	Candidates            []string `json:"candidates,omitzero"`
	Count                 *int     `json:"count,omitzero"`
	DestroyAfterDeletion  *bool    `json:"destroy_after_deletion,omitzero"`
	GracePeriod           *int     `json:"grace_period,omitzero"`
	ReduceDesiredCapacity *bool    `json:"reduce_desired_capacity,omitzero"`
	// Zones and Regions are a placement policy's plan: how many of the
	// nodes leave each availability zone or region.
	Zones   map[string]int `json:"zones,omitzero"`
	Regions map[string]int `json:"regions,omitzero"`
}

// CreationData is a scale-out decision (data.creation): how many nodes to
// add.
type CreationData struct {
	Count *int `json:"count,omitzero"`
	// Zones and Regions are a placement policy's plan: how many of the
	// new nodes go to each availability zone or region.
	Zones   map[string]int `json:"zones,omitzero"`
	Regions map[string]int `json:"regions,omitzero"`
}

// UpdateData is a batching decision (data.update, senlin.policy.batch's):
// the node ids of each batch of a cluster update, in order, and the
// seconds to pause between batches.
type UpdateData struct {
	PauseTime int        `json:"pause_time"`
	Plan      [][]string `json:"plan"`
}

// decodeLoose decodes the JSON object b into v after turning the strings of
// numbers and booleans under the given keys into the numbers and booleans
// they stand for. Other keys decode as they are.
func decodeLoose(b []byte, v any, numbers, bools []string) error {
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
		f, err := schema.ParseDecimal(s)
		if errors.Is(err, schema.ErrNotFinite) {
			return &fieldError{field: k, problem: fmt.Sprintf("must be a finite number, got the string %q", s)}
		}
		if err != nil {
			return &fieldError{field: k, problem: fmt.Sprintf("must be a number, got the string %q", s)}
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
			return &fieldError{field: k, problem: fmt.Sprintf("must be a boolean, got the string %q", s)}
		}
		raw[k] = json.RawMessage(strconv.FormatBool(t))
	}
	norm, err := json.Marshal(raw)
	if err != nil {
		return err
	}
	return json.Unmarshal(norm, v)
}

// jsonString returns the string a JSON value is, if it is one.
func jsonString(r json.RawMessage) (string, bool) {
	r = bytes.TrimSpace(r)
	var s string
	if len(r) == 0 || r[0] != '"' || json.Unmarshal(r, &s) != nil {
		return "", false
	}
	return s, true
}
