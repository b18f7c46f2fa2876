// Package placement decides where a cluster's nodes go, as pure functions of
// a snapshot of hosts and the instances on them: OpenSVC's candidate
// filtering, its six placement policies and its affinities between
// clusters (../shared/reference/semantics.md §A.2–A.4), and SwarmKit's
// global mode, one node per eligible host (§B.4). Nothing here does I/O:
// the engine and the grove.policy.placement plugin build a Snapshot, call
// Decide and apply the Decision; `grove placement simulate` does the same
// with a snapshot read from a file.
package placement

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
)

// The placement policies (the `placement` keyword), the default first.
const (
	NodesOrder = "nodes order"
	LoadAvg    = "load avg"
	Spread     = "spread"
	Score      = "score"
	Shift      = "shift"
	None       = "none"
)

// Policies are the accepted placement policies, the default first.
var Policies = []string{NodesOrder, LoadAvg, Spread, Score, Shift, None}

// Host states: whether the host answers (up), is gone (down), or announced
// that it is going away for a while (maintenance, OpenSVC §A.9: its nodes
// are kept, nothing new lands on it).
const (
	StateUp          = "up"
	StateDown        = "down"
	StateMaintenance = "maintenance"
)

// Host availabilities an operator sets (SwarmKit's): active takes new
// nodes, pause takes none, drain has its nodes moved away.
const (
	Active = "active"
	Pause  = "pause"
	Drain  = "drain"
)

// Instance states. Running and starting count as up for soft affinities
// (§A.4); only running satisfies a hard affinity or violates a hard
// anti-affinity.
const (
	InstanceRunning  = "running"
	InstanceStarting = "starting"
	InstanceStopped  = "stopped"
	InstanceFailed   = "failed"
)

// Host is a place a driver puts nodes, as the decision sees it.
type Host struct {
	Name   string            `json:"name"`
	Labels map[string]string `json:"labels,omitempty"`
	// Load is the 15-minute load average; nil when the host reports none,
	// which drops it from `load avg` and `score`.
	Load *float64 `json:"load,omitempty"`
	// MemAvail and SwapAvail are the percentages of memory and swap free,
	// the score's other inputs. A host without swap leaves SwapAvail nil.
	MemAvail  *float64 `json:"mem_avail,omitempty"`
	SwapAvail *float64 `json:"swap_avail,omitempty"`
	// State is up (the default), down or maintenance.
	State string `json:"state,omitempty"`
	// Availability is active (the default), pause or drain.
	Availability string `json:"availability,omitempty"`
	Frozen       bool   `json:"frozen,omitempty"`
	Overloaded   bool   `json:"overloaded,omitempty"`
}

// Instance is a node of some cluster on some host.
type Instance struct {
	Cluster string `json:"cluster"`
	// Node names the node; victims are named by it.
	Node string `json:"node,omitempty"`
	Host string `json:"host"`
	// State is running (the default), starting, stopped or failed.
	State string `json:"state,omitempty"`
}

// Policy is a grove.policy.placement policy's properties.
type Policy struct {
	// Placement is one of Policies; empty means nodes order.
	Placement string `json:"placement,omitempty"`
	// Hosts is the ordered candidate list; empty means every host of the
	// snapshot, in its order.
	Hosts []string `json:"hosts,omitempty"`
	// Constraints is an expression over a host's `name` and `labels` that
	// must be true for the host to take nodes.
	Constraints      string   `json:"constraints,omitempty"`
	HardAffinity     []string `json:"hard_affinity,omitempty"`
	HardAntiAffinity []string `json:"hard_anti_affinity,omitempty"`
	SoftAffinity     []string `json:"soft_affinity,omitempty"`
	SoftAntiAffinity []string `json:"soft_anti_affinity,omitempty"`
}

// Snapshot is everything a decision reads, and the JSON format of
// `grove placement simulate -f FILE` (docs/placement.md).
type Snapshot struct {
	// Cluster names the cluster being placed: spread hashes it with each
	// host's name, and its instances are the ones counted, kept or removed.
	Cluster string `json:"cluster"`
	// Slice is the index shift rotates by; nil means the numeric prefix of
	// the cluster's name (3.web is slice 3), else 0.
	Slice  *int   `json:"slice,omitempty"`
	Policy Policy `json:"policy"`
	Hosts  []Host `json:"hosts"`
	// Instances are the nodes of every cluster, this one's included.
	Instances []Instance `json:"instances,omitempty"`
	// Add is how many new nodes to place; Remove how many of this cluster's
	// nodes to choose for removal.
	Add    int `json:"add,omitempty"`
	Remove int `json:"remove,omitempty"`
	// Global asks for SwarmKit's global mode: one node per eligible host.
	Global bool `json:"global,omitempty"`
	// Monitor is the instance monitor's part of the snapshot (each host's
	// instance status, monitor state and flags), read and checked by
	// core/orchestrator/monitor, which this package does not know.
	Monitor json.RawMessage `json:"monitor,omitempty"`
}

// Decode reads a snapshot from JSON strictly: an unknown field, a value of
// the wrong type or trailing data is an error naming the field; then the
// snapshot is validated.
func Decode(r io.Reader) (Snapshot, error) {
	var s Snapshot
	dec := json.NewDecoder(r)
	dec.DisallowUnknownFields()
	if err := dec.Decode(&s); err != nil {
		return Snapshot{}, jsonError(err)
	}
	if dec.More() {
		return Snapshot{}, errors.New("the snapshot must be one JSON object, but more follows it")
	}
	if err := s.Validate(); err != nil {
		return Snapshot{}, err
	}
	return s, nil
}

// jsonError rewrites encoding/json's errors as sentences naming the field.
func jsonError(err error) error {
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) {
		field := te.Field
		if field == "" {
			field = "the snapshot"
		}
		return fmt.Errorf("%s must be a JSON value of Go type %s, not a JSON %s: %w", field, te.Type, te.Value, err)
	}
	var se *json.SyntaxError
	if errors.As(err, &se) {
		return fmt.Errorf("the snapshot is not valid JSON at byte %d: %w", se.Offset, err)
	}
	if msg, ok := strings.CutPrefix(err.Error(), "json: unknown field "); ok {
		return fmt.Errorf("the snapshot has an unknown field %s; the fields are described in docs/placement.md: %w", msg, err)
	}
	return fmt.Errorf("reading the snapshot: %w", err)
}

// FieldError is bad input, naming the field (as a JSON path) and the rule.
type FieldError struct {
	Field   string
	Problem string
}

func (e *FieldError) Error() string { return e.Field + ": " + e.Problem }

func fieldErr(field, format string, args ...any) error {
	return &FieldError{Field: field, Problem: fmt.Sprintf(format, args...)}
}

// Validate checks the snapshot's names, states and policy. The policy's
// own fields are named under policy (ValidatePolicy names them bare).
func (s Snapshot) Validate() error {
	if s.Cluster == "" {
		return fieldErr("cluster", "the name of the cluster being placed is required")
	}
	if err := ValidatePolicy(s.Policy); err != nil {
		var fe *FieldError
		if errors.As(err, &fe) {
			return &FieldError{Field: "policy." + fe.Field, Problem: fe.Problem}
		}
		return err
	}
	seen := make(map[string]bool, len(s.Hosts))
	for i, h := range s.Hosts {
		at := fmt.Sprintf("hosts[%d]", i)
		switch {
		case h.Name == "":
			return fieldErr(at+".name", "every host needs a name")
		case seen[h.Name]:
			return fieldErr(at+".name", "the host %q is listed twice", h.Name)
		case !slices.Contains([]string{"", StateUp, StateDown, StateMaintenance}, h.State):
			return fieldErr(at+".state", "%q is not a host state; use up, down or maintenance", h.State)
		case !slices.Contains([]string{"", Active, Pause, Drain}, h.Availability):
			return fieldErr(at+".availability", "%q is not an availability; use active, pause or drain", h.Availability)
		case h.Load != nil && *h.Load < 0:
			return fieldErr(at+".load", "a load average cannot be negative")
		case h.MemAvail != nil && (*h.MemAvail < 0 || *h.MemAvail > 100):
			return fieldErr(at+".mem_avail", "a percentage must be between 0 and 100")
		case h.SwapAvail != nil && (*h.SwapAvail < 0 || *h.SwapAvail > 100):
			return fieldErr(at+".swap_avail", "a percentage must be between 0 and 100")
		}
		seen[h.Name] = true
	}
	for i, in := range s.Instances {
		at := fmt.Sprintf("instances[%d]", i)
		switch {
		case in.Cluster == "":
			return fieldErr(at+".cluster", "every instance names its cluster")
		case in.Host == "":
			return fieldErr(at+".host", "every instance names its host")
		case !slices.Contains([]string{"", InstanceRunning, InstanceStarting, InstanceStopped, InstanceFailed}, in.State):
			return fieldErr(at+".state", "%q is not an instance state; use running, starting, stopped or failed", in.State)
		}
	}
	switch {
	case s.Add < 0:
		return fieldErr("add", "cannot be negative")
	case s.Remove < 0:
		return fieldErr("remove", "cannot be negative")
	case s.Add > 0 && s.Remove > 0:
		return fieldErr("remove", "a decision either adds nodes or removes them; add is %d", s.Add)
	case s.Global && (s.Add > 0 || s.Remove > 0):
		return fieldErr("global", "global mode decides how many nodes each host runs; leave add and remove out")
	case s.Slice != nil && *s.Slice < 0:
		return fieldErr("slice", "cannot be negative")
	}
	return nil
}

// ValidatePolicy checks a placement policy's properties: a known
// placement, no host listed twice, a constraint expression that compiles
// to a boolean, and no cluster both wanted and refused.
func ValidatePolicy(p Policy) error {
	if p.Placement != "" && !slices.Contains(Policies, p.Placement) {
		return fieldErr("placement", "%q is not a placement policy; use one of %q", p.Placement, Policies)
	}
	seen := map[string]bool{}
	for i, h := range p.Hosts {
		if h == "" {
			return fieldErr(fmt.Sprintf("hosts[%d]", i), "a host name cannot be empty")
		}
		if seen[h] {
			return fieldErr(fmt.Sprintf("hosts[%d]", i), "the host %q is listed twice", h)
		}
		seen[h] = true
	}
	if _, err := compileConstraints(p.Constraints); err != nil {
		return fieldErr("constraints", "%v", err)
	}
	for _, pair := range []struct {
		name      string
		want, not []string
	}{{"hard_anti_affinity", p.HardAffinity, p.HardAntiAffinity}, {"soft_anti_affinity", p.SoftAffinity, p.SoftAntiAffinity}} {
		for i, c := range pair.not {
			if slices.Contains(pair.want, c) {
				return fieldErr(fmt.Sprintf("%s[%d]", pair.name, i), "the cluster %q is also in the affinity list; a cluster cannot be both wanted and refused", c)
			}
		}
	}
	for name, list := range map[string][]string{"hard_affinity": p.HardAffinity, "hard_anti_affinity": p.HardAntiAffinity,
		"soft_affinity": p.SoftAffinity, "soft_anti_affinity": p.SoftAntiAffinity} {
		for i, c := range list {
			if c == "" {
				return fieldErr(fmt.Sprintf("%s[%d]", name, i), "a cluster name cannot be empty")
			}
		}
	}
	return nil
}

// SliceIndex is the index shift uses: the snapshot's slice, else the
// numeric prefix of the cluster's name before a dot (OpenSVC's scaler
// slices are named N.name), else 0.
func (s Snapshot) SliceIndex() int {
	if s.Slice != nil {
		return *s.Slice
	}
	prefix, _, ok := strings.Cut(s.Cluster, ".")
	if !ok {
		return 0
	}
	n, err := strconv.Atoi(prefix)
	if err != nil || n < 0 {
		return 0
	}
	return n
}

// MarshalIndent is the snapshot as the JSON simulate reads, for tools that
// write snapshots.
func (s Snapshot) MarshalIndent() ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetIndent("", "  ")
	if err := enc.Encode(s); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}
