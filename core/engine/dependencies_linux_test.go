package engine_test

import (
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/grovehq/grove/core/engine"
	"github.com/grovehq/grove/core/model"
)

// The dependency tests whose faults are real: a local.process node killed.

// TestDependencyFault: db's process killed is a fault: web (require_all,
// restart_on error) stops, and starts again once the restart supervisor
// has db's node running again.
func TestDependencyFault(t *testing.T) {
	h, db, track := processDB(t)
	pids := track()
	web := h.cluster("web", 1, 60)
	h.depend(web, "database", "require_all", "error", db.ID)

	h.killProcesses(pids)
	h.until("web stops after db's fault", true, h.inState(web, model.RunOffline))
	if _, reason := h.runState(web.ID); !strings.Contains(reason, "db") {
		t.Errorf("web's reason %q does not name db", reason)
	}
	h.clock.advance(10 * time.Second) // past the restart delay
	h.until("web runs again after db is recovered", true, func() bool {
		track()
		st, _ := h.runState(web.ID)
		return st == model.RunRunning
	})
	if st, _ := h.runState(db.ID); st != model.RunRunning {
		t.Errorf("db is %s, want running", st)
	}
}

// TestDependencyFaultSurvivesCrash: db's process is killed and the agent
// dies after the fault's first step (front, restart_on restart on web,
// stopped; web, restart_on error on db, not yet). db's fault is in its run
// data, so the next agent stops web at start-up; once db is recovered,
// web and front run again.
func TestDependencyFaultSurvivesCrash(t *testing.T) {
	h, db, track := processDB(t)
	pids := track()
	web := h.cluster("web", 1, 60)
	front := h.cluster("front", 1, 60)
	h.depend(web, "database", "require_all", "error", db.ID)
	h.depend(front, "application", "require_all", "restart", web.ID)
	died := h.crashAfterFirstStep()

	h.killProcesses(pids)
	// Health rounds until one finds db's node dead and the fault's first
	// step ended; the rounds after it fail on the dead store.
	deadline := time.Now().Add(20 * time.Second)
	for dead := false; !dead; {
		select {
		case <-died:
			dead = true
		default:
			if time.Now().After(deadline) {
				t.Fatal("db's fault did not stop front within 20s")
			}
			_ = h.eng.CheckHealth(h.ctx())
			time.Sleep(20 * time.Millisecond)
		}
	}
	h.crash()
	h.finishCutCascade(front, web)
	h.clock.advance(10 * time.Second) // past the restart delay
	h.until("web and front run again after db is recovered", true, func() bool {
		track()
		sw, _ := h.runState(web.ID)
		sf, _ := h.runState(front.ID)
		return sw == model.RunRunning && sf == model.RunRunning
	})
}

// processDB starts a harness with db, a one-node local.process cluster.
// track records db's node processes as they are now and returns them;
// every process it recorded is killed when the test ends.
func processDB(t *testing.T) (h *harness, db *model.Cluster, track func() map[string]int) {
	t.Helper()
	h = newHarness(t, nil)
	h.profileOf("proc", "local.process", map[string]any{"command": []any{"sleep", "60"}, "stop_timeout": 0})
	h.profile("p")
	one := 1
	db = h.create(engine.ClusterCreate{Name: "db", Profile: "proc", DesiredCapacity: &one})
	var started []int
	t.Cleanup(func() { killAll(t, started) })
	return h, db, func() map[string]int {
		pids := h.pids(db.ID)
		for _, pid := range pids {
			if !slices.Contains(started, pid) {
				started = append(started, pid)
			}
		}
		return pids
	}
}

// killProcesses kills node processes and waits until each has exited.
func (h *harness) killProcesses(pids map[string]int) {
	h.t.Helper()
	for _, pid := range pids {
		if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
			h.t.Fatal(err)
		}
		h.gone(pid)
	}
}
