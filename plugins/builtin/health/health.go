// Package health is senlin.policy.health 1.0 to 1.2: how a cluster's dead
// nodes are detected (node status polling, polling a URL per node, the
// status of the hosts the driver reports, the driver's node events) and recovered (REBOOT, REBUILD or RECREATE). Grove's
// health loop does the detecting and recovering: attach records the
// policy's registry entry (Senlin's health registry) in the binding's data
// under "health", which the loop follows for the cluster. Checks are
// paused around disruptive actions because the loop leaves a cluster with
// an action running to that action.
package health

import (
	"context"
	"fmt"
	"math"
	"strings"

	"github.com/grovehq/grove/plugins/sdk"
	"github.com/grovehq/grove/plugins/sdk/schema"
)

// TypeName is Senlin's type name, so Senlin specs work unchanged.
const TypeName = "senlin.policy.health"

// Priority is Senlin's priority of the health policy class.
const Priority = 600

// IntervalMin is Senlin's health_check_interval_min: the shortest
// detection interval a policy may ask for, in seconds.
const IntervalMin = 60

// Detection modes.
const (
	LifecycleEvents         = "LIFECYCLE_EVENTS"
	NodeStatusPolling       = "NODE_STATUS_POLLING"
	NodeStatusPollURL       = "NODE_STATUS_POLL_URL"
	HypervisorStatusPolling = "HYPERVISOR_STATUS_POLLING"
)

// Recovery conditionals.
const (
	AnyFailed = "ANY_FAILED"
	AllFailed = "ALL_FAILED"
)

// Properties are the policy's properties, as the schema fills them in.
type Properties struct {
	Detection struct {
		Interval            int    `json:"interval"`
		NodeUpdateTimeout   int    `json:"node_update_timeout"`
		RecoveryConditional string `json:"recovery_conditional"`
		DetectionModes      []Mode `json:"detection_modes"`
	} `json:"detection"`
	Recovery struct {
		Actions []struct {
			Name   string         `json:"name"`
			Params map[string]any `json:"params"`
		} `json:"actions"`
		Fencing           []string `json:"fencing"`
		NodeDeleteTimeout int      `json:"node_delete_timeout"`
		NodeForceRecreate bool     `json:"node_force_recreate"`
	} `json:"recovery"`
}

// Mode is one detection mode.
type Mode struct {
	Type    string  `json:"type"`
	Options Options `json:"options"`
}

// Options are a detection mode's options (those of NODE_STATUS_POLL_URL).
type Options struct {
	PollURL                    string `json:"poll_url"`
	PollURLSSLVerify           bool   `json:"poll_url_ssl_verify"`
	PollURLConnErrorAsUnhealty bool   `json:"poll_url_conn_error_as_unhealthy"`
	PollURLHealthyResponse     string `json:"poll_url_healthy_response"`
	PollURLRetryLimit          int    `json:"poll_url_retry_limit"`
	PollURLRetryInterval       int    `json:"poll_url_retry_interval"`
}

func nonNegative() []schema.Constraint {
	return []schema.Constraint{schema.Range(schema.F(0), schema.F(math.MaxInt32))}
}

// Schema is Senlin's 1.1 layout, which every version takes (1.0's single
// detection type is gone from Senlin too).
func Schema() schema.Schema {
	options := schema.Schema{
		"poll_url":                         {Type: schema.String, Default: "", Description: "URL to poll for node status; {nodename} is replaced by the node's name. Only for NODE_STATUS_POLL_URL."},
		"poll_url_ssl_verify":              {Type: schema.Boolean, Default: true, Description: "Whether to verify the poll URL's TLS certificate."},
		"poll_url_conn_error_as_unhealthy": {Type: schema.Boolean, Default: true, Description: "Whether a connection error makes the node unhealthy."},
		"poll_url_healthy_response":        {Type: schema.String, Default: "", Description: "A regular expression the poll URL's response matches when the node is healthy."},
		"poll_url_retry_limit":             {Type: schema.Integer, Default: int64(3), Description: "How many times a failed poll is retried before the node is unhealthy.", Constraints: nonNegative()},
		"poll_url_retry_interval":          {Type: schema.Integer, Default: int64(3), Description: "Seconds between retries of a failed poll.", Constraints: nonNegative()},
	}
	return schema.Schema{
		"detection": {Type: schema.Map, Required: true, Description: "Policy aspect for node failure detection.", Schema: schema.Schema{
			"interval":            {Type: schema.Integer, Default: int64(60), Description: "Number of seconds between pollings.", Constraints: nonNegative()},
			"node_update_timeout": {Type: schema.Integer, Default: int64(300), Description: "Number of seconds since last node update to wait before checking node health.", Constraints: nonNegative()},
			"recovery_conditional": {Type: schema.String, Default: AnyFailed, Description: "ALL_FAILED: every detection mode must fail before a node is recovered; ANY_FAILED: one failing mode is enough.",
				Constraints: []schema.Constraint{schema.AllowedValues(AllFailed, AnyFailed)}},
			"detection_modes": {Type: schema.List, Description: "List of node failure detection modes.", Elem: &schema.Property{Type: schema.Map, Schema: schema.Schema{
				"type": {Type: schema.String, Required: true, Description: "Type of node failure detection.",
					Constraints: []schema.Constraint{schema.AllowedValues(LifecycleEvents, NodeStatusPolling, NodeStatusPollURL, HypervisorStatusPolling)}},
				"options": {Type: schema.Map, Default: map[string]any{}, Schema: options},
			}}},
		}},
		"recovery": {Type: schema.Map, Required: true, Description: "Policy aspect for node failure recovery.", Schema: schema.Schema{
			"actions": {Type: schema.List, Description: "List of actions to try for node recovery.", Elem: &schema.Property{Type: schema.Map, Schema: schema.Schema{
				"name":   {Type: schema.String, Required: true, Description: "Name of action to execute.", Constraints: []schema.Constraint{schema.AllowedValues("REBOOT", "REBUILD", "RECREATE")}},
				"params": {Type: schema.Map, Description: "Parameters for the action."},
			}}},
			"fencing":             {Type: schema.List, Description: "List of services to be fenced.", Elem: &schema.Property{Type: schema.String, Constraints: []schema.Constraint{schema.AllowedValues("COMPUTE")}}},
			"node_delete_timeout": {Type: schema.Integer, Default: int64(20), Description: "Number of seconds to wait for node deletion to finish and start node creation for recreate recovery option.", Constraints: nonNegative()},
			"node_force_recreate": {Type: schema.Boolean, Default: false, Description: "Create a new node if the node cannot be recovered by its action."},
		}},
	}
}

// Type returns the policy registration.
func Type() sdk.PolicyType {
	var targets []sdk.Target
	for _, phase := range []string{"BEFORE", "AFTER"} {
		for _, a := range []string{"CLUSTER_RECOVER", "CLUSTER_DEL_NODES", "CLUSTER_SCALE_IN", "CLUSTER_RESIZE", "CLUSTER_UPDATE", "CLUSTER_REPLACE_NODES", "NODE_DELETE"} {
			targets = append(targets, sdk.Target{Phase: phase, Action: a})
		}
	}
	return sdk.PolicyType{
		Type:        TypeName,
		Versions:    []string{"1.0", "1.1", "1.2"},
		Description: "Detects a cluster's dead nodes (node status, a URL per node, driver events) and recovers them (REBOOT, REBUILD, RECREATE).",
		Schema:      Schema(),
		Targets:     targets,
		Priority:    Priority,
		Singleton:   true,
		Policy:      policy{},
		Validate: func(_ context.Context, spec sdk.Spec) schema.Diagnostics {
			p, err := props(spec)
			if err != nil {
				return schema.Diagnostics{{Field: "properties", Message: err.Error()}}
			}
			return validate(p)
		},
	}
}

func props(spec sdk.Spec) (Properties, error) {
	var p Properties
	if err := spec.Decode(&p); err != nil {
		return p, fmt.Errorf("the properties of policy %s cannot be read: %w", spec.ID, err)
	}
	return p, nil
}

// validate holds Senlin's rules: at most one recovery action, an interval
// of at least IntervalMin, detection modes either all polling ones or one
// LIFECYCLE_EVENTS, each once; and Grove's: a poll URL for
// NODE_STATUS_POLL_URL.
func validate(p Properties) schema.Diagnostics {
	if n := len(p.Recovery.Actions); n > 1 {
		return schema.Diagnostics{{Field: "properties.recovery.actions", Message: fmt.Sprintf("Only one recovery action is supported; %d are listed.", n)}}
	}
	if p.Detection.Interval < IntervalMin {
		return schema.Diagnostics{{Field: "properties.detection.interval", Message: fmt.Sprintf("Specified interval of %d seconds has to be larger than health_check_interval_min of %d seconds set in configuration.", p.Detection.Interval, IntervalMin)}}
	}
	seen := map[string]bool{}
	lifecycle := false
	for i, m := range p.Detection.DetectionModes {
		field := fmt.Sprintf("properties.detection.detection_modes[%d]", i)
		if seen[m.Type] {
			return schema.Diagnostics{{Field: field + ".type", Message: fmt.Sprintf("Detection mode %s is listed twice.", m.Type)}}
		}
		seen[m.Type] = true
		switch m.Type {
		case LifecycleEvents:
			lifecycle = true
		case NodeStatusPollURL:
			if m.Options.PollURL == "" {
				return schema.Diagnostics{{Field: field + ".options.poll_url", Message: "NODE_STATUS_POLL_URL needs a poll_url."}}
			}
		}
	}
	if lifecycle && len(p.Detection.DetectionModes) > 1 {
		return schema.Diagnostics{{Field: "properties.detection.detection_modes", Message: "Detection mode LIFECYCLE_EVENTS cannot be combined with other detection modes."}}
	}
	return nil
}

type policy struct{}

// Attach registers the cluster with the health loop: the registry entry
// goes into the binding's data under "health". REBOOT and REBUILD are
// Nova's, as in Senlin.
func (policy) Attach(_ context.Context, spec sdk.Spec, c sdk.Cluster) (map[string]any, error) {
	p, err := props(spec)
	if err != nil {
		return nil, err
	}
	action := "RECREATE"
	var params map[string]any
	if len(p.Recovery.Actions) > 0 {
		action, params = p.Recovery.Actions[0].Name, p.Recovery.Actions[0].Params
	}
	if action != "RECREATE" && !strings.HasPrefix(c.ProfileType, "os.nova.server") && c.Profile.Type != "os.nova.server" {
		return nil, fmt.Errorf("Recovery action %s is only applicable to os.nova.server clusters.", action)
	}
	modes := make([]any, len(p.Detection.DetectionModes))
	for i, m := range p.Detection.DetectionModes {
		modes[i] = map[string]any{"type": m.Type, "options": map[string]any{
			"poll_url": m.Options.PollURL, "poll_url_ssl_verify": m.Options.PollURLSSLVerify,
			"poll_url_conn_error_as_unhealthy": m.Options.PollURLConnErrorAsUnhealty, "poll_url_healthy_response": m.Options.PollURLHealthyResponse,
			"poll_url_retry_limit": m.Options.PollURLRetryLimit, "poll_url_retry_interval": m.Options.PollURLRetryInterval}}
	}
	return map[string]any{"health": map[string]any{
		"interval":             p.Detection.Interval,
		"node_update_timeout":  p.Detection.NodeUpdateTimeout,
		"recovery_conditional": p.Detection.RecoveryConditional,
		"detection_modes":      modes,
		"recover_action":       action,
		"recover_params":       params,
		"node_delete_timeout":  p.Recovery.NodeDeleteTimeout,
		"node_force_recreate":  p.Recovery.NodeForceRecreate,
	}}, nil
}

func (policy) Detach(context.Context, sdk.Spec, sdk.Cluster, map[string]any) error { return nil }

// Check records data.health before the actions that do not disrupt the
// cluster, as Senlin's pre_op does. Around disruptive actions (shrinking,
// updating, recovering, replacing) there is nothing to do: the health loop
// leaves a cluster with an action running to that action.
func (policy) Check(_ context.Context, req sdk.CheckRequest) (sdk.CheckResult, error) {
	if req.Phase != "BEFORE" || disruptive(req) {
		return sdk.CheckResult{}, nil
	}
	p, err := props(req.Policy)
	if err != nil {
		return sdk.CheckResult{}, err
	}
	action := "RECREATE"
	if len(p.Recovery.Actions) > 0 {
		action = p.Recovery.Actions[0].Name
	}
	return sdk.CheckResult{Data: map[string]any{"health": map[string]any{"recover_action": action, "fencing": p.Recovery.Fencing}}}, nil
}

// disruptive says whether an action removes, replaces or recovers nodes.
func disruptive(req sdk.CheckRequest) bool {
	switch req.Action.Name {
	case "CLUSTER_RESIZE":
		var d sdk.DeletionData
		if ok, err := req.Action.DecodeData(sdk.DataDeletion, &d); ok && err == nil && d.Count != nil && *d.Count > 0 {
			return true
		}
		var in sdk.ClusterResizeInputs
		if err := req.Action.DecodeInputs(&in); err != nil || in.Number == nil {
			return false
		}
		return *in.Number < 0 || (in.AdjustmentType != nil && *in.AdjustmentType == "EXACT_CAPACITY" && int(*in.Number) < len(req.Cluster.Nodes))
	case "CLUSTER_RECOVER", "CLUSTER_DEL_NODES", "CLUSTER_SCALE_IN", "CLUSTER_UPDATE", "CLUSTER_REPLACE_NODES", "NODE_DELETE":
		return true
	}
	return false
}
