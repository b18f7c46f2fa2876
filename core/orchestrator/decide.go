// Package orchestrator keeps clusters as declared: it watches nodes, restarts
// the dead ones as the cluster's restart settings say, rolls profile changes
// out in batches, reaps old actions and events, and decides the sizes of
// resizes and scaling and which nodes leave. The decisions are pure
// functions of a snapshot and a clock, table-tested against SwarmKit's rules
// (../shared/reference/semantics.md §B) and Senlin's resize rules
// (../shared/reference/senlin.md §e); only the engine and its loops do I/O.
package orchestrator

import (
	"fmt"
	"slices"
	"sort"
	"time"

	"github.com/grovehq/grove/api"
)

// RestartPolicy is a cluster's grove.restart setting.
type RestartPolicy struct {
	Condition   string // none, on-failure, any
	Delay       time.Duration
	MaxAttempts int // 0: unlimited
	Window      time.Duration
}

// DefaultRestart is SwarmKit's default: restart on any exit after 5 s.
var DefaultRestart = RestartPolicy{Condition: "any", Delay: 5 * time.Second}

// ParseRestart reads grove.restart from a cluster config, with defaults.
func ParseRestart(config map[string]any) RestartPolicy {
	p := DefaultRestart
	m, _ := config[api.ConfigRestart].(map[string]any)
	if c, ok := m["condition"].(string); ok {
		p.Condition = c
	}
	if d, ok := duration(m["delay"]); ok {
		p.Delay = d
	}
	if n, ok := m["max_attempts"].(float64); ok {
		p.MaxAttempts = int(n)
	}
	if d, ok := duration(m["window"]); ok {
		p.Window = d
	}
	return p
}

func duration(v any) (time.Duration, bool) {
	s, ok := v.(string)
	if !ok {
		return 0, false
	}
	d, err := time.ParseDuration(s)
	return d, err == nil
}

// History is a node slot's restart record. It belongs to one profile: a
// profile change resets the budget.
type History struct {
	Profile string
	// Count is every restart under Profile, whatever the settings: what
	// `grove cluster status` shows.
	Count int
	// Restarts are the times that can still count against max_attempts
	// (none when attempts are unlimited).
	Restarts []time.Time
}

// Failure describes a dead node.
type Failure struct {
	// Completed is true when the node's work ended successfully (exit 0).
	Completed bool
	// At is when the node was found dead.
	At time.Time
	// Profile is the node's current profile.
	Profile string
}

// Refusal says why the restart supervisor leaves a dead node down.
type Refusal string

// Refusals, one per rule of §B.2 that says no.
const (
	// RefusedByCondition: the restart condition is none (rule 1).
	RefusedByCondition Refusal = "condition"
	// RefusedCompleted: the condition is on-failure and the node's work
	// ended successfully (rule 2).
	RefusedCompleted Refusal = "completed"
	// RefusedLimit: max_attempts restarts already happened under the node's
	// profile, within the window when there is one (rules 6 and 7).
	RefusedLimit Refusal = "limit"
)

// RestartDecision is what the supervisor does with a dead node.
type RestartDecision struct {
	// Restart is true when the node is restarted.
	Restart bool
	// At is when a restart may start: the failure time plus the delay.
	At time.Time
	// Refusal is why the node is not restarted ("" when it is), and Reason
	// the sentence the engine records on the node and in its event.
	Refusal Refusal
	Reason  string
}

// DecideRestart applies SwarmKit's restart rules (§B.2) to a dead node.
func DecideRestart(p RestartPolicy, f Failure, h History) RestartDecision {
	switch p.Condition {
	case "none":
		return refuse(RefusedByCondition, fmt.Sprintf("Not restarted: the cluster's restart condition is %s.", p.Condition))
	case "on-failure":
		if f.Completed {
			return refuse(RefusedCompleted, fmt.Sprintf("Not restarted: the cluster's restart condition is %s.", p.Condition))
		}
	}
	yes := RestartDecision{Restart: true, At: f.At.Add(p.Delay)}
	// Rules 4 and 5: no limit, no history under this profile.
	if p.MaxAttempts == 0 || h.Profile != f.Profile || len(h.Restarts) == 0 {
		return yes
	}
	n := len(h.Restarts) // rule 6: without a window every restart counts
	if p.Window != 0 {
		// Rule 7: only restarts after failure−window and strictly before
		// the failure count.
		from := f.At.Add(-p.Window)
		n = 0
		for _, t := range h.Restarts {
			if t.After(from) && t.Before(f.At) {
				n++
			}
		}
	}
	if n < p.MaxAttempts {
		return yes
	}
	return refuse(RefusedLimit, fmt.Sprintf("Not restarted: the restart limit is reached (%s).", p.Describe()))
}

func refuse(r Refusal, reason string) RestartDecision {
	return RestartDecision{Refusal: r, Reason: reason}
}

// Record adds a restart to a history, resetting it on a profile change and
// dropping times older than the window (kept only while they can count).
func Record(p RestartPolicy, h History, profile string, at time.Time) History {
	if h.Profile != profile {
		h = History{Profile: profile}
	}
	h.Count++
	if p.MaxAttempts == 0 {
		h.Restarts = nil
		return h
	}
	var kept []time.Time
	for _, t := range h.Restarts {
		if p.Window == 0 || t.After(at.Add(-p.Window)) {
			kept = append(kept, t)
		}
	}
	h.Restarts = append(kept, at)
	return h
}

// Slot is a node as scale-down sees it.
type Slot struct {
	ID      string
	Index   int
	Host    string // "" when the node has no host (one implicit host)
	Running bool
}

// ScaleDownVictims chooses which nodes leave when a cluster shrinks to keep
// replicas, so that the kept ones spread across hosts (§B.3): running nodes
// and lower indexes are preferred, then each node gets its rank among the
// kept nodes of its host, and the lowest ranks are kept. Sorting is stable.
// A negative replicas keeps nothing.
func ScaleDownVictims(slots []Slot, replicas int) []string {
	if replicas >= len(slots) {
		return nil
	}
	replicas = max(replicas, 0)
	s := append([]Slot(nil), slots...)
	sort.SliceStable(s, func(i, j int) bool {
		if s[i].Running != s[j].Running {
			return s[i].Running
		}
		return s[i].Index < s[j].Index
	})
	perHost := map[string]int{}
	rank := make([]int, len(s))
	for i, sl := range s {
		if !sl.Running {
			rank[i] = len(s) + 1 // "last": not running goes first
			continue
		}
		rank[i] = perHost[sl.Host]
		perHost[sl.Host]++
	}
	order := make([]int, len(s))
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(a, b int) bool { return rank[order[a]] < rank[order[b]] })
	var victims []string
	for _, i := range order[replicas:] {
		victims = append(victims, s[i].ID)
	}
	sort.Strings(victims)
	return victims
}

// UpdatePolicy is a cluster's grove.update setting.
type UpdatePolicy struct {
	Parallelism     int // 0: all at once
	Delay           time.Duration
	FailureAction   string // pause, continue, rollback
	Monitor         time.Duration
	MaxFailureRatio float64
	Order           string // stop-first, start-first
}

// DefaultUpdate is SwarmKit's default update configuration.
var DefaultUpdate = UpdatePolicy{Parallelism: 1, FailureAction: "pause", Monitor: 5 * time.Second, Order: "stop-first"}

// ParseUpdate reads grove.update from a cluster config, with defaults.
func ParseUpdate(config map[string]any) UpdatePolicy {
	p := DefaultUpdate
	m, _ := config[api.ConfigUpdate].(map[string]any)
	if n, ok := m["parallelism"].(float64); ok {
		p.Parallelism = int(n)
	}
	if d, ok := duration(m["delay"]); ok {
		p.Delay = d
	}
	if s, ok := m["failure_action"].(string); ok {
		p.FailureAction = s
	}
	if d, ok := duration(m["monitor"]); ok {
		p.Monitor = d
	}
	if f, ok := m["max_failure_ratio"].(float64); ok {
		p.MaxFailureRatio = f
	}
	if s, ok := m["order"].(string); ok {
		p.Order = s
	}
	return p
}

// Member is a node as an update sees it.
type Member struct {
	ID      string
	Index   int
	Profile string
	Gone    bool // being deleted
}

// Dirty lists, by index, the nodes an update still has to move to target:
// those on another profile, except nodes that already failed this update
// (they count once) and nodes on their way out.
func Dirty(members []Member, target string, failed []string) []string {
	s := append([]Member(nil), members...)
	sort.SliceStable(s, func(i, j int) bool { return s[i].Index < s[j].Index })
	var out []string
	for _, m := range s {
		if m.Profile == target || m.Gone || slices.Contains(failed, m.ID) {
			continue
		}
		out = append(out, m.ID)
	}
	return out
}

// Batches splits the dirty nodes into the update's batches.
func Batches(dirty []string, parallelism int) [][]string {
	if len(dirty) == 0 {
		return nil
	}
	if parallelism <= 0 || parallelism > len(dirty) {
		parallelism = len(dirty)
	}
	var out [][]string
	for i := 0; i < len(dirty); i += parallelism {
		out = append(out, dirty[i:min(i+parallelism, len(dirty))])
	}
	return out
}

// PlannedBatches splits the dirty nodes into the batches a batch policy
// planned (senlin.policy.batch's data.update.plan), in the plan's order:
// each batch is its planned set's nodes still dirty, in the order of
// dirty; a set with none left is skipped, so a resumed update goes on with
// the first set not done. Dirty nodes the plan does not name go last, in
// one batch (the cluster's lock keeps nodes from joining mid-update, so
// this is a safeguard, not a case an update meets).
func PlannedBatches(dirty []string, plan [][]string) [][]string {
	var out [][]string
	named := map[string]bool{}
	for _, set := range plan {
		var batch []string
		for _, id := range dirty {
			if slices.Contains(set, id) {
				batch = append(batch, id)
			}
		}
		for _, id := range set {
			named[id] = true
		}
		if len(batch) > 0 {
			out = append(out, batch)
		}
	}
	var rest []string
	for _, id := range dirty {
		if !named[id] {
			rest = append(rest, id)
		}
	}
	if len(rest) > 0 {
		out = append(out, rest)
	}
	return out
}

// Verdict is what an update does after a batch.
type Verdict string

// Verdicts.
const (
	Proceed  Verdict = "proceed"
	Pause    Verdict = "pause"
	Rollback Verdict = "rollback"
)

// AfterBatch applies the failure rules (§B.5): when failures over the dirty
// nodes exceed max_failure_ratio (strictly), the failure action decides;
// during a rollback a failure pauses, so a rollback is never rolled back.
func AfterBatch(p UpdatePolicy, failures, dirty int, rollingBack bool) Verdict {
	if dirty == 0 || float64(failures)/float64(dirty) <= p.MaxFailureRatio {
		return Proceed
	}
	if rollingBack {
		return Pause
	}
	switch p.FailureAction {
	case "continue":
		return Proceed
	case "rollback":
		return Rollback
	}
	return Pause
}

// WatchFor is how long the last batch is watched before an update is
// complete: one monitor period, or delay + 1 s when the delay is longer.
func WatchFor(p UpdatePolicy) time.Duration {
	if p.Delay >= p.Monitor {
		return p.Delay + time.Second
	}
	return p.Monitor
}

// Record is an item the reaper may delete.
type Item struct {
	ID       string
	At       time.Time
	Terminal bool
}

// Reap returns what to delete so that at most keep items remain: oldest
// first, never an item still running (§B.6). A negative keep deletes
// nothing.
func Reap(items []Item, keep int) []string {
	if keep < 0 || len(items) <= keep {
		return nil
	}
	s := append([]Item(nil), items...)
	sort.SliceStable(s, func(i, j int) bool { return s[i].At.Before(s[j].At) })
	excess := len(s) - keep
	var out []string
	for _, it := range s {
		if excess == 0 {
			break
		}
		if it.Terminal {
			out = append(out, it.ID)
			excess--
		}
	}
	return out
}

// Describe renders a restart policy for messages.
func (p RestartPolicy) Describe() string {
	if p.MaxAttempts == 0 {
		return fmt.Sprintf("restart %s after %s", p.Condition, p.Delay)
	}
	if p.Window == 0 {
		return fmt.Sprintf("at most %d restarts", p.MaxAttempts)
	}
	return fmt.Sprintf("at most %d restarts within %s", p.MaxAttempts, p.Window)
}

// HealthModes are a health policy's verdicts on one node, one per
// detection mode it uses: true when the mode found the node failed.
type HealthModes map[string]bool

// Unhealthy is a health policy's verdict on a node (Senlin's health
// manager): within grace (the node updated less than node_update_timeout
// ago) polling failures are forgiven; otherwise ANY_FAILED takes one
// failing mode and ALL_FAILED needs every mode to fail. No mode, no
// failure.
func Unhealthy(modes HealthModes, conditional string, grace bool) bool {
	if grace || len(modes) == 0 {
		return false
	}
	all, any := true, false
	for _, failed := range modes {
		all = all && failed
		any = any || failed
	}
	if conditional == "ALL_FAILED" {
		return all
	}
	return any
}
