package model

import (
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strings"
	"time"
	"unicode"
)

// Host kinds: what a host is. An agent is a host for host-local drivers
// (local.process); the others are what drivers report through their Hosts
// hook.
const (
	HostAgent           = "agent"
	HostContainerEngine = "container-engine"
	HostHypervisor      = "hypervisor"
	HostESXi            = "esxi"
)

// Host states: observed, never set by an operator. A host is up while its
// heartbeats arrive, down when they stopped for longer than the timeout,
// and in maintenance after its agent stopped cleanly (OpenSVC's nmon
// maintenance: its nodes are neither checked nor moved).
const (
	HostUp          = "up"
	HostDown        = "down"
	HostMaintenance = "maintenance"
)

// Host availabilities, set by an operator (SwarmKit's node availability):
// active takes new nodes, pause takes none but keeps its nodes, drain takes
// none and has its nodes moved away.
const (
	HostActive = "active"
	HostPause  = "pause"
	HostDrain  = "drain"
)

// HostAvailabilities lists the availabilities an operator may set.
func HostAvailabilities() []string { return []string{HostActive, HostPause, HostDrain} }

// Host is a placement target: an agent, or what a driver reports.
type Host struct {
	Name string
	Kind string
	// Driver is the profile type whose driver reports the host; for an
	// agent, the host-local types it runs ("local.process").
	Driver string
	// Labels are the reported labels: an agent's host_labels, a driver's
	// attributes. Each heartbeat or report replaces them.
	Labels map[string]string
	// OperatorLabels are set through the API and win over reported ones.
	OperatorLabels map[string]string
	// Load holds the load figures: load1, load5, load15 for an agent, a
	// driver's own figures (containers, cpu, memory_mib) otherwise.
	Load         map[string]float64
	State        string
	Availability string
	// Heartbeat is when the host last reported.
	Heartbeat time.Time
	CreatedAt time.Time
	UpdatedAt *time.Time
}

// EffectiveLabels are the reported labels with the operator's over them.
func (h *Host) EffectiveLabels() map[string]string {
	out := map[string]string{}
	for k, v := range h.Labels {
		out[k] = v
	}
	for k, v := range h.OperatorLabels {
		out[k] = v
	}
	return out
}

// Schedulable says whether the host takes new nodes: up and active.
func (h *Host) Schedulable() bool { return h.State == HostUp && h.Availability == HostActive }

var hostNameRE = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,252}$`)

// ValidHostName checks a host name: a hostname-like word of letters,
// digits, dots, dashes and underscores, starting with a letter or digit,
// at most 253 characters.
func ValidHostName(field, name string) error {
	if !hostNameRE.MatchString(name) {
		return fmt.Errorf("%s %q is not a valid host name: use letters, digits, '.', '-' and '_', starting with a letter or digit, at most 253 characters", field, name)
	}
	return nil
}

var labelKeyRE = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._/-]{0,62}$`)

// MaxHostLabels is how many labels a host may carry from one source (its
// agent's configuration, or an operator). Labels are matched by every
// placement and shown with every host, so their count is bounded like
// every other list a caller can grow.
const MaxHostLabels = 64

// ValidHostLabels checks label keys (letters, digits, '.', '_', '/', '-',
// starting with a letter or digit, at most 63 characters), values (at
// most 255 characters, no control characters) and their count (at most
// MaxHostLabels).
func ValidHostLabels(field string, labels map[string]string) error {
	if len(labels) > MaxHostLabels {
		return fmt.Errorf("%s has %d labels; at most %d are allowed", field, len(labels), MaxHostLabels)
	}
	for _, k := range slices.Sorted(maps.Keys(labels)) {
		v := labels[k]
		if !labelKeyRE.MatchString(k) {
			return fmt.Errorf("%s key %q is not valid: use letters, digits, '.', '_', '/' and '-', starting with a letter or digit, at most 63 characters", field, k)
		}
		if len(v) > 255 {
			return fmt.Errorf("%s value of %q is %d characters long; at most 255 are allowed", field, k, len(v))
		}
		if strings.ContainsFunc(v, unicode.IsControl) {
			return fmt.Errorf("%s value of %q is not valid: a label value cannot contain control characters such as NUL, ESC or a newline", field, k)
		}
	}
	return nil
}
