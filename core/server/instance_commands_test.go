package server_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/hashicorp/go-hclog"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/grovehq/grove/core/model"
	"github.com/grovehq/grove/core/server"
	"github.com/grovehq/grove/plugins/builtin/noop"
)

// TestInstanceCommandsAPI: freeze, thaw and clear on a failover cluster
// are 202 with the action's location; on a replicated cluster they are a
// 400 naming the topology rule, and an unknown host is a 400 naming it.
// The hosts are grove.noop's (h1).
func TestInstanceCommandsAPI(t *testing.T) {
	a := newAuthAPIEnv(t, server.Options{Gatherer: prometheus.NewRegistry(), Logs: hclog.NewInterceptLogger(nil)}, map[string]string{noop.HostsEnv: "h1"})
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
		{"ha", map[string]any{"thaw": map[string]any{"host": "elsewhere"}}, "thaw.host: 'elsewhere' is neither a host of the cluster's driver nor a host with an instance of the cluster 'ha'."},
	} {
		if ans := act(c.cluster, c.body); ans.status != 400 || !strings.Contains(ans.body, c.want) {
			t.Errorf("%s %v: %d %s; want 400 with %q", c.cluster, c.body, ans.status, ans.body, c.want)
		}
	}
	ans := act("ha", map[string]any{"freeze": map[string]any{"host": "h1"}})
	if ans.status != http.StatusAccepted || !strings.Contains(ans.header.Get("Location"), "/v1/actions/") {
		t.Fatalf("freeze: %d %s, location %q", ans.status, ans.body, ans.header.Get("Location"))
	}
	a.waitAction(member, ans)
	a.waitAction(member, act("ha", map[string]any{"clear": map[string]any{"host": "h1"}}))
	a.waitAction(member, act("ha", map[string]any{"thaw": nil}))
}

// TestExpectationsAPI: switch and giveback are 400s naming the rule on a
// replicated cluster, switch without a host or to a host that cannot
// take the cluster is a 400 naming the host, and giveback on a failover
// cluster is a 202 whose expectation the cluster GET then shows.
func TestExpectationsAPI(t *testing.T) {
	a := newAuthAPI(t, server.Options{Gatherer: prometheus.NewRegistry(), Logs: hclog.NewInterceptLogger(nil)})
	member := a.token("p", model.RoleMember)
	var id struct {
		Profile struct{ ID string } `json:"profile"`
		Cluster struct{ ID string } `json:"cluster"`
	}
	a.must(member, http.MethodPost, "/v1/profiles", map[string]any{"profile": map[string]any{"name": "prof", "spec": noopSpec}}, &id)
	clusters := map[string]string{}
	for name, topology := range map[string]string{"ha": "failover", "rep": "replicated", "fx": "flex"} {
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
		{"rep", map[string]any{"giveback": nil}, "giveback is only for a cluster whose grove.failover topology is failover or flex; the cluster 'rep' has topology replicated."},
		{"rep", map[string]any{"switch": map[string]any{"host": "h"}}, "switch is only for a cluster whose grove.failover topology is failover or flex"},
		{"fx", map[string]any{"switch": map[string]any{"host": "h"}}, "switch moves a failover cluster to one host; the cluster 'fx' has topology flex."},
		{"ha", map[string]any{"switch": nil}, "switch.host is required"},
		{"ha", map[string]any{"switch": map[string]any{"host": 3}}, "switch.host must be a host name."},
		{"ha", map[string]any{"giveback": map[string]any{"host": "h"}}, "giveback.host is not a parameter of giveback; giveback takes none."},
		{"ha", map[string]any{"switch": map[string]any{"host": "elsewhere"}}, `switch.host: the host \"elsewhere\" is not a host of the cluster's placement.`},
	} {
		if ans := act(c.cluster, c.body); ans.status != 400 || !strings.Contains(ans.body, c.want) {
			t.Errorf("%s %v: %d %s; want 400 with %q", c.cluster, c.body, ans.status, ans.body, c.want)
		}
	}
	ans := act("ha", map[string]any{"giveback": map[string]any{}})
	if ans.status != http.StatusAccepted || !strings.Contains(ans.header.Get("Location"), "/v1/actions/") {
		t.Fatalf("giveback: %d %s, location %q", ans.status, ans.body, ans.header.Get("Location"))
	}
	a.waitAction(member, ans)
	var got struct {
		Cluster struct {
			Expect *struct {
				Kind   string `json:"kind"`
				Action string `json:"action"`
			} `json:"expect"`
		} `json:"cluster"`
	}
	a.must(member, http.MethodGet, "/v1/clusters/"+clusters["ha"], nil, &got)
	if x := got.Cluster.Expect; x == nil || x.Kind != "giveback" || !strings.Contains(ans.header.Get("Location"), x.Action) {
		t.Errorf("the cluster's expect after giveback: %+v; want giveback set by %s", x, ans.header.Get("Location"))
	}
}
