package server_test

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/grovehq/grove/api"
	"github.com/grovehq/grove/core/server"
)

// TestMalformedQueryRefused: a query string url.ParseQuery cannot read in
// full is a 400 on every route. r.URL.Query() would drop the unreadable
// parts and the request would do something other than asked.
func TestMalformedQueryRefused(t *testing.T) {
	ts := newServer(t, server.Options{})
	semicolon := "The query string is malformed: it contains a semicolon, which does not separate parameters; separate them with & and write a semicolon in a value as %3B."
	for _, c := range []struct {
		method, path, want string
	}{
		{"GET", "/v1/clusters?status=ERROR;x", semicolon},
		{"GET", "/v1/nodes?limit=1;x=y", semicolon},
		{"POST", "/v1/webhooks/no-such-webhook/trigger?V=2;count=2", semicolon},
		{"DELETE", "/v1/clusters/c?force=true;x", semicolon},
		{"GET", "/v1/profiles?name=%zz", `The query string is malformed: invalid URL escape "%zz".`},
	} {
		t.Run(c.method+" "+c.path, func(t *testing.T) {
			status, eb := send(t, ts, c.method, c.path, nil, 0)
			if status != http.StatusBadRequest || eb.Error.Type != "BadRequest" || eb.Error.Message != c.want {
				t.Errorf("got %d %+v, want a 400 BadRequest %q", status, eb, c.want)
			}
		})
	}
	// A semicolon written as %3B is a character of a value, not a separator.
	status, eb := send(t, ts, "GET", "/v1/clusters?name="+strings.ReplaceAll("a;b", ";", "%3B"), nil, 0)
	if status != http.StatusOK {
		t.Errorf("an escaped semicolon: got %d %+v, want 200", status, eb)
	}
}

// TestDeleteBodyIsStrict: a delete's body is held to the rule of every
// other body, so a misspelt "force" is refused rather than read as a
// non-force delete. The body is judged before the object is looked up.
func TestDeleteBodyIsStrict(t *testing.T) {
	ts := newServer(t, server.Options{})
	for _, c := range []struct {
		name, path, body string
		chunked          bool
		want             string
	}{
		{"cluster", "/v1/clusters/c", `{"forcee": true}`, false, "forcee is not a recognised field; allowed fields are force."},
		{"node", "/v1/nodes/n", `{"force": true, "now": 1}`, false, "now is not a recognised field; allowed fields are force."},
		{"chunked", "/v1/clusters/c", `{"forcee": true}`, true, "forcee is not a recognised field; allowed fields are force."},
		{"not a boolean", "/v1/nodes/n", `{"force": "maybe"}`, false, "force must be a boolean."},
	} {
		t.Run(c.name, func(t *testing.T) {
			length := int64(len(c.body))
			if c.chunked {
				length = -1 // the client sends Transfer-Encoding: chunked
			}
			status, eb := send(t, ts, "DELETE", c.path, strings.NewReader(c.body), length)
			if status != http.StatusBadRequest || eb.Error.Type != "BadRequest" || eb.Error.Message != c.want {
				t.Errorf("got %d %+v, want a 400 BadRequest %q", status, eb, c.want)
			}
		})
	}
	// A body that knows only force reaches the lookup.
	status, eb := send(t, ts, "DELETE", "/v1/clusters/c", strings.NewReader(`{"force": true}`), int64(len(`{"force": true}`)))
	if status != http.StatusNotFound {
		t.Errorf(`{"force": true}: got %d %+v, want the 404 of the missing cluster`, status, eb)
	}
}

// TestUnroutedAnswersAreFaults: a path the API does not have and a method a
// path does not take are answered in Senlin's fault body, like every other
// error, with the mux's status and, for 405, its Allow header.
func TestUnroutedAnswersAreFaults(t *testing.T) {
	ts := newServer(t, server.Options{})
	client := ts.Client()
	client.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	for _, c := range []struct {
		method, path string
		status       int
		typ, msg     string
		allow        string
	}{
		{"GET", "/v1/no-such-thing", 404, "NotFound", "No resource of the API is at /v1/no-such-thing.", ""},
		{"GET", "/v2/clusters", 404, "NotFound", "No resource of the API is at /v2/clusters.", ""},
		{"PUT", "/v1/clusters", 405, "MethodNotAllowed", "The method PUT is not allowed on /v1/clusters; allowed methods are GET, HEAD, POST.", "GET, HEAD, POST"},
		{"POST", "/v1/webhooks/s3cret/trigger/x", 404, "NotFound", "No resource of the API is at /v1/webhooks/(secret)/trigger/x.", ""},
	} {
		t.Run(c.method+" "+c.path, func(t *testing.T) {
			req, err := http.NewRequestWithContext(t.Context(), c.method, ts.URL+c.path, nil)
			if err != nil {
				t.Fatal(err)
			}
			resp, err := client.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			var eb api.ErrorBody
			if err := json.NewDecoder(resp.Body).Decode(&eb); err != nil {
				t.Fatalf("HTTP %d with a body that is not Senlin's fault body: %v", resp.StatusCode, err)
			}
			if resp.StatusCode != c.status || eb.Code != c.status || eb.Error.Type != c.typ || eb.Error.Message != c.msg {
				t.Errorf("got %d %+v, want %d %s %q", resp.StatusCode, eb, c.status, c.typ, c.msg)
			}
			if ct := resp.Header.Get("Content-Type"); ct != "application/json" {
				t.Errorf("Content-Type %q, want application/json", ct)
			}
			if got := resp.Header.Get("Allow"); got != c.allow {
				t.Errorf("Allow %q, want %q", got, c.allow)
			}
		})
	}
	// The mux's redirects are not errors and stay as they were.
	for path, want := range map[string]string{"/v1": "/v1/", "/v1//clusters": "/v1/clusters"} {
		resp, err := client.Get(ts.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode/100 != 3 || resp.Header.Get("Location") != want {
			t.Errorf("GET %s: %d to %q, want a redirect to %q", path, resp.StatusCode, resp.Header.Get("Location"), want)
		}
	}
}

// TestWriteInputsAreStrict: a write refuses a query parameter its route
// does not read, a force that is neither true nor false, and a body on a
// route that reads none, since each would otherwise be dropped and the
// request done other than asked. Reads keep Senlin's leniency, and the
// webhook trigger reads every parameter as a param. Each is judged before
// the object is looked up.
func TestWriteInputsAreStrict(t *testing.T) {
	ts := newServer(t, server.Options{})
	for _, c := range []struct {
		name, method, path, body string
		want                     string
	}{
		{"misspelt force", "DELETE", "/v1/clusters/c?forcee=true", "",
			"Invalid parameter forcee; DELETE /v1/clusters/{id} takes only force."},
		{"force not a boolean", "DELETE", "/v1/nodes/n?force=yes", "",
			`force must be true or false, got "yes".`},
		{"force twice", "DELETE", "/v1/nodes/n?force=true&force=false", "",
			"force is given 2 times; give it once."},
		{"cancel with a bad force", "PATCH", "/v1/actions/a?force=1x", `{"action": {"status": "CANCELLED"}}`,
			`force must be true or false, got "1x".`},
		{"a query on a write that reads none", "DELETE", "/v1/profiles/p?force=true", "",
			"Invalid parameter force; DELETE /v1/profiles/{id} takes no query parameters."},
		{"a body on a delete that reads none", "DELETE", "/v1/profiles/p", `{"force": true}`,
			`DELETE /v1/profiles/{id} takes no request body, but the body sent holds "force"; send no body (or {}).`},
		{"a body on notify", "POST", "/v1/receivers/r/notify", `{"params": {"count": 2}}`,
			`POST /v1/receivers/{id}/notify takes no request body, but the body sent holds "params"; send no body (or {}).`},
		{"a body that is not JSON", "DELETE", "/v1/policies/p", `force`,
			"The request body is not valid JSON: invalid character 'o' in literal false (expecting 'a') at byte 1 (body)."},
	} {
		t.Run(c.name, func(t *testing.T) {
			var body io.Reader
			if c.body != "" {
				body = strings.NewReader(c.body)
			}
			status, eb := send(t, ts, c.method, c.path, body, int64(len(c.body)))
			if status != http.StatusBadRequest || eb.Error.Type != "BadRequest" || eb.Error.Message != c.want {
				t.Errorf("got %d %+v, want a 400 BadRequest %q", status, eb, c.want)
			}
		})
	}
	// What a route does read, an empty object on a route that reads no
	// body, any case of true or false, and a show's unknown parameter all
	// reach the lookup of the missing object.
	for _, c := range []struct{ method, path, body string }{
		{"DELETE", "/v1/clusters/c?force=True", ""},
		{"DELETE", "/v1/nodes/n?force=false", ""},
		{"DELETE", "/v1/profiles/p", "{}"},
		{"DELETE", "/v1/receivers/r", " \n"},
		{"GET", "/v1/nodes/n?show_details=true", ""},
		{"POST", "/v1/webhooks/no-such-webhook/trigger?count=2", ""},
	} {
		var body io.Reader
		if c.body != "" {
			body = strings.NewReader(c.body)
		}
		status, eb := send(t, ts, c.method, c.path, body, int64(len(c.body)))
		if status != http.StatusNotFound {
			t.Errorf("%s %s %q: got %d %+v, want the 404 of the missing object", c.method, c.path, c.body, status, eb)
		}
	}
}
