// Package monitor is OpenSVC's instance monitor for failover and flex
// clusters as pure functions (../shared/reference/semantics.md §A.5–A.10):
// given each host's instance of one cluster (its status, monitor state,
// flags and how long it has been in that state), the placement decision
// over those hosts (core/orchestrator/placement) and the clock, Decide says
// what each host's monitor does next: its next state, the action it takes
// (start, stop, freeze, thaw or none) and why. Every host runs the same
// function with itself as the local host, so Decide answers for all of
// them at once. Nothing here does I/O or keeps state between calls.
package monitor

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/grovehq/grove/core/orchestrator/placement"
)

// Monitor states (§A.6, the seed's names; v2's thawing for om3's
// unfreezing). The *ing states are an action in progress; started,
// stopped, frozen and thawed are the done states an action leaves before
// the monitor returns to idle.
const (
	Idle        = "idle"
	Ready       = "ready"
	Starting    = "starting"
	Started     = "started"
	StartFailed = "start failed"
	Restarting  = "restarting"
	Stopping    = "stopping"
	Stopped     = "stopped"
	StopFailed  = "stop failed"
	Freezing    = "freezing"
	Frozen      = "frozen"
	Thawing     = "thawing"
	Thawed      = "thawed"
)

// States are every monitor state, idle first.
var States = []string{Idle, Ready, Starting, Started, StartFailed, Restarting, Stopping, Stopped, StopFailed, Freezing, Frozen, Thawing, Thawed}

// Instance statuses (the seed's <instance status>).
const (
	Up   = "up"
	Down = "down"
	Warn = "warn"
	NA   = "n/a"
)

// Statuses are the instance statuses.
var Statuses = []string{Up, Down, Warn, NA}

// Actions a decision takes on its host.
const (
	ActionNone   = "none"
	ActionStart  = "start"
	ActionStop   = "stop"
	ActionFreeze = "freeze"
	ActionThaw   = "thaw"
)

// Outcomes of the action an *ing state is running.
const (
	Running   = ""
	Succeeded = "succeeded"
	Failed    = "failed"
)

// Doing says whether a state is an action in progress: its name ends in
// "ing" (§A.6), which is what "a peer is transitioning" means.
func Doing(state string) bool { return strings.HasSuffix(state, "ing") }

// Instance is one host's instance of the cluster, as the monitors see it.
type Instance struct {
	Host string
	// Status is up, down, warn or n/a.
	Status string
	// State is the monitor state; empty means idle.
	State string
	// Since is when the instance entered State.
	Since time.Time
	// Frozen is the instance's own frozen flag; a frozen host shows as the
	// placement's F flag.
	Frozen bool
	// Outcome is how the action of an *ing state ended: empty while it
	// runs, else succeeded or failed.
	Outcome string
	// Maintenance is when the host's agent announced maintenance (a clean
	// stop) and went silent; zero when it did not. Peers keep its last
	// state for the maintenance grace period, then drop it (§A.9).
	Maintenance time.Time
	// Joined is when the host's agent started; its rejoin grace runs from
	// here. Zero means long ago.
	Joined time.Time
}

// Input is everything one decision reads.
type Input struct {
	Settings Settings
	// Placement ranks the hosts: its ranked rows, in rank order, are the
	// candidates before the monitor's own discards; its NaturalLeader is
	// the L flag.
	Placement placement.Decision
	// Instances are the hosts' instances. A peer host without one has no
	// data (its agent is gone): it is no candidate and counts as nothing.
	Instances []Instance
	Now       time.Time
	// Expect is the operator's pending cluster-wide expectation (start,
	// stop, switch, giveback); the zero value is none. While it is set
	// every host's monitor works toward it instead of orchestrating on its
	// own (expect.go).
	Expect Expect
}

// Step is one host's decision.
type Step struct {
	Host   string `json:"host"`
	Status string `json:"status"`
	State  string `json:"state"`
	// Flags are the seed's: A hard affinity violation, C constraints
	// violation, F frozen (instance or host), L natural placement leader.
	Flags  string `json:"flags"`
	Next   string `json:"next"`
	Action string `json:"action"`
	Reason string `json:"reason"`
	// ResetRestarts says the resource restart counters go back to zero
	// (a clear).
	ResetRestarts bool `json:"reset_restarts,omitempty"`
}

// view is one decision's working data about a host.
type view struct {
	in        Instance
	row       placement.Row
	rank      int // position among the surviving candidates, from 0; -1 when none
	candidate bool
	why       string // why it is not a candidate
	kept      bool   // in maintenance within the grace: last data kept
	dropped   bool   // no data: gone, or maintenance grace over
	frozen    bool
}

// Decide computes every host's step. The settings are validated first;
// invalid ones, or instances naming a host twice or a bad status or state,
// are the only errors.
func Decide(in Input) ([]Step, error) {
	s, views, err := prepare(in)
	if err != nil {
		return nil, err
	}
	steps := make([]Step, 0, len(views))
	for _, v := range views {
		st := decideOne(s, in, v, views)
		st.Host, st.Status, st.State = v.in.Host, v.in.Status, v.in.State
		st.Flags = flags(v)
		steps = append(steps, st)
	}
	return steps, nil
}

// NextChange is the first instant after in.Now at which time alone, with
// no new data, can change a decision on in: a ready period running out,
// a peer's maintenance grace ending (its kept data is dropped, and a
// takeover may follow), or a host's rejoin grace ending. ok is false when
// none is pending. The engine runs a round then, rather than waiting for
// its next check.
func NextChange(in Input) (at time.Time, ok bool) {
	s := in.Settings.withDefaults()
	consider := func(t time.Time) {
		if t.After(in.Now) && (!ok || t.Before(at)) {
			at, ok = t, true
		}
	}
	for _, x := range in.Instances {
		if x.State == Ready {
			consider(x.Since.Add(s.readyPeriod))
		}
		if !x.Maintenance.IsZero() {
			consider(x.Maintenance.Add(s.maintenanceGrace))
		}
		if !x.Joined.IsZero() {
			consider(x.Joined.Add(s.rejoinGrace))
		}
	}
	return at, ok
}

// prepare validates the input and builds the views of every host, the
// surviving candidates ranked.
func prepare(in Input) (settings, []*view, error) {
	if err := in.Settings.Validate(); err != nil {
		return settings{}, nil, err
	}
	if err := in.Expect.validate(in.Settings); err != nil {
		return settings{}, nil, err
	}
	s := in.Settings.withDefaults()
	byHost := map[string]int{}
	for i, x := range in.Instances {
		at := fmt.Sprintf("instances[%d]", i)
		switch {
		case x.Host == "":
			return settings{}, nil, fieldErr(at+".host", "every instance names its host")
		case !slices.Contains(Statuses, x.Status):
			return settings{}, nil, fieldErr(at+".status", "%q is not an instance status; use up, down, warn or n/a", x.Status)
		case x.State != "" && !slices.Contains(States, x.State):
			return settings{}, nil, fieldErr(at+".state", "%q is not a monitor state; use one of %q", x.State, States)
		case !slices.Contains([]string{Running, Succeeded, Failed}, x.Outcome):
			return settings{}, nil, fieldErr(at+".outcome", "%q is not an outcome; use succeeded or failed, or leave it out while the action runs", x.Outcome)
		}
		if _, dup := byHost[x.Host]; dup {
			return settings{}, nil, fieldErr(at+".host", "the host %q has two instances; a host runs at most one instance of a failover or flex cluster", x.Host)
		}
		byHost[x.Host] = i
	}

	rows := map[string]placement.Row{}
	for _, r := range in.Placement.Hosts {
		rows[r.Host] = r
	}
	var views []*view
	add := func(name string) {
		v := &view{row: rows[name], rank: -1}
		if i, ok := byHost[name]; ok {
			v.in = in.Instances[i]
			v.in.State = cmp.Or(v.in.State, Idle)
		} else {
			v.in = Instance{Host: name}
			v.dropped = true
		}
		if !v.in.Maintenance.IsZero() {
			if in.Now.Sub(v.in.Maintenance) < s.maintenanceGrace {
				v.kept = true
			} else {
				v.dropped = true
			}
		}
		v.frozen = v.in.Frozen || strings.Contains(v.row.Flags, "F")
		views = append(views, v)
	}
	for _, r := range in.Placement.Hosts {
		add(r.Host)
	}
	for _, x := range in.Instances {
		if _, ok := rows[x.Host]; !ok {
			add(x.Host)
		}
	}

	// The surviving candidates: placement's ranked hosts, in rank order,
	// less the monitor's own discards (§A.3, §A.8).
	ranked := slices.Clone(views)
	slices.SortStableFunc(ranked, func(a, b *view) int {
		return cmp.Compare(rankKey(a.row.Rank), rankKey(b.row.Rank))
	})
	pos := 0
	for _, v := range ranked {
		switch {
		case v.dropped:
			v.why = "no data from its host"
		case v.kept:
			v.why = "its host is in maintenance"
		case v.row.Rank == 0:
			v.why = cmp.Or(v.row.Reason, "placement does not rank it")
		case v.in.Status == NA:
			v.why = "its status is n/a"
		case v.in.State == StartFailed || v.in.State == StopFailed:
			v.why = "it is " + v.in.State
		case v.frozen:
			v.why = "frozen"
		default:
			v.candidate = true
			v.rank = pos
			pos++
		}
	}

	return s, views, nil
}

func rankKey(r int) int {
	if r == 0 {
		return int(^uint(0) >> 1)
	}
	return r
}

func flags(v *view) string {
	var b strings.Builder
	if strings.Contains(v.row.Flags, "A") {
		b.WriteByte('A')
	}
	if strings.Contains(v.row.Flags, "C") {
		b.WriteByte('C')
	}
	if v.frozen {
		b.WriteByte('F')
	}
	if strings.Contains(v.row.Flags, "L") {
		b.WriteByte('L')
	}
	return b.String()
}

func stay(v *view, why string) Step {
	return Step{Next: v.in.State, Action: ActionNone, Reason: why}
}

func move(next, action, why string) Step {
	return Step{Next: next, Action: action, Reason: why}
}

// decideOne is the local host's step, v being the local instance.
func decideOne(s settings, in Input, v *view, all []*view) Step {
	local := v.in
	switch {
	case v.kept:
		return stay(v, fmt.Sprintf("its agent is in maintenance: peers keep this last state for %s and take nothing over", s.maintenanceGrace))
	case !local.Maintenance.IsZero():
		return stay(v, "its agent is in maintenance past the grace period: peers dropped its data")
	case v.dropped:
		return stay(v, "no data from its host")
	}

	switch local.State {
	case Starting, Restarting:
		switch local.Outcome {
		case Succeeded:
			return move(Started, ActionNone, "the start succeeded")
		case Failed:
			return move(StartFailed, ActionNone, "the start failed: orchestration of this instance is blocked until clear, and a peer may take over")
		}
		return stay(v, "the start is running")
	case Stopping:
		switch local.Outcome {
		case Succeeded:
			return move(Stopped, ActionNone, "the stop succeeded")
		case Failed:
			return move(StopFailed, ActionNone, "the stop failed: orchestration of this instance is blocked until clear")
		}
		return stay(v, "the stop is running")
	case Freezing:
		switch local.Outcome {
		case Succeeded:
			return move(Frozen, ActionNone, "the instance is frozen")
		case Failed:
			return move(Idle, ActionNone, "the freeze failed")
		}
		return stay(v, "the freeze is running")
	case Thawing:
		switch local.Outcome {
		case Succeeded:
			return move(Thawed, ActionNone, "the instance is thawed")
		case Failed:
			return move(Idle, ActionNone, "the thaw failed")
		}
		return stay(v, "the thaw is running")
	case Started:
		// om3's waiter: idle once the instance answers up.
		if local.Status == Up {
			return move(Idle, ActionNone, "the instance is up")
		}
		return stay(v, "waiting for the instance to report up")
	case Stopped:
		if local.Status != Up {
			return move(Idle, ActionNone, "the instance is down")
		}
		return stay(v, "waiting for the instance to report down")
	case Frozen, Thawed:
		return move(Idle, ActionNone, "the "+strings.TrimSuffix(local.State, "ed")+" is done")
	case StartFailed:
		up := countUp(all)
		if up > 0 && (s.Topology != Flex || up >= s.flexTarget) {
			return move(Idle, ActionNone, "auto-cleared: the cluster is up elsewhere")
		}
		return stay(v, "start failed blocks orchestration of this instance until clear")
	case StopFailed:
		return stay(v, "stop failed blocks orchestration of this instance until clear")
	case Ready:
		if in.Expect.Kind != "" {
			return move(Idle, ActionNone, "ready aborted: the operator's "+in.Expect.Kind+" takes over")
		}
		if why := blocked(s, in, v, all, true); why != "" {
			return move(Idle, ActionNone, "ready aborted: "+why)
		}
		if s.Topology == Failover {
			for _, p := range all {
				if p != v && p.in.State == Ready && p.candidate && p.rank < v.rank {
					return move(Idle, ActionNone, "ready aborted: the better-ranked "+p.in.Host+" is also ready")
				}
			}
		}
		elapsed := in.Now.Sub(local.Since)
		// om3 fires once elapsed ≥ the period (§A.7); v2's > would add a
		// re-arm of up to a second for nothing.
		if elapsed >= s.readyPeriod {
			return move(Starting, ActionStart, fmt.Sprintf("no peer contested for the ready period (%s)", s.readyPeriod))
		}
		return stay(v, fmt.Sprintf("contest: %s of the ready period (%s) left", s.readyPeriod-elapsed, s.readyPeriod))
	}

	// Idle.
	if in.Expect.Kind != "" {
		return decideExpect(s, in, v, all)
	}
	// Too many up (a failover cluster's host back after its maintenance
	// grace with its instance still running, or a flex one over target):
	// the worst-ranked excess stops.
	if s.Orchestrate == OrchestrateHA && local.Status == Up && !v.frozen {
		if why := excess(s, v, all); why != "" {
			return move(Stopping, ActionStop, why)
		}
	}
	if why := blocked(s, in, v, all, false); why != "" {
		return stay(v, why)
	}
	if len(all) == 1 {
		return move(Starting, ActionStart, "the only host starts at once, without a contest")
	}
	return move(Ready, ActionNone, fmt.Sprintf("placement leader: announcing for the ready period (%s)", s.readyPeriod))
}

// blocked says why the local instance may not go or stay ready; empty
// when it may (§A.6 step 1 and 2, §A.8, §A.9, §A.10).
func blocked(s settings, in Input, v *view, all []*view, isReady bool) string {
	local := v.in
	switch {
	case s.Orchestrate == OrchestrateNo:
		return "orchestrate is no: nothing starts on its own"
	case v.frozen:
		return "frozen: no automatic orchestration"
	case local.Status == Up:
		return "the instance is up"
	case local.Status == Warn:
		return "the instance is warn"
	}
	if !local.Joined.IsZero() && in.Now.Sub(local.Joined) < s.rejoinGrace {
		for _, p := range all {
			if p != v && p.dropped {
				return fmt.Sprintf("rejoin grace: waiting for %s or for every peer to be seen (%s is not)", s.rejoinGrace-in.Now.Sub(local.Joined), p.in.Host)
			}
		}
	}
	for _, p := range all {
		if p == v || p.dropped {
			continue
		}
		switch {
		case p.in.Status == Warn:
			return "the peer " + p.in.Host + " is warn"
		case Doing(p.in.State):
			return "the peer " + p.in.Host + " is " + p.in.State
		}
	}
	up := countUp(all)
	if s.Topology == Failover && up > 0 {
		return "the cluster is up on " + strings.Join(upHosts(all), ", ")
	}
	if s.Topology == Flex && up >= s.flexTarget {
		return fmt.Sprintf("%d of flex_target %d instances are up", up, s.flexTarget)
	}
	if !v.candidate {
		return "not a candidate: " + v.why
	}
	if s.Orchestrate == OrchestrateStart && !strings.Contains(v.row.Flags, "L") {
		return "orchestrate is start: only the natural leader " + cmp.Or(in.Placement.NaturalLeader, "(none)") + " starts on its own"
	}
	switch s.Topology {
	case Failover:
		if v.rank != 0 {
			return "the leader among the surviving candidates is " + leader(all)
		}
	case Flex:
		if v.rank >= s.flexTarget {
			return fmt.Sprintf("its position %d among the surviving candidates is not below flex_target %d", v.rank+1, s.flexTarget)
		}
		if isReady {
			missing := s.flexTarget - up
			better := 0
			for _, p := range all {
				if p != v && p.candidate && p.rank < v.rank && p.in.State == Ready {
					better++
				}
			}
			if better >= missing {
				return fmt.Sprintf("%d better-ranked peers are ready for the %d missing instances", better, missing)
			}
		}
	}
	return ""
}

// excess picks the local up instance for a stop when a cluster runs more
// than it should (one for failover, flex_target for flex): the
// worst-ranked up instances stop, those off
// the candidates (overloaded, discarded) first (§A.5). Frozen instances
// are not stopped but still count, so others stop in their place.
func excess(s settings, v *view, all []*view) string {
	up, want := countUp(all), target(s)
	if up <= want {
		return ""
	}
	keep := want
	var stoppable []*view
	for _, p := range all {
		switch {
		case !counts(p):
		case p.frozen:
			keep--
		default:
			stoppable = append(stoppable, p)
		}
	}
	slices.SortStableFunc(stoppable, func(a, b *view) int {
		return cmp.Compare(rankKey(a.rank+1), rankKey(b.rank+1))
	})
	for _, p := range stoppable[min(max(keep, 0), len(stoppable)):] {
		if p == v {
			if s.Topology == Failover {
				return fmt.Sprintf("%d instances are up, but a failover cluster runs one: this worst-ranked one stops", up)
			}
			return fmt.Sprintf("%d instances are up, more than flex_target %d: this worst-ranked one stops", up, want)
		}
	}
	return ""
}

// counts says whether an instance counts as up: its status is up, its
// data being fresh or kept through a maintenance grace.
func counts(p *view) bool { return !p.dropped && p.in.Status == Up }

func countUp(all []*view) int {
	n := 0
	for _, p := range all {
		if counts(p) {
			n++
		}
	}
	return n
}

func upHosts(all []*view) []string {
	var out []string
	for _, p := range all {
		if counts(p) {
			out = append(out, p.in.Host)
		}
	}
	return out
}

func leader(all []*view) string {
	for _, p := range all {
		if p.candidate && p.rank == 0 {
			return p.in.Host
		}
	}
	return "none"
}

// Command is an operator command on one instance (§A.10): freeze, thaw or
// clear. A clear outside an *ing state returns the monitor to idle and
// resets the restart counters; in an *ing state it is refused.
func Command(x Instance, cmd string) (Step, error) {
	state := cmp.Or(x.State, Idle)
	st := Step{Host: x.Host, Status: x.Status, State: state}
	switch cmd {
	case "clear":
		if Doing(state) {
			return st, fmt.Errorf("clear is refused while the instance on %s is %s: wait for the action to end", x.Host, state)
		}
		st.Next, st.Action, st.Reason, st.ResetRestarts = Idle, ActionNone, "cleared", true
	case "freeze":
		if x.Frozen {
			st.Next, st.Action, st.Reason = state, ActionNone, "already frozen"
			return st, nil
		}
		st.Next, st.Action, st.Reason = Freezing, ActionFreeze, "frozen instances are neither candidates nor restarted"
	case "thaw":
		if !x.Frozen {
			st.Next, st.Action, st.Reason = state, ActionNone, "not frozen"
			return st, nil
		}
		st.Next, st.Action, st.Reason = Thawing, ActionThaw, "automatic orchestration resumes"
	default:
		return st, fieldErr("command", "%q is not a monitor command; use freeze, thaw or clear", cmd)
	}
	return st, nil
}
