package monitor

import (
	"fmt"
	"slices"
	"strings"
)

// Expectations: the operator's cluster-wide orders (OpenSVC's
// global_expect). One is pending at a time; every host's monitor honours
// it instead of orchestrating on its own until Progress says it is
// reached (or cannot be), and then it is cleared.
const (
	// ExpectStart brings the cluster up now, whatever orchestrate says:
	// the leader starts at once, without the ready contest.
	ExpectStart = "start"
	// ExpectStop stops every instance.
	ExpectStop = "stop"
	// ExpectSwitch moves a failover cluster to Expect.Host: the up
	// instance stops, then the host starts.
	ExpectSwitch = "switch"
	// ExpectGiveback moves the cluster back to the placement's preferred
	// hosts: the leader (failover), the first flex_target candidates
	// (flex).
	ExpectGiveback = "giveback"
)

// ExpectKinds are the expectations, in the commands' names.
var ExpectKinds = []string{ExpectStart, ExpectStop, ExpectSwitch, ExpectGiveback}

// Expect is a pending expectation; the zero value is none.
type Expect struct {
	Kind string `json:"kind,omitempty"`
	// Host is the switch's target.
	Host string `json:"host,omitempty"`
}

func (e Expect) validate(s Settings) error {
	switch {
	case e.Kind == "":
		if e.Host != "" {
			return fieldErr("expect.host", "only a switch names a host")
		}
	case !slices.Contains(ExpectKinds, e.Kind):
		return fieldErr("expect.kind", "%q is not an expectation; use one of %q", e.Kind, ExpectKinds)
	case e.Kind == ExpectSwitch && e.Host == "":
		return fieldErr("expect.host", "a switch names the host it moves the cluster to")
	case e.Kind == ExpectSwitch && s.Topology == Flex:
		return fieldErr("expect.kind", "a switch moves a failover cluster; a flex cluster runs on several hosts")
	case e.Kind != ExpectSwitch && e.Host != "":
		return fieldErr("expect.host", "only a switch names a host")
	}
	return nil
}

// Progress states of an expectation.
const (
	ExpectNone    = ""
	ExpectPending = "pending"
	ExpectReached = "reached"
	ExpectFailed  = "failed"
)

// ExpectProgress says where the pending expectation stands: pending while
// the monitors work toward it, reached (it is cleared), or failed when no
// host can reach it any more (it is cleared too, the reason naming why).
type ExpectProgress struct {
	State  string `json:"state"`
	Reason string `json:"reason"`
}

// isUp says whether an instance with data runs (up or warn).
func isUp(v *view) bool { return !v.dropped && (v.in.Status == Up || v.in.Status == Warn) }

// target is how many instances an expectation of start wants up.
func target(s settings) int {
	if s.Topology == Flex {
		return s.flexTarget
	}
	return 1
}

// preferred are the giveback's hosts: the leader among the surviving
// candidates (failover), the candidates ranked below flex_target (flex).
func preferred(s settings, all []*view) []*view {
	var out []*view
	for _, p := range all {
		if p.candidate && p.rank < target(s) {
			out = append(out, p)
		}
	}
	return out
}

func names(vs []*view) string {
	var out []string
	for _, v := range vs {
		out = append(out, v.in.Host)
	}
	if len(out) == 0 {
		return "none"
	}
	return strings.Join(out, ", ")
}

func upViews(all []*view) []*view {
	var out []*view
	for _, p := range all {
		if isUp(p) {
			out = append(out, p)
		}
	}
	return out
}

// doingPeer is a peer with data in an action, or nil.
func doingPeer(v *view, all []*view) *view {
	for _, p := range all {
		if p != v && !p.dropped && Doing(p.in.State) {
			return p
		}
	}
	return nil
}

// decideExpect is an idle local instance's step under an expectation.
// The operator's order overrides orchestrate and the instance's frozen
// flag for stops (a stop, a switch or a giveback stops a frozen instance
// too); starts go only to candidates, so never to a frozen instance. A
// start goes at once, without the ready contest: the operator asked for
// it.
func decideExpect(s settings, in Input, v *view, all []*view) Step {
	x := in.Expect
	local := v.in
	up := isUp(v)
	start := func(why string) Step {
		if !local.Joined.IsZero() && in.Now.Sub(local.Joined) < s.rejoinGrace {
			// A restarted agent makes no start decision before it has
			// seen every peer, expectation or not (§A.9).
			for _, p := range all {
				if p != v && p.dropped {
					return stay(v, fmt.Sprintf("expect %s: rejoin grace: waiting for %s or for every peer to be seen (%s is not)", x.Kind, s.rejoinGrace-in.Now.Sub(local.Joined), p.in.Host))
				}
			}
		}
		if p := doingPeer(v, all); p != nil {
			return stay(v, fmt.Sprintf("expect %s: waiting for the peer %s, which is %s", x.Kind, p.in.Host, p.in.State))
		}
		if !v.candidate {
			return stay(v, fmt.Sprintf("expect %s: this host cannot start the instance: %s", x.Kind, v.why))
		}
		return move(Starting, ActionStart, why)
	}
	switch x.Kind {
	case ExpectStop:
		if up {
			return move(Stopping, ActionStop, "the operator's stop: every instance stops")
		}
		return stay(v, "expect stop: the instance is down")
	case ExpectStart:
		n := len(upViews(all))
		switch {
		case up:
			return stay(v, "expect start: the instance is up")
		case n >= target(s):
			return stay(v, fmt.Sprintf("expect start: %d of %d instances are up", n, target(s)))
		case !v.candidate:
			return stay(v, "expect start: not a candidate: "+v.why)
		case downCandidatesBefore(v, all) >= target(s)-n:
			return stay(v, "expect start: the leader among the surviving candidates is "+leader(all))
		}
		return start(fmt.Sprintf("the operator's start: the leader starts at once, orchestrate %s notwithstanding", s.Orchestrate))
	case ExpectSwitch:
		if local.Host != x.Host {
			if up {
				return move(Stopping, ActionStop, "the operator's switch to "+x.Host+": this instance stops first")
			}
			return stay(v, "expect switch: the cluster moves to "+x.Host)
		}
		if up {
			return stay(v, "expect switch: the instance is up here")
		}
		if others := upViews(all); len(others) > 0 {
			return stay(v, "expect switch: waiting for "+names(others)+" to stop")
		}
		return start("the operator's switch: the cluster moves here")
	case ExpectGiveback:
		pref := preferred(s, all)
		in := slices.Contains(pref, v)
		switch {
		case up && !in:
			return move(Stopping, ActionStop, "the operator's giveback: this host is not a preferred host ("+names(pref)+")")
		case up:
			return stay(v, "expect giveback: the instance is up on a preferred host")
		case !in:
			return stay(v, "expect giveback: the preferred hosts are "+names(pref))
		}
		var off []*view
		for _, p := range upViews(all) {
			if !slices.Contains(pref, p) {
				off = append(off, p)
			}
		}
		if len(off) > 0 {
			return stay(v, "expect giveback: waiting for "+names(off)+" to stop")
		}
		return start("the operator's giveback: this preferred host starts")
	}
	return stay(v, "no expectation")
}

// downCandidatesBefore counts the candidates ranked before v that are not
// up: they start before v, so v starts only while fewer of them than the
// missing instances are.
func downCandidatesBefore(v *view, all []*view) int {
	n := 0
	for _, p := range all {
		if p != v && p.candidate && p.rank < v.rank && !isUp(p) {
			n++
		}
	}
	return n
}

// Progress says where in's expectation stands (ExpectNone without one).
// Every host's monitor round reads it and the first to see reached or
// failed clears the expectation.
func Progress(in Input) (ExpectProgress, error) {
	if in.Expect.Kind == "" {
		return ExpectProgress{State: ExpectNone}, nil
	}
	s, all, err := prepare(in)
	if err != nil {
		return ExpectProgress{}, err
	}
	x := in.Expect
	pending := func(why string) (ExpectProgress, error) { return ExpectProgress{ExpectPending, why}, nil }
	failed := func(why string) (ExpectProgress, error) { return ExpectProgress{ExpectFailed, why}, nil }
	reached := func(why string) (ExpectProgress, error) { return ExpectProgress{ExpectReached, why}, nil }
	up := upViews(all)
	switch x.Kind {
	case ExpectStop:
		for _, p := range all {
			if p.in.State == StopFailed && isUp(p) {
				return failed("the stop failed on " + p.in.Host + ": clear it and stop again")
			}
		}
		if len(up) > 0 {
			return pending("still up on " + names(up))
		}
		for _, p := range all {
			if !p.dropped && Doing(p.in.State) {
				return pending("the instance on " + p.in.Host + " is " + p.in.State)
			}
		}
		return reached("every instance is down")
	case ExpectStart:
		if len(up) >= target(s) {
			return reached(fmt.Sprintf("up on %s", names(up)))
		}
		if p := doingPeer(nil, all); p != nil {
			return pending("the instance on " + p.in.Host + " is " + p.in.State)
		}
		able := len(up)
		for _, p := range all {
			if p.candidate && !isUp(p) {
				able++
			}
		}
		if able < target(s) {
			return failed(fmt.Sprintf("no host left can start it (%s)", whyNot(all)))
		}
		return pending(fmt.Sprintf("%d of %d instances are up", len(up), target(s)))
	case ExpectSwitch:
		i := slices.IndexFunc(all, func(p *view) bool { return p.in.Host == x.Host })
		if i < 0 {
			return failed("the host " + x.Host + " has no instance of the cluster")
		}
		t := all[i]
		switch {
		case isUp(t) && len(up) == 1:
			return reached("up on " + x.Host)
		case t.in.State == StartFailed:
			return failed("the start on " + x.Host + " failed")
		case !isUp(t) && !t.candidate:
			return failed(x.Host + " can no longer take the cluster: " + t.why)
		}
		return pending("moving to " + x.Host)
	case ExpectGiveback:
		pref := preferred(s, all)
		if len(pref) == 0 {
			return failed(fmt.Sprintf("no host is a candidate (%s)", whyNot(all)))
		}
		for _, p := range pref {
			if !isUp(p) {
				return pending("not yet up on the preferred " + p.in.Host)
			}
		}
		for _, p := range up {
			if !slices.Contains(pref, p) {
				return pending("still up on " + p.in.Host + ", not a preferred host")
			}
		}
		return reached("up on the preferred " + names(pref))
	}
	return ExpectProgress{State: ExpectNone}, nil
}

func whyNot(all []*view) string {
	var out []string
	for _, p := range all {
		if !p.candidate {
			out = append(out, p.in.Host+": "+p.why)
		}
	}
	if len(out) == 0 {
		return "no hosts"
	}
	return strings.Join(out, "; ")
}

// SwitchTarget checks that a failover cluster can be switched to host
// now: the host is a surviving candidate (ranked by the placement, with
// data, not frozen, not failed). The error names the host and the reason.
func SwitchTarget(in Input, host string) error {
	in.Expect = Expect{}
	if s := in.Settings.Defaults(); s.Topology != Failover {
		return fieldErr("switch", "a switch moves a failover cluster; this cluster's topology is %s", s.Topology)
	}
	_, all, err := prepare(in)
	if err != nil {
		return err
	}
	i := slices.IndexFunc(all, func(p *view) bool { return p.in.Host == host })
	switch {
	case i < 0:
		return fieldErr("switch.host", "the host %q is not a host of the cluster's placement", host)
	case !all[i].candidate:
		return fieldErr("switch.host", "the host %q cannot take the cluster: %s", host, all[i].why)
	}
	return nil
}
