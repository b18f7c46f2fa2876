package server_test

import (
	"net/http"
	"testing"

	"github.com/grovehq/grove/core/server"
	"github.com/grovehq/grove/core/server/ui"
)

// TestConsoleRoute: the console is served at /ui/ (and /ui redirects
// there) only when Options.UI says so, with its CSP and without a token.
func TestConsoleRoute(t *testing.T) {
	get := func(url string) *http.Response {
		t.Helper()
		c := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
		resp, err := c.Get(url)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp
	}
	on := newServer(t, server.Options{UI: true})
	if r := get(on.URL + "/ui/"); r.StatusCode != http.StatusOK || r.Header.Get("Content-Security-Policy") != ui.CSP {
		t.Errorf("GET /ui/ with the console on: %d, CSP %q", r.StatusCode, r.Header.Get("Content-Security-Policy"))
	}
	if r := get(on.URL + "/ui"); r.StatusCode != http.StatusMovedPermanently || r.Header.Get("Location") != "/ui/" {
		t.Errorf("GET /ui: %d to %q; want a redirect to /ui/", r.StatusCode, r.Header.Get("Location"))
	}
	off := newServer(t, server.Options{})
	if r := get(off.URL + "/ui/"); r.StatusCode != http.StatusNotFound {
		t.Errorf("GET /ui/ with the console off: %d; want 404", r.StatusCode)
	}
}
