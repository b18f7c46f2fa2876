package server_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/hashicorp/go-hclog"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/grovehq/grove/core/model"
	"github.com/grovehq/grove/core/server"
)

// TestInstanceCommandsAPI: freeze, thaw and clear on a failover cluster
// are 202 with the action's location; on a replicated cluster they are a
// 400 naming the topology rule, and an unknown host is a 400 naming it.
func TestInstanceCommandsAPI(t *testing.T) {
	a := newAuthAPI(t, server.Options{Gatherer: prometheus.NewRegistry(), Logs: hclog.NewInterceptLogger(nil)})
	member := a.token("p", model.RoleMember)
	var id struct {
		Profile struct{ ID string } `json:"profile"`
		Cluster struct{ ID string } `json:"cluster"`
	}
	a.must(member, http.MethodPost, "/v1/profiles", map[string]any{"profile": map[string]any{"name": "prof", "spec": noopSpec}}, &id)
	clusters := map[string]string{}
	for name, topology := range map[string]string{"ha": "failover", "rep": "replicated"} {
		ans := a.must(member, http.MethodPost, "/v1/clusters", map[string]any{"cluster": map[string]any{"name": name, "profile_id": id.Profile.ID,
			"desired_capacity": 0, "config": map[string]any{"grove.failover": map[string]any{"topology": topology}}}}, &id)
		a.waitAction(member, ans)
		clusters[name] = id.Cluster.ID
	}
	act := func(cluster string, body any) answer {
		return a.call(member, http.MethodPost, "/v1/clusters/"+clusters[cluster]+"/actions", body)
	}
	for _, c := range []struct {
		cluster string
		body    any
		want    string
	}{
		{"rep", map[string]any{"freeze": map[string]any{}}, "freeze is only for a cluster whose grove.failover topology is failover or flex; the cluster 'rep' has topology replicated."},
		{"rep", map[string]any{"clear": nil}, "clear is only for a cluster whose grove.failover topology is failover or flex"},
		{"ha", map[string]any{"thaw": map[string]any{"host": "elsewhere"}}, "thaw.host: 'elsewhere' is neither an agent host nor a host with an instance of the cluster 'ha'."},
	} {
		if ans := act(c.cluster, c.body); ans.status != 400 || !strings.Contains(ans.body, c.want) {
			t.Errorf("%s %v: %d %s; want 400 with %q", c.cluster, c.body, ans.status, ans.body, c.want)
		}
	}
	ans := act("ha", map[string]any{"freeze": map[string]any{"host": "test-host"}})
	if ans.status != http.StatusAccepted || !strings.Contains(ans.header.Get("Location"), "/v1/actions/") {
		t.Fatalf("freeze: %d %s, location %q", ans.status, ans.body, ans.header.Get("Location"))
	}
	a.waitAction(member, ans)
	a.waitAction(member, act("ha", map[string]any{"clear": map[string]any{"host": "test-host"}}))
	a.waitAction(member, act("ha", map[string]any{"thaw": nil}))
}
