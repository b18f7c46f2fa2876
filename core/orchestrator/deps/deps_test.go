package deps

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/grovehq/grove/core/model"
)

// Rules are cited by section of ../shared/reference/semantics.md (§C.1
// model, §C.2 satisfaction, §C.3 propagation and the seed's table, §C.4
// exclude_all, §C.5 admin stop, milestones, cycles).

func cl(name string, st State, groups ...Group) Cluster {
	return Cluster{Name: name, State: st, Groups: groups}
}

func grp(grouping Grouping, restartOn RestartOn, members ...string) Group {
	return Group{Name: "g-" + string(grouping), Grouping: grouping, RestartOn: restartOn, Members: members}
}

// memberCase: one member in a given condition, under each grouping.
type memberCase struct {
	name    string
	member  string
	others  []Cluster
	paths   map[string]bool
	ms      map[string][]string
	sat     Result // require_all / require_any of that single member, with satisfiability
	quick   Result // the same without the satisfiability recursion (start decision)
	opt     Result // optional_all
	exclude Result // exclude_all
}

// TestSatisfactionPerMember is §C.2 "a single entity" under each grouping.
func TestSatisfactionPerMember(t *testing.T) {
	dead := cl("dead", Maintenance)
	cases := []memberCase{
		{name: "running", member: "x", others: []Cluster{cl("x", Running)}, sat: 1, quick: 1, opt: 1, exclude: -1},
		{name: "running being stopped by an operator", member: "x", others: []Cluster{{Name: "x", State: Running, Stopping: true}}, sat: -1, quick: -1, opt: -1, exclude: 0},
		{name: "offline, waiting on what can come", member: "x", others: []Cluster{cl("x", Offline, grp(RequireAll, None, "y")), cl("y", Offline)}, sat: 0, quick: 0, opt: 0, exclude: 0},
		{name: "offline on unsatisfiable dependencies", member: "x", others: []Cluster{cl("x", Offline, grp(RequireAll, None, "dead")), dead}, sat: -1, quick: 0, opt: 1, exclude: 0},
		{name: "uninitialized", member: "x", others: []Cluster{cl("x", Uninitialized)}, sat: 0, quick: 0, opt: 0, exclude: 0},
		{name: "stopped (disabled)", member: "x", others: []Cluster{cl("x", Stopped)}, sat: -1, quick: -1, opt: 1, exclude: 1},
		{name: "stopped being started", member: "x", others: []Cluster{{Name: "x", State: Stopped, Starting: true}}, sat: -1, quick: -1, opt: 0, exclude: 1},
		{name: "maintenance", member: "x", others: []Cluster{cl("x", Maintenance)}, sat: -1, quick: -1, opt: 1, exclude: 1},
		{name: "absent", member: "nosuch", sat: -1, quick: -1, opt: 1, exclude: 1},
		{name: "by id", member: "id-x", others: []Cluster{{Name: "x", ID: "id-x", State: Running}}, sat: 1, quick: 1, opt: 1, exclude: -1},
		{name: "path exists", member: "path:/etc/db.conf", paths: map[string]bool{"/etc/db.conf": true}, sat: 1, quick: 1, opt: 1, exclude: -1},
		// A missing file is never waited for, and optional_all evaluates it
		// as a plain dependency (code behaviour, not the man page's).
		{name: "path missing", member: "path:/etc/db.conf", sat: -1, quick: -1, opt: -1, exclude: 1},
		{name: "milestone reached", member: "milestone:m", ms: map[string][]string{"m": {"x"}}, others: []Cluster{cl("x", Running)}, sat: 1, quick: 1, opt: 1, exclude: -1},
		{name: "milestone on its way", member: "milestone:m", ms: map[string][]string{"m": {"x"}}, others: []Cluster{cl("x", Offline)}, sat: 0, quick: 0, opt: 0, exclude: 0},
		{name: "milestone that cannot be reached", member: "milestone:m", ms: map[string][]string{"m": {"x"}}, others: []Cluster{cl("x", Maintenance)}, sat: -1, quick: 0, opt: 1, exclude: 0},
		{name: "unknown milestone", member: "milestone:nosuch", sat: -1, quick: -1, opt: 1, exclude: 1},
	}
	for _, c := range cases {
		for _, gg := range []struct {
			grouping Grouping
			want     Result
			quick    Result
		}{{RequireAll, c.sat, c.quick}, {RequireAny, c.sat, c.quick}, {OptionalAll, c.opt, c.opt}, {ExcludeAll, c.exclude, c.exclude}} {
			t.Run(c.name+"/"+string(gg.grouping), func(t *testing.T) {
				s := Snapshot{Clusters: append([]Cluster{cl("me", Offline, grp(gg.grouping, None, c.member))}, c.others...), Paths: c.paths, Milestones: c.ms}
				v, err := Check(s, "me")
				if err != nil {
					t.Fatal(err)
				}
				if v.Result != gg.want {
					t.Errorf("result %s, want %s (reason %q)", v.Result, gg.want, v.Reason)
				}
				if v.Start != (gg.quick == Satisfied) {
					t.Errorf("start %v, want %v", v.Start, gg.quick == Satisfied)
				}
			})
		}
	}
}

// TestGroupings is §C.2's combination rules over several members.
func TestGroupings(t *testing.T) {
	others := []Cluster{cl("up", Running), cl("up2", Running), cl("coming", Offline), cl("dead", Maintenance), cl("off", Stopped)}
	cases := []struct {
		g    Group
		want Result
	}{
		{grp(RequireAll, None), 1},
		{grp(RequireAll, None, "up", "up2"), 1},
		{grp(RequireAll, None, "up", "coming"), 0},
		{grp(RequireAll, None, "coming", "dead"), -1}, // −1 wins over 0
		{grp(RequireAny, None), 1},
		{grp(RequireAny, None, "dead", "up"), 1},
		{grp(RequireAny, None, "dead", "coming"), 0},
		{grp(RequireAny, None, "dead", "off"), -1},
		{grp(OptionalAll, None), 1},
		{grp(OptionalAll, None, "dead", "nosuch"), 1}, // no qualified member
		{grp(OptionalAll, None, "off", "up"), 1},
		{grp(OptionalAll, None, "off", "coming"), 0},
		{grp(OptionalAll, None, "coming", "path:/missing"), -1},
		{grp(ExcludeAll, None), 1},
		{grp(ExcludeAll, None, "dead", "off", "nosuch", "path:/missing"), 1},
		{grp(ExcludeAll, None, "off", "coming"), 0},
		{grp(ExcludeAll, None, "coming", "up"), -1},
	}
	for _, c := range cases {
		t.Run(fmt.Sprintf("%s%v", c.g.Grouping, c.g.Members), func(t *testing.T) {
			s := Snapshot{Clusters: append([]Cluster{cl("me", Offline, c.g)}, others...)}
			v, _ := Check(s, "me")
			if v.Result != c.want {
				t.Errorf("result %s, want %s", v.Result, c.want)
			}
		})
	}
}

// TestStartDecisionAndReason: a cluster starts only when every group is
// satisfied; the reason names what holds it back.
func TestStartDecisionAndReason(t *testing.T) {
	cases := []struct {
		name   string
		snap   Snapshot
		start  bool
		result Result
		reason string
	}{
		{"db running", Snapshot{Clusters: []Cluster{cl("web", Offline, grp(RequireAll, Error, "db")), cl("db", Running)}}, true, 1, ""},
		{"db in maintenance", Snapshot{Clusters: []Cluster{cl("web", Offline, grp(RequireAll, Error, "db")), cl("db", Maintenance)}}, false, -1, "waiting on db: maintenance"},
		{"db offline", Snapshot{Clusters: []Cluster{cl("web", Offline, grp(RequireAll, Error, "db")), cl("db", Offline)}}, false, 0, "waiting on db: offline"},
		{"db stopped", Snapshot{Clusters: []Cluster{cl("web", Offline, grp(RequireAll, Error, "db")), cl("db", Stopped)}}, false, -1, "waiting on db: stopped"},
		{"path missing", Snapshot{Clusters: []Cluster{cl("web", Offline, grp(RequireAll, None, "path:/run/ready"))}}, false, -1, "waiting on path:/run/ready: does not exist"},
		{"excluded running", Snapshot{Clusters: []Cluster{cl("web", Offline, grp(ExcludeAll, Restart, "maint")), cl("maint", Running)}}, false, -1, "excluded maint running"},
		{"every group", Snapshot{Clusters: []Cluster{cl("web", Offline, grp(RequireAll, Error, "db"), grp(RequireAny, None, "c1", "c2")), cl("db", Running), cl("c1", Offline), cl("c2", Offline)}}, false, 0, "waiting on c1: offline"},
		{"already running does not start", Snapshot{Clusters: []Cluster{cl("web", Running, grp(RequireAll, Error, "db")), cl("db", Running)}}, false, 1, ""},
		{"stopped does not start", Snapshot{Clusters: []Cluster{cl("web", Stopped)}}, false, 1, ""},
		{"two hops: offline on unsatisfiable", Snapshot{Clusters: []Cluster{cl("web", Offline, grp(RequireAll, Error, "app")), cl("app", Offline, grp(RequireAll, Error, "db")), cl("db", Maintenance)}}, false, -1, "waiting on app: offline, its dependencies cannot be met"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			v, err := Check(c.snap, "web")
			if err != nil {
				t.Fatal(err)
			}
			if v.Start != c.start || v.Result != c.result || v.Reason != c.reason {
				t.Errorf("got start %v %s %q, want %v %s %q", v.Start, v.Result, v.Reason, c.start, c.result, c.reason)
			}
		})
	}
}

func stepsString(st []Step) string {
	var b []string
	for _, s := range st {
		b = append(b, string(s.Op)+" "+s.Cluster)
	}
	return strings.Join(b, ", ")
}

// TestSeedTable is the seed's table (§C.3): which stop events on a running
// dependency stop a running dependent, for each restart_on, under each of
// require_all, require_any and optional_all.
func TestSeedTable(t *testing.T) {
	table := map[EventKind]map[RestartOn]bool{
		Fault:        {None: false, Error: true, Restart: true, Refresh: true},
		Stop:         {None: false, Error: false, Restart: true, Refresh: true},
		RefreshEvent: {None: false, Error: false, Restart: false, Refresh: true},
	}
	for _, grouping := range []Grouping{RequireAll, RequireAny, OptionalAll} {
		for ev, row := range table {
			for ro, stops := range row {
				t.Run(fmt.Sprintf("%s/%s/%s", grouping, ev, ro), func(t *testing.T) {
					s := Snapshot{Clusters: []Cluster{cl("db", Running), cl("web", Running, grp(grouping, ro, "db"))}}
					d, err := Propagate(s, Event{Kind: ev, Cluster: "db"})
					if err != nil {
						t.Fatal(err)
					}
					got := len(d.Steps) > 0 && d.Steps[0] == Step{Cluster: "web", Op: OpStop, Cause: CauseDependency, Because: d.Steps[0].Because}
					if got != stops {
						t.Fatalf("steps %q, want web stopped: %v", stepsString(d.Steps), stops)
					}
					if !stops {
						return
					}
					// web comes back: at once after a refresh (db stays up),
					// in the recovery after a stop.
					after := d.Recovery
					if ev == RefreshEvent {
						after = d.Steps[1:]
					}
					if stepsString(after) != "start web" {
						t.Errorf("after: %q, want web started again", stepsString(after))
					}
				})
			}
		}
	}
}

// TestPropagation covers the rules around the table.
func TestPropagation(t *testing.T) {
	cases := []struct {
		name     string
		snap     Snapshot
		ev       Event
		steps    string
		recovery string
	}{
		{
			// §C.3 cascade: web stops with cause dependency, a non-error
			// stop, so front (restart_on error on web) stays up.
			name: "two hops down an error dependent does not stop",
			snap: Snapshot{Clusters: []Cluster{cl("db", Running), cl("web", Running, grp(RequireAll, Error, "db")), cl("front", Running, grp(RequireAll, Error, "web"))}},
			ev:   Event{Kind: Fault, Cluster: "db"}, steps: "stop web", recovery: "start web",
		},
		{
			name: "two hops down a restart dependent stops, leaves first",
			snap: Snapshot{Clusters: []Cluster{cl("db", Running), cl("web", Running, grp(RequireAll, Error, "db")), cl("front", Running, grp(RequireAll, Restart, "web"))}},
			ev:   Event{Kind: Fault, Cluster: "db"}, steps: "stop front, stop web", recovery: "start web, start front",
		},
		{
			name: "exclude_all dependency coming up stops the dependent",
			snap: Snapshot{Clusters: []Cluster{cl("maint", Offline), cl("web", Running, grp(ExcludeAll, Restart, "maint")), cl("front", Running, grp(RequireAll, Restart, "web"))}},
			ev:   Event{Kind: Start, Cluster: "maint"}, steps: "stop front, stop web",
		},
		{
			// §C.4: smf.7 says restart_on none keeps the dependent up;
			// graph.c stops it anyway. Disputed: we follow the man page.
			name: "disputed: exclude_all with restart_on none keeps the dependent up",
			snap: Snapshot{Clusters: []Cluster{cl("maint", Offline), cl("web", Running, grp(ExcludeAll, None, "maint"))}},
			ev:   Event{Kind: Start, Cluster: "maint"}, steps: "",
		},
		{
			// An excluded cluster that stops but stays enabled (offline)
			// may come back: the dependent keeps waiting (§C.2). An
			// operator's stop lets it start (the admin stop case below).
			name: "an excluded cluster's restart keeps the dependent waiting",
			snap: Snapshot{Clusters: []Cluster{cl("maint", Running), cl("web", Offline, grp(ExcludeAll, Restart, "maint"))}},
			ev:   Event{Kind: Stop, Cluster: "maint"}, steps: "", recovery: "",
		},
		{
			name: "a dependency coming up starts waiting dependents in order",
			snap: Snapshot{Clusters: []Cluster{cl("db", Offline), cl("web", Offline, grp(RequireAll, Error, "db")), cl("front", Offline, grp(RequireAll, Error, "web"))}},
			ev:   Event{Kind: Start, Cluster: "db"}, steps: "start web, start front",
		},
		{
			name: "optional_all dependents restart on a start with reason restart",
			snap: Snapshot{Clusters: []Cluster{cl("cache", Offline), cl("web", Running, grp(OptionalAll, None, "cache"))}},
			ev:   Event{Kind: Start, Cluster: "cache", Reason: Restart}, steps: "stop web, start web",
		},
		{
			name: "optional_all dependents stay on a plain start",
			snap: Snapshot{Clusters: []Cluster{cl("cache", Offline), cl("web", Running, grp(OptionalAll, None, "cache"))}},
			ev:   Event{Kind: Start, Cluster: "cache"}, steps: "",
		},
		{
			name: "a milestone member's fault reaches dependents of the milestone",
			snap: Snapshot{Clusters: []Cluster{cl("db", Running), cl("web", Running, grp(RequireAll, Error, "milestone:backend"))}, Milestones: map[string][]string{"backend": {"db"}}},
			ev:   Event{Kind: Fault, Cluster: "db"}, steps: "stop web", recovery: "start web",
		},
		{
			name: "recovery holds a dependent whose other dependency is down",
			snap: Snapshot{Clusters: []Cluster{cl("db", Running), cl("mq", Running), cl("web", Running, grp(RequireAll, Error, "db", "mq"))}},
			ev:   Event{Kind: Fault, Cluster: "db"}, steps: "stop web", recovery: "start web",
		},
		{
			// §C.5: restart_on error and exclude_all dependents are
			// bypassed; restart and refresh dependents stop first.
			name: "admin stop takes running dependents down first, leaves first",
			snap: Snapshot{Clusters: []Cluster{
				cl("db", Running),
				cl("web", Running, grp(RequireAll, Restart, "db")),
				cl("front", Running, grp(RequireAll, Refresh, "web")),
				cl("report", Running, grp(RequireAll, Error, "db")),
				cl("standby", Offline, grp(ExcludeAll, Restart, "db")),
			}},
			ev: Event{Kind: AdminStop, Cluster: "db"}, steps: "stop front, stop web, stop db, start standby",
		},
		{
			name: "admin start waits on dependencies",
			snap: Snapshot{Clusters: []Cluster{cl("db", Maintenance), cl("web", Stopped, grp(RequireAll, Error, "db"))}},
			ev:   Event{Kind: AdminStart, Cluster: "web"}, steps: "",
		},
		{
			name: "admin start starts what waited on it",
			snap: Snapshot{Clusters: []Cluster{cl("db", Stopped), cl("web", Offline, grp(RequireAll, Error, "db"))}},
			ev:   Event{Kind: AdminStart, Cluster: "db"}, steps: "start db, start web",
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			d, err := Propagate(c.snap, c.ev)
			if err != nil {
				t.Fatal(err)
			}
			if got := stepsString(d.Steps); got != c.steps {
				t.Errorf("steps %q, want %q", got, c.steps)
			}
			if got := stepsString(d.Recovery); got != c.recovery {
				t.Errorf("recovery %q, want %q", got, c.recovery)
			}
		})
	}
}

// TestStopCauseIsDependency: the dependent stops with cause "dependency".
func TestStopCauseIsDependency(t *testing.T) {
	s := Snapshot{Clusters: []Cluster{cl("db", Running), {Name: "web", State: Running, Groups: []Group{{Name: "database", Grouping: RequireAll, RestartOn: Error, Members: []string{"db"}}}}}}
	d, err := Propagate(s, Event{Kind: Fault, Cluster: "db"})
	if err != nil {
		t.Fatal(err)
	}
	want := Step{Cluster: "web", Op: OpStop, Cause: "dependency", Because: "db stopped (fault), group database restart_on error"}
	if len(d.Steps) != 1 || d.Steps[0] != want {
		t.Fatalf("steps %+v, want %+v", d.Steps, want)
	}
}

// TestRecoveryHeld: the dependent waits while another dependency is down.
func TestRecoveryHeld(t *testing.T) {
	s := Snapshot{Clusters: []Cluster{cl("db", Running), cl("mq", Running), cl("web", Running, grp(RequireAll, Error, "db"), grp(RequireAll, Error, "mq"))}}
	s.Clusters[1].State = Maintenance // mq broke after web started
	d, err := Propagate(s, Event{Kind: Fault, Cluster: "db"})
	if err != nil {
		t.Fatal(err)
	}
	if stepsString(d.Recovery) != "" || len(d.Held) != 1 || d.Held[0].Reason != "waiting on mq: maintenance" {
		t.Fatalf("recovery %q held %+v", stepsString(d.Recovery), d.Held)
	}
}

// TestMilestones is §C.5's milestone subgraph.
func TestMilestones(t *testing.T) {
	stack := func(states ...State) Snapshot {
		return Snapshot{
			Clusters: []Cluster{
				cl("db", states[0]),
				cl("app", states[1], grp(RequireAll, Error, "db"), grp(ExcludeAll, Restart, "batch")),
				cl("web", states[2], grp(RequireAll, Error, "app"), grp(OptionalAll, None, "cache")),
				cl("batch", states[3]),
				cl("cache", states[4]),
				cl("tools", states[5], grp(RequireAll, Error, "db")),
			},
			Milestones: map[string][]string{"multi-user": {"web"}, "single-user": {"db"}},
		}
	}
	cases := []struct {
		name, ms string
		snap     Snapshot
		sub      string
		steps    string
	}{
		{"enter multi-user from nothing", "multi-user", stack(Stopped, Stopped, Stopped, Stopped, Stopped, Stopped),
			// exclusions not followed (batch), stopped optional_all members skipped (cache)
			"app db web", "start db, start app, start web"},
		{"enter single-user from everything", "single-user", stack(Running, Running, Running, Offline, Running, Running),
			"db", "stop web, stop app, stop cache, stop tools"},
		{"optional_all member that runs is in the subgraph", "multi-user", stack(Running, Running, Running, Stopped, Running, Running),
			"app cache db web", "stop tools"},
		{"all", "all", stack(Stopped, Stopped, Stopped, Stopped, Stopped, Stopped),
			"app batch cache db tools web", "start batch, start cache, start db, start tools, held app, held web"},
		{"none takes everything down leaves first", "none", stack(Running, Running, Running, Stopped, Running, Running),
			"", "stop web, stop app, stop tools, stop db, stop cache"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			sub, err := Subgraph(c.snap, c.ms)
			if err != nil {
				t.Fatal(err)
			}
			if strings.Join(sub, " ") != c.sub {
				t.Errorf("subgraph %q, want %q", strings.Join(sub, " "), c.sub)
			}
			d, err := Propagate(c.snap, Event{Kind: Milestone, Milestone: c.ms})
			if err != nil {
				t.Fatal(err)
			}
			got := stepsString(d.Steps)
			for _, h := range d.Held {
				got += ", held " + h.Cluster
			}
			if got != c.steps {
				t.Errorf("steps %q, want %q", got, c.steps)
			}
		})
	}
	if _, err := Subgraph(stack(Running, Running, Running, Running, Running, Running), "nosuch"); err == nil {
		t.Error("an unknown milestone was accepted")
	}
}

// TestCycles is §C.5: cycles among non-exclude dependencies are refused
// naming the whole cycle; exclusion edges do not count; a cycle that
// arrives anyway puts its clusters in maintenance.
func TestCycles(t *testing.T) {
	base := Snapshot{
		Clusters: []Cluster{
			cl("web", Offline, grp(RequireAll, Error, "app")),
			cl("app", Offline, grp(RequireAll, Error, "milestone:backend")),
			cl("db", Offline),
		},
		Milestones: map[string][]string{"backend": {"db"}},
	}
	err := CheckDeclare(base, "db", []Group{grp(RequireAny, None, "web")})
	var ce *CycleError
	if !errors.As(err, &ce) {
		t.Fatalf("error %v, want a cycle", err)
	}
	if want := "db → web → app → milestone:backend → db"; strings.Join(ce.Cycle, " → ") != want {
		t.Errorf("cycle %q, want %q", strings.Join(ce.Cycle, " → "), want)
	}
	if !strings.Contains(err.Error(), "db → web → app → milestone:backend → db") {
		t.Errorf("message %q does not name the cycle", err)
	}
	if err := CheckDeclare(base, "db", []Group{grp(ExcludeAll, Restart, "web")}); err != nil {
		t.Errorf("an exclusion cycle was refused: %v", err)
	}
	if err := CheckDeclare(base, "db", []Group{grp(RequireAll, None, "db")}); err == nil || !strings.Contains(err.Error(), "db → db") {
		t.Errorf("a self-dependency: %v", err)
	}
	if err := CheckDeclare(base, "new", []Group{grp(RequireAll, None, "web")}); err != nil {
		t.Errorf("a new cluster depending on web: %v", err)
	}
	// Arrived anyway: maintenance, "dependency cycle", dependents blocked.
	arrived := base
	arrived.Clusters = append([]Cluster{}, base.Clusters...)
	arrived.Clusters[2] = cl("db", Offline, grp(RequireAll, None, "web"))
	arrived.Clusters = append(arrived.Clusters, cl("front", Offline, grp(RequireAll, None, "web")))
	v, _ := Check(arrived, "web")
	if !v.Maintenance || v.Reason != "dependency cycle: web → app → milestone:backend → db → web" {
		t.Errorf("web: %+v", v)
	}
	v, _ = Check(arrived, "front")
	if v.Maintenance || v.Result != Unsatisfiable || v.Reason != "waiting on web: dependency cycle" {
		t.Errorf("front: %+v", v)
	}
	if _, err := Order(arrived); err == nil {
		t.Error("Order accepted a cycle")
	}
}

// TestOrder: start waves, dependencies first.
func TestOrder(t *testing.T) {
	s := Snapshot{
		Clusters: []Cluster{
			cl("web", Offline, grp(RequireAll, Error, "app"), grp(ExcludeAll, Restart, "maint")),
			cl("app", Offline, grp(RequireAll, Error, "db", "path:/etc/app.conf")),
			cl("db", Offline),
			cl("maint", Offline, grp(RequireAll, None, "milestone:m")),
			cl("cache", Offline),
		},
		Milestones: map[string][]string{"m": {"web"}},
	}
	w, err := Order(s)
	if err != nil {
		t.Fatal(err)
	}
	if got := fmt.Sprint(w); got != "[[cache db] [app] [web] [maint]]" {
		t.Errorf("waves %s", got)
	}
}

// TestValidateGroup: each field's rule, named.
func TestValidateGroup(t *testing.T) {
	cases := []struct {
		g    Group
		want string
	}{
		{Group{Grouping: RequireAll, RestartOn: None}, "name must not be empty"},
		{Group{Name: "d", Grouping: "require_some", RestartOn: None}, `grouping must be one of require_all, require_any, optional_all or exclude_all, not "require_some"`},
		{Group{Name: "d", Grouping: RequireAll, RestartOn: "always"}, `restart_on must be one of none, error, restart or refresh, not "always"`},
		{Group{Name: "d", Grouping: RequireAll, RestartOn: None, Members: []string{"path:etc"}}, "must be an absolute path"},
		{Group{Name: "d", Grouping: RequireAll, RestartOn: None, Members: []string{"milestone:"}}, "names nothing"},
		{Group{Name: "d", Grouping: RequireAll, RestartOn: None, Members: []string{"db", "db"}}, "listed twice"},
		{Group{Name: "d", Grouping: RequireAll, RestartOn: None, Members: []string{"db", "path:/x", "milestone:m"}}, ""},
	}
	for _, c := range cases {
		err := ValidateGroup(c.g)
		if c.want == "" {
			if err != nil {
				t.Errorf("%+v: %v", c.g, err)
			}
			continue
		}
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: error %v, want %q", c.g, err, c.want)
		}
	}
}

// TestStateOf: the mapping of statuses and stops to graph states.
func TestStateOf(t *testing.T) {
	cases := []struct {
		status      string
		stopped     bool
		cause       string
		maintenance bool
		want        State
	}{
		{"ACTIVE", false, "", false, Running},
		{"WARNING", false, "", false, Running},
		{"ERROR", false, "", false, Maintenance},
		{"CRITICAL", false, "", false, Maintenance},
		{"CREATING", false, "", false, Uninitialized},
		{"RESIZING", false, "", false, Offline},
		{"ACTIVE", true, "operator", false, Stopped},
		{"ACTIVE", true, "milestone", false, Stopped},
		{"ACTIVE", true, "dependency", false, Offline},
		{"ACTIVE", false, "", true, Maintenance},
	}
	for _, c := range cases {
		if got := StateOf(c.status, c.stopped, c.cause, c.maintenance); got != c.want {
			t.Errorf("StateOf(%q, %v, %q, %v) = %s, want %s", c.status, c.stopped, c.cause, c.maintenance, got, c.want)
		}
	}
}

// TestBuild: the store's rows become a snapshot; members stored as ids
// resolve to names; groups of clusters outside the project are left out; paths are
// checked through the function handed in.
func TestBuild(t *testing.T) {
	db := &model.Cluster{ID: "id-db", Name: "db", Status: "ERROR"}
	web := &model.Cluster{ID: "id-web", Name: "web", Status: "INIT"}
	groups := []model.DependencyGroup{
		{ClusterID: "id-web", DeclaredBy: "id-web", Name: "database", Grouping: "require_all", RestartOn: "error", Members: []string{"id-db", "path:/x"}},
		{ClusterID: "id-other", DeclaredBy: "id-other", Name: "g", Grouping: "require_all", RestartOn: "none", Members: []string{"id-db"}},
	}
	ms := []*model.Milestone{{Name: "backend", Clusters: []string{"id-db"}}}
	s := Build([]*model.Cluster{db, web}, groups, ms, nil, func(p string) bool { return p == "/x" })
	if len(s.Clusters) != 2 || len(s.Clusters[1].Groups) != 1 || len(s.Clusters[0].Groups) != 0 || !s.Paths["/x"] || s.Milestones["backend"][0] != "db" || s.Clusters[1].Groups[0].Members[0] != "db" {
		t.Fatalf("snapshot %+v", s)
	}
	v, _ := Check(s, "web")
	if v.Reason != "waiting on db: maintenance" || v.Result != Unsatisfiable {
		t.Errorf("web: %+v", v)
	}
}

// down is a cluster that is not running, down at a level (Cluster.Down).
func down(name string, st State, l Level, groups ...Group) Cluster {
	c := cl(name, st, groups...)
	c.Down = l
	return c
}

// TestReconcile: the stops a graph at rest owes after an agent died in the
// middle of a cascade are the ones Propagate would have made (§C.3–C.4),
// leaves first, and a graph at rest owes none.
func TestReconcile(t *testing.T) {
	cases := []struct {
		name  string
		snap  Snapshot
		steps string
	}{
		{"at rest", Snapshot{Clusters: []Cluster{cl("db", Running), cl("web", Running, grp(RequireAll, Error, "db"))}}, ""},
		{"a fault reaches restart_on error", Snapshot{Clusters: []Cluster{down("db", Offline, LevelFault), cl("web", Running, grp(RequireAll, Error, "db"))}}, "stop web"},
		{"a fault does not reach restart_on none", Snapshot{Clusters: []Cluster{down("db", Offline, LevelFault), cl("web", Running, grp(RequireAll, None, "db"))}}, ""},
		{"a stop does not reach restart_on error", Snapshot{Clusters: []Cluster{down("db", Stopped, LevelRestart), cl("web", Running, grp(RequireAll, Error, "db"))}}, ""},
		{"a stop reaches restart_on restart", Snapshot{Clusters: []Cluster{down("db", Stopped, LevelRestart), cl("web", Running, grp(RequireAll, Restart, "db"))}}, "stop web"},
		{"an action under way does not propagate", Snapshot{Clusters: []Cluster{cl("db", Offline), cl("web", Running, grp(RequireAll, Refresh, "db"))}}, ""},
		{
			// §C.3 cascade subtlety: web's own stop is a non-error stop.
			"two hops down an error dependent does not stop",
			Snapshot{Clusters: []Cluster{down("db", Offline, LevelFault), cl("web", Running, grp(RequireAll, Error, "db")), cl("front", Running, grp(RequireAll, Error, "web"))}},
			"stop web",
		},
		{
			"two hops down a restart dependent stops, leaves first",
			Snapshot{Clusters: []Cluster{down("db", Offline, LevelFault), cl("web", Running, grp(RequireAll, Error, "db")), cl("front", Running, grp(RequireAll, Restart, "web"))}},
			"stop front, stop web",
		},
		{
			// The cascade died after front stopped: web is still owed.
			"half a cascade",
			Snapshot{Clusters: []Cluster{down("db", Offline, LevelFault), cl("web", Running, grp(RequireAll, Error, "db")), down("front", Offline, LevelRestart, grp(RequireAll, Restart, "web"))}},
			"stop web",
		},
		{"require_any satisfied by another member stays up", Snapshot{Clusters: []Cluster{down("db1", Offline, LevelFault), cl("db2", Running), cl("web", Running, grp(RequireAny, Error, "db1", "db2"))}}, ""},
		{"optional_all over a stopped member stays up", Snapshot{Clusters: []Cluster{down("db", Stopped, LevelRestart), cl("web", Running, grp(OptionalAll, Restart, "db"))}}, ""},
		{"through a milestone", Snapshot{Clusters: []Cluster{down("db", Offline, LevelFault), cl("web", Running, grp(RequireAll, Error, "milestone:backend"))}, Milestones: map[string][]string{"backend": {"db"}}}, "stop web"},
		{"an excluded cluster running stops the dependent", Snapshot{Clusters: []Cluster{cl("maint", Running), cl("web", Running, grp(ExcludeAll, Restart, "maint"))}}, "stop web"},
		{"disputed: exclude_all with restart_on none keeps the dependent up", Snapshot{Clusters: []Cluster{cl("maint", Running), cl("web", Running, grp(ExcludeAll, None, "maint"))}}, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			d := Reconcile(c.snap)
			if got := stepsString(d.Steps); got != c.steps {
				t.Fatalf("steps %q, want %q", got, c.steps)
			}
			for _, st := range d.Steps {
				if st.Cause != CauseDependency || st.Because == "" {
					t.Errorf("step %+v: want cause dependency and a reason", st)
				}
			}
		})
	}
}

// TestDownOf: a cluster's run data says at which level its not running
// propagates.
func TestDownOf(t *testing.T) {
	c := &model.Cluster{Status: "ACTIVE"}
	if l := DownOf(c); l != LevelNone {
		t.Errorf("running: %s", l)
	}
	model.SetRunData(c, model.RunData{Fault: true})
	if l := DownOf(c); l != LevelFault {
		t.Errorf("fault: %s", l)
	}
	model.SetRunData(c, model.RunData{Stopped: true, Cause: model.StopByDependency})
	if l := DownOf(c); l != LevelRestart {
		t.Errorf("stopped by a dependency: %s", l)
	}
}
