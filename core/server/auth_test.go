package server_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/grovehq/grove/core/engine"
	"github.com/grovehq/grove/core/model"
	"github.com/grovehq/grove/core/server"
)

// TestAuditRecordsTheToken: what a token writes records the token's id and
// project: the action as its user and project, its events as their user.
func TestAuditRecordsTheToken(t *testing.T) {
	a := newAuthAPI(t, server.Options{})
	tok, secret, err := a.e.CreateToken(context.Background(), engine.Caller{}, engine.TokenCreate{Name: "m", Project: "p", Role: model.RoleMember})
	if err != nil {
		t.Fatal(err)
	}
	f := a.fixture(secret)
	var act struct {
		Action struct {
			User    string `json:"user"`
			Project string `json:"project"`
		} `json:"action"`
	}
	a.must(secret, http.MethodGet, "/v1/actions/"+f.action, nil, &act)
	if act.Action.User != tok.ID || act.Action.Project != "p" {
		t.Errorf("the cluster's creation records user %q project %q; want the token %s, project p", act.Action.User, act.Action.Project, tok.ID)
	}
	var evs struct {
		Events []struct {
			User    string `json:"user"`
			Project string `json:"project"`
			Action  string `json:"action"`
		} `json:"events"`
	}
	a.must(secret, http.MethodGet, "/v1/events", nil, &evs)
	if len(evs.Events) == 0 {
		t.Fatal("no events")
	}
	for _, e := range evs.Events {
		if e.User != tok.ID || e.Project != "p" {
			t.Errorf("event of %s records user %q project %q; want the token %s, project p", e.Action, e.User, e.Project, tok.ID)
		}
	}
	var cl struct {
		Cluster struct {
			User string `json:"user"`
		} `json:"cluster"`
	}
	a.must(secret, http.MethodGet, "/v1/clusters/"+f.cluster, nil, &cl)
	if cl.Cluster.User != tok.ID {
		t.Errorf("the cluster records user %q; want the token %s", cl.Cluster.User, tok.ID)
	}
}

// TestGlobalProjectIsAdmins: only an admin lists across projects.
func TestGlobalProjectIsAdmins(t *testing.T) {
	a := newAuthAPI(t, server.Options{})
	f := a.fixture(a.token("p", model.RoleMember))
	for _, role := range []string{model.RoleReader, model.RoleMember} {
		if ans := a.call(a.token("p", role), http.MethodGet, "/v1/clusters?global_project=true", nil); ans.status != http.StatusForbidden {
			t.Errorf("%s with global_project=true: %d %s; want 403", role, ans.status, ans.body)
		}
	}
	admin := a.token("default", model.RoleAdmin)
	for _, path := range []string{"/v1/clusters", "/v1/profiles", "/v1/nodes", "/v1/actions", "/v1/events", "/v1/policies"} {
		if ans := a.call(admin, http.MethodGet, path, nil); strings.Contains(ans.body, f.cluster) || strings.Contains(ans.body, f.profile) {
			t.Errorf("an admin of default lists p's objects without global_project: %s", ans.body)
		}
	}
	if ans := a.call(admin, http.MethodGet, "/v1/clusters?global_project=true", nil); ans.status != http.StatusOK || !strings.Contains(ans.body, f.cluster) {
		t.Errorf("an admin with global_project=true: %d %s; want p's cluster listed", ans.status, ans.body)
	}
	if ans := a.call(admin, http.MethodGet, "/v1/events/"+f.event, nil); ans.status != http.StatusNotFound {
		t.Errorf("an admin of default shows an event of p: %d; want 404 as for other objects", ans.status)
	}
}

// TestTokenEndpoints: an admin creates a token (the secret shown once),
// lists, shows and revokes it; the new token works until revoked; grants
// are listed, given and taken back.
func TestTokenEndpoints(t *testing.T) {
	a := newAuthAPI(t, server.Options{})
	admin := a.token("default", model.RoleAdmin)
	var created struct {
		Token map[string]any `json:"token"`
	}
	ans := a.must(admin, http.MethodPost, "/v1/tokens", map[string]any{"token": map[string]any{"name": "ci", "project": "p", "role": "member", "ttl": "24h"}}, &created)
	if ans.status != http.StatusCreated {
		t.Errorf("create: %d; want 201", ans.status)
	}
	secret, _ := created.Token["secret"].(string)
	id, _ := created.Token["id"].(string)
	if !engine.WellFormedToken(secret) || created.Token["project"] != "p" || created.Token["role"] != "member" || created.Token["expires_at"] == nil || created.Token["created_by"] == "" {
		t.Fatalf("created token: %v", created.Token)
	}
	for _, path := range []string{"/v1/tokens", "/v1/tokens/" + id} {
		ans := a.must(admin, http.MethodGet, path, nil, nil)
		if strings.Contains(ans.body, secret) || strings.Contains(ans.body, "secret") || !strings.Contains(ans.body, id) {
			t.Errorf("GET %s shows a secret or not the token: %s", path, ans.body)
		}
	}
	if ans := a.call(secret, http.MethodGet, "/v1/clusters", nil); ans.status != http.StatusOK {
		t.Errorf("the new token: %d %s", ans.status, ans.body)
	}
	if ans := a.call(admin, http.MethodPost, "/v1/tokens", map[string]any{"token": map[string]any{"name": "x", "project": "p", "role": "root"}}); ans.status != http.StatusBadRequest || !strings.Contains(ans.body, "token.role") {
		t.Errorf("a bad role: %d %s; want 400 naming token.role", ans.status, ans.body)
	}
	a.must(admin, http.MethodDelete, "/v1/tokens/"+id, nil, nil)
	if ans := a.call(secret, http.MethodGet, "/v1/clusters", nil); ans.status != http.StatusUnauthorized {
		t.Errorf("a revoked token: %d; want 401", ans.status)
	}
	if ans := a.call(admin, http.MethodGet, "/v1/tokens/"+id, nil); ans.status != http.StatusNotFound {
		t.Errorf("a revoked token is still shown: %d", ans.status)
	}

	a.must(admin, http.MethodPut, "/v1/projects/p/grants/local.process", nil, nil)
	var g struct {
		Grants []string `json:"grants"`
	}
	a.must(admin, http.MethodGet, "/v1/projects/p/grants", nil, &g)
	if len(g.Grants) != 1 || g.Grants[0] != "local.process" {
		t.Errorf("grants: %v", g.Grants)
	}
	if ans := a.call(admin, http.MethodPut, "/v1/projects/p/grants/grove.noop", nil); ans.status != http.StatusBadRequest {
		t.Errorf("granting a type that is not host access: %d", ans.status)
	}
	a.must(admin, http.MethodDelete, "/v1/projects/p/grants/local.process", nil, nil)
	a.must(admin, http.MethodGet, "/v1/projects/p/grants", nil, &g)
	if len(g.Grants) != 0 {
		t.Errorf("grants after the revocation: %v", g.Grants)
	}
}

// TestHeadersAndAdminToken: a token is read from X-Auth-Token or
// Authorization: Bearer; the legacy admin_token is an admin of default;
// a health check needs no token.
func TestHeadersAndAdminToken(t *testing.T) {
	a := newAuthAPI(t, server.Options{AdminToken: "legacy-secret-value"})
	reader := a.token("p", model.RoleReader)
	get := func(h map[string]string) int {
		req, _ := http.NewRequest(http.MethodGet, a.url+"/v1/tokens", nil)
		for k, v := range h {
			req.Header.Set(k, v)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	for _, tc := range []struct {
		h    map[string]string
		want int
	}{
		{map[string]string{"X-Auth-Token": "legacy-secret-value"}, 200},
		{map[string]string{"Authorization": "Bearer legacy-secret-value"}, 200},
		{map[string]string{"Authorization": "bearer " + reader}, 403},
		{map[string]string{"X-Auth-Token": reader}, 403},
		{map[string]string{"Authorization": "Basic " + reader}, 401},
		{map[string]string{"X-Auth-Token": "legacy-secret-valu"}, 401},
		{map[string]string{"X-Auth-Token": reader, "Authorization": "Bearer legacy-secret-value"}, 401},
	} {
		if got := get(tc.h); got != tc.want {
			t.Errorf("%v: %d, want %d", tc.h, got, tc.want)
		}
	}
	var h struct {
		Status string `json:"status"`
	}
	a.must("", http.MethodGet, "/v1/health", nil, &h)
	if h.Status != "ok" {
		t.Errorf("health: %+v", h)
	}
}

// TestDevModeTrustsLoopbackOnly: in dev mode a loopback caller without a
// token is an admin of default; the same request from another address is
// 401 whatever X-Forwarded-For says; a token sent in dev mode is checked.
func TestDevModeTrustsLoopbackOnly(t *testing.T) {
	a := newAuthAPI(t, server.Options{Dev: true})
	a.must("", http.MethodGet, "/v1/tokens", nil, nil)
	if ans := a.call("grove_not-a-real-token", http.MethodGet, "/v1/clusters", nil); ans.status != http.StatusUnauthorized {
		t.Errorf("a bad token in dev mode: %d; want 401", ans.status)
	}
	for _, remote := range []string{"192.0.2.10:5000", "[2001:db8::1]:5000", "[::ffff:192.0.2.10]:5000"} {
		req := httptest.NewRequest(http.MethodGet, "/v1/clusters", nil)
		req.RemoteAddr = remote
		req.Header.Set("X-Forwarded-For", "127.0.0.1")
		w := httptest.NewRecorder()
		a.srv.ServeHTTP(w, req)
		if w.Code != http.StatusUnauthorized {
			t.Errorf("dev mode, no token from %s: %d; want 401", remote, w.Code)
		}
	}
	for _, remote := range []string{"127.0.0.1:5000", "[::1]:5000", "[::ffff:127.0.0.1]:5000"} {
		req := httptest.NewRequest(http.MethodPost, "/v1/profiles", strings.NewReader(`{"profile": {"name": "x", "spec": {"type": "grove.noop", "version": "1.0"}}}`))
		req.RemoteAddr = remote
		w := httptest.NewRecorder()
		a.srv.ServeHTTP(w, req)
		var out struct {
			Profile struct {
				User    string `json:"user"`
				Project string `json:"project"`
			} `json:"profile"`
		}
		_ = json.Unmarshal(w.Body.Bytes(), &out)
		if w.Code != http.StatusCreated || out.Profile.Project != model.DefaultProject || out.Profile.User != "dev" {
			t.Errorf("dev mode, no token from %s: %d %s; want 201 in default by dev", remote, w.Code, w.Body)
		}
	}
}

// TestBadTokensAreRateLimited: a burst of bad tokens from one address is
// answered 429 with Retry-After, without the token being checked (a good
// token from that address waits too); another address is not affected;
// the addresses remembered are bounded.
func TestBadTokensAreRateLimited(t *testing.T) {
	a := newAuthAPI(t, server.Options{FailedAuthBurst: 5, FailedAuthEvery: time.Hour, FailedAuthAddrs: 3})
	good := a.token("p", model.RoleReader)
	send := func(remote, token string) *httptest.ResponseRecorder {
		req := httptest.NewRequest(http.MethodGet, "/v1/clusters", nil)
		req.RemoteAddr = remote
		req.Header.Set("X-Auth-Token", token)
		w := httptest.NewRecorder()
		a.srv.ServeHTTP(w, req)
		return w
	}
	bad := "grove_" + strings.Repeat("A", 43)
	for i := range 5 {
		if w := send("192.0.2.1:1000", bad); w.Code != http.StatusUnauthorized {
			t.Fatalf("bad token %d: %d; want 401 within the burst", i, w.Code)
		}
	}
	w := send("192.0.2.1:1001", bad)
	if w.Code != http.StatusTooManyRequests {
		t.Fatalf("bad token past the burst: %d; want 429", w.Code)
	}
	if ra, err := strconv.Atoi(w.Header().Get("Retry-After")); err != nil || ra < 1 {
		t.Errorf("Retry-After %q", w.Header().Get("Retry-After"))
	}
	if w := send("192.0.2.1:1002", good); w.Code != http.StatusTooManyRequests {
		t.Errorf("a good token from a blocked address: %d; want 429 (its token is not checked)", w.Code)
	}
	if w := send("192.0.2.2:1000", good); w.Code != http.StatusOK {
		t.Errorf("a good token from another address: %d; want 200", w.Code)
	}
	for i := range 50 {
		send("198.51.100."+strconv.Itoa(i)+":1", bad)
	}
	if n := a.srv.FailureAddrs(); n > 3 {
		t.Errorf("%d addresses remembered; the bound is 3", n)
	}
}

// FuzzAuthHeader: whatever the X-Auth-Token and Authorization headers hold,
// a request through the real server never panics and authenticates only
// when the headers carry the one real token (X-Auth-Token alone, Bearer
// alone, or both agreeing); the parsing returns a secret taken from a
// header or none.
func FuzzAuthHeader(f *testing.F) {
	a := newAuthAPI(f, server.Options{FailedAuthBurst: 1 << 30})
	real := a.token("p", model.RoleReader)
	f.Add("", "")
	f.Add(real, "")
	f.Add("", "Bearer "+real)
	f.Add(" "+real+"\t", "bEaReR   "+real)
	f.Add(real, "Bearer "+real+"x")
	f.Add("grove_"+strings.Repeat("A", 43), "")
	f.Add("x", "Bearer  y ")
	f.Add("\x00", "Bearer\t")
	f.Add(real[:len(real)-1], "Basic "+real)
	f.Fuzz(func(t *testing.T, x, authz string) {
		h := http.Header{}
		if x != "" {
			h["X-Auth-Token"] = []string{x}
		}
		if authz != "" {
			h["Authorization"] = []string{authz}
		}
		secret, present := server.TokenFrom(h)
		if present != (x != "" || authz != "") {
			t.Fatalf("headers %q %q: present %v", x, authz, present)
		}
		if secret != "" && secret != strings.TrimSpace(x) && !strings.HasSuffix(strings.TrimSpace(authz), secret) {
			t.Fatalf("secret %q comes from neither header (%q, %q)", secret, x, authz)
		}
		req := httptest.NewRequest(http.MethodGet, "/v1/clusters", nil)
		req.RemoteAddr = "127.0.0.1:4000"
		req.Header = h
		w := httptest.NewRecorder()
		a.srv.ServeHTTP(w, req)
		bearer := strings.TrimSpace(authz)
		carries := strings.TrimSpace(x) == real || (len(bearer) > 7 && strings.EqualFold(bearer[:7], "bearer ") && strings.TrimSpace(bearer[7:]) == real)
		if w.Code == http.StatusOK && !carries {
			t.Fatalf("headers %q %q authenticated without the token", x, authz)
		}
		if w.Code != http.StatusOK && w.Code != http.StatusUnauthorized {
			t.Fatalf("headers %q %q: %d %s", x, authz, w.Code, w.Body)
		}
	})
}
