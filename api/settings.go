package api

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Orchestration settings travel in a cluster's config under these keys, so
// Senlin clients carry them unchanged and the engine reads them from one
// place.
const (
	ConfigPlacement    = "grove.placement"
	ConfigAffinity     = "grove.affinity"
	ConfigRestart      = "grove.restart"
	ConfigUpdate       = "grove.update"
	ConfigDependencies = "grove.dependencies"
	ConfigFailover     = "grove.failover"
)

// Numeric bounds of the API (docs/api.md "Request limits"). Senlin keeps
// sizes and timeouts in 32-bit columns; 2^31-1 seconds is also far inside
// what time.Duration holds, so a timeout can never wrap into the past. The
// agent checks them on every request and `grove validate` on every
// definition, so a set that validates also applies.
const (
	// MaxTimeout is the largest action or cluster timeout, in seconds.
	MaxTimeout = math.MaxInt32
	// MaxCount is the largest size, count, adjustment or priority.
	MaxCount = math.MaxInt32
)

// MaxInlineIDs is how many ids GET /v1/clusters/{id} shows in a cluster's
// nodes and GET /v1/actions/{id} in an action's depends_on. Past it the
// list holds its first MaxInlineIDs ids and a summary (IDsSummary) counts
// the whole list by status and names the request that pages the rest, so
// a read costs a page whatever the cluster's size.
const MaxInlineIDs = 1000

// NamePattern is Senlin's rule for the names of profiles, policies,
// clusters and nodes (and of tokens and projects): 1 to 255 letters, digits,
// '.', '_', '~' and '-', letters including CJK scripts. The agent holds every
// request to it (core/model.ValidateName) and the Terraform provider every
// plan, from this one pattern.
const NamePattern = `^[` + nameChars + `]{1,255}$`

// nameChars is the character class of NamePattern.
const nameChars = `\p{Han}\p{Hiragana}\p{Katakana}\p{Hangul}A-Za-z0-9._~-`

// Value sets of the orchestration settings (OpenSVC placement, SwarmKit
// restart and update, SMF dependencies).
var (
	PlacementPolicies = []string{"nodes order", "load avg", "spread", "score", "shift", "none"}
	RestartConditions = []string{"none", "on-failure", "any"}
	FailureActions    = []string{"pause", "continue", "rollback"}
	UpdateOrders      = []string{"stop-first", "start-first"}
	Groupings         = []string{"require_all", "require_any", "optional_all", "exclude_all"}
	RestartOn         = []string{"none", "error", "restart", "refresh"}
	// Topologies and OrchestrateModes are OpenSVC's (semantics §A.5):
	// replicated is today's default, global SwarmKit's one per host.
	Topologies       = []string{"failover", "flex", "replicated", "global"}
	OrchestrateModes = []string{"no", "start", "ha"}
)

// FieldError names a setting and the rule it breaks.
type FieldError struct {
	Field string
	Rule  string
}

func (e FieldError) Error() string { return e.Field + ": " + e.Rule }

// ValidateSettings checks the orchestration settings in a cluster config and
// returns every violation. Unknown grove.* keys are violations too.
func ValidateSettings(config map[string]any) []FieldError {
	var errs []FieldError
	add := func(field, format string, args ...any) {
		errs = append(errs, FieldError{Field: field, Rule: fmt.Sprintf(format, args...)})
	}
	for k := range config {
		if strings.HasPrefix(k, "grove.") && !slices.Contains([]string{ConfigPlacement, ConfigAffinity, ConfigRestart, ConfigUpdate, ConfigDependencies, ConfigFailover}, k) {
			add("config."+k, "is not a Grove setting; known settings are %s, %s, %s, %s, %s and %s.", ConfigPlacement, ConfigAffinity, ConfigRestart, ConfigUpdate, ConfigDependencies, ConfigFailover)
		}
	}
	// An empty format is Senlin's default, node-$8R.
	if v, ok := config[ConfigNodeNameFormat]; ok && v != nil {
		if f, isString := v.(string); !isString {
			add("config."+ConfigNodeNameFormat, "must be a string such as \"web-$3I\", got %s.", quote(v))
		} else if f != "" {
			if rule := nodeNameFormatRule(f); rule != "" {
				add("config."+ConfigNodeNameFormat, "%s", rule)
			}
		}
	}
	obj := func(key string) (map[string]any, bool) {
		v, ok := config[key]
		if !ok || v == nil {
			return nil, false
		}
		m, isMap := v.(map[string]any)
		if !isMap {
			add("config."+key, "must be an object.")
			return nil, false
		}
		return m, true
	}
	oneOf := func(field string, v any, allowed []string) {
		s, ok := v.(string)
		if !ok || !slices.Contains(allowed, s) {
			add(field, "%v is not one of %s.", quote(v), strings.Join(quoteAll(allowed), ", "))
		}
	}
	duration := func(field string, v any) {
		s, ok := v.(string)
		if !ok {
			add(field, "must be a duration such as \"5s\" or \"1m\".")
			return
		}
		d, err := time.ParseDuration(s)
		if err != nil || d < 0 {
			add(field, "%q is not a non-negative duration such as \"5s\" or \"1m\".", s)
		}
	}
	// Judged on the number as sent: converting first would wrap 1e20.
	intAtLeast := func(field string, v any, min float64) {
		f, ok := v.(float64)
		if !ok || f != math.Trunc(f) || f < min || f > math.MaxInt32 {
			add(field, "must be an integer from %v to %d, got %s.", min, math.MaxInt32, quoteNumber(v))
		}
	}
	strList := func(field string, v any) {
		items, ok := v.([]any)
		if !ok {
			add(field, "must be a list of names.")
			return
		}
		for i, it := range items {
			if s, ok := it.(string); !ok || s == "" {
				add(fmt.Sprintf("%s[%d]", field, i), "must be a name.")
			}
		}
	}
	only := func(prefix string, m map[string]any, keys ...string) {
		for k := range m {
			if !slices.Contains(keys, k) {
				add(prefix+"."+k, "is not a setting here; use %s.", strings.Join(keys, ", "))
			}
		}
	}
	if p, ok := obj(ConfigPlacement); ok {
		only("placement", p, "policy", "hosts")
		if v, ok := p["policy"]; ok {
			oneOf("placement.policy", v, PlacementPolicies)
		}
		if v, ok := p["hosts"]; ok {
			strList("placement.hosts", v)
		}
	}
	if a, ok := obj(ConfigAffinity); ok {
		only("affinity", a, "hard_affinity", "hard_anti_affinity", "soft_affinity", "soft_anti_affinity")
		for k, v := range a {
			strList(k, v)
		}
	}
	if r, ok := obj(ConfigRestart); ok {
		only("restart", r, "condition", "delay", "max_attempts", "window")
		if v, ok := r["condition"]; ok {
			oneOf("restart.condition", v, RestartConditions)
		}
		if v, ok := r["delay"]; ok {
			duration("restart.delay", v)
		}
		if v, ok := r["max_attempts"]; ok {
			intAtLeast("restart.max_attempts", v, 0)
		}
		if v, ok := r["window"]; ok {
			duration("restart.window", v)
		}
	}
	if u, ok := obj(ConfigUpdate); ok {
		only("update", u, "parallelism", "delay", "failure_action", "monitor", "max_failure_ratio", "order")
		if v, ok := u["parallelism"]; ok {
			intAtLeast("update.parallelism", v, 0)
		}
		for _, k := range []string{"delay", "monitor"} {
			if v, ok := u[k]; ok {
				duration("update."+k, v)
			}
		}
		if v, ok := u["failure_action"]; ok {
			oneOf("update.failure_action", v, FailureActions)
		}
		if v, ok := u["max_failure_ratio"]; ok {
			if f, ok := v.(float64); !ok || f < 0 || f > 1 {
				add("update.max_failure_ratio", "must be a number from 0 to 1, got %v.", quote(v))
			}
		}
		if v, ok := u["order"]; ok {
			oneOf("update.order", v, UpdateOrders)
		}
	}
	if f, ok := obj(ConfigFailover); ok {
		validateFailover(f, add, only, oneOf, duration, intAtLeast)
	}
	if d, ok := obj(ConfigDependencies); ok {
		for name, v := range d {
			dep, isMap := v.(map[string]any)
			field := "dependency." + name
			if !isMap {
				add(field, "must be an object with grouping, restart_on and clusters.")
				continue
			}
			only(field, dep, "grouping", "restart_on", "clusters")
			if g, ok := dep["grouping"]; ok {
				oneOf(field+".grouping", g, Groupings)
			} else {
				add(field+".grouping", "is required.")
			}
			if r, ok := dep["restart_on"]; ok {
				oneOf(field+".restart_on", r, RestartOn)
			}
			if c, ok := dep["clusters"]; ok {
				strList(field+".clusters", c)
			} else {
				add(field+".clusters", "is required.")
			}
		}
	}
	slices.SortFunc(errs, func(a, b FieldError) int { return strings.Compare(a.Field, b.Field) })
	return errs
}

func quote(v any) string {
	if s, ok := v.(string); ok {
		return fmt.Sprintf("%q", s)
	}
	return fmt.Sprint(v)
}

// quoteNumber writes a value for a message; whole numbers in full.
func quoteNumber(v any) string {
	if f, ok := v.(float64); ok && f == math.Trunc(f) && math.Abs(f) < 1e21 {
		return strconv.FormatFloat(f, 'f', 0, 64)
	}
	return quote(v)
}

func quoteAll(ss []string) []string {
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = fmt.Sprintf("%q", s)
	}
	return out
}

// validateFailover checks grove.failover (docs/failover.md): the topology
// and orchestrate mode, the flex counts and their order, and the periods.
// The engine runs the instance monitors of a failover or flex cluster of
// any profile type: over the agent hosts for local.process, over the
// hosts its driver reports for the others.
func validateFailover(f map[string]any, add func(string, string, ...any), only func(string, map[string]any, ...string),
	oneOf func(string, any, []string), duration func(string, any), intAtLeast func(string, any, float64)) {
	only("failover", f, "topology", "orchestrate", "flex_min", "flex_max", "flex_target", "ready_period", "maintenance_grace_period", "rejoin_grace_period")
	if v, ok := f["topology"]; ok {
		oneOf("failover.topology", v, Topologies)
	}
	if v, ok := f["orchestrate"]; ok {
		oneOf("failover.orchestrate", v, OrchestrateModes)
	}
	counts := map[string]float64{}
	for _, k := range []string{"flex_min", "flex_max", "flex_target"} {
		v, ok := f[k]
		if !ok {
			continue
		}
		if n, isNum := v.(float64); isNum && n == math.Trunc(n) && n >= 0 && n <= math.MaxInt32 {
			counts[k] = n
		}
		intAtLeast("failover."+k, v, 0)
		if t, _ := f["topology"].(string); t != "flex" {
			add("failover."+k, "applies only to the flex topology; the topology is %s.", quote(cmp.Or(t, "failover")))
		}
	}
	lo, hasLo := counts["flex_min"]
	hi, hasHi := counts["flex_max"]
	tg, hasTg := counts["flex_target"]
	switch {
	case hasLo && hasHi && lo > hi:
		add("failover.flex_min", "%s is above flex_max %s.", quoteNumber(lo), quoteNumber(hi))
	case hasTg && hasLo && tg < lo:
		add("failover.flex_target", "%s is below flex_min %s.", quoteNumber(tg), quoteNumber(lo))
	case hasTg && hasHi && tg > hi:
		add("failover.flex_target", "%s is above flex_max %s.", quoteNumber(tg), quoteNumber(hi))
	}
	for _, k := range []string{"ready_period", "maintenance_grace_period", "rejoin_grace_period"} {
		if v, ok := f[k]; ok {
			duration("failover."+k, v)
		}
	}
}
