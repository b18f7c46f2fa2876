package server_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/grovehq/grove/core/engine"
	"github.com/grovehq/grove/core/model"
	"github.com/grovehq/grove/core/server"
	"github.com/grovehq/grove/core/store"
	"github.com/grovehq/grove/core/store/sqlite"
	"github.com/grovehq/grove/plugins/host"
)

// authAPI is a real API server outside dev mode over a real SQLite store, a
// running engine and the host's testplugin (grove.noop profiles,
// senlin.policy.deletion policies).
type authAPI struct {
	t   testing.TB
	url string
	e   *engine.Engine
	srv *server.Server
	st  store.Store
}

func newAuthAPI(t testing.TB, opts server.Options) *authAPI {
	t.Helper()
	return newAuthAPIEnv(t, opts, nil)
}

// newAuthAPIEnv is newAuthAPI whose test plugin gets env (such as the
// pretend hosts grove.noop reports).
func newAuthAPIEnv(t testing.TB, opts server.Options, env map[string]string) *authAPI {
	t.Helper()
	ctx := context.Background()
	dir := t.TempDir()
	st, err := sqlite.Open(ctx, filepath.Join(dir, "grove.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	h := host.New(hclog.NewNullLogger(), dir)
	t.Cleanup(h.Close)
	if err := h.Start(ctx, host.Config{Name: "tp", Command: []string{testPlugin}, Env: env}); err != nil {
		t.Fatal(err)
	}
	e := engine.New(st, h, hclog.NewNullLogger(), engine.Config{CheckInterval: -1, Poll: 20 * time.Millisecond, HostName: "test-host"})
	if err := e.Start(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(e.Stop)
	opts.Host = h
	srv := server.New(e, opts)
	ts := httptest.NewServer(srv)
	t.Cleanup(ts.Close)
	return &authAPI{t: t, url: ts.URL, e: e, srv: srv, st: st}
}

// token makes a token directly through the engine and returns its secret.
func (a *authAPI) token(project, role string) string {
	a.t.Helper()
	_, secret, err := a.e.CreateToken(context.Background(), engine.Caller{}, engine.TokenCreate{Name: role + "-" + project, Project: project, Role: role})
	if err != nil {
		a.t.Fatal(err)
	}
	return secret
}

type answer struct {
	status int
	header http.Header
	body   string
}

func (a *authAPI) call(token, method, path string, body any) answer {
	a.t.Helper()
	var r io.Reader
	if body != nil {
		b, _ := json.Marshal(body)
		r = bytes.NewReader(b)
	}
	req, _ := http.NewRequest(method, a.url+path, r)
	req.Header.Set("Content-Type", "application/json")
	if token != "" {
		req.Header.Set("X-Auth-Token", token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		a.t.Fatal(err)
	}
	defer resp.Body.Close()
	if strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		return answer{resp.StatusCode, resp.Header, ""} // a stream: it does not end
	}
	b, _ := io.ReadAll(resp.Body)
	return answer{resp.StatusCode, resp.Header, string(b)}
}

// must makes a request that has to succeed and decodes its answer.
func (a *authAPI) must(token, method, path string, body any, out any) answer {
	a.t.Helper()
	ans := a.call(token, method, path, body)
	if ans.status >= 300 {
		a.t.Fatalf("%s %s: %d %s", method, path, ans.status, ans.body)
	}
	if out != nil {
		if err := json.Unmarshal([]byte(ans.body), out); err != nil {
			a.t.Fatal(err)
		}
	}
	return ans
}

// waitAction waits for the action a Location header names to succeed.
func (a *authAPI) waitAction(token string, ans answer) string {
	a.t.Helper()
	loc := ans.header.Get("Location")
	deadline := time.Now().Add(30 * time.Second)
	for {
		var out struct {
			Action struct {
				ID     string `json:"id"`
				Status string `json:"status"`
				Reason string `json:"status_reason"`
			} `json:"action"`
		}
		a.must(token, http.MethodGet, loc, nil, &out)
		switch out.Action.Status {
		case model.ActionSucceeded:
			return out.Action.ID
		case model.ActionFailed, model.ActionCancelled:
			a.t.Fatalf("action %s %s: %s", loc, out.Action.Status, out.Action.Reason)
		}
		if time.Now().After(deadline) {
			a.t.Fatalf("action %s still %s", loc, out.Action.Status)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

var delSpec = map[string]any{"type": "senlin.policy.deletion", "version": "1.1", "properties": map[string]any{"criteria": "OLDEST_FIRST"}}

// fixture is project p's objects, made by a member of p.
type fixture struct {
	profile, policy, cluster, node, action, event, token string
	// receiver is a webhook receiver on cluster; webhook its URL's secret.
	receiver, webhook string
	milestone         string
}

func (f fixture) ids() []string {
	return []string{f.profile, f.policy, f.cluster, f.node, f.action, f.event, f.receiver, f.milestone}
}

func (a *authAPI) fixture(member string) fixture {
	a.t.Helper()
	var f fixture
	var id struct {
		Profile struct{ ID string } `json:"profile"`
		Policy  struct{ ID string } `json:"policy"`
		Cluster struct{ ID string } `json:"cluster"`
		Node    struct{ ID string } `json:"node"`
	}
	a.must(member, http.MethodPost, "/v1/profiles", map[string]any{"profile": map[string]any{"name": "prof", "spec": noopSpec}}, &id)
	f.profile = id.Profile.ID
	a.must(member, http.MethodPost, "/v1/policies", map[string]any{"policy": map[string]any{"name": "pol", "spec": delSpec}}, &id)
	f.policy = id.Policy.ID
	ans := a.must(member, http.MethodPost, "/v1/clusters", map[string]any{"cluster": map[string]any{"name": "cl", "profile_id": f.profile, "desired_capacity": 1}}, &id)
	f.cluster = id.Cluster.ID
	f.action = a.waitAction(member, ans)
	a.waitAction(member, a.must(member, http.MethodPost, "/v1/clusters/"+f.cluster+"/actions", map[string]any{"policy_attach": map[string]any{"policy_id": f.policy}}, nil))
	ans = a.must(member, http.MethodPost, "/v1/nodes", map[string]any{"node": map[string]any{"name": "nd", "profile_id": f.profile}}, &id)
	f.node = id.Node.ID
	a.waitAction(member, ans)
	var evs struct {
		Events []struct{ ID string } `json:"events"`
	}
	a.must(member, http.MethodGet, "/v1/events?limit=1", nil, &evs)
	if len(evs.Events) == 0 {
		a.t.Fatal("the fixture made no event")
	}
	f.event = evs.Events[0].ID
	var rc struct {
		Receiver struct {
			ID      string
			Channel struct {
				AlarmURL string `json:"alarm_url"`
			}
		} `json:"receiver"`
	}
	a.must(member, http.MethodPost, "/v1/receivers", map[string]any{"receiver": map[string]any{"name": "rc", "type": "webhook",
		"cluster_id": f.cluster, "action": "CLUSTER_CHECK"}}, &rc)
	f.receiver = rc.Receiver.ID
	_, rest, _ := strings.Cut(rc.Receiver.Channel.AlarmURL, "/v1/webhooks/")
	f.webhook, _, _ = strings.Cut(rest, "/")
	var ms struct {
		Milestone struct{ ID string } `json:"milestone"`
	}
	a.must(member, http.MethodPost, "/v1/milestones", map[string]any{"milestone": map[string]any{"name": "ms", "clusters": []string{f.cluster}}}, &ms)
	f.milestone = ms.Milestone.ID
	a.must(member, http.MethodPut, "/v1/sets/s/objects/profile/"+f.profile, map[string]any{"object": map[string]any{"name": "prof"}}, nil)
	t, _, err := a.e.CreateToken(context.Background(), engine.Caller{}, engine.TokenCreate{Name: "spare", Project: "p", Role: model.RoleReader})
	if err != nil {
		a.t.Fatal(err)
	}
	f.token = t.ID
	return f
}

// On another project's object a request is answered as on a missing one:
// 404, or 400 naming the body field for a reference in a body.
const (
	wrongNotFound = "not found"
	wrongBodyRef  = "body reference not found"
	wrongOwn      = "own project" // the request does not touch p: allowed
	wrongList     = "list"        // 200 without any of p's objects
)

type accessCase struct {
	path  func(f fixture) string
	body  any
	wrong string
}

func fixed(p string) func(fixture) string { return func(fixture) string { return p } }

// accessCases has one case per route of the route table.
var accessCases = map[string]accessCase{
	"GET /{$}":                           {path: fixed("/"), wrong: wrongOwn},
	"GET /v1/health":                     {path: fixed("/v1/health"), wrong: wrongOwn},
	"GET /v1/{$}":                        {path: fixed("/v1/"), wrong: wrongOwn},
	"GET /v1/build-info":                 {path: fixed("/v1/build-info"), wrong: wrongOwn},
	"GET /v1/services":                   {path: fixed("/v1/services")},
	"GET /v1/profile-types":              {path: fixed("/v1/profile-types"), wrong: wrongOwn},
	"GET /v1/profile-types/{type}":       {path: fixed("/v1/profile-types/grove.noop-1.0"), wrong: wrongOwn},
	"GET /v1/profile-types/{type}/hosts": {path: fixed("/v1/profile-types/grove.noop-1.0/hosts"), wrong: wrongOwn},
	"GET /v1/profile-types/{type}/ops":   {path: fixed("/v1/profile-types/grove.noop-1.0/ops"), wrong: wrongOwn},
	"GET /v1/policy-types":               {path: fixed("/v1/policy-types"), wrong: wrongOwn},
	"GET /v1/policy-types/{type}":        {path: fixed("/v1/policy-types/senlin.policy.deletion-1.1"), wrong: wrongOwn},
	"GET /v1/plugins":                    {path: fixed("/v1/plugins"), wrong: wrongOwn},
	"GET /v1/plugins/{name}":             {path: fixed("/v1/plugins/tp"), wrong: wrongOwn},

	"GET /v1/profiles":           {path: fixed("/v1/profiles"), wrong: wrongList},
	"POST /v1/profiles":          {path: fixed("/v1/profiles"), body: map[string]any{"profile": map[string]any{"name": "prof2", "spec": noopSpec}}, wrong: wrongOwn},
	"POST /v1/profiles/validate": {path: fixed("/v1/profiles/validate"), body: map[string]any{"profile": map[string]any{"spec": noopSpec}}, wrong: wrongOwn},
	"GET /v1/profiles/{id}":      {path: func(f fixture) string { return "/v1/profiles/" + f.profile }, wrong: wrongNotFound},
	"PATCH /v1/profiles/{id}": {path: func(f fixture) string { return "/v1/profiles/" + f.profile },
		body: map[string]any{"profile": map[string]any{"name": "prof-renamed"}}, wrong: wrongNotFound},
	"DELETE /v1/profiles/{id}": {path: func(f fixture) string { return "/v1/profiles/" + f.profile }, wrong: wrongNotFound},

	"GET /v1/policies":           {path: fixed("/v1/policies"), wrong: wrongList},
	"POST /v1/policies":          {path: fixed("/v1/policies"), body: map[string]any{"policy": map[string]any{"name": "pol2", "spec": delSpec}}, wrong: wrongOwn},
	"POST /v1/policies/validate": {path: fixed("/v1/policies/validate"), body: map[string]any{"policy": map[string]any{"spec": delSpec}}, wrong: wrongOwn},
	"GET /v1/policies/{id}":      {path: func(f fixture) string { return "/v1/policies/" + f.policy }, wrong: wrongNotFound},
	"PATCH /v1/policies/{id}": {path: func(f fixture) string { return "/v1/policies/" + f.policy },
		body: map[string]any{"policy": map[string]any{"name": "pol-renamed"}}, wrong: wrongNotFound},
	"DELETE /v1/policies/{id}": {path: func(f fixture) string { return "/v1/policies/" + f.policy }, wrong: wrongNotFound},

	"GET /v1/clusters": {path: fixed("/v1/clusters"), wrong: wrongList},
	"POST /v1/clusters": {path: fixed("/v1/clusters"), wrong: wrongBodyRef,
		body: func(f fixture) any {
			return map[string]any{"cluster": map[string]any{"name": "cl2", "profile_id": f.profile, "desired_capacity": 0}}
		}},
	"GET /v1/clusters/{id}": {path: func(f fixture) string { return "/v1/clusters/" + f.cluster }, wrong: wrongNotFound},
	"PATCH /v1/clusters/{id}": {path: func(f fixture) string { return "/v1/clusters/" + f.cluster },
		body: map[string]any{"cluster": map[string]any{"metadata": map[string]any{"k": "v"}}}, wrong: wrongNotFound},
	"DELETE /v1/clusters/{id}": {path: func(f fixture) string { return "/v1/clusters/" + f.cluster }, wrong: wrongNotFound},
	"POST /v1/clusters/{id}/actions": {path: func(f fixture) string { return "/v1/clusters/" + f.cluster + "/actions" },
		body: map[string]any{"check": map[string]any{}}, wrong: wrongNotFound},
	"POST /v1/clusters/{id}/ops": {path: func(f fixture) string { return "/v1/clusters/" + f.cluster + "/ops" },
		body: map[string]any{"touch": map[string]any{}}, wrong: wrongNotFound},
	"GET /v1/clusters/{id}/attrs/{path}": {path: func(f fixture) string { return "/v1/clusters/" + f.cluster + "/attrs/index" }, wrong: wrongNotFound},
	"GET /v1/clusters/{id}/policies":     {path: func(f fixture) string { return "/v1/clusters/" + f.cluster + "/policies" }, wrong: wrongNotFound},
	// The fixture's cluster has no placement policy: 400, past the access checks.
	"GET /v1/clusters/{id}/placement": {path: func(f fixture) string { return "/v1/clusters/" + f.cluster + "/placement" }, wrong: wrongNotFound},
	"GET /v1/clusters/{id}/policies/{policy}": {path: func(f fixture) string { return "/v1/clusters/" + f.cluster + "/policies/" + f.policy },
		wrong: wrongNotFound},

	"GET /v1/clusters/{id}/dependencies": {path: func(f fixture) string { return "/v1/clusters/" + f.cluster + "/dependencies" }, wrong: wrongNotFound},
	"PUT /v1/clusters/{id}/dependencies": {path: func(f fixture) string { return "/v1/clusters/" + f.cluster + "/dependencies" },
		body: map[string]any{"dependencies": map[string]any{"groups": []any{}}}, wrong: wrongNotFound},

	"GET /v1/milestones": {path: fixed("/v1/milestones"), wrong: wrongList},
	"POST /v1/milestones": {path: fixed("/v1/milestones"), wrong: wrongBodyRef,
		body: func(f fixture) any {
			return map[string]any{"milestone": map[string]any{"name": "ms2", "clusters": []string{f.cluster}}}
		}},
	"GET /v1/milestones/{id}": {path: func(f fixture) string { return "/v1/milestones/" + f.milestone }, wrong: wrongNotFound},
	"PATCH /v1/milestones/{id}": {path: func(f fixture) string { return "/v1/milestones/" + f.milestone },
		body: map[string]any{"milestone": map[string]any{"clusters": []string{}}}, wrong: wrongNotFound},
	"DELETE /v1/milestones/{id}": {path: func(f fixture) string { return "/v1/milestones/" + f.milestone }, wrong: wrongNotFound},
	"POST /v1/milestones/{id}/enter": {path: func(f fixture) string { return "/v1/milestones/" + f.milestone + "/enter" },
		body: map[string]any{}, wrong: wrongNotFound},

	"GET /v1/nodes": {path: fixed("/v1/nodes"), wrong: wrongList},
	"POST /v1/nodes": {path: fixed("/v1/nodes"), wrong: wrongBodyRef,
		body: func(f fixture) any {
			return map[string]any{"node": map[string]any{"name": "nd2", "profile_id": f.profile}}
		}},
	// The test plugin's grove.noop cannot adopt: a 400 that still shows
	// the request was let through.
	"POST /v1/nodes/adopt":         {path: fixed("/v1/nodes/adopt"), body: map[string]any{"identity": "x", "type": "grove.noop-1.0"}, wrong: wrongOwn},
	"POST /v1/nodes/adopt-preview": {path: fixed("/v1/nodes/adopt-preview"), body: map[string]any{"identity": "x", "type": "grove.noop-1.0"}, wrong: wrongOwn},
	"GET /v1/nodes/{id}":           {path: func(f fixture) string { return "/v1/nodes/" + f.node }, wrong: wrongNotFound},
	"PATCH /v1/nodes/{id}": {path: func(f fixture) string { return "/v1/nodes/" + f.node },
		body: map[string]any{"node": map[string]any{"name": "nd-renamed"}}, wrong: wrongNotFound},
	"DELETE /v1/nodes/{id}": {path: func(f fixture) string { return "/v1/nodes/" + f.node }, wrong: wrongNotFound},
	"POST /v1/nodes/{id}/actions": {path: func(f fixture) string { return "/v1/nodes/" + f.node + "/actions" },
		body: map[string]any{"check": map[string]any{}}, wrong: wrongNotFound},

	"POST /v1/nodes/{id}/ops": {path: func(f fixture) string { return "/v1/nodes/" + f.node + "/ops" },
		body: map[string]any{"touch": map[string]any{}}, wrong: wrongNotFound},

	"GET /v1/actions":      {path: fixed("/v1/actions"), wrong: wrongList},
	"GET /v1/actions/{id}": {path: func(f fixture) string { return "/v1/actions/" + f.action }, wrong: wrongNotFound},
	"PATCH /v1/actions/{id}": {path: func(f fixture) string { return "/v1/actions/" + f.action },
		body: map[string]any{"action": map[string]any{"status": "CANCELLED"}}, wrong: wrongNotFound},

	"GET /v1/sets/{name}": {path: fixed("/v1/sets/s"), wrong: wrongList},
	"PUT /v1/sets/{name}/objects/{kind}/{id}": {path: func(f fixture) string { return "/v1/sets/s/objects/profile/" + f.profile },
		body: map[string]any{"object": map[string]any{"name": "prof"}}, wrong: wrongNotFound},
	"DELETE /v1/sets/{name}/objects/{kind}/{id}": {path: func(f fixture) string { return "/v1/sets/s/objects/profile/" + f.profile }, wrong: wrongNotFound},
	"GET /v1/owners/{kind}/{id}":                 {path: func(f fixture) string { return "/v1/owners/profile/" + f.profile }, wrong: wrongNotFound},

	"GET /v1/receivers": {path: fixed("/v1/receivers"), wrong: wrongList},
	"POST /v1/receivers": {path: fixed("/v1/receivers"), wrong: wrongBodyRef,
		body: func(f fixture) any {
			return map[string]any{"receiver": map[string]any{"name": "rc2", "type": "webhook", "cluster_id": f.cluster, "action": "CLUSTER_SCALE_OUT"}}
		}},
	"GET /v1/receivers/{id}": {path: func(f fixture) string { return "/v1/receivers/" + f.receiver }, wrong: wrongNotFound},
	"PATCH /v1/receivers/{id}": {path: func(f fixture) string { return "/v1/receivers/" + f.receiver },
		body: map[string]any{"receiver": map[string]any{"params": map[string]any{"k": "v"}}}, wrong: wrongNotFound},
	"DELETE /v1/receivers/{id}":      {path: func(f fixture) string { return "/v1/receivers/" + f.receiver }, wrong: wrongNotFound},
	"POST /v1/receivers/{id}/notify": {path: func(f fixture) string { return "/v1/receivers/" + f.receiver + "/notify" }, wrong: wrongNotFound},
	// The webhook needs no token: its secret is in its path.
	"POST /v1/webhooks/{secret}/trigger": {path: func(f fixture) string { return "/v1/webhooks/" + f.webhook + "/trigger?V=2" }, wrong: wrongOwn},

	"GET /v1/hosts":          {path: fixed("/v1/hosts"), wrong: wrongOwn},
	"GET /v1/hosts/{name}":   {path: fixed("/v1/hosts/test-host"), wrong: wrongOwn},
	"PATCH /v1/hosts/{name}": {path: fixed("/v1/hosts/test-host"), body: map[string]any{"host": map[string]any{"labels": map[string]any{"k": "v"}}}},

	"GET /v1/events":      {path: fixed("/v1/events"), wrong: wrongList},
	"GET /v1/events/{id}": {path: func(f fixture) string { return "/v1/events/" + f.event }, wrong: wrongNotFound},

	"POST /v1/tokens":                             {path: fixed("/v1/tokens"), body: map[string]any{"token": map[string]any{"name": "ci", "project": "p", "role": "reader", "ttl": "1h"}}},
	"GET /v1/tokens":                              {path: fixed("/v1/tokens")},
	"GET /v1/tokens/{id}":                         {path: func(f fixture) string { return "/v1/tokens/" + f.token }},
	"DELETE /v1/tokens/{id}":                      {path: func(f fixture) string { return "/v1/tokens/" + f.token }},
	"GET /v1/projects/{project}/grants":           {path: fixed("/v1/projects/p/grants")},
	"PUT /v1/projects/{project}/grants/{type}":    {path: fixed("/v1/projects/p/grants/local.process")},
	"DELETE /v1/projects/{project}/grants/{type}": {path: fixed("/v1/projects/p/grants/local.process")},

	"GET /metrics":             {path: fixed("/metrics")},
	"GET /v1/agent/monitor":    {path: fixed("/v1/agent/monitor")},
	"GET /debug/pprof/":        {path: fixed("/debug/pprof/")},
	"GET /debug/pprof/cmdline": {path: fixed("/debug/pprof/cmdline")},
	"GET /debug/pprof/profile": {path: fixed("/debug/pprof/profile?seconds=1")},
	"GET /debug/pprof/symbol":  {path: fixed("/debug/pprof/symbol")},
	"POST /debug/pprof/symbol": {path: fixed("/debug/pprof/symbol")},
	"GET /debug/pprof/trace":   {path: fixed("/debug/pprof/trace?seconds=0.1")},
}

var publicRoutes = []string{"GET /{$}", "GET /v1/health", "POST /v1/webhooks/{secret}/trigger"}

func isAdminRoute(pattern string) bool {
	return strings.Contains(pattern, " /v1/tokens") || strings.Contains(pattern, " /v1/projects/") ||
		strings.Contains(pattern, " /v1/agent/") || strings.Contains(pattern, " /debug/pprof/") ||
		strings.HasSuffix(pattern, " /v1/services") || pattern == "PATCH /v1/hosts/{name}" ||
		pattern == "GET /metrics" // for tokens of p; a reader of project default may too (TestMetricsAccess)
}

// TestRouteAccess calls every route of the route table without a token,
// as a reader, a member and an admin of project p, and as a member of
// project q: only / and /v1/health answer without a token; readers read
// and may not write; a member of q finds none of p's objects; tokens and
// grants are an admin's. A route added to routes.go without a case here
// fails the test.
func TestRouteAccess(t *testing.T) {
	a := newAuthAPI(t, server.Options{Gatherer: prometheus.NewRegistry(), Logs: hclog.NewInterceptLogger(nil)})
	tokens := map[string]string{
		"reader": a.token("p", model.RoleReader), "member": a.token("p", model.RoleMember),
		"admin": a.token("p", model.RoleAdmin), "wrong project": a.token("q", model.RoleMember),
	}
	f := a.fixture(tokens["member"])

	routes := a.srv.Routes()
	for _, r := range routes {
		if _, ok := accessCases[r]; !ok {
			t.Errorf("the route %q has no case in accessCases: add one", r)
		}
	}
	for p := range accessCases {
		if !slices.Contains(routes, p) {
			t.Errorf("accessCases has %q, which is not a route", p)
		}
	}
	// Deletions last, so that every other route finds the fixture; the
	// receiver's first, since deleting its cluster deletes it.
	rank := func(p string) int {
		switch {
		case p == "DELETE /v1/receivers/{id}":
			return 1
		case strings.HasPrefix(p, "DELETE"):
			return 2
		}
		return 0
	}
	slices.SortStableFunc(routes, func(x, y string) int { return rank(x) - rank(y) })
	allowed := func(t *testing.T, who string, ans answer) {
		t.Helper()
		if ans.status == 401 || ans.status == 403 || ans.status == 404 || ans.status == 405 || ans.status >= 500 {
			t.Errorf("%s: %d %s; want the request let through", who, ans.status, ans.body)
		}
	}
	want := func(t *testing.T, who string, ans answer, status int, typ string) {
		t.Helper()
		if ans.status != status || !strings.Contains(ans.body, `"type":"`+typ+`"`) {
			t.Errorf("%s: %d %s; want %d %s", who, ans.status, ans.body, status, typ)
		}
	}
	for _, pattern := range routes {
		tc, ok := accessCases[pattern]
		if !ok {
			continue
		}
		t.Run(pattern, func(t *testing.T) {
			method, _, _ := strings.Cut(pattern, " ")
			path := tc.path(f)
			body := tc.body
			if fn, ok := body.(func(fixture) any); ok {
				body = fn(f)
			}
			call := func(who string) answer { return a.call(tokens[who], method, path, body) }
			if slices.Contains(publicRoutes, pattern) {
				// A webhook's check action may find the cluster busy with
				// another case's action: 409 is an answer too.
				if ans := call("none"); ans.status >= 400 && ans.status != http.StatusConflict {
					t.Errorf("no token: %d %s; want the public route answered", ans.status, ans.body)
				}
				return
			}
			ans := call("none")
			want(t, "no token", ans, http.StatusUnauthorized, "Unauthorized")
			if ans.header.Get("WWW-Authenticate") == "" {
				t.Error("a 401 without WWW-Authenticate")
			}
			if isAdminRoute(pattern) {
				for _, who := range []string{"reader", "member", "wrong project"} {
					want(t, who, call(who), http.StatusForbidden, "Forbidden")
				}
				allowed(t, "admin", call("admin"))
				return
			}
			if method == http.MethodGet {
				allowed(t, "reader", call("reader"))
			} else {
				want(t, "reader", call("reader"), http.StatusForbidden, "Forbidden")
			}
			ans = call("wrong project")
			switch tc.wrong {
			case wrongNotFound:
				want(t, "wrong project", ans, http.StatusNotFound, "ResourceNotFound")
			case wrongBodyRef:
				if ans.status != http.StatusBadRequest || !strings.Contains(ans.body, "could not be found") {
					t.Errorf("wrong project: %d %s; want 400, the referenced object not found", ans.status, ans.body)
				}
			case wrongList:
				if ans.status != http.StatusOK {
					t.Errorf("wrong project: %d %s; want 200", ans.status, ans.body)
				}
				for _, id := range f.ids() {
					if strings.Contains(ans.body, id) {
						t.Errorf("wrong project: the list shows %s of project p: %s", id, ans.body)
					}
				}
			case wrongOwn:
				allowed(t, "wrong project", ans)
			default:
				t.Fatalf("no wrong-project expectation for %s", pattern)
			}
			if method == http.MethodGet {
				allowed(t, "admin", call("admin"))
			}
			allowed(t, "member", call("member"))
		})
	}
}
