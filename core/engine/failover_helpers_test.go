package engine_test

// Helpers for the failover and flex tests that run on any system.

import (
	"cmp"
	"strings"

	"github.com/grovehq/grove/core/model"
)

// rowStates shows instance rows as host: state (reason).
func rowStates(rows map[string]*model.Instance) map[string]string {
	out := map[string]string{}
	for host, r := range rows {
		out[host] = r.State + " (" + r.Reason + ")"
	}
	return out
}

// instanceView is a cluster's instances as the API shows them, by host:
// "<status> <state> <flags>" ("-" for no flags).
func (h *harness) instanceView(cl *model.Cluster) map[string]string {
	h.t.Helper()
	got, err := h.eng.ClusterInstances(h.ctx(), h.getCluster(cl.ID))
	if err != nil {
		h.t.Fatal(err)
	}
	out := map[string]string{}
	for _, x := range got {
		out[x.Host] = strings.TrimSpace(x.Status + " " + x.State + " " + cmp.Or(x.Flags, "-"))
	}
	return out
}
