package orchestrator

import (
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/grovehq/grove/api"
)

var t0 = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

func at(s int) time.Time { return t0.Add(time.Duration(s) * time.Second) }

func TestDecideRestart(t *testing.T) {
	const (
		byCondition = "Not restarted: the cluster's restart condition is none."
		completed   = "Not restarted: the cluster's restart condition is on-failure."
	)
	cases := []struct {
		name    string
		p       RestartPolicy
		f       Failure
		h       History
		want    bool
		refusal Refusal
		reason  string
	}{
		{"§B.2 rule 1: none never", RestartPolicy{Condition: "none"}, Failure{At: at(10)}, History{}, false, RefusedByCondition, byCondition},
		{"§B.2 rule 2: on-failure skips a clean exit", RestartPolicy{Condition: "on-failure"}, Failure{Completed: true, At: at(10)}, History{}, false, RefusedCompleted, completed},
		{"§B.2 rule 2: on-failure restarts a failure", RestartPolicy{Condition: "on-failure"}, Failure{At: at(10)}, History{}, true, "", ""},
		{"§B.2 rule 3: any restarts a clean exit", RestartPolicy{Condition: "any"}, Failure{Completed: true, At: at(10)}, History{}, true, "", ""},
		{"§B.2 rule 4: unlimited", RestartPolicy{Condition: "any"}, Failure{At: at(10), Profile: "p"}, History{Profile: "p", Restarts: []time.Time{at(1), at(2), at(3)}}, true, "", ""},
		{"§B.2 rule 5: no history", RestartPolicy{Condition: "any", MaxAttempts: 1}, Failure{At: at(10), Profile: "p"}, History{}, true, "", ""},
		{"§B.2 rule 6: budget used, no window", RestartPolicy{Condition: "any", MaxAttempts: 2}, Failure{At: at(10), Profile: "p"}, History{Profile: "p", Restarts: []time.Time{at(1), at(2)}},
			false, RefusedLimit, "Not restarted: the restart limit is reached (at most 2 restarts)."},
		{"§B.2 rule 6: budget left, no window", RestartPolicy{Condition: "any", MaxAttempts: 3}, Failure{At: at(10), Profile: "p"}, History{Profile: "p", Restarts: []time.Time{at(1), at(2)}}, true, "", ""},
		{"§B.2 rule 5: profile change resets", RestartPolicy{Condition: "any", MaxAttempts: 1}, Failure{At: at(10), Profile: "q"}, History{Profile: "p", Restarts: []time.Time{at(9)}}, true, "", ""},
		{"§B.2 rule 7: window counts recent only", RestartPolicy{Condition: "any", MaxAttempts: 2, Window: 5 * time.Second}, Failure{At: at(10), Profile: "p"},
			History{Profile: "p", Restarts: []time.Time{at(1), at(2), at(3), at(8)}}, true, "", ""},
		{"§B.2 rule 7: window full", RestartPolicy{Condition: "any", MaxAttempts: 2, Window: 5 * time.Second}, Failure{At: at(10), Profile: "p"},
			History{Profile: "p", Restarts: []time.Time{at(6), at(8)}}, false, RefusedLimit, "Not restarted: the restart limit is reached (at most 2 restarts within 5s)."},
		{"§B.2 rule 7: window excludes the failure instant", RestartPolicy{Condition: "any", MaxAttempts: 1, Window: 5 * time.Second}, Failure{At: at(10), Profile: "p"},
			History{Profile: "p", Restarts: []time.Time{at(10)}}, true, "", ""},
		{"§B.2 rule 7: window excludes its start", RestartPolicy{Condition: "any", MaxAttempts: 1, Window: 5 * time.Second}, Failure{At: at(10), Profile: "p"},
			History{Profile: "p", Restarts: []time.Time{at(5)}}, true, "", ""},
		{"§B.2 rule 6: the limit is checked on a clean exit under any", RestartPolicy{Condition: "any", MaxAttempts: 1}, Failure{Completed: true, At: at(10), Profile: "p"},
			History{Profile: "p", Restarts: []time.Time{at(1)}}, false, RefusedLimit, "Not restarted: the restart limit is reached (at most 1 restarts)."},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			d := DecideRestart(c.p, c.f, c.h)
			if d.Restart != c.want || d.Refusal != c.refusal || d.Reason != c.reason {
				t.Errorf("got restart %v, refusal %q, reason %q; want %v, %q, %q", d.Restart, d.Refusal, d.Reason, c.want, c.refusal, c.reason)
			}
			if c.want && !d.At.Equal(c.f.At.Add(c.p.Delay)) {
				t.Errorf("a restart may start at %v, want the failure time plus the delay %v", d.At, c.f.At.Add(c.p.Delay))
			}
		})
	}
	d := DecideRestart(RestartPolicy{Condition: "any", Delay: 3 * time.Second}, Failure{At: at(10)}, History{})
	if !d.Restart || !d.At.Equal(at(13)) {
		t.Errorf("§B.2 mechanics: a restart waits for the delay: %+v", d)
	}
}

func TestRecord(t *testing.T) {
	p := RestartPolicy{Condition: "any", MaxAttempts: 3, Window: 10 * time.Second}
	h := Record(p, History{Profile: "p", Count: 2, Restarts: []time.Time{at(1), at(15)}}, "p", at(20))
	if len(h.Restarts) != 2 || !h.Restarts[0].Equal(at(15)) || !h.Restarts[1].Equal(at(20)) {
		t.Errorf("entries older than the window are dropped: %v", h.Restarts)
	}
	if h.Count != 3 {
		t.Errorf("the count keeps restarts outside the window: %d, want 3", h.Count)
	}
	h = Record(p, h, "q", at(21))
	if h.Profile != "q" || len(h.Restarts) != 1 || h.Count != 1 {
		t.Errorf("a profile change resets the history: %+v", h)
	}
	unlimited := RestartPolicy{Condition: "any"}
	h = Record(unlimited, History{Profile: "p", Count: 4, Restarts: []time.Time{at(1)}}, "p", at(2))
	if len(h.Restarts) != 0 || h.Count != 5 {
		t.Errorf("without max_attempts no times are kept but restarts are counted: %+v", h)
	}
}

func TestParseSettings(t *testing.T) {
	cfg := map[string]any{
		api.ConfigRestart: map[string]any{"condition": "on-failure", "delay": "2s", "max_attempts": 3.0, "window": "1m"},
		api.ConfigUpdate:  map[string]any{"parallelism": 2.0, "failure_action": "rollback", "monitor": "3s", "max_failure_ratio": 0.5, "order": "start-first"},
	}
	if r := ParseRestart(cfg); r != (RestartPolicy{Condition: "on-failure", Delay: 2 * time.Second, MaxAttempts: 3, Window: time.Minute}) {
		t.Errorf("restart: %+v", r)
	}
	if u := ParseUpdate(cfg); u.Parallelism != 2 || u.FailureAction != "rollback" || u.Monitor != 3*time.Second || u.MaxFailureRatio != 0.5 || u.Order != "start-first" {
		t.Errorf("update: %+v", u)
	}
	if r := ParseRestart(nil); r != DefaultRestart {
		t.Errorf("restart defaults: %+v", r)
	}
	if u := ParseUpdate(nil); u != DefaultUpdate {
		t.Errorf("update defaults: %+v", u)
	}
}

func TestScaleDownVictims(t *testing.T) {
	slots := []Slot{
		{ID: "a1", Index: 1, Host: "a", Running: true}, {ID: "a2", Index: 2, Host: "a", Running: true},
		{ID: "a3", Index: 3, Host: "a", Running: true}, {ID: "b4", Index: 4, Host: "b", Running: true},
		{ID: "b5", Index: 5, Host: "b", Running: false}, {ID: "c6", Index: 6, Host: "c", Running: true},
	}
	cases := []struct {
		replicas int
		want     []string
	}{
		{6, nil},
		{5, []string{"b5"}},                         // not running goes first
		{3, []string{"a2", "a3", "b5"}},             // one per host kept
		{4, []string{"a3", "b5"}},                   // second copy on the most crowded host next
		{1, []string{"a2", "a3", "b4", "b5", "c6"}}, // lowest index kept
		{0, []string{"a1", "a2", "a3", "b4", "b5", "c6"}},
	}
	for _, c := range cases {
		if got := ScaleDownVictims(slots, c.replicas); !slices.Equal(got, c.want) {
			t.Errorf("replicas %d: %v, want %v", c.replicas, got, c.want)
		}
	}
	for _, replicas := range []int{-1, -3} {
		// A caller asking to remove more nodes than there are removes them
		// all (it panicked on a negative slice bound before).
		if got := ScaleDownVictims(slots[:2], replicas); !slices.Equal(got, []string{"a1", "a2"}) {
			t.Errorf("replicas %d: %v, want every node", replicas, got)
		}
	}
	noHosts := []Slot{{ID: "x1", Index: 1, Running: true}, {ID: "x2", Index: 2, Running: true}, {ID: "x3", Index: 3, Running: true}}
	if got := ScaleDownVictims(noHosts, 1); !slices.Equal(got, []string{"x2", "x3"}) {
		t.Errorf("without hosts, the highest indexes go: %v", got)
	}
}

func TestBatchesAndVerdicts(t *testing.T) {
	b := Batches([]string{"a", "b", "c", "d", "e"}, 2)
	if len(b) != 3 || len(b[2]) != 1 {
		t.Errorf("batches of 2: %v", b)
	}
	if b := Batches([]string{"a", "b"}, 0); len(b) != 1 || len(b[0]) != 2 {
		t.Errorf("parallelism 0 updates all at once: %v", b)
	}
	cases := []struct {
		p           UpdatePolicy
		failures    int
		dirty       int
		rollingBack bool
		want        Verdict
	}{
		{UpdatePolicy{FailureAction: "pause"}, 0, 4, false, Proceed},
		{UpdatePolicy{FailureAction: "pause"}, 1, 4, false, Pause},
		{UpdatePolicy{FailureAction: "rollback", MaxFailureRatio: 0.25}, 1, 4, false, Proceed}, // not strictly greater
		{UpdatePolicy{FailureAction: "rollback", MaxFailureRatio: 0.25}, 2, 4, false, Rollback},
		{UpdatePolicy{FailureAction: "continue"}, 4, 4, false, Proceed},
		{UpdatePolicy{FailureAction: "rollback"}, 1, 4, true, Pause}, // never roll back a rollback
	}
	for i, c := range cases {
		if got := AfterBatch(c.p, c.failures, c.dirty, c.rollingBack); got != c.want {
			t.Errorf("case %d: %s, want %s", i, got, c.want)
		}
	}
	if WatchFor(UpdatePolicy{Monitor: 5 * time.Second, Delay: time.Second}) != 5*time.Second ||
		WatchFor(UpdatePolicy{Monitor: 5 * time.Second, Delay: 10 * time.Second}) != 11*time.Second {
		t.Error("watch period")
	}
}

func TestReap(t *testing.T) {
	items := []Item{{"e", at(5), true}, {"a", at(1), true}, {"b", at(2), false}, {"c", at(3), true}, {"d", at(4), true}}
	cases := []struct {
		keep int
		want []string
	}{
		{5, nil}, {-1, nil}, {3, []string{"a", "c"}}, {1, []string{"a", "c", "d", "e"}},
		{0, []string{"a", "c", "d", "e"}}, // the running one stays
	}
	for _, c := range cases {
		if got := Reap(items, c.keep); !slices.Equal(got, c.want) {
			t.Errorf("keep %d: %v, want %v", c.keep, got, c.want)
		}
	}
}

func TestDirty(t *testing.T) {
	members := []Member{
		{ID: "c", Index: 3, Profile: "old"}, {ID: "a", Index: 1, Profile: "new"}, {ID: "b", Index: 2, Profile: "old"},
		{ID: "d", Index: 4, Profile: "old", Gone: true}, {ID: "e", Index: 5, Profile: "other"},
	}
	if got := Dirty(members, "new", []string{"e"}); !slices.Equal(got, []string{"b", "c"}) {
		t.Errorf("dirty: %v", got)
	}
	if got := Dirty(members, "old", nil); !slices.Equal(got, []string{"a", "e"}) {
		t.Errorf("dirty towards the old profile (a rollback): %v", got)
	}
}

// TestPlannedBatches: a batch policy's plan decides the batches, in its
// order, with the nodes done or failed left out and sets left empty
// skipped.
func TestPlannedBatches(t *testing.T) {
	plan := [][]string{{"c", "a"}, {"b"}, {"d"}}
	cases := []struct {
		name  string
		dirty []string
		plan  [][]string
		want  [][]string
	}{
		{"the plan's sets in its order, nodes in dirty's order", []string{"a", "b", "c", "d"}, plan, [][]string{{"a", "c"}, {"b"}, {"d"}}},
		{"a set whose nodes are done is skipped (a resumed update)", []string{"b", "d"}, plan, [][]string{{"b"}, {"d"}}},
		{"a node done leaves the rest of its set", []string{"a", "b", "d"}, plan, [][]string{{"a"}, {"b"}, {"d"}}},
		{"dirty nodes the plan does not name go last", []string{"a", "b", "c", "d", "e"}, plan, [][]string{{"a", "c"}, {"b"}, {"d"}, {"e"}}},
		{"nothing dirty: no batch", nil, plan, nil},
		{"an empty plan: one batch of the dirty nodes", []string{"a", "b"}, [][]string{}, [][]string{{"a", "b"}}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := PlannedBatches(c.dirty, c.plan); !reflect.DeepEqual(got, c.want) {
				t.Errorf("PlannedBatches(%v, %v) = %v, want %v", c.dirty, c.plan, got, c.want)
			}
		})
	}
}

// TestUnhealthy holds the health policy's verdict: ANY_FAILED and
// ALL_FAILED over the modes, grace after an update, no mode no failure.
func TestUnhealthy(t *testing.T) {
	cases := []struct {
		name        string
		modes       HealthModes
		conditional string
		grace       bool
		want        bool
	}{
		{"any: one mode fails", HealthModes{"a": true, "b": false}, "ANY_FAILED", false, true},
		{"any: none fails", HealthModes{"a": false, "b": false}, "ANY_FAILED", false, false},
		{"all: one of two fails", HealthModes{"a": true, "b": false}, "ALL_FAILED", false, false},
		{"all: both fail", HealthModes{"a": true, "b": true}, "ALL_FAILED", false, true},
		{"grace forgives", HealthModes{"a": true}, "ANY_FAILED", true, false},
		{"no mode", HealthModes{}, "ALL_FAILED", false, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := Unhealthy(c.modes, c.conditional, c.grace); got != c.want {
				t.Errorf("Unhealthy(%v, %s, %v) = %v, want %v", c.modes, c.conditional, c.grace, got, c.want)
			}
		})
	}
}
