package engine_test

import (
	"encoding/json"
	"syscall"
	"time"
)

// Helpers for tests whose nodes are local.process processes.

// pids returns the process of each node of a local.process cluster, by node id.
func (h *harness) pids(clusterID string) map[string]int {
	h.t.Helper()
	out := map[string]int{}
	for _, n := range h.nodes(clusterID) {
		var st struct {
			PID int `json:"pid"`
		}
		if err := json.Unmarshal(n.State, &st); err != nil || st.PID <= 0 {
			h.t.Fatalf("node %d has no process in its state %q: %v", n.Index, n.State, err)
		}
		out[n.ID] = st.PID
	}
	return out
}

// gone waits until a process has exited.
func (h *harness) gone(pid int) {
	h.t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for alive(pid) {
		if time.Now().After(deadline) {
			h.t.Fatalf("the process %d still runs 10s after its node was deleted", pid)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func alive(pid int) bool {
	return syscall.Kill(pid, 0) == nil
}
