package engine_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/grovehq/grove/core/engine"
	"github.com/grovehq/grove/core/model"
	"github.com/grovehq/grove/core/orchestrator/monitor"
	"github.com/grovehq/grove/plugins/builtin/process"
)

// knownPeer records the agent host name as up, heartbeating at the
// clock's present time, with no agent behind it: the store knows the
// host, but no monitor of it ever writes an instance. A peer is seen
// once its instance row is in the store and its host is neither down nor
// gone (nor in maintenance past its grace): that row is the data its
// agent shares.
func (h *harness) knownPeer(name string) {
	h.t.Helper()
	err := h.store.ReportHost(h.ctx(), &model.Host{Name: name, Kind: model.HostAgent, Driver: process.TypeName,
		State: model.HostUp, Heartbeat: h.clock.Now().Truncate(time.Microsecond)})
	if err != nil {
		h.t.Fatal(err)
	}
}

// stillJoining runs rounds of e and fails unless the host's instance of
// the cluster stays idle, held by the rejoin grace waiting for peer.
func (h *harness) stillJoining(e *engine.Engine, clusterID, host, peer string) {
	h.t.Helper()
	waitFor(h.t, 20*time.Second, func() (bool, string) {
		r := h.instanceRows(clusterID)[host]
		return r != nil, "no instance row of " + host + " yet"
	})
	for range 10 {
		if err := e.CheckHealth(h.ctx()); err != nil {
			h.t.Fatal(err)
		}
	}
	r := h.instanceRows(clusterID)[host]
	if r.State != monitor.Idle || !strings.Contains(r.Reason, "rejoin grace") || !strings.Contains(r.Reason, "("+peer+" is not)") {
		h.t.Fatalf("%s's instance is %q (%s) within its rejoin grace with %s unseen; want idle, waiting for %s", host, r.State, r.Reason, peer, peer)
	}
}

// TestRejoinGraceUntilSeen: an agent that has just joined, with a peer
// host known and up but not seen (no instance of it), makes no start
// decision however many rounds run while its clock stands within the
// rejoin grace (5s); once the peer's agent runs and its instance is in the
// store, the agent goes ready at once, the clock not having moved.
func TestRejoinGraceUntilSeen(t *testing.T) {
	h := newIdleHarness(t, nil)
	h.killAtEnd()
	h.knownPeer("b")
	a, _ := h.hostEngine("engine-a", "a")
	h.eng = a
	h.profileOf("proc", process.TypeName, map[string]any{"command": []any{"sleep", "600"}, "stop_timeout": 0})
	cl := h.create(engine.ClusterCreate{Name: "rj", Profile: "proc", Config: failoverConfig("ha")})
	h.stillJoining(a, cl.ID, "a", "b")

	// b's agent starts: its round records its instance, a sees it.
	h.hostEngine("engine-b", "b")
	waitFor(t, 20*time.Second, func() (bool, string) {
		rows := h.instanceRows(cl.ID)
		return rows["b"] != nil && rows["a"].State == monitor.Ready, fmt.Sprintf("instances %v, want b's recorded and a ready", rowStates(rows))
	})
	if now := h.clock.Now(); !now.Equal(epoch) {
		t.Fatalf("the clock moved to %s; the test proves a peer seen ends the grace only with it standing", now)
	}
}

// TestRejoinGraceExpires: an agent that has just joined, with a peer host
// known and up but never seen, waits out its rejoin grace (5s), then
// decides without it: it goes ready as the leader.
func TestRejoinGraceExpires(t *testing.T) {
	h := newIdleHarness(t, nil)
	h.killAtEnd()
	h.knownPeer("b")
	a, _ := h.hostEngine("engine-a", "a")
	h.eng = a
	h.profileOf("proc", process.TypeName, map[string]any{"command": []any{"sleep", "600"}, "stop_timeout": 0})
	cl := h.create(engine.ClusterCreate{Name: "rj", Profile: "proc", Config: failoverConfig("ha")})
	h.stillJoining(a, cl.ID, "a", "b")

	// 4.9s after a joined: still within the grace.
	h.advanceBeating(t, 4900*time.Millisecond, "a")
	h.stillJoining(a, cl.ID, "a", "b")

	// Past the grace (and within b's heartbeat timeout, so b is still a
	// known, up host that was never seen), a goes ready.
	h.advanceBeating(t, 200*time.Millisecond, "a")
	waitFor(t, 20*time.Second, func() (bool, string) {
		rows := h.instanceRows(cl.ID)
		return rows["a"].State == monitor.Ready, fmt.Sprintf("instances %v, want a ready past its rejoin grace", rowStates(rows))
	})
	if hs, err := h.store.GetHost(h.ctx(), "b"); err != nil || hs.State != model.HostUp {
		t.Fatalf("host b is %v (%v); the test needs it up, known and unseen", hs, err)
	}
	if r := h.instanceRows(cl.ID)["b"]; r != nil {
		t.Fatalf("b has an instance %+v; the test needs it never seen", r)
	}
}
