package model

// A cluster's run state, as an SMF instance has one (semantics §C.1): it is
// kept apart from the Senlin status, which says how many nodes are ACTIVE,
// because a stopped cluster keeps its nodes and a cluster waiting on its
// dependencies has none started yet.

// Run states, SMF's names.
const (
	// RunRunning is SMF's online or degraded: the cluster is ACTIVE or
	// WARNING and nothing stopped it.
	RunRunning = "running"
	// RunOffline is a cluster that was stopped (by an operator, a
	// dependency or a milestone) or that waits on its dependencies.
	RunOffline = "offline"
	// RunMaintenance is a cluster that needs an operator: its nodes failed
	// (ERROR, CRITICAL) or it sits in a dependency cycle.
	RunMaintenance = "maintenance"
	// RunUninitialized is a cluster not created yet.
	RunUninitialized = "uninitialized"
)

// Causes of a stop, kept in the run data: what stopped the cluster decides
// what may start it again.
const (
	StopByOperator   = "operator"
	StopByDependency = "dependency"
	StopByMilestone  = "milestone"
)

// DataRun is the key of Cluster.Data holding the cluster's RunData.
const DataRun = "run"

// RunData is what the engine keeps of a cluster's run state in its data.
type RunData struct {
	// Stopped is set while the cluster is stopped: its nodes' workloads
	// are stopped and the health loop leaves it alone.
	Stopped bool
	// Cause is why it stopped (StopBy*), or "" while it runs.
	Cause string
	// Reason is the sentence shown with the state: why it stopped, what
	// it waits on, why it is in maintenance.
	Reason string
	// Maintenance is set when the cluster needs an operator whatever its
	// nodes do (a dependency cycle).
	Maintenance bool
	// Fault is set while a running cluster has a node that died (a crash,
	// a kill, a failed health check), until its nodes run again: its
	// dependents see it offline meanwhile.
	Fault bool
}

// RunDataOf reads a cluster's run data; a cluster without any runs.
func RunDataOf(cl *Cluster) RunData {
	m, _ := cl.Data[DataRun].(map[string]any)
	var r RunData
	r.Stopped, _ = m["stopped"].(bool)
	r.Cause, _ = m["cause"].(string)
	r.Reason, _ = m["reason"].(string)
	r.Maintenance, _ = m["maintenance"].(bool)
	r.Fault, _ = m["fault"].(bool)
	return r
}

// SetRunData writes a cluster's run data; the zero RunData removes it.
func SetRunData(cl *Cluster, r RunData) {
	if r == (RunData{}) {
		delete(cl.Data, DataRun)
		return
	}
	if cl.Data == nil {
		cl.Data = map[string]any{}
	}
	m := map[string]any{"stopped": r.Stopped, "reason": r.Reason}
	if r.Cause != "" {
		m["cause"] = r.Cause
	}
	if r.Maintenance {
		m["maintenance"] = true
	}
	if r.Fault {
		m["fault"] = true
	}
	cl.Data[DataRun] = m
}

// RunState returns a cluster's SMF state and the sentence that explains it.
func RunState(cl *Cluster) (string, string) {
	r := RunDataOf(cl)
	switch {
	case r.Maintenance:
		return RunMaintenance, r.Reason
	case r.Stopped, r.Fault:
		return RunOffline, r.Reason
	}
	switch cl.Status {
	case ClusterActive, ClusterWarning:
		return RunRunning, ""
	case ClusterError, ClusterCritical:
		return RunMaintenance, cl.StatusReason
	case ClusterInit, ClusterCreating:
		return RunUninitialized, ""
	}
	// An action is changing the cluster: to its dependents it is not up.
	return RunOffline, cl.StatusReason
}
