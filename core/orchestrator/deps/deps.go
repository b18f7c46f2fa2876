// Package deps holds the decisions of dependencies between clusters as
// Solaris SMF's svc.startd makes them (../shared/reference/semantics.md
// §C.1–C.5): whether a dependency group is satisfied, whether a cluster may
// start and why not, which clusters stop and start when one of them stops,
// starts or is refreshed, what a milestone brings up and takes down, and
// where a cycle is. Every function takes a snapshot and returns a decision;
// nothing here reads a store or touches a process, so the engine, the server,
// `grove deps simulate` and the HCL planner share one set of rules.
package deps

import (
	"fmt"
	"strings"
)

// State is a cluster's state as the dependency graph sees it (§C.1).
type State string

// The states. A cluster is Running when its status is ACTIVE or WARNING
// (SMF's online and degraded); Offline when it is enabled but not running,
// stopped by a dependency or waiting on one; Uninitialized while it is
// being created; Stopped when an operator stopped it (SMF's disabled);
// Maintenance when it needs an operator (an ERROR status, a dependency
// cycle).
const (
	Running       State = "running"
	Offline       State = "offline"
	Uninitialized State = "uninitialized"
	Stopped       State = "stopped"
	Maintenance   State = "maintenance"
)

// Grouping is how a dependency group combines its members (§C.2).
type Grouping string

// The groupings.
const (
	RequireAll  Grouping = "require_all"
	RequireAny  Grouping = "require_any"
	OptionalAll Grouping = "optional_all"
	ExcludeAll  Grouping = "exclude_all"
)

// Valid says whether g is one of the four groupings.
func (g Grouping) Valid() bool {
	switch g {
	case RequireAll, RequireAny, OptionalAll, ExcludeAll:
		return true
	}
	return false
}

// RestartOn is which events on a member stop the dependent (§C.3).
type RestartOn string

// The restart_on values, in increasing level.
const (
	None    RestartOn = "none"
	Error   RestartOn = "error"
	Restart RestartOn = "restart"
	Refresh RestartOn = "refresh"
)

// Valid says whether r is one of the four restart_on values.
func (r RestartOn) Valid() bool {
	switch r {
	case None, Error, Restart, Refresh:
		return true
	}
	return false
}

// Level is an event's or a restart_on's level: none 0, fault (error) 1,
// non-error stop (restart) 2, refresh 3 (§C.3).
type Level int

// The levels.
const (
	LevelNone    Level = 0
	LevelFault   Level = 1
	LevelRestart Level = 2
	LevelRefresh Level = 3
)

// Level is the restart_on's level; an unknown value is none.
func (r RestartOn) Level() Level {
	switch r {
	case Error:
		return LevelFault
	case Restart:
		return LevelRestart
	case Refresh:
		return LevelRefresh
	}
	return LevelNone
}

// MarshalText writes a level as its word: none, fault, stop, refresh.
func (l Level) MarshalText() ([]byte, error) { return []byte(l.String()), nil }

// UnmarshalText reads a level's word.
func (l *Level) UnmarshalText(b []byte) error {
	for _, x := range []Level{LevelNone, LevelFault, LevelRestart, LevelRefresh} {
		if x.String() == string(b) {
			*l = x
			return nil
		}
	}
	return fmt.Errorf("a level is none, fault, stop or refresh, not %q", b)
}

func (l Level) String() string {
	switch l {
	case LevelFault:
		return "fault"
	case LevelRestart:
		return "stop"
	case LevelRefresh:
		return "refresh"
	}
	return "none"
}

// Member prefixes: a member is a cluster's name or id, "milestone:NAME" or
// "path:/absolute/path".
const (
	MilestonePrefix = "milestone:"
	PathPrefix      = "path:"
)

// Group is one named dependency group of a cluster (§C.1's GROUP vertex).
type Group struct {
	Name      string    `json:"name"`
	Grouping  Grouping  `json:"grouping"`
	RestartOn RestartOn `json:"restart_on"`
	Members   []string  `json:"members"`
}

// Cluster is a cluster as the dependency graph sees it.
type Cluster struct {
	Name string `json:"name"`
	// ID is optional; members may name a cluster by either.
	ID    string `json:"id,omitempty"`
	State State  `json:"state"`
	// Stopping is set while an operator's stop of a running cluster is
	// under way (SMF's GV_TODISABLE): its dependents see it as unsatisfiable.
	Stopping bool `json:"stopping,omitempty"`
	// Starting is set on a stopped cluster an operator is starting (SMF's
	// "being enabled"): optional_all counts it as still to come.
	Starting bool `json:"starting,omitempty"`
	// Down is, for a cluster that is not running, the level its leaving
	// propagates at (a fault, a non-error stop), LevelNone when it is not
	// down for a reason that propagates (an action under way, never
	// started). Reconcile reads it; Propagate takes the level from its event.
	Down   Level   `json:"down,omitempty"`
	Groups []Group `json:"groups,omitempty"`
}

// Snapshot is the dependency graph at one moment.
type Snapshot struct {
	Clusters []Cluster `json:"clusters"`
	// Milestones are named sets of clusters (names or ids).
	Milestones map[string][]string `json:"milestones,omitempty"`
	// Paths says which path members exist on the evaluating agent's host;
	// a path not listed does not exist.
	Paths map[string]bool `json:"paths,omitempty"`
}

// Result is §C.1's tri-state.
type Result int

// The results.
const (
	Unsatisfiable Result = -1
	Unsatisfied   Result = 0
	Satisfied     Result = 1
)

func (r Result) String() string {
	switch r {
	case Satisfied:
		return "satisfied"
	case Unsatisfied:
		return "unsatisfied"
	}
	return "unsatisfiable"
}

// MarshalText writes the result as its word.
func (r Result) MarshalText() ([]byte, error) { return []byte(r.String()), nil }

// graph indexes a snapshot.
type graph struct {
	snap   Snapshot
	byKey  map[string]int // name and id → index
	cycles map[string][]string
}

func newGraph(s Snapshot) *graph {
	g := &graph{snap: s, byKey: map[string]int{}}
	for i, c := range s.Clusters {
		if c.ID != "" {
			g.byKey[c.ID] = i
		}
		g.byKey[c.Name] = i
	}
	g.cycles = g.clustersOnCycles()
	return g
}

func (g *graph) cluster(key string) (*Cluster, bool) {
	i, ok := g.byKey[key]
	if !ok {
		return nil, false
	}
	return &g.snap.Clusters[i], true
}

// memberKind splits a member reference.
func memberKind(m string) (kind, ref string) {
	switch {
	case strings.HasPrefix(m, MilestonePrefix):
		return "milestone", strings.TrimPrefix(m, MilestonePrefix)
	case strings.HasPrefix(m, PathPrefix):
		return "path", strings.TrimPrefix(m, PathPrefix)
	}
	return "cluster", m
}

// GroupError is a rule one group's field breaks. Field names the field as
// a caller's path would end: name, grouping, restart_on or members[i]
// (Member is then i, and -1 otherwise), so an API error or a diagnostic
// can point at the field without reading the message.
type GroupError struct {
	Field  string
	Member int
	Msg    string
}

func (e *GroupError) Error() string { return e.Msg }

// ValidateGroup checks one group's fields; the error, a *GroupError, names
// the field and the rule.
func ValidateGroup(gr Group) error {
	field := func(f, format string, args ...any) error {
		return &GroupError{Field: f, Member: -1, Msg: fmt.Sprintf(format, args...)}
	}
	if gr.Name == "" {
		return field("name", "A dependency group's name must not be empty.")
	}
	if !gr.Grouping.Valid() {
		return field("grouping", "Dependency group %q: grouping must be one of require_all, require_any, optional_all or exclude_all, not %q.", gr.Name, gr.Grouping)
	}
	if !gr.RestartOn.Valid() {
		return field("restart_on", "Dependency group %q: restart_on must be one of none, error, restart or refresh, not %q.", gr.Name, gr.RestartOn)
	}
	seen := map[string]bool{}
	for i, m := range gr.Members {
		member := func(format string) error {
			return &GroupError{Field: fmt.Sprintf("members[%d]", i), Member: i, Msg: fmt.Sprintf(format, gr.Name, m)}
		}
		kind, ref := memberKind(m)
		switch {
		case ref == "":
			return member("Dependency group %q: member %q names nothing.")
		case kind == "path" && !strings.HasPrefix(ref, "/"):
			return member("Dependency group %q: member %q must be an absolute path (path:/...).")
		case seen[m]:
			return member("Dependency group %q: member %q is listed twice.")
		}
		seen[m] = true
	}
	return nil
}

// StateOf maps a cluster's Senlin status and its run data to its state in
// the graph: ACTIVE and WARNING run; ERROR and CRITICAL need an operator;
// INIT and CREATING are not there yet; everything else (an action under
// way, a stop by a dependency) is offline. A cluster an operator or a
// milestone stopped is Stopped (SMF's disabled), one a dependency stopped
// Offline, and a run-data maintenance flag (a dependency cycle) wins.
func StateOf(status string, stopped bool, cause string, maintenance bool) State {
	switch {
	case maintenance:
		return Maintenance
	case stopped && cause != "dependency":
		return Stopped
	case stopped:
		return Offline
	}
	switch status {
	case "ACTIVE", "WARNING":
		return Running
	case "ERROR", "CRITICAL":
		return Maintenance
	case "INIT", "CREATING":
		return Uninitialized
	}
	return Offline
}
