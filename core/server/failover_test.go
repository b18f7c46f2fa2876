package server_test

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/grovehq/grove/api"
	"github.com/grovehq/grove/core/model"
	"github.com/grovehq/grove/core/server"
	"github.com/grovehq/grove/plugins/builtin/noop"
)

// TestClusterGetInstances: a failover cluster's GET lists the instances
// its hosts' monitors recorded, with the status read from its nodes (down:
// none on the host) and n/a for a host its driver does not report
// (grove.noop reports h1); a replicated cluster's GET has no instances.
func TestClusterGetInstances(t *testing.T) {
	a := newAuthAPIEnv(t, server.Options{Gatherer: prometheus.NewRegistry(), Logs: hclog.NewInterceptLogger(nil)}, map[string]string{noop.HostsEnv: "h1"})
	member := a.token("p", model.RoleMember)
	var prof struct{ Profile api.Profile }
	a.must(member, http.MethodPost, "/v1/profiles", map[string]any{"profile": map[string]any{"name": "prof", "spec": noopSpec}}, &prof)
	var fo, rep struct{ Cluster api.Cluster }
	a.must(member, http.MethodPost, "/v1/clusters", map[string]any{"cluster": map[string]any{"name": "fo", "profile_id": prof.Profile.ID,
		"config": map[string]any{"grove.failover": map[string]any{"topology": "failover", "orchestrate": "ha"}}}}, &fo)
	a.must(member, http.MethodPost, "/v1/clusters", map[string]any{"cluster": map[string]any{"name": "rep", "profile_id": prof.Profile.ID}}, &rep)
	since := time.Date(2026, 11, 23, 16, 0, 0, 0, time.UTC)
	for _, x := range []*model.Instance{
		{ClusterID: fo.Cluster.ID, Host: "h1", State: "ready", Since: since, Reason: "the best candidate"},
		{ClusterID: fo.Cluster.ID, Host: "gone", State: "start failed", Since: since, Frozen: true},
	} {
		if err := a.st.PutInstance(context.Background(), x); err != nil {
			t.Fatal(err)
		}
	}
	var got struct{ Cluster api.Cluster }
	a.must(member, http.MethodGet, "/v1/clusters/fo", nil, &got)
	b, _ := json.Marshal(got.Cluster.Instances)
	want := []api.ClusterInstance{{Host: "gone", Status: "n/a", State: "start failed", Frozen: true},
		{Host: "h1", Status: "down", State: "ready", Reason: "the best candidate"}}
	if len(got.Cluster.Instances) != 2 {
		t.Fatalf("instances %s; want gone and h1", b)
	}
	for i, w := range want {
		g := got.Cluster.Instances[i]
		if g.Host != w.Host || g.Status != w.Status || g.State != w.State || g.Frozen != w.Frozen || g.Reason != w.Reason || g.Since == nil ||
			!strings.HasPrefix(*g.Since, "2026-11-23T16:00:00") {
			t.Errorf("instance %d: %s; want %+v since 2026-11-23T16:00:00", i, b, w)
		}
	}
	ans := a.must(member, http.MethodGet, "/v1/clusters/rep", nil, nil)
	if strings.Contains(ans.body, `"instances"`) {
		t.Errorf("a replicated cluster's GET shows instances: %s", ans.body)
	}
}
