// Package deletion is senlin.policy.deletion: it chooses which nodes leave a
// cluster when it shrinks, and how (destroy, grace period, desired capacity).
package deletion

import (
	"context"
	"errors"
	"fmt"
	"math"
	"net/url"

	"github.com/grovehq/grove/plugins/builtin/placement/decide"
	"github.com/grovehq/grove/plugins/sdk"
	"github.com/grovehq/grove/plugins/sdk/scaling"
	"github.com/grovehq/grove/plugins/sdk/schema"
)

// TypeName is Senlin's type name, so Senlin specs work unchanged.
const TypeName = "senlin.policy.deletion"

// MaxNodes is the size limit used when a resize is parsed inside the policy;
// the engine has already enforced its own limit before the check runs.
const MaxNodes = 1 << 30

// Type returns the policy registration.
func Type() sdk.PolicyType {
	return sdk.PolicyType{
		Type:        TypeName,
		Versions:    []string{"1.0", "1.1"},
		Description: "Chooses the nodes removed when a cluster shrinks. ERROR and WARNING nodes go first, then by criteria.",
		Schema: schema.Schema{
			"criteria": {Type: schema.String, Default: scaling.Random, Description: "How victims are chosen.",
				Constraints: []schema.Constraint{schema.AllowedValues(scaling.OldestFirst, scaling.OldestProfileFirst, scaling.YoungestFirst, scaling.Random)}},
			"destroy_after_deletion":  {Type: schema.Boolean, Default: true, Description: "Destroy removed nodes instead of keeping them as orphans."},
			"grace_period":            {Type: schema.Integer, Default: int64(0), Description: "Seconds to wait before removing nodes.", Constraints: []schema.Constraint{schema.Range(schema.F(0), schema.F(math.MaxInt32))}},
			"reduce_desired_capacity": {Type: schema.Boolean, Default: true, Description: "Lower desired_capacity by the number of nodes removed."},
			"hooks": {Type: schema.Map, Default: map[string]any{}, Description: "Lifecycle hook properties (version 1.1): before a node is deleted, the hook is told and the deletion waits for complete_lifecycle or the timeout. Grove implements type webhook.",
				Schema: schema.Schema{
					"type": {Type: schema.String, Default: "zaqar", Description: "Type of lifecycle hook.", Constraints: []schema.Constraint{schema.AllowedValues("zaqar", "webhook")}},
					"params": {Type: schema.Map, Default: map[string]any{}, Schema: schema.Schema{
						"queue": {Type: schema.String, Default: "", Description: "Zaqar queue to receive lifecycle hook message."},
						"url":   {Type: schema.String, Default: "", Description: "Url sink to which to send lifecycle hook message."},
					}},
					"timeout": {Type: schema.Integer, Default: int64(0), Description: "Number of seconds before actual deletion happens; 0 waits as long as the action may run.",
						Constraints: []schema.Constraint{schema.Range(schema.F(0), schema.F(math.MaxInt32))}},
				}},
		},
		Targets: []sdk.Target{
			{Phase: "BEFORE", Action: "CLUSTER_SCALE_IN"}, {Phase: "BEFORE", Action: "CLUSTER_DEL_NODES"},
			{Phase: "BEFORE", Action: "CLUSTER_RESIZE"}, {Phase: "BEFORE", Action: "NODE_DELETE"},
		},
		Priority:  400,
		Singleton: true,
		Policy:    policy{},
		Validate: func(_ context.Context, spec sdk.Spec) schema.Diagnostics {
			var p properties
			if err := spec.Decode(&p); err != nil {
				return diagnostics(err)
			}
			return p.Hooks.validate()
		},
	}
}

// properties are the policy's properties, as the schema above fills them in.
type properties struct {
	Criteria              string `json:"criteria"`
	DestroyAfterDeletion  bool   `json:"destroy_after_deletion"`
	GracePeriod           int    `json:"grace_period"`
	ReduceDesiredCapacity bool   `json:"reduce_desired_capacity"`
	Hooks                 hooks  `json:"hooks"`
}

// hooks is the lifecycle hook, Senlin's hooks property.
type hooks struct {
	Type   string `json:"type"`
	Params struct {
		Queue string `json:"queue"`
		URL   string `json:"url"`
	} `json:"params"`
	Timeout int `json:"timeout"`
}

// set says whether the spec gives a hook: a queue or a URL to tell.
func (h hooks) set() bool { return h.Params.Queue != "" || h.Params.URL != "" }

// validate refuses hooks Grove cannot run: Zaqar queues (Grove has no
// Zaqar) and webhooks without an http or https URL.
func (h hooks) validate() schema.Diagnostics {
	if !h.set() {
		return nil
	}
	if h.Type != "webhook" {
		return schema.Diagnostics{{Field: "properties.hooks.type", Message: "Grove has no Zaqar queue to post lifecycle hook messages to; use type webhook with params.url."}}
	}
	u, err := url.Parse(h.Params.URL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return schema.Diagnostics{{Field: "properties.hooks.params.url", Message: fmt.Sprintf("'%s' is not an http or https URL.", h.Params.URL)}}
	}
	return nil
}

// data is the hook as the engine reads it from data.hooks.
func (h hooks) data() map[string]any {
	return map[string]any{"type": h.Type, "params": map[string]any{"queue": h.Params.Queue, "url": h.Params.URL}, "timeout": h.Timeout}
}

// diagnostics words a decoding error of the properties for Validate.
func diagnostics(err error) schema.Diagnostics {
	var de *sdk.DecodeError
	if errors.As(err, &de) {
		return schema.Diagnostics{de.Diagnostic()}
	}
	return schema.Diagnostics{{Field: "properties", Message: err.Error()}}
}

type policy struct{}

func (policy) Attach(context.Context, sdk.Spec, sdk.Cluster) (map[string]any, error) { return nil, nil }
func (policy) Detach(context.Context, sdk.Spec, sdk.Cluster, map[string]any) error   { return nil }

// Check fills data.deletion with the victims and the policy's flags.
func (policy) Check(_ context.Context, req sdk.CheckRequest) (sdk.CheckResult, error) {
	var p properties
	if err := req.Policy.Decode(&p); err != nil {
		return sdk.CheckResult{}, fmt.Errorf("the properties of policy %s cannot be read: %w", req.Policy.ID, err)
	}
	var victims []string
	// The hook applies to the nodes the policy chooses, not to those the
	// user named, as in Senlin.
	chosen := true
	switch req.Action.Name {
	case "CLUSTER_DEL_NODES":
		var in sdk.ClusterDelNodesInputs
		if err := req.Action.DecodeInputs(&in); err != nil {
			return sdk.CheckResult{Refuse: unreadable(req.Action, err)}, nil
		}
		victims = in.Candidates
	case "NODE_DELETE":
		victims = []string{req.Action.Target}
	}
	chosen = len(victims) == 0
	var decided sdk.DeletionData
	if _, err := req.Action.DecodeData(sdk.DataDeletion, &decided); err != nil {
		return sdk.CheckResult{Refuse: fmt.Sprintf("The deletion decided by an earlier policy cannot be read: %v.", err)}, nil
	}
	if len(victims) == 0 {
		count, err := count(req)
		if err != nil {
			return sdk.CheckResult{Refuse: err.Error()}, nil
		}
		if count <= 0 {
			return sdk.CheckResult{}, nil
		}
		// A placement policy's plan says how many leave each region or
		// zone (regions first, as Senlin); the criterion picks them there.
		switch {
		case decided.Regions != nil:
			victims = decide.Victims(areaVictims(req.Cluster, decide.RegionOf), decided.Regions, p.Criteria)
		case decided.Zones != nil:
			victims = decide.Victims(areaVictims(req.Cluster, decide.ZoneOf), decided.Zones, p.Criteria)
		default:
			victims = scaling.SelectVictims(candidates(req.Cluster), count, p.Criteria, nil)
		}
	}
	// The keys and value types of the engine's data.deletion, so the
	// decision travels as a typed message; a placement plan stays beside
	// it, as Senlin merges the two.
	out := map[string]any{
		"count":                   len(victims),
		"candidates":              victims,
		"destroy_after_deletion":  p.DestroyAfterDeletion,
		"grace_period":            p.GracePeriod,
		"reduce_desired_capacity": p.ReduceDesiredCapacity,
	}
	if decided.Regions != nil {
		out["regions"] = decided.Regions
	}
	if decided.Zones != nil {
		out["zones"] = decided.Zones
	}
	data := map[string]any{sdk.DataDeletion: out}
	if chosen && p.Hooks.set() {
		data["hooks"] = p.Hooks.data()
	}
	return sdk.CheckResult{Data: data}, nil
}

// areaVictims are the cluster's nodes with the region or zone areaOf
// reads from their data.
func areaVictims(c sdk.Cluster, areaOf func(map[string]any) string) []decide.Victim {
	cs := candidates(c)
	out := make([]decide.Victim, len(cs))
	for i, n := range c.Nodes {
		out[i] = decide.Victim{Candidate: cs[i], Area: areaOf(n.Data)}
	}
	return out
}

// count is how many nodes leave: what a policy checked before decided, or
// what the action asks.
func count(req sdk.CheckRequest) (int, error) {
	var decided sdk.DeletionData
	if _, err := req.Action.DecodeData(sdk.DataDeletion, &decided); err != nil {
		return 0, fmt.Errorf("The deletion decided by an earlier policy cannot be read: %w.", err)
	}
	if decided.Count != nil {
		return *decided.Count, nil
	}
	switch req.Action.Name {
	case "CLUSTER_SCALE_IN":
		var in sdk.ClusterScaleInputs
		if err := req.Action.DecodeInputs(&in); err != nil {
			return 0, errors.New(unreadable(req.Action, err))
		}
		if in.Count != nil {
			return *in.Count, nil
		}
		return 1, nil
	case "CLUSTER_RESIZE":
		var in sdk.ClusterResizeInputs
		if err := req.Action.DecodeInputs(&in); err != nil {
			return 0, errors.New(unreadable(req.Action, err))
		}
		c := req.Cluster
		res, err := scaling.ParseResize(scaling.Bounds{Desired: c.DesiredCapacity, Min: c.MinSize, Max: c.MaxSize}, len(c.Nodes), in.Resize(), MaxNodes)
		if err != nil {
			return 0, err
		}
		return res.Delete, nil
	}
	return 0, fmt.Errorf("the deletion policy cannot size action %s", req.Action.Name)
}

// unreadable is the refusal of an action whose inputs cannot be read.
func unreadable(a sdk.Action, err error) string {
	return fmt.Sprintf("The inputs of action %s cannot be read: %v.", a.Name, err)
}

func candidates(c sdk.Cluster) []scaling.Candidate {
	out := make([]scaling.Candidate, len(c.Nodes))
	for i, n := range c.Nodes {
		out[i] = scaling.Candidate{ID: n.ID, Status: n.Status, Tainted: n.Tainted, CreatedAt: n.CreatedAt, ProfileCreatedAt: n.ProfileCreatedAt}
	}
	return out
}
