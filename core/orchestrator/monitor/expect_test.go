package monitor

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/grovehq/grove/core/orchestrator/placement"
)

// inst is an instance written host:status:state[:F] for the tables.
func inst(spec string) Instance {
	p := strings.Split(spec, ":")
	x := Instance{Host: p[0], Status: p[1], State: p[2]}
	if len(p) > 3 {
		x.Frozen = strings.Contains(p[3], "F")
		if strings.Contains(p[3], "f") {
			x.Outcome = Failed
		}
		if strings.Contains(p[3], "s") {
			x.Outcome = Succeeded
		}
	}
	return x
}

// TestExpectations runs each expectation's rules: the next state and
// action of every host, and the expectation's progress.
func TestExpectations(t *testing.T) {
	no := Settings{Topology: Failover, Orchestrate: OrchestrateNo}
	for _, tc := range []struct {
		name      string
		settings  Settings
		hosts     []string // placement: name:flags
		expect    Expect
		instances []string
		want      map[string]string // host → next state[/action]
		progress  string
	}{
		// start
		{"start with orchestrate no: the leader starts at once", no, []string{"a:L", "b:"}, Expect{Kind: ExpectStart},
			[]string{"a:down:idle", "b:down:idle"}, map[string]string{"a": "starting/start", "b": "idle"}, ExpectPending},
		{"start: a ready leader drops to idle first", ha(), []string{"a:L", "b:"}, Expect{Kind: ExpectStart},
			[]string{"a:down:ready", "b:down:idle"}, map[string]string{"a": "idle", "b": "idle"}, ExpectPending},
		{"start: a frozen leader is no candidate, the next host starts", no, []string{"a:L", "b:"}, Expect{Kind: ExpectStart},
			[]string{"a:down:idle:F", "b:down:idle"}, map[string]string{"a": "idle", "b": "starting/start"}, ExpectPending},
		{"start: waits for a peer in an action", no, []string{"a:L", "b:"}, Expect{Kind: ExpectStart},
			[]string{"a:down:idle", "b:down:stopping"}, map[string]string{"a": "idle", "b": "stopping"}, ExpectPending},
		{"start: the leader's start failed, the next host starts", no, []string{"a:L", "b:"}, Expect{Kind: ExpectStart},
			[]string{"a:down:start failed", "b:down:idle"}, map[string]string{"a": "start failed", "b": "starting/start"}, ExpectPending},
		{"start: every host failed", no, []string{"a:L", "b:"}, Expect{Kind: ExpectStart},
			[]string{"a:down:start failed", "b:down:start failed"}, map[string]string{"a": "start failed", "b": "start failed"}, ExpectFailed},
		{"start reached: up on one host", no, []string{"a:L", "b:"}, Expect{Kind: ExpectStart},
			[]string{"a:up:idle", "b:down:idle"}, map[string]string{"a": "idle", "b": "idle"}, ExpectReached},
		{"start: a running start stays until its outcome", no, []string{"a:L", "b:"}, Expect{Kind: ExpectStart},
			[]string{"a:down:starting", "b:down:idle"}, map[string]string{"a": "starting", "b": "idle"}, ExpectPending},
		{"start flex: the first flex_target candidates start", Settings{Topology: Flex, FlexTarget: 2}, []string{"a:L", "b:", "c:"}, Expect{Kind: ExpectStart},
			[]string{"a:up:idle", "b:down:idle", "c:down:idle"}, map[string]string{"a": "idle", "b": "starting/start", "c": "idle"}, ExpectPending},

		// stop
		{"stop: the up instance stops, frozen or not", ha(), []string{"a:L", "b:"}, Expect{Kind: ExpectStop},
			[]string{"a:up:idle:F", "b:down:idle:F"}, map[string]string{"a": "stopping/stop", "b": "idle"}, ExpectPending},
		{"stop while starting: the start runs to its end first", ha(), []string{"a:L", "b:"}, Expect{Kind: ExpectStop},
			[]string{"a:down:starting", "b:down:idle"}, map[string]string{"a": "starting", "b": "idle"}, ExpectPending},
		{"stop after the start succeeded: started, then idle, then stop", ha(), []string{"a:L", "b:"}, Expect{Kind: ExpectStop},
			[]string{"a:up:started", "b:down:idle"}, map[string]string{"a": "idle"}, ExpectPending},
		{"stop: an idle up instance stops", ha(), []string{"a:L", "b:"}, Expect{Kind: ExpectStop},
			[]string{"a:up:idle", "b:down:idle"}, map[string]string{"a": "stopping/stop"}, ExpectPending},
		{"stop: nobody goes ready meanwhile", ha(), []string{"a:L", "b:"}, Expect{Kind: ExpectStop},
			[]string{"a:down:idle", "b:down:idle"}, map[string]string{"a": "idle", "b": "idle"}, ExpectReached},
		{"stop failed", ha(), []string{"a:L", "b:"}, Expect{Kind: ExpectStop},
			[]string{"a:up:stop failed", "b:down:idle"}, map[string]string{"a": "stop failed"}, ExpectFailed},
		{"stop: the stop is running", ha(), []string{"a:L", "b:"}, Expect{Kind: ExpectStop},
			[]string{"a:down:stopping", "b:down:idle"}, map[string]string{"a": "stopping"}, ExpectPending},

		// switch
		{"switch: the up instance stops, the target waits", ha(), []string{"a:L", "b:", "c:"}, Expect{Kind: ExpectSwitch, Host: "c"},
			[]string{"a:up:idle", "b:down:idle", "c:down:idle"}, map[string]string{"a": "stopping/stop", "b": "idle", "c": "idle"}, ExpectPending},
		{"switch: the target waits for the stop to end", ha(), []string{"a:L", "b:", "c:"}, Expect{Kind: ExpectSwitch, Host: "c"},
			[]string{"a:down:stopping", "b:down:idle", "c:down:idle"}, map[string]string{"a": "stopping", "b": "idle", "c": "idle"}, ExpectPending},
		{"switch: once down the target starts, not the leader", ha(), []string{"a:L", "b:", "c:"}, Expect{Kind: ExpectSwitch, Host: "c"},
			[]string{"a:down:idle", "b:down:idle", "c:down:idle"}, map[string]string{"a": "idle", "b": "idle", "c": "starting/start"}, ExpectPending},
		{"switch reached", ha(), []string{"a:L", "b:", "c:"}, Expect{Kind: ExpectSwitch, Host: "c"},
			[]string{"a:down:idle", "b:down:idle", "c:up:idle"}, map[string]string{"a": "idle", "c": "idle"}, ExpectReached},
		{"switch: the target's start failed", ha(), []string{"a:L", "b:", "c:"}, Expect{Kind: ExpectSwitch, Host: "c"},
			[]string{"a:down:idle", "b:down:idle", "c:down:starting:f"}, map[string]string{"c": "start failed"}, ExpectPending},
		{"switch failed: the target is start failed", ha(), []string{"a:L", "b:", "c:"}, Expect{Kind: ExpectSwitch, Host: "c"},
			[]string{"a:down:idle", "b:down:idle", "c:down:start failed"}, map[string]string{"a": "idle", "b": "idle", "c": "start failed"}, ExpectFailed},
		{"switch failed: the target was frozen", ha(), []string{"a:L", "b:", "c:"}, Expect{Kind: ExpectSwitch, Host: "c"},
			[]string{"a:down:idle", "b:down:idle", "c:down:idle:F"}, map[string]string{"c": "idle"}, ExpectFailed},
		{"switch failed: the target's host is down (no data)", ha(), []string{"a:L", "b:", "c:"}, Expect{Kind: ExpectSwitch, Host: "c"},
			[]string{"a:up:idle", "b:down:idle"}, map[string]string{"a": "stopping/stop"}, ExpectFailed},

		// giveback
		{"giveback: the instance off the leader stops", ha(), []string{"a:L", "b:"}, Expect{Kind: ExpectGiveback},
			[]string{"a:down:idle", "b:up:idle"}, map[string]string{"a": "idle", "b": "stopping/stop"}, ExpectPending},
		{"giveback: then the leader starts", ha(), []string{"a:L", "b:"}, Expect{Kind: ExpectGiveback},
			[]string{"a:down:idle", "b:down:stopped"}, map[string]string{"a": "starting/start", "b": "idle"}, ExpectPending},
		{"giveback reached", ha(), []string{"a:L", "b:"}, Expect{Kind: ExpectGiveback},
			[]string{"a:up:idle", "b:down:idle"}, map[string]string{"a": "idle", "b": "idle"}, ExpectReached},
		{"giveback: a failed leader leaves the next candidate preferred", ha(), []string{"a:L", "b:"}, Expect{Kind: ExpectGiveback},
			[]string{"a:down:start failed", "b:up:idle"}, map[string]string{"b": "idle"}, ExpectReached},
		{"giveback: no candidate", ha(), []string{"a:L", "b:"}, Expect{Kind: ExpectGiveback},
			[]string{"a:down:start failed", "b:down:idle:F"}, map[string]string{}, ExpectFailed},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in := Input{Settings: tc.settings, Placement: ranked(t, tc.hosts...), Expect: tc.expect, Now: t0}
			for _, s := range tc.instances {
				x := inst(s)
				x.Since = t0.Add(-time.Minute)
				in.Instances = append(in.Instances, x)
			}
			got := decide(t, in)
			for host, want := range tc.want {
				next, action, _ := strings.Cut(want, "/")
				if action == "" {
					action = ActionNone
				}
				if g := got[host]; g.Next != next || g.Action != action {
					t.Errorf("%s → %s/%s (%s), want %s/%s", host, g.Next, g.Action, g.Reason, next, action)
				}
			}
			p, err := Progress(in)
			if err != nil {
				t.Fatal(err)
			}
			if p.State != tc.progress {
				t.Errorf("progress %s (%s), want %s", p.State, p.Reason, tc.progress)
			}
		})
	}
}

// TestExpectRejoinGrace: under an expectation too, a restarted agent
// starts nothing before it has seen every peer or its grace is over.
func TestExpectRejoinGrace(t *testing.T) {
	d := ranked(t, "a:L", "b:")
	for _, tc := range []struct {
		up   time.Duration
		want string
	}{{10 * time.Second, Idle}, {90 * time.Second, Starting}} {
		got := decide(t, Input{Settings: Settings{}, Placement: d, Expect: Expect{Kind: ExpectStart}, Instances: []Instance{
			{Host: "a", Status: Down, State: Idle, Joined: t0.Add(-tc.up)},
		}})
		if got["a"].Next != tc.want {
			t.Errorf("agent up for %s, b unseen: %q (%s), want %q", tc.up, got["a"].Next, got["a"].Reason, tc.want)
		}
	}
}

// TestSimulateExpect: a snapshot's monitor object may carry an
// expectation, which the simulation honours.
func TestSimulateExpect(t *testing.T) {
	s := placement.Snapshot{Cluster: "web", Hosts: []placement.Host{{Name: "a"}, {Name: "b"}},
		Monitor: []byte(`{"topology": "failover", "expect": {"kind": "switch", "host": "b"},
			"instances": [{"host": "a", "status": "up"}, {"host": "b", "status": "down"}]}`)}
	d, err := placement.Decide(s)
	if err != nil {
		t.Fatal(err)
	}
	_, steps, err := Simulate(s, d)
	if err != nil {
		t.Fatal(err)
	}
	if steps[0].Host != "a" || steps[0].Next != Stopping || steps[0].Action != ActionStop {
		t.Errorf("a under a switch to b: %+v, want stopping with a stop", steps[0])
	}
	s.Monitor = []byte(`{"expect": {"kind": "switch"}, "instances": []}`)
	if _, _, err := Simulate(s, d); err == nil || !strings.Contains(err.Error(), "monitor.expect.host") {
		t.Errorf("a switch without a host: %v, want an error naming monitor.expect.host", err)
	}
}

// TestNoExpectation: without one, Progress says none and Decide is
// unchanged.
func TestNoExpectation(t *testing.T) {
	p, err := Progress(Input{Settings: ha()})
	if err != nil || p.State != ExpectNone {
		t.Fatalf("%+v %v", p, err)
	}
}

// TestSwitchTarget: a switch goes only to a surviving candidate; the
// refusal names the host and why.
func TestSwitchTarget(t *testing.T) {
	d := ranked(t, "a:L", "b:", "c:A", "d:", "e:", "f:F")
	in := Input{Settings: ha(), Placement: d, Now: t0, Instances: []Instance{
		inst("a:up:idle"), inst("b:down:idle"), inst("c:down:idle"), inst("d:down:start failed"), inst("e:down:idle:F"), inst("f:down:idle"),
	}}
	if err := SwitchTarget(in, "b"); err != nil {
		t.Errorf("b: %v", err)
	}
	if err := SwitchTarget(in, "a"); err != nil {
		t.Errorf("a (already there): %v", err)
	}
	for host, why := range map[string]string{"c": "affinity", "d": "start failed", "e": "frozen", "f": "", "g": "not a host"} {
		err := SwitchTarget(in, host)
		var fe *FieldError
		if !errors.As(err, &fe) || fe.Field != "switch.host" || !strings.Contains(err.Error(), `"`+host+`"`) || !strings.Contains(err.Error(), why) {
			t.Errorf("%s: %v, want a switch.host error naming it and %q", host, err, why)
		}
	}
	if err := SwitchTarget(Input{Settings: Settings{Topology: Flex}, Placement: d}, "b"); err == nil || !strings.Contains(err.Error(), "failover") {
		t.Errorf("flex: %v", err)
	}
}

// TestBadExpect: an unknown expectation, a switch without a host or on a
// flex cluster are errors.
func TestBadExpect(t *testing.T) {
	for _, tc := range []struct {
		s Settings
		x Expect
	}{
		{ha(), Expect{Kind: "melt"}},
		{ha(), Expect{Kind: ExpectSwitch}},
		{ha(), Expect{Kind: ExpectStart, Host: "a"}},
		{Settings{Topology: Flex}, Expect{Kind: ExpectSwitch, Host: "a"}},
	} {
		var fe *FieldError
		if _, err := Decide(Input{Settings: tc.s, Expect: tc.x}); !errors.As(err, &fe) {
			t.Errorf("%+v: %v, want a field error", tc.x, err)
		}
	}
}
