package server_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/hashicorp/go-hclog"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/grovehq/grove/api"
	"github.com/grovehq/grove/core/model"
	"github.com/grovehq/grove/core/server"
)

// TestHostsAPI: the agent's own host is listed and shown; an admin sets its
// availability and labels; bad input is a 400 naming the field and the
// rule; an unknown host is a 404.
func TestHostsAPI(t *testing.T) {
	a := newAuthAPI(t, server.Options{Gatherer: prometheus.NewRegistry(), Logs: hclog.NewInterceptLogger(nil)})
	admin, reader := a.token("p", model.RoleAdmin), a.token("p", model.RoleReader)
	ans := a.call(reader, http.MethodGet, "/v1/hosts", nil)
	var list struct {
		Hosts []api.HostRecord `json:"hosts"`
	}
	if err := json.Unmarshal([]byte(ans.body), &list); ans.status != 200 || err != nil {
		t.Fatalf("GET /v1/hosts: %d %s", ans.status, ans.body)
	}
	if len(list.Hosts) != 1 || list.Hosts[0].Name != "test-host" || list.Hosts[0].Kind != model.HostAgent ||
		list.Hosts[0].State != model.HostUp || list.Hosts[0].Availability != model.HostActive {
		t.Fatalf("hosts %+v, want the agent's own, up and active", list.Hosts)
	}
	for _, c := range []struct {
		body   any
		status int
		want   string
	}{
		{map[string]any{"host": map[string]any{"availability": "asleep"}}, 400, `availability \"asleep\" is not valid: it must be one of active, pause, drain.`},
		{map[string]any{"host": map[string]any{"availability": 3}}, 400, "host.availability must be a string."},
		{map[string]any{"host": map[string]any{"labels": []any{"x"}}}, 400, "host.labels must be an object of strings."},
		{map[string]any{"host": map[string]any{"labels": map[string]any{"k": 1}}}, 400, "host.labels.k must be a string."},
		{map[string]any{"host": map[string]any{"labels": map[string]any{"bad key": "v"}}}, 400, `labels key \"bad key\" is not valid`},
		{map[string]any{"host": map[string]any{"state": "down"}}, 400, "host.state is not a recognised field; allowed fields are availability, labels."},
		{map[string]any{"host": map[string]any{}}, 400, "Nothing to update"},
	} {
		if ans := a.call(admin, http.MethodPatch, "/v1/hosts/test-host", c.body); ans.status != c.status || !strings.Contains(ans.body, c.want) {
			t.Errorf("PATCH %v: %d %s; want %d with %q", c.body, ans.status, ans.body, c.status, c.want)
		}
	}
	ans = a.call(admin, http.MethodPatch, "/v1/hosts/test-host", map[string]any{"host": map[string]any{"availability": "drain", "labels": map[string]any{"disk": "ssd"}}})
	var one struct {
		Host api.HostRecord `json:"host"`
	}
	if err := json.Unmarshal([]byte(ans.body), &one); ans.status != 200 || err != nil || one.Host.Availability != model.HostDrain ||
		one.Host.Labels["disk"] != "ssd" || one.Host.OperatorLabels["disk"] != "ssd" {
		t.Fatalf("PATCH: %d %s", ans.status, ans.body)
	}
	ans = a.call(reader, http.MethodGet, "/v1/hosts/test-host", nil)
	if err := json.Unmarshal([]byte(ans.body), &one); ans.status != 200 || err != nil || one.Host.Availability != model.HostDrain {
		t.Fatalf("GET after PATCH: %d %s", ans.status, ans.body)
	}
	if ans := a.call(reader, http.MethodGet, "/v1/hosts/nope", nil); ans.status != 404 || !strings.Contains(ans.body, "The host 'nope' could not be found.") {
		t.Errorf("unknown host: %d %s", ans.status, ans.body)
	}
}
