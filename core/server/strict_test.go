package server_test

import (
	"net/http"
	"strings"
	"testing"

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
