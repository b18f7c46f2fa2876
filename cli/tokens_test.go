package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"encoding/pem"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
)

// contractAgent answers the token and grant endpoints as issue #20's shared
// contract describes them, over HTTPS, for one admin secret. It stands in
// for the agent's own implementation, built at the same time; the same
// commands against a real agent belong in e2e once both are merged.
type contractAgent struct {
	mu      sync.Mutex
	secret  string
	tokens  map[string]map[string]any
	grants  map[string][]string
	created []map[string]any // the bodies of POST /v1/tokens
}

func (a *contractAgent) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	a.mu.Lock()
	defer a.mu.Unlock()
	fault := func(code int, typ, msg string) {
		w.Header().Set("Content-Type", "application/json")
		if code == http.StatusUnauthorized {
			w.Header().Set("WWW-Authenticate", `Bearer realm="grove"`)
		}
		w.WriteHeader(code)
		json.NewEncoder(w).Encode(map[string]any{"code": code, "error": map[string]any{"code": code, "type": typ, "message": msg}})
	}
	answer := func(code int, v any) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(code)
		if v != nil {
			json.NewEncoder(w).Encode(v)
		}
	}
	if r.Header.Get("X-Auth-Token") != a.secret {
		fault(http.StatusUnauthorized, "Unauthorized", "The request has no valid token.")
		return
	}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /v1/tokens", func(w http.ResponseWriter, r *http.Request) {
		var body struct {
			Token map[string]any `json:"token"`
		}
		dec := json.NewDecoder(r.Body)
		dec.DisallowUnknownFields()
		if err := dec.Decode(&body); err != nil {
			fault(http.StatusBadRequest, "BadRequest", err.Error())
			return
		}
		a.created = append(a.created, body.Token)
		tok := map[string]any{"id": "9f1c2a4e-0000-4000-8000-000000000001", "name": body.Token["name"], "project": body.Token["project"],
			"role": body.Token["role"], "created_at": "2025-01-01T00:00:00Z", "expires_at": nil, "created_by": "bootstrap"}
		if body.Token["ttl"] != nil {
			tok["expires_at"] = "2025-01-02T00:00:00Z"
		}
		a.tokens[tok["id"].(string)] = tok
		withSecret := map[string]any{"secret": "grove_c2VjcmV0LXNob3duLW9uY2U"}
		for k, v := range tok {
			withSecret[k] = v
		}
		answer(http.StatusCreated, map[string]any{"token": withSecret})
	})
	mux.HandleFunc("GET /v1/tokens", func(w http.ResponseWriter, r *http.Request) {
		list := []map[string]any{}
		for _, t := range a.tokens {
			list = append(list, t)
		}
		answer(http.StatusOK, map[string]any{"tokens": list})
	})
	mux.HandleFunc("GET /v1/tokens/{id}", func(w http.ResponseWriter, r *http.Request) {
		t, ok := a.tokens[r.PathValue("id")]
		if !ok {
			fault(http.StatusNotFound, "ResourceNotFound", "The token '"+r.PathValue("id")+"' could not be found.")
			return
		}
		answer(http.StatusOK, map[string]any{"token": t})
	})
	mux.HandleFunc("DELETE /v1/tokens/{id}", func(w http.ResponseWriter, r *http.Request) {
		if _, ok := a.tokens[r.PathValue("id")]; !ok {
			fault(http.StatusNotFound, "ResourceNotFound", "The token '"+r.PathValue("id")+"' could not be found.")
			return
		}
		delete(a.tokens, r.PathValue("id"))
		answer(http.StatusNoContent, nil)
	})
	mux.HandleFunc("GET /v1/projects/{project}/grants", func(w http.ResponseWriter, r *http.Request) {
		g := a.grants[r.PathValue("project")]
		if g == nil {
			g = []string{}
		}
		answer(http.StatusOK, map[string]any{"grants": g})
	})
	mux.HandleFunc("PUT /v1/projects/{project}/grants/{type}", func(w http.ResponseWriter, r *http.Request) {
		p, typ := r.PathValue("project"), r.PathValue("type")
		if !slices.Contains(a.grants[p], typ) {
			a.grants[p] = append(a.grants[p], typ)
		}
		answer(http.StatusNoContent, nil)
	})
	mux.HandleFunc("DELETE /v1/projects/{project}/grants/{type}", func(w http.ResponseWriter, r *http.Request) {
		p, typ := r.PathValue("project"), r.PathValue("type")
		a.grants[p] = slices.DeleteFunc(a.grants[p], func(s string) bool { return s == typ })
		answer(http.StatusNoContent, nil)
	})
	mux.ServeHTTP(w, r)
}

// startContractAgent serves a contractAgent over HTTPS and returns it, its
// address and a PEM file of its certificate (the CA to trust).
func startContractAgent(t *testing.T) (*contractAgent, string, string) {
	t.Helper()
	a := &contractAgent{secret: "grove_YWRtaW4tc2VjcmV0", tokens: map[string]map[string]any{}, grants: map[string][]string{}}
	srv := httptest.NewUnstartedServer(a)
	// Refused handshakes are what some tests expect; keep them off stderr.
	srv.Config.ErrorLog = log.New(io.Discard, "", 0)
	srv.StartTLS()
	t.Cleanup(srv.Close)
	ca := filepath.Join(t.TempDir(), "ca.pem")
	if err := os.WriteFile(ca, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw}), 0o600); err != nil {
		t.Fatal(err)
	}
	return a, srv.URL, ca
}

// grove runs one command line in process and returns stdout, stderr and
// the exit code.
func grove(t *testing.T, args ...string) (string, string, int) {
	t.Helper()
	var out, errb bytes.Buffer
	code := Run(context.Background(), &Env{Stdin: strings.NewReader(""), Stdout: &out, Stderr: &errb}, args)
	return out.String(), errb.String(), code
}

// TestTokenAndProjectCommands drives grove token and grove project against
// an HTTPS server that implements the contract's shapes, with the CA given
// by -ca-cert and the token by GROVE_TOKEN.
func TestTokenAndProjectCommands(t *testing.T) {
	agent, addr, ca := startContractAgent(t)
	t.Setenv("GROVE_ADDR", addr)
	t.Setenv("GROVE_TOKEN", agent.secret)
	t.Setenv("GROVE_CACERT", "")

	out, errOut, code := grove(t, "token", "create", "-ca-cert", ca, "-project", "web", "-role", "member", "-ttl", "24h", "-name", "ci")
	if code != 0 {
		t.Fatalf("token create: %d %s %s", code, out, errOut)
	}
	for _, want := range []string{"Token 9f1c2a4e-0000-4000-8000-000000000001 created: project web, role member, expires 2025-01-02T00:00:00Z.",
		"shown this once and cannot be read again", "\n  grove_c2VjcmV0LXNob3duLW9uY2U\n"} {
		if !strings.Contains(out, want) {
			t.Errorf("token create output does not say %q:\n%s", want, out)
		}
	}
	if len(agent.created) != 1 || agent.created[0]["project"] != "web" || agent.created[0]["role"] != "member" || agent.created[0]["ttl"] != "24h" || agent.created[0]["name"] != "ci" {
		t.Errorf("POST /v1/tokens body: %v", agent.created)
	}
	out, _, code = grove(t, "token", "create", "-ca-cert", ca, "-project", "web", "-role", "reader", "-json")
	var created map[string]any
	if code != 0 || json.Unmarshal([]byte(out), &created) != nil || created["secret"] != "grove_c2VjcmV0LXNob3duLW9uY2U" || created["role"] != "reader" {
		t.Fatalf("token create -json: %d %s", code, out)
	}
	if _, ok := agent.created[1]["ttl"]; ok {
		t.Errorf("a token without -ttl sent a ttl: %v", agent.created[1])
	}
	if agent.created[1]["name"] != "web-reader" {
		t.Errorf("a token without -name is named PROJECT-ROLE (the agent requires a name): %v", agent.created[1])
	}

	out, _, code = grove(t, "token", "list", "-ca-cert", ca)
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if code != 0 || len(lines) != 2 || !strings.HasPrefix(lines[0], "ID") || !strings.Contains(lines[0], "CREATED BY") ||
		!strings.Contains(lines[1], "9f1c2a4e-0000-4000-8000-000000000001") || !strings.Contains(lines[1], "reader") || strings.Contains(out, "grove_") {
		t.Fatalf("token list table (no secret):\n%s", out)
	}
	out, _, code = grove(t, "token", "list", "-ca-cert", ca, "-json")
	var list []map[string]any
	if code != 0 || json.Unmarshal([]byte(out), &list) != nil || len(list) != 1 || list[0]["project"] != "web" {
		t.Fatalf("token list -json: %s", out)
	}
	out, _, code = grove(t, "token", "show", "-ca-cert", ca, "9f1c2a4e-0000-4000-8000-000000000001")
	if code != 0 || !strings.Contains(out, "project: web") || !strings.Contains(out, "created_by: bootstrap") {
		t.Fatalf("token show:\n%s", out)
	}
	out, _, code = grove(t, "token", "revoke", "-ca-cert", ca, "9f1c2a4e-0000-4000-8000-000000000001")
	if code != 0 || !strings.Contains(out, "Token 9f1c2a4e-0000-4000-8000-000000000001 revoked") || len(agent.tokens) != 0 {
		t.Fatalf("token revoke: %d %s", code, out)
	}
	_, errOut, code = grove(t, "token", "show", "-ca-cert", ca, "9f1c2a4e-0000-4000-8000-000000000001")
	if code != 1 || !strings.Contains(errOut, "could not be found") {
		t.Fatalf("token show of a revoked token: %d %s", code, errOut)
	}

	out, _, code = grove(t, "project", "allow", "-ca-cert", ca, "web", "local.process")
	if code != 0 || out != "Project web may now use local.process profiles.\n" || !slices.Equal(agent.grants["web"], []string{"local.process"}) {
		t.Fatalf("project allow: %d %q %v", code, out, agent.grants)
	}
	out, _, code = grove(t, "project", "grants", "-ca-cert", ca, "web")
	if code != 0 || out != "TYPE\nlocal.process\n" {
		t.Fatalf("project grants table: %q", out)
	}
	out, _, code = grove(t, "project", "grants", "-ca-cert", ca, "-json", "web")
	if code != 0 || strings.Join(strings.Fields(out), "") != `["local.process"]` {
		t.Fatalf("project grants -json: %q", out)
	}
	out, _, code = grove(t, "project", "deny", "-ca-cert", ca, "web", "local.process")
	if code != 0 || out != "Project web may no longer use local.process profiles.\n" || len(agent.grants["web"]) != 0 {
		t.Fatalf("project deny: %d %q %v", code, out, agent.grants)
	}
	out, _, code = grove(t, "project", "grants", "-ca-cert", ca, "-json", "web")
	if code != 0 || strings.TrimSpace(out) != "[]" {
		t.Fatalf("project grants -json with none: %q", out)
	}
}

// TestClientSettingsAndErrors: the flags and the environment reach the
// agent (-token over GROVE_TOKEN, GROVE_CACERT, -tls-skip-verify), and each
// mistake is a sentence naming what to change.
func TestClientSettingsAndErrors(t *testing.T) {
	agent, addr, ca := startContractAgent(t)
	t.Setenv("GROVE_ADDR", addr)
	t.Setenv("GROVE_TOKEN", "")
	t.Setenv("GROVE_CACERT", "")
	cases := []struct {
		name string
		env  map[string]string
		args []string
		code int
		want string // on stdout for code 0, else on stderr
	}{
		{"-token and -ca-cert", nil, []string{"-token", agent.secret, "-ca-cert", ca}, 0, "TYPE"},
		{"GROVE_TOKEN and GROVE_CACERT", map[string]string{"GROVE_TOKEN": agent.secret, "GROVE_CACERT": ca}, nil, 0, "TYPE"},
		{"-token wins over GROVE_TOKEN", map[string]string{"GROVE_TOKEN": "grove_wrong", "GROVE_CACERT": ca}, []string{"-token", agent.secret}, 0, "TYPE"},
		{"-tls-skip-verify", nil, []string{"-token", agent.secret, "-tls-skip-verify"}, 0, "TYPE"},
		{"an unknown CA", nil, []string{"-token", agent.secret}, 1,
			"signed by an authority this client does not trust: pass the CA that signed it with -ca-cert FILE (or GROVE_CACERT"},
		{"a CA file that is missing", nil, []string{"-token", agent.secret, "-ca-cert", filepath.Join(t.TempDir(), "none.pem")}, 1,
			"read the CA certificate (-ca-cert or GROVE_CACERT)"},
		{"no token", nil, []string{"-ca-cert", ca}, 1, "The agent needs a valid token: pass one with -token or GROVE_TOKEN"},
		{"a wrong token", nil, []string{"-ca-cert", ca, "-token", "grove_wrong"}, 1, "The agent needs a valid token"},
		{"plain HTTP to HTTPS", nil, []string{"-ca-cert", ca, "-token", agent.secret, "-address", strings.Replace(addr, "https://", "http://", 1)}, 1,
			"serves HTTPS: use an https:// address"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			for k, v := range tc.env {
				t.Setenv(k, v)
			}
			out, errOut, code := grove(t, append([]string{"project", "grants", "web"}, tc.args...)...)
			got := out
			if tc.code != 0 {
				got = errOut
			}
			if code != tc.code || !strings.Contains(got, tc.want) {
				t.Fatalf("exit %d, stdout %q, stderr %q; want exit %d saying %q", code, out, errOut, tc.code, tc.want)
			}
		})
	}
	// Bad input is refused before anything is sent.
	for _, args := range [][]string{
		{"token", "create", "-project", "web", "-role", "owner"},
		{"token", "create", "-project", "web", "-role", "member", "-ttl", "tomorrow"},
		{"token", "create", "-role", "member"},
		{"project", "allow", "web"},
	} {
		_, errOut, code := grove(t, args...)
		if code != 2 || !strings.HasPrefix(errOut, "Error: ") {
			t.Errorf("%v: exit %d %q; want a usage error", args, code, errOut)
		}
	}
	if len(agent.created) != 0 {
		t.Errorf("refused input reached the agent: %v", agent.created)
	}
}

// TestTLSSkipVerifyHelp: the flag's help says it is for development only.
func TestTLSSkipVerifyHelp(t *testing.T) {
	f := flagSet("token list", &globals{}).Lookup("tls-skip-verify")
	if f == nil || !strings.Contains(f.Usage, "for development only") {
		t.Fatalf("-tls-skip-verify: %+v", f)
	}
}
