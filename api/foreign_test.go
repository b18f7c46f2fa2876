package api_test

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/grovehq/grove/api"
)

// TestForeignAnswersAreNamed: an answer without Grove's error body, or a
// success that is not JSON, comes from something other than an agent's
// API (a proxy, another service); the error says so, names the status and
// quotes the start of the body without its control characters, rather
// than reading a proxy's 403 as the token's role or printing nothing. A
// Grove fault keeps its own message, and a huge error body is not read
// whole.
func TestForeignAnswersAreNamed(t *testing.T) {
	for _, c := range []struct {
		name    string
		status  int
		body    string
		want    []string
		foreign bool
	}{
		{"an empty 502", 502, "", []string{"answered GET /v1/nodes with HTTP 502 Bad Gateway but without a Grove error body; it may not be a Grove agent, or it is a proxy in front of one"}, true},
		{"a proxy's 403 page", 403, "<html>\x1b[31mdenied\n</html>", []string{"HTTP 403 Forbidden", ": <html> [31mdenied </html>"}, true},
		{"a huge page", 500, strings.Repeat("x", 1<<20), []string{"HTTP 500", strings.Repeat("x", 200) + "…"}, true},
		{"a success that is not JSON", 200, "not json", []string{"answered GET /v1/nodes with a body that is not Grove's JSON", "it may not be a Grove agent: not json"}, false},
		{"a Grove fault", 404, `{"code": 404, "error": {"code": 404, "message": "The cluster x could not be found.", "type": "ResourceNotFound"}}`,
			[]string{"The cluster x could not be found. (ResourceNotFound, HTTP 404)"}, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				w.WriteHeader(c.status)
				_, _ = w.Write([]byte(c.body))
			}))
			defer ts.Close()
			cl := api.NewClient(ts.URL)
			_, err := cl.ListNodes(t.Context(), nil)
			if err == nil {
				t.Fatal("no error")
			}
			for _, w := range c.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not contain %q", err, w)
				}
			}
			if strings.ContainsRune(err.Error(), '\x1b') {
				t.Errorf("error %q carries a terminal escape", err)
			}
			var ae *api.Error
			if errors.As(err, &ae) != (c.status >= 300) || (ae != nil && ae.Foreign != c.foreign) {
				t.Errorf("error %#v: want an *api.Error for a failure status, Foreign %v", err, c.foreign)
			}
			if ae != nil && len(ae.Message) > 1000 {
				t.Errorf("message of %d bytes; the body should have been cut", len(ae.Message))
			}
		})
	}
}
