package monitor

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"time"

	"github.com/grovehq/grove/core/orchestrator/placement"
)

// Snapshot is the "monitor" object of a placement snapshot
// (docs/placement.md, "The instance monitor"): the cluster's settings and
// each host's instance. Times are ages, so a snapshot needs no clock.
type Snapshot struct {
	Settings
	Instances []SnapshotInstance `json:"instances"`
	// Expect is a pending operator expectation (start, stop, switch with
	// its host, giveback); absent means none.
	Expect *Expect `json:"expect,omitempty"`
}

// SnapshotInstance is one host's instance in a snapshot.
type SnapshotInstance struct {
	Host   string `json:"host"`
	Status string `json:"status"`
	// State is the monitor state; empty means idle.
	State string `json:"state,omitempty"`
	// InStateFor is how long the instance has been in State.
	InStateFor *Duration `json:"in_state_for,omitempty"`
	Frozen     bool      `json:"frozen,omitempty"`
	// Outcome is how the action of an *ing state ended.
	Outcome string `json:"outcome,omitempty"`
	// MaintenanceFor is how long ago the host's agent announced
	// maintenance and went silent; absent when it did not.
	MaintenanceFor *Duration `json:"maintenance_for,omitempty"`
	// AgentUpFor is how long the host's agent has run; absent means long
	// enough that its rejoin grace is over.
	AgentUpFor *Duration `json:"agent_up_for,omitempty"`
}

// simulatedNow is the clock a snapshot's ages count back from: any fixed
// instant does, and a fixed one keeps the output reproducible.
var simulatedNow = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// Simulate evaluates the monitor on a placement snapshot and its
// decision: every host's next state and action. A snapshot without a
// monitor object has nothing to evaluate (nil, nil). Errors name the
// field under "monitor.".
func Simulate(s placement.Snapshot, d placement.Decision) (*Snapshot, []Step, error) {
	raw := bytes.TrimSpace(s.Monitor)
	if len(raw) == 0 || string(raw) == "null" {
		return nil, nil, nil
	}
	var ms Snapshot
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&ms); err != nil {
		return nil, nil, jsonError(err)
	}
	known := map[string]bool{}
	for _, h := range s.Hosts {
		known[h.Name] = true
	}
	in := Input{Settings: ms.Settings, Placement: d, Now: simulatedNow}
	if ms.Expect != nil {
		in.Expect = *ms.Expect
	}
	for i, x := range ms.Instances {
		if x.Host != "" && !known[x.Host] {
			return nil, nil, fieldErr(fmt.Sprintf("monitor.instances[%d].host", i), "%q is not one of the snapshot's hosts", x.Host)
		}
		for name, v := range map[string]*Duration{"in_state_for": x.InStateFor, "maintenance_for": x.MaintenanceFor, "agent_up_for": x.AgentUpFor} {
			if v != nil && *v < 0 {
				return nil, nil, fieldErr(fmt.Sprintf("monitor.instances[%d].%s", i, name), "an age cannot be negative")
			}
		}
		ago := func(v *Duration) time.Time {
			if v == nil {
				return time.Time{}
			}
			return simulatedNow.Add(-time.Duration(*v))
		}
		since := simulatedNow
		if x.InStateFor != nil {
			since = ago(x.InStateFor)
		}
		in.Instances = append(in.Instances, Instance{Host: x.Host, Status: x.Status, State: x.State, Since: since, Frozen: x.Frozen,
			Outcome: x.Outcome, Maintenance: ago(x.MaintenanceFor), Joined: ago(x.AgentUpFor)})
	}
	steps, err := Decide(in)
	if err != nil {
		var fe *FieldError
		if errors.As(err, &fe) {
			return nil, nil, &FieldError{Field: "monitor." + fe.Field, Problem: fe.Problem}
		}
		return nil, nil, err
	}
	return &ms, steps, nil
}

// jsonError rewrites encoding/json's errors as sentences naming the field.
func jsonError(err error) error {
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) {
		// The settings are embedded: their fields sit at the object's top.
		te.Field = strings.TrimPrefix(te.Field, "Settings.")
		if te.Type == reflect.TypeFor[Duration]() {
			return fmt.Errorf("monitor.%s must be a duration such as \"16s\", not %s", te.Field, te.Value)
		}
		return fmt.Errorf("monitor.%s must be a JSON value of Go type %s, not a JSON %s: %w", te.Field, te.Type, te.Value, err)
	}
	if msg, ok := strings.CutPrefix(err.Error(), "json: unknown field "); ok {
		return fmt.Errorf("the monitor object has an unknown field %s; the fields are described in docs/placement.md: %w", msg, err)
	}
	return fmt.Errorf("reading monitor: %w", err)
}
