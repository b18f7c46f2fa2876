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
