package monitor

import (
	"cmp"
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"strconv"
	"time"

	"github.com/grovehq/grove/api"
)

// Topologies and orchestrate modes (§A.5), spelled as api.Topologies and
// api.OrchestrateModes, which validate a cluster's grove.failover setting.
const (
	Failover   = "failover"
	Flex       = "flex"
	Replicated = "replicated"
	Global     = "global"

	OrchestrateNo    = "no"
	OrchestrateStart = "start"
	OrchestrateHA    = "ha"
)

// Defaults of the periods: the seed's 16 s ready period (§A.7) and
// OpenSVC's grace periods (§A.9).
const (
	DefaultReadyPeriod      = 16 * time.Second
	DefaultMaintenanceGrace = 60 * time.Second
	DefaultRejoinGrace      = 90 * time.Second
)

// Settings are a cluster's grove.failover setting as the monitor reads it.
// Zero values take the defaults: failover, orchestrate no, flex_target
// flex_min, the default periods.
type Settings struct {
	Topology    string `json:"topology,omitempty"`
	Orchestrate string `json:"orchestrate,omitempty"`
	FlexMin     int    `json:"flex_min,omitempty"`
	FlexMax     int    `json:"flex_max,omitempty"`
	FlexTarget  int    `json:"flex_target,omitempty"`
	// The periods, as Go durations ("16s"); nil takes the default.
	ReadyPeriod            *Duration `json:"ready_period,omitempty"`
	MaintenanceGracePeriod *Duration `json:"maintenance_grace_period,omitempty"`
	RejoinGracePeriod      *Duration `json:"rejoin_grace_period,omitempty"`
}

// Duration is a time.Duration written as a Go duration string in JSON.
type Duration time.Duration

// UnmarshalJSON reads "16s", "1m30s" and the like. A bad value is an
// UnmarshalTypeError, which encoding/json completes with the field's path.
func (d *Duration) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return &json.UnmarshalTypeError{Value: string(b), Type: reflect.TypeFor[Duration]()}
	}
	v, err := time.ParseDuration(s)
	if err != nil {
		return &json.UnmarshalTypeError{Value: strconv.Quote(s), Type: reflect.TypeFor[Duration]()}
	}
	*d = Duration(v)
	return nil
}

// MarshalJSON writes the duration as a string.
func (d Duration) MarshalJSON() ([]byte, error) {
	return []byte(`"` + time.Duration(d).String() + `"`), nil
}

// settings are Settings with the defaults applied.
type settings struct {
	Settings
	flexTarget                                 int
	readyPeriod, maintenanceGrace, rejoinGrace time.Duration
}

// Defaults is the settings with every default filled in: failover,
// orchestrate no, flex_target at flex_min (at least 1) for flex, the
// default periods.
func (s Settings) Defaults() Settings {
	s.Topology = cmp.Or(s.Topology, Failover)
	s.Orchestrate = cmp.Or(s.Orchestrate, OrchestrateNo)
	if s.Topology == Flex && s.FlexTarget == 0 {
		s.FlexTarget = max(s.FlexMin, 1)
	}
	for _, p := range []struct {
		v   **Duration
		def time.Duration
	}{{&s.ReadyPeriod, DefaultReadyPeriod}, {&s.MaintenanceGracePeriod, DefaultMaintenanceGrace}, {&s.RejoinGracePeriod, DefaultRejoinGrace}} {
		if *p.v == nil {
			d := Duration(p.def)
			*p.v = &d
		}
	}
	return s
}

func (s Settings) withDefaults() settings {
	d := s.Defaults()
	return settings{Settings: d, flexTarget: max(d.FlexTarget, 1), readyPeriod: time.Duration(*d.ReadyPeriod),
		maintenanceGrace: time.Duration(*d.MaintenanceGracePeriod), rejoinGrace: time.Duration(*d.RejoinGracePeriod)}
}

// FieldError is bad input, naming the field and the rule.
type FieldError struct {
	Field   string
	Problem string
}

func (e *FieldError) Error() string { return e.Field + ": " + e.Problem }

func fieldErr(field, format string, args ...any) error {
	return &FieldError{Field: field, Problem: fmt.Sprintf(format, args...)}
}

// Validate checks the settings the monitor can decide on: a failover or
// flex topology (replicated and global clusters have no instance
// monitor), a known orchestrate mode, flex counts with
// flex_min ≤ flex_target ≤ flex_max, and non-negative periods.
func (s Settings) Validate() error {
	if s.Topology != "" && !slices.Contains(api.Topologies, s.Topology) {
		return fieldErr("topology", "%q is not a topology; use one of %q", s.Topology, api.Topologies)
	}
	if s.Topology == Replicated || s.Topology == Global {
		return fieldErr("topology", "a %s cluster has no instance monitor; use failover or flex", s.Topology)
	}
	if s.Orchestrate != "" && !slices.Contains(api.OrchestrateModes, s.Orchestrate) {
		return fieldErr("orchestrate", "%q is not an orchestrate mode; use one of %q", s.Orchestrate, api.OrchestrateModes)
	}
	if s.Topology != Flex && (s.FlexMin != 0 || s.FlexMax != 0 || s.FlexTarget != 0) {
		return fieldErr("flex_target", "flex_min, flex_max and flex_target apply only to the flex topology")
	}
	switch {
	case s.FlexMin < 0:
		return fieldErr("flex_min", "cannot be negative")
	case s.FlexMax < 0:
		return fieldErr("flex_max", "cannot be negative")
	case s.FlexTarget < 0:
		return fieldErr("flex_target", "cannot be negative")
	case s.FlexMax > 0 && s.FlexMin > s.FlexMax:
		return fieldErr("flex_min", "%d is above flex_max %d", s.FlexMin, s.FlexMax)
	case s.FlexTarget > 0 && s.FlexTarget < s.FlexMin:
		return fieldErr("flex_target", "%d is below flex_min %d", s.FlexTarget, s.FlexMin)
	case s.FlexTarget > 0 && s.FlexMax > 0 && s.FlexTarget > s.FlexMax:
		return fieldErr("flex_target", "%d is above flex_max %d", s.FlexTarget, s.FlexMax)
	}
	for name, d := range map[string]*Duration{"ready_period": s.ReadyPeriod, "maintenance_grace_period": s.MaintenanceGracePeriod, "rejoin_grace_period": s.RejoinGracePeriod} {
		if d != nil && *d < 0 {
			return fieldErr(name, "a period cannot be negative")
		}
	}
	return nil
}
