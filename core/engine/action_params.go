package engine

import (
	"maps"
	"math"
	"slices"
	"strings"

	"github.com/grovehq/grove/plugins/sdk/scaling"
)

// paramRule judges one parameter of a cluster action on its value alone,
// naming field in its error. What depends on the cluster (its size, its
// members, its policies) is judged when the action is submitted.
type paramRule func(field string, v any) error

// actionParams is what a cluster action takes, parameter by parameter.
type actionParams struct {
	rules map[string]paramRule
	// open actions pass on parameters they do not know, as they always
	// have (check hands its parameters to the policies as Senlin does).
	open bool
}

// clusterActionParams holds, per action key of POST /v1/clusters/{id}/actions
// that a webhook can start, the rules of its parameters. The action's input
// builder holds a request to them, and a receiver's params are held to the
// same rules when it is created or changed: params every trigger would be
// refused for are refused then, instead of making a dead webhook.
var clusterActionParams = map[string]actionParams{
	"scale_out": {rules: map[string]paramRule{"count": intRule(1, MaxCount)}},
	"scale_in":  {rules: map[string]paramRule{"count": intRule(1, MaxCount)}},
	"resize": {rules: map[string]paramRule{
		"adjustment_type": func(field string, v any) error {
			if s, _ := v.(string); !slices.Contains([]string{scaling.ExactCapacity, scaling.ChangeInCapacity, scaling.ChangeInPercentage}, s) {
				return BadRequest("%s: %v is not one of EXACT_CAPACITY, CHANGE_IN_CAPACITY, CHANGE_IN_PERCENTAGE.", field, v)
			}
			return nil
		},
		"number":   resizeNumberRule(-MaxCount, MaxCount, false),
		"min_size": resizeNumberRule(0, MaxCount, true),
		"max_size": resizeNumberRule(-1, MaxCount, true),
		"min_step": resizeNumberRule(0, MaxCount, true),
		"strict":   boolRule,
	}},
	"recover":       {rules: pick(recoverParamRules, clusterRecoverParams...)},
	"del_nodes":     {rules: map[string]paramRule{"nodes": nodeListRule, "destroy_after_deletion": boolRule}},
	"add_nodes":     {rules: map[string]paramRule{"nodes": nodeListRule}, open: true},
	"replace_nodes": {rules: map[string]paramRule{"nodes": nodeMapRule}, open: true},
	"policy_attach": {rules: policyParamRules, open: true},
	// A detach has always ignored enabled and priority (the CLI may send
	// them), so they pass unjudged.
	"policy_detach": {rules: pick(policyParamRules, "policy_id"), open: true},
	"policy_update": {rules: policyParamRules, open: true},
	"check":         {open: true},
}

// checkActionParams holds p, the parameters of the cluster action name, to
// clusterActionParams: a parameter the action does not take, or a value its
// rule refuses, is a 400 naming prefix.<parameter>. Parameters that may be
// left out are not asked for: a receiver's trigger can add them.
func checkActionParams(name, prefix string, p map[string]any) error {
	return clusterActionParams[name].check(name, prefix, p)
}

// check holds p, the parameters of the action name, to ap's rules, as
// checkActionParams says.
func (ap actionParams) check(name, prefix string, p map[string]any) error {
	// In key order, so the parameter an error names does not vary.
	for _, k := range slices.Sorted(maps.Keys(p)) {
		field := prefix + "." + k
		rule, ok := ap.rules[k]
		switch {
		case k == "":
			return BadRequest("%s holds a parameter with an empty name (a query's \"&=1\", a body's \"\": 1); every parameter needs a name.", prefix)
		case ok:
			if err := rule(field, p[k]); err != nil {
				return err
			}
		case !ap.open && len(ap.rules) == 0:
			return BadRequest("%s is not a %s parameter; %s takes none.", field, name, name)
		case !ap.open:
			return BadRequest("%s is not a %s parameter; use %s.", field, name, strings.Join(slices.Sorted(maps.Keys(ap.rules)), ", "))
		}
	}
	return nil
}

// clusterRecoverParams are the recover parameters a cluster takes; a node
// takes force_recreate and delete_timeout besides.
var clusterRecoverParams = []string{"operation", "operation_params", "check", "check_capacity"}

// recoverParamRules are the parameters of a cluster's and a node's
// recover; recoverInputs says which of them each takes.
var recoverParamRules = map[string]paramRule{
	"operation": func(field string, v any) error {
		s, _ := v.(string)
		if !slices.Contains([]string{"REBOOT", "REBUILD", "RECREATE"}, strings.ToUpper(s)) {
			return BadRequest("%s: %v is not one of REBOOT, REBUILD, RECREATE.", field, v)
		}
		return nil
	},
	"operation_params": func(field string, v any) error {
		if _, isMap := v.(map[string]any); v != nil && !isMap {
			return BadRequest("%s must be an object.", field)
		}
		return nil
	},
	"check":          boolRule,
	"check_capacity": boolRule,
	"force_recreate": boolRule,
	"delete_timeout": intRule(0, MaxTimeout),
}

var policyParamRules = map[string]paramRule{
	"policy_id": func(field string, v any) error {
		if s, _ := v.(string); s == "" {
			return BadRequest("%s is required.", field)
		}
		return nil
	},
	"enabled":  boolRule,
	"priority": intRule(0, MaxCount),
}

func pick(rules map[string]paramRule, keys ...string) map[string]paramRule {
	out := make(map[string]paramRule, len(keys))
	for _, k := range keys {
		out[k] = rules[k]
	}
	return out
}

// intRule is intParam's rule; a null is the parameter left out.
func intRule(min, max int) paramRule {
	return func(field string, v any) error {
		if v == nil {
			return nil
		}
		_, err := intParam(field, v, min, max)
		return err
	}
}

func boolRule(field string, v any) error {
	if _, err := scaling.Bool(v); err != nil {
		return BadRequest("%s must be a boolean.", field)
	}
	return nil
}

// resizeNumberRule judges a resize number as sent, before anything
// converts it, so an error shows the client's value and arithmetic cannot
// overflow.
func resizeNumberRule(min, max int, integer bool) paramRule {
	return func(field string, v any) error {
		if v == nil {
			return nil
		}
		f, err := scaling.Float(v)
		if err != nil || math.IsNaN(f) || math.IsInf(f, 0) {
			return BadRequest("%s must be a number, got %s.", field, quoteValue(v))
		}
		if integer && f != math.Trunc(f) {
			return BadRequest("%s must be an integer, got %s.", field, FormatNumber(f))
		}
		if f < float64(min) || f > float64(max) {
			if !integer {
				return BadRequest("%s must be a number from %d to %d, got %s.", field, min, max, FormatNumber(f))
			}
			return RangeError(field, min, max, FormatNumber(f))
		}
		return nil
	}
}

func nodeListRule(field string, v any) error {
	_, err := stringList(field, v)
	return err
}

func nodeMapRule(field string, v any) error {
	pairs, ok := v.(map[string]any)
	if !ok {
		return BadRequest("%s must be a map of old node to new node.", field)
	}
	if len(pairs) == 0 {
		return BadRequest("%s must not be empty.", field)
	}
	return nil
}
