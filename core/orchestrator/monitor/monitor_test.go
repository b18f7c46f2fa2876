package monitor

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/grovehq/grove/api"
	"github.com/grovehq/grove/core/orchestrator/placement"
)

var t0 = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

func dur(d time.Duration) *Duration { v := Duration(d); return &v }

// ranked builds the placement decision over hosts given as name:flags,
// the seed's flags made real: A is a hard affinity on a cluster db that
// does not run there, C a constraint false there, F a frozen host, L the
// first host in the policy's order (the natural leader of nodes order).
func ranked(t *testing.T, specs ...string) placement.Decision {
	t.Helper()
	s := placement.Snapshot{Cluster: "web"}
	var first, rest []string
	anyA, anyC := false, false
	for _, spec := range specs {
		name, fl, _ := strings.Cut(spec, ":")
		h := placement.Host{Name: name, Labels: map[string]string{}}
		if strings.Contains(fl, "A") {
			anyA = true
		} else {
			s.Instances = append(s.Instances, placement.Instance{Cluster: "db", Host: name})
		}
		if strings.Contains(fl, "C") {
			anyC = true
		} else {
			h.Labels["ok"] = "yes"
		}
		h.Frozen = strings.Contains(fl, "F")
		s.Hosts = append(s.Hosts, h)
		if strings.Contains(fl, "L") {
			first = append(first, name)
		} else {
			rest = append(rest, name)
		}
	}
	s.Policy.Hosts = append(first, rest...)
	if anyA {
		s.Policy.HardAffinity = []string{"db"}
	}
	if anyC {
		s.Policy.Constraints = `labels.ok == "yes"`
	}
	d, err := placement.Decide(s)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func ha() Settings { return Settings{Topology: Failover, Orchestrate: OrchestrateHA} }

func decide(t *testing.T, in Input) map[string]Step {
	t.Helper()
	if in.Now.IsZero() {
		in.Now = t0
	}
	steps, err := Decide(in)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]Step{}
	for _, s := range steps {
		out[s.Host] = s
	}
	return out
}

// flagCombos are the seed's "*": every subset of A, C and F.
var flagCombos = []string{"", "A", "C", "F", "AC", "AF", "CF", "ACF"}

var doing = []string{Starting, Restarting, Stopping, Freezing, Thawing}

// TestSeedTwoNodeTable checks every row of the seed's two-node table
// (§A.8), its wildcards expanded: flags "*" to every combination, "*ing"
// to every action in progress, "warn * *" to every state. A blank next
// state in the seed is no transition, so neither node goes ready.
func TestSeedTwoNodeTable(t *testing.T) {
	type row struct {
		a, b         string // "status|state|flags"
		nextA, nextB string
	}
	rows := []row{
		{"down|idle|L", "down|idle|", "ready", ""},
		{"down|idle|L", "down|idle|A", "ready", ""},
		{"down|idle|L", "down|idle|C", "ready", ""},
		{"down|idle|L", "down|idle|F", "ready", ""},
		{"down|idle|AL", "down|idle|", "", "ready"},
		{"down|idle|AL", "down|idle|A", "", ""},
		{"down|idle|AL", "down|idle|C", "", ""},
		{"down|idle|AL", "down|idle|F", "", ""},
		{"down|idle|CL", "down|idle|", "", "ready"},
		{"down|idle|CL", "down|idle|A", "", ""},
		{"down|idle|CL", "down|idle|C", "", ""},
		{"down|idle|CL", "down|idle|F", "", ""},
		{"down|idle|FL", "down|idle|", "", "ready"},
		{"down|idle|FL", "down|idle|A", "", ""},
		{"down|idle|FL", "down|idle|C", "", ""},
		{"down|idle|FL", "down|idle|F", "", ""},
		{"down|idle|", "down|start failed|*", "ready", ""},
		{"down|idle|L", "down|start failed|*", "ready", ""},
		{"down|idle|AL", "down|start failed|*", "", ""},
		{"down|idle|CL", "down|start failed|*", "", ""},
		{"down|idle|FL", "down|start failed|*", "", ""},
		{"down|idle|", "down|stop failed|*", "ready", ""},
		{"down|idle|L", "down|stop failed|*", "ready", ""},
		{"down|idle|AL", "down|stop failed|*", "", ""},
		{"down|idle|CL", "down|stop failed|*", "", ""},
		{"down|idle|FL", "down|stop failed|*", "", ""},
		{"down|idle|", "down|*ing|*", "", ""},
		{"down|idle|L", "down|*ing|*", "", ""},
		{"down|idle|AL", "down|*ing|*", "", ""},
		{"down|idle|CL", "down|*ing|*", "", ""},
		{"down|idle|FL", "down|*ing|*", "", ""},
		{"down|idle|", "warn|*|*", "", ""},
		{"down|idle|L", "warn|*|*", "", ""},
		{"down|idle|AL", "warn|*|*", "", ""},
		{"down|idle|CL", "warn|*|*", "", ""},
		{"down|idle|FL", "warn|*|*", "", ""},
	}
	cases := 0
	for _, r := range rows {
		aParts := strings.Split(r.a, "|")
		bParts := strings.Split(r.b, "|")
		bFlags := []string{bParts[2]}
		if bParts[2] == "*" {
			bFlags = flagCombos
		}
		bStates := []string{bParts[1]}
		switch bParts[1] {
		case "*ing":
			bStates = doing
		case "*":
			bStates = States
		}
		for _, listed := range bFlags {
			for _, bs := range bStates {
				aFlags, bf := aParts[2], listed
				if !strings.Contains(aFlags, "L") {
					bf += "L" // one of the two is the natural leader
				}
				name := fmt.Sprintf("A=%s B=%s %s %s", r.a, bParts[0], bs, bf)
				t.Run(name, func(t *testing.T) {
					got := decide(t, Input{
						Settings:  ha(),
						Placement: ranked(t, "a:"+aFlags, "b:"+bf),
						Instances: []Instance{
							{Host: "a", Status: aParts[0], State: aParts[1], Since: t0.Add(-time.Hour)},
							{Host: "b", Status: bParts[0], State: bs, Since: t0.Add(-time.Hour)},
						},
					})
					a, b := got["a"], got["b"]
					wantA := aParts[1]
					if r.nextA != "" {
						wantA = r.nextA
					}
					if a.Next != wantA || a.Action != ActionNone {
						t.Errorf("a: next %q (%s), action %s; want %q", a.Next, a.Reason, a.Action, wantA)
					}
					if a.Flags != aFlags || b.Flags != bf {
						t.Errorf("flags a %q b %q, want %q %q", a.Flags, b.Flags, aFlags, bf)
					}
					switch {
					case r.nextB != "":
						if b.Next != r.nextB {
							t.Errorf("b: next %q (%s), want %q", b.Next, b.Reason, r.nextB)
						}
					case bs == Idle || bParts[1] == "*ing" || bs == StartFailed || bs == StopFailed:
						if b.Next != bs || b.Action != ActionNone {
							t.Errorf("b: next %q (%s), action %s; want it to stay %q", b.Next, b.Reason, b.Action, bs)
						}
					default:
						if (b.Next != bs && (b.Next == Ready || b.Next == Starting)) || b.Action != ActionNone {
							t.Errorf("b: next %q (%s), action %s; a warn node contests nothing", b.Next, b.Reason, b.Action)
						}
					}
				})
				cases++
			}
		}
	}
	if cases < len(rows) {
		t.Fatalf("only %d cases", cases)
	}
}

// TestReadyPeriod: ready becomes starting, with a start, once the state is
// as old as the ready period (≥, om3's boundary), not a moment before.
func TestReadyPeriod(t *testing.T) {
	for _, tc := range []struct {
		in     time.Duration
		period *Duration
		want   string
	}{
		{16*time.Second - time.Millisecond, nil, Ready},
		{16 * time.Second, nil, Starting},
		{17 * time.Second, nil, Starting},
		{time.Second, dur(time.Second), Starting},
		{999 * time.Millisecond, dur(time.Second), Ready},
	} {
		s := ha()
		s.ReadyPeriod = tc.period
		got := decide(t, Input{Settings: s, Placement: ranked(t, "a:L", "b:"), Instances: []Instance{
			{Host: "a", Status: Down, State: Ready, Since: t0.Add(-tc.in)},
			{Host: "b", Status: Down, State: Idle},
		}})["a"]
		if got.Next != tc.want {
			t.Errorf("ready for %s (period %v): next %q (%s), want %q", tc.in, tc.period, got.Next, got.Reason, tc.want)
		}
		if (got.Action == ActionStart) != (tc.want == Starting) {
			t.Errorf("ready for %s: action %s", tc.in, got.Action)
		}
	}
}

// TestNextChange: the first instant at which time alone changes a
// decision, the earliest of the ready periods, maintenance graces and
// rejoin graces still running; none once each has run out.
func TestNextChange(t *testing.T) {
	s := ha()
	short := ha()
	short.MaintenanceGracePeriod, short.RejoinGracePeriod = dur(10*time.Second), dur(5*time.Second)
	for _, tc := range []struct {
		name      string
		settings  Settings
		instances []Instance
		want      time.Duration // from t0; 0 for none
	}{
		{"nothing pending", s, []Instance{{Host: "a", Status: Up, State: Idle}, {Host: "b", Status: Down, State: Idle}}, 0},
		{"ready period", s, []Instance{{Host: "a", Status: Down, State: Ready, Since: t0.Add(-10 * time.Second)}}, 6 * time.Second},
		{"ready period run out", s, []Instance{{Host: "a", Status: Down, State: Ready, Since: t0.Add(-16 * time.Second)}}, 0},
		{"maintenance grace", s, []Instance{{Host: "b", Status: Up, State: Idle, Maintenance: t0.Add(-30 * time.Second)}}, 30 * time.Second},
		{"maintenance grace over", s, []Instance{{Host: "b", Status: Up, State: Idle, Maintenance: t0.Add(-61 * time.Second)}}, 0},
		{"rejoin grace", s, []Instance{{Host: "a", Status: Down, State: Idle, Joined: t0.Add(-10 * time.Second)}}, 80 * time.Second},
		{"the earliest of three", s, []Instance{
			{Host: "a", Status: Down, State: Ready, Since: t0.Add(-time.Second), Joined: t0.Add(-80 * time.Second)},
			{Host: "b", Status: Up, State: Idle, Maintenance: t0.Add(-50 * time.Second)},
		}, 10 * time.Second},
		{"settings' own graces", short, []Instance{
			{Host: "a", Status: Down, State: Idle, Joined: t0.Add(-time.Second)},
			{Host: "b", Status: Up, State: Idle, Maintenance: t0.Add(-8 * time.Second)},
		}, 2 * time.Second},
	} {
		at, ok := NextChange(Input{Settings: tc.settings, Now: t0, Instances: tc.instances})
		switch {
		case tc.want == 0 && ok:
			t.Errorf("%s: next change at t0%+v, want none", tc.name, at.Sub(t0))
		case tc.want != 0 && (!ok || !at.Equal(t0.Add(tc.want))):
			t.Errorf("%s: next change at t0%+v (%v), want t0+%v", tc.name, at.Sub(t0), ok, tc.want)
		}
	}
}

// TestReadyAborts covers §A.6 step 2: the better-ranked peer also ready,
// a peer transitioning or warn, the local instance up, leadership lost.
func TestReadyAborts(t *testing.T) {
	old := t0.Add(-time.Minute)
	for _, tc := range []struct {
		name   string
		fa, fb string
		a, b   Instance
		wantA  string
		wantB  string
	}{
		{"better-ranked peer ready", "L", "", Instance{Status: Down, State: Ready, Since: old}, Instance{Status: Down, State: Ready, Since: old}, Starting, Idle},
		{"peer started transitioning", "", "L", Instance{Status: Down, State: Ready, Since: old}, Instance{Status: Down, State: Stopping}, Idle, Stopping},
		{"peer warn", "L", "", Instance{Status: Down, State: Ready, Since: old}, Instance{Status: Warn, State: Idle}, Idle, Idle},
		{"local became up", "L", "", Instance{Status: Up, State: Ready, Since: old}, Instance{Status: Down, State: Idle}, Idle, Idle},
		{"leadership lost to a thawed better host", "", "L", Instance{Status: Down, State: Ready, Since: old}, Instance{Status: Down, State: Idle}, Idle, Ready},
		{"local frozen", "FL", "", Instance{Status: Down, State: Ready, Since: old}, Instance{Status: Down, State: Idle}, Idle, Ready},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.a.Host, tc.b.Host = "a", "b"
			got := decide(t, Input{Settings: ha(), Placement: ranked(t, "a:"+tc.fa, "b:"+tc.fb), Instances: []Instance{tc.a, tc.b}})
			if got["a"].Next != tc.wantA || got["b"].Next != tc.wantB {
				t.Errorf("a → %q (%s), b → %q (%s); want %q, %q", got["a"].Next, got["a"].Reason, got["b"].Next, got["b"].Reason, tc.wantA, tc.wantB)
			}
		})
	}
}

// TestStartFailedPeerTakesOver: a failed start leaves start failed, and the
// peer, no longer contested, becomes the leader and starts.
func TestStartFailedPeerTakesOver(t *testing.T) {
	d := ranked(t, "a:L", "b:")
	got := decide(t, Input{Settings: ha(), Placement: d, Instances: []Instance{
		{Host: "a", Status: Down, State: Starting, Outcome: Failed},
		{Host: "b", Status: Down, State: Idle},
	}})
	if got["a"].Next != StartFailed {
		t.Fatalf("a: %q (%s), want start failed", got["a"].Next, got["a"].Reason)
	}
	if got["b"].Next != Idle {
		t.Fatalf("b moved while a was starting: %q", got["b"].Next)
	}
	got = decide(t, Input{Settings: ha(), Placement: d, Instances: []Instance{
		{Host: "a", Status: Down, State: StartFailed},
		{Host: "b", Status: Down, State: Idle},
	}})
	if got["a"].Next != StartFailed || got["b"].Next != Ready {
		t.Fatalf("a → %q, b → %q (%s); want start failed, ready", got["a"].Next, got["b"].Next, got["b"].Reason)
	}
	got = decide(t, Input{Settings: ha(), Placement: d, Instances: []Instance{
		{Host: "a", Status: Down, State: StartFailed},
		{Host: "b", Status: Down, State: Ready, Since: t0.Add(-16 * time.Second)},
	}})
	if got["b"].Next != Starting || got["b"].Action != ActionStart {
		t.Fatalf("b → %q %s (%s); want starting with a start", got["b"].Next, got["b"].Action, got["b"].Reason)
	}
	// Once the cluster is up on b, a's start failed clears by itself.
	got = decide(t, Input{Settings: ha(), Placement: d, Instances: []Instance{
		{Host: "a", Status: Down, State: StartFailed},
		{Host: "b", Status: Up, State: Idle},
	}})
	if got["a"].Next != Idle || got["b"].Next != Idle {
		t.Fatalf("a → %q, b → %q; want idle, idle", got["a"].Next, got["b"].Next)
	}
}

// TestActionOutcomes: starting → started → idle, stopping → stopped or
// stop failed, freezing → frozen → idle, thawing → thawed → idle.
func TestActionOutcomes(t *testing.T) {
	for _, tc := range []struct {
		state, status, outcome, want string
	}{
		{Starting, Down, Running, Starting},
		{Starting, Down, Succeeded, Started},
		{Started, Down, Running, Started},
		{Started, Up, Running, Idle},
		{Restarting, Up, Failed, StartFailed},
		{Stopping, Up, Running, Stopping},
		{Stopping, Down, Succeeded, Stopped},
		{Stopping, Up, Failed, StopFailed},
		{Stopped, Down, Running, Idle},
		{StopFailed, Up, Running, StopFailed},
		{Freezing, Up, Succeeded, Frozen},
		{Frozen, Up, Running, Idle},
		{Thawing, Up, Succeeded, Thawed},
		{Thawed, Up, Running, Idle},
	} {
		got := decide(t, Input{Settings: ha(), Placement: ranked(t, "a:L", "b:"), Instances: []Instance{
			{Host: "a", Status: tc.status, State: tc.state, Outcome: tc.outcome},
			{Host: "b", Status: Down, State: Idle},
		}})["a"]
		if got.Next != tc.want {
			t.Errorf("%s %s %q: next %q (%s), want %q", tc.status, tc.state, tc.outcome, got.Next, got.Reason, tc.want)
		}
	}
}

// TestOrchestrateModes: no starts nothing; start lets only the natural
// leader go ready (so it does not fail over); ha fails over.
func TestOrchestrateModes(t *testing.T) {
	for _, tc := range []struct {
		mode         string
		fa           string
		wantA, wantB string
	}{
		{OrchestrateNo, "L", Idle, Idle},
		{OrchestrateStart, "L", Ready, Idle},
		{OrchestrateStart, "AL", Idle, Idle},
		{OrchestrateHA, "AL", Idle, Ready},
	} {
		got := decide(t, Input{Settings: Settings{Orchestrate: tc.mode}, Placement: ranked(t, "a:"+tc.fa, "b:"), Instances: []Instance{
			{Host: "a", Status: Down, State: Idle}, {Host: "b", Status: Down, State: Idle},
		}})
		if got["a"].Next != tc.wantA || got["b"].Next != tc.wantB {
			t.Errorf("orchestrate %s, a %s: a → %q (%s), b → %q (%s)", tc.mode, tc.fa, got["a"].Next, got["a"].Reason, got["b"].Next, got["b"].Reason)
		}
	}
	// A ready non-natural leader under orchestrate start goes back to idle.
	got := decide(t, Input{Settings: Settings{Orchestrate: OrchestrateStart}, Placement: ranked(t, "a:AL", "b:"), Instances: []Instance{
		{Host: "a", Status: Down, State: Idle}, {Host: "b", Status: Down, State: Ready},
	}})
	if got["b"].Next != Idle {
		t.Errorf("orchestrate start, ready b not natural leader: %q (%s)", got["b"].Next, got["b"].Reason)
	}
}

// TestFailoverAtMostOneUp: an up instance anywhere keeps every peer idle.
func TestFailoverAtMostOneUp(t *testing.T) {
	got := decide(t, Input{Settings: ha(), Placement: ranked(t, "a:L", "b:"), Instances: []Instance{
		{Host: "a", Status: Down, State: Idle}, {Host: "b", Status: Up, State: Idle},
	}})
	if got["a"].Next != Idle || !strings.Contains(got["a"].Reason, "up on b") {
		t.Errorf("a → %q (%s), want idle: the cluster is up on b", got["a"].Next, got["a"].Reason)
	}
}

// TestFailoverExcessStops: two instances up (a host came back after its
// maintenance grace with its instance still running) — with orchestrate
// ha the worst-ranked one stops and the leader's stays; with start nothing
// stops by itself.
func TestFailoverExcessStops(t *testing.T) {
	in := Input{Settings: ha(), Placement: ranked(t, "a:L", "b:"), Instances: []Instance{
		{Host: "a", Status: Up, State: Idle}, {Host: "b", Status: Up, State: Idle},
	}}
	got := decide(t, in)
	if got["b"].Next != Stopping || got["b"].Action != ActionStop || !strings.Contains(got["b"].Reason, "failover cluster runs one") {
		t.Errorf("b → %q %q (%s), want stopping: it is the worst-ranked of two up", got["b"].Next, got["b"].Action, got["b"].Reason)
	}
	if got["a"].Next == Stopping {
		t.Errorf("a → stopping (%s), want it kept: it leads", got["a"].Reason)
	}
	in.Settings.Orchestrate = OrchestrateStart
	if got := decide(t, in); got["b"].Next == Stopping {
		t.Errorf("orchestrate start: b → stopping (%s), want no automatic stop", got["b"].Reason)
	}
}

// TestFrozenInstance: an instance frozen by itself (the host is not) is
// no candidate and is not restarted; its peer takes the lead.
func TestFrozenInstance(t *testing.T) {
	got := decide(t, Input{Settings: ha(), Placement: ranked(t, "a:L", "b:"), Instances: []Instance{
		{Host: "a", Status: Down, State: Idle, Frozen: true}, {Host: "b", Status: Down, State: Idle},
	}})
	if got["a"].Next != Idle || got["a"].Flags != "FL" || got["b"].Next != Ready {
		t.Errorf("a → %q flags %q, b → %q (%s)", got["a"].Next, got["a"].Flags, got["b"].Next, got["b"].Reason)
	}
	// A lone frozen instance is not restarted either.
	got = decide(t, Input{Settings: ha(), Placement: ranked(t, "a:L"), Instances: []Instance{{Host: "a", Status: Down, State: Idle, Frozen: true}}})
	if got["a"].Next != Idle || got["a"].Action != ActionNone {
		t.Errorf("lone frozen: %q %s", got["a"].Next, got["a"].Action)
	}
	got = decide(t, Input{Settings: ha(), Placement: ranked(t, "a:L"), Instances: []Instance{{Host: "a", Status: Down, State: Idle}}})
	if got["a"].Next != Starting || got["a"].Action != ActionStart {
		t.Errorf("a lone host starts directly: %q %s (%s)", got["a"].Next, got["a"].Action, got["a"].Reason)
	}
}

// TestCommands: clear is refused in an *ing state and resets failures and
// restart counters otherwise; freeze and thaw flip the flag through
// freezing and thawing.
func TestCommands(t *testing.T) {
	for _, st := range doing {
		if _, err := Command(Instance{Host: "a", State: st}, "clear"); err == nil || !strings.Contains(err.Error(), "refused") {
			t.Errorf("clear in %s: %v, want refused", st, err)
		}
	}
	for _, st := range []string{StartFailed, StopFailed, Ready, Idle} {
		got, err := Command(Instance{Host: "a", State: st}, "clear")
		if err != nil || got.Next != Idle || !got.ResetRestarts {
			t.Errorf("clear in %s: %+v %v", st, got, err)
		}
	}
	if got, _ := Command(Instance{Host: "a"}, "freeze"); got.Next != Freezing || got.Action != ActionFreeze {
		t.Errorf("freeze: %+v", got)
	}
	if got, _ := Command(Instance{Host: "a", Frozen: true}, "thaw"); got.Next != Thawing || got.Action != ActionThaw {
		t.Errorf("thaw: %+v", got)
	}
	var fe *FieldError
	if _, err := Command(Instance{Host: "a"}, "melt"); !errors.As(err, &fe) || fe.Field != "command" {
		t.Errorf("melt: %v", err)
	}
}

// TestMaintenanceGrace: a peer whose agent stopped cleanly keeps its last
// state for the grace: it still counts as up, so nothing is taken over;
// after the grace its data is dropped and the peer takes over.
func TestMaintenanceGrace(t *testing.T) {
	d := ranked(t, "a:L", "b:")
	for _, tc := range []struct {
		ago   time.Duration
		wantB string
	}{
		{59 * time.Second, Idle},
		{60 * time.Second, Ready},
	} {
		got := decide(t, Input{Settings: ha(), Placement: d, Instances: []Instance{
			{Host: "a", Status: Up, State: Idle, Maintenance: t0.Add(-tc.ago)},
			{Host: "b", Status: Down, State: Idle},
		}})
		if got["b"].Next != tc.wantB || got["a"].Next != Idle || got["a"].Action != ActionNone {
			t.Errorf("maintenance %s ago: a → %q %s, b → %q (%s); want b %q", tc.ago, got["a"].Next, got["a"].Action, got["b"].Next, got["b"].Reason, tc.wantB)
		}
	}
	// A kept host in maintenance is no candidate even when it was down:
	// its peer leads, but ... the kept instance blocks nothing when down.
	got := decide(t, Input{Settings: ha(), Placement: d, Instances: []Instance{
		{Host: "a", Status: Down, State: Idle, Maintenance: t0.Add(-time.Second)},
		{Host: "b", Status: Down, State: Idle},
	}})
	if got["b"].Next != Ready {
		t.Errorf("kept down leader in maintenance: b → %q (%s), want ready", got["b"].Next, got["b"].Reason)
	}
	// The agent returns within the grace after a reboot (its instance
	// down): it contests as the leader again. After an agent restart (its
	// instance still up) nothing happens.
	for _, tc := range []struct {
		status, want string
	}{{Down, Ready}, {Up, Idle}} {
		got := decide(t, Input{Settings: ha(), Placement: d, Instances: []Instance{
			{Host: "a", Status: tc.status, State: Idle, Joined: t0.Add(-time.Second)},
			{Host: "b", Status: Down, State: Idle},
		}})
		if got["a"].Next != tc.want || got["b"].Next != Idle {
			t.Errorf("returned %s: a → %q (%s), b → %q; want a %q", tc.status, got["a"].Next, got["a"].Reason, got["b"].Next, tc.want)
		}
	}
}

// TestRejoinGrace: a restarted agent decides nothing until every peer is
// seen or the rejoin grace is over.
func TestRejoinGrace(t *testing.T) {
	d := ranked(t, "a:L", "b:")
	for _, tc := range []struct {
		joined   time.Duration
		peerSeen bool
		want     string
	}{
		{time.Second, false, Idle},
		{89 * time.Second, false, Idle},
		{90 * time.Second, false, Ready},
		{time.Second, true, Ready},
	} {
		ins := []Instance{{Host: "a", Status: Down, State: Idle, Joined: t0.Add(-tc.joined)}}
		if tc.peerSeen {
			ins = append(ins, Instance{Host: "b", Status: Down, State: Idle})
		}
		got := decide(t, Input{Settings: ha(), Placement: d, Instances: ins})["a"]
		if got.Next != tc.want {
			t.Errorf("joined %s ago, peer seen %v: %q (%s), want %q", tc.joined, tc.peerSeen, got.Next, got.Reason, tc.want)
		}
	}
}

// TestSoftAffinitySerialisesStarts (§A.4): with two candidates, app's
// soft affinity to db makes the host where db runs or is starting the
// leader, so app starts after db, there.
func TestSoftAffinitySerialisesStarts(t *testing.T) {
	for _, tc := range []struct {
		dbState, want string
	}{{"", "a"}, {placement.InstanceStarting, "b"}, {placement.InstanceRunning, "b"}} {
		s := placement.Snapshot{Cluster: "app", Hosts: []placement.Host{{Name: "a"}, {Name: "b"}}, Policy: placement.Policy{SoftAffinity: []string{"db"}}}
		if tc.dbState != "" {
			s.Instances = []placement.Instance{{Cluster: "db", Host: "b", State: tc.dbState}}
		}
		d, err := placement.Decide(s)
		if err != nil {
			t.Fatal(err)
		}
		got := decide(t, Input{Settings: ha(), Placement: d, Instances: []Instance{
			{Host: "a", Status: Down, State: Idle}, {Host: "b", Status: Down, State: Idle},
		}})
		var ready []string
		for _, h := range []string{"a", "b"} {
			if got[h].Next == Ready {
				ready = append(ready, h)
			}
		}
		if !slices.Equal(ready, []string{tc.want}) {
			t.Errorf("db %q on b: ready %v, want [%s]", tc.dbState, ready, tc.want)
		}
	}
}

// TestFlex: a flex cluster brings up flex_target instances, at most one
// per host, the best-ranked first; excess ones stop from the bottom of
// the ranking; ready aborts once enough better-ranked peers are ready.
func TestFlex(t *testing.T) {
	s := Settings{Topology: Flex, Orchestrate: OrchestrateHA, FlexMin: 1, FlexMax: 3, FlexTarget: 2}
	d := ranked(t, "a:L", "b:", "c:")
	idle := func(h, status string) Instance { return Instance{Host: h, Status: status, State: Idle} }
	got := decide(t, Input{Settings: s, Placement: d, Instances: []Instance{idle("a", Down), idle("b", Down), idle("c", Down)}})
	if got["a"].Next != Ready || got["b"].Next != Ready || got["c"].Next != Idle {
		t.Errorf("flex from none: a %q b %q c %q (%s)", got["a"].Next, got["b"].Next, got["c"].Next, got["c"].Reason)
	}
	got = decide(t, Input{Settings: s, Placement: d, Instances: []Instance{idle("a", Up), idle("b", Up), idle("c", Up)}})
	if got["c"].Next != Stopping || got["c"].Action != ActionStop || got["a"].Action != ActionNone || got["b"].Action != ActionNone {
		t.Errorf("flex excess: a %s b %s c %q %s", got["a"].Action, got["b"].Action, got["c"].Next, got["c"].Action)
	}
	// A frozen up instance is not stopped; the worst-ranked other one is.
	frozenC := idle("c", Up)
	frozenC.Frozen = true
	got = decide(t, Input{Settings: s, Placement: d, Instances: []Instance{idle("a", Up), idle("b", Up), frozenC}})
	if got["b"].Action != ActionStop || got["a"].Action != ActionNone || got["c"].Action != ActionNone {
		t.Errorf("flex excess with c frozen: a %s b %s c %s", got["a"].Action, got["b"].Action, got["c"].Action)
	}
	got = decide(t, Input{Settings: s, Placement: d, Instances: []Instance{idle("a", Up), idle("b", Up), idle("c", Down)}})
	for h, st := range got {
		if st.Next != Idle || st.Action != ActionNone {
			t.Errorf("flex at target: %s → %q %s", h, st.Next, st.Action)
		}
	}
	// One up on c (worst ranked): one missing. a and b both ready: b
	// aborts, a better-ranked peer is ready for the one missing.
	got = decide(t, Input{Settings: s, Placement: d, Instances: []Instance{
		{Host: "a", Status: Down, State: Ready, Since: t0.Add(-time.Second)},
		{Host: "b", Status: Down, State: Ready, Since: t0.Add(-time.Second)},
		idle("c", Up),
	}})
	if got["a"].Next != Ready || got["b"].Next != Idle {
		t.Errorf("flex one missing: a %q, b %q (%s)", got["a"].Next, got["b"].Next, got["b"].Reason)
	}
}

// TestBadInput names the field.
func TestBadInput(t *testing.T) {
	d := ranked(t, "a:L")
	for _, tc := range []struct {
		in    Input
		field string
	}{
		{Input{Instances: []Instance{{Host: "a", Status: "sideways"}}}, "instances[0].status"},
		{Input{Instances: []Instance{{Host: "a", Status: Up, State: "dancing"}}}, "instances[0].state"},
		{Input{Instances: []Instance{{Host: "a", Status: Up}, {Host: "a", Status: Up}}}, "instances[1].host"},
		{Input{Instances: []Instance{{Status: Up}}}, "instances[0].host"},
		{Input{Instances: []Instance{{Host: "a", Status: Up, Outcome: "maybe"}}}, "instances[0].outcome"},
		{Input{Settings: Settings{Topology: "mesh"}}, "topology"},
		{Input{Settings: Settings{Topology: Replicated}}, "topology"},
		{Input{Settings: Settings{Orchestrate: "maybe"}}, "orchestrate"},
		{Input{Settings: Settings{FlexTarget: 2}}, "flex_target"},
		{Input{Settings: Settings{Topology: Flex, FlexMin: 3, FlexMax: 2}}, "flex_min"},
		{Input{Settings: Settings{Topology: Flex, FlexMin: 2, FlexTarget: 1}}, "flex_target"},
		{Input{Settings: Settings{Topology: Flex, FlexMax: 2, FlexTarget: 3}}, "flex_target"},
		{Input{Settings: Settings{ReadyPeriod: dur(-time.Second)}}, "ready_period"},
	} {
		tc.in.Placement = d
		_, err := Decide(tc.in)
		var fe *FieldError
		if !errors.As(err, &fe) || fe.Field != tc.field {
			t.Errorf("%+v: %v, want an error naming %s", tc.in.Settings, err, tc.field)
		}
	}
}

// TestValueSetsMatchTheAPI: the API validates grove.failover with the
// names the monitor decides on.
func TestValueSetsMatchTheAPI(t *testing.T) {
	if !slices.Equal(api.Topologies, []string{Failover, Flex, Replicated, Global}) {
		t.Errorf("api.Topologies %q", api.Topologies)
	}
	if !slices.Equal(api.OrchestrateModes, []string{OrchestrateNo, OrchestrateStart, OrchestrateHA}) {
		t.Errorf("api.OrchestrateModes %q", api.OrchestrateModes)
	}
}

// TestSimulateBadInput: simulate's errors name the field under monitor.
func TestSimulateBadInput(t *testing.T) {
	for _, tc := range []struct{ monitor, want string }{
		{`{"ready_period": "soon"}`, `monitor.ready_period must be a duration`},
		{`{"flex_target": "2"}`, `monitor.flex_target must be a JSON value of Go type int`},
		{`{"instances": [{"host": "a", "status": "up", "in_state_for": "x"}]}`, `monitor.instances.in_state_for must be a duration`},
		{`{"instances": [{"host": "z", "status": "up"}]}`, `monitor.instances[0].host: "z" is not one of the snapshot's hosts`},
		{`{"instances": [{"host": "a", "status": "up", "agent_up_for": "-1s"}]}`, `monitor.instances[0].agent_up_for: an age cannot be negative`},
		{`{"instances": [{"host": "a", "status": "sideways"}]}`, `monitor.instances[0].status:`},
		{`{"topology": "global"}`, `monitor.topology: a global cluster has no instance monitor`},
		{`{"colour": 1}`, `unknown field "colour"`},
	} {
		s := placement.Snapshot{Cluster: "w", Hosts: []placement.Host{{Name: "a"}}, Monitor: []byte(tc.monitor)}
		d, err := placement.Decide(s)
		if err != nil {
			t.Fatal(err)
		}
		_, _, err = Simulate(s, d)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want %q", tc.monitor, err, tc.want)
		}
	}
	s := placement.Snapshot{Cluster: "w", Hosts: []placement.Host{{Name: "a"}}}
	if ms, steps, err := Simulate(s, placement.Decision{}); ms != nil || steps != nil || err != nil {
		t.Errorf("no monitor object: %v %v %v", ms, steps, err)
	}
}
