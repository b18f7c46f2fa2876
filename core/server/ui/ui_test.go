package ui

import (
	"io/fs"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"
)

// TestHandler: the console's files are served with their types and the
// strict CSP; a path outside them is a 404.
func TestHandler(t *testing.T) {
	h := Handler()
	for _, c := range []struct{ path, ctype string }{
		{"/ui/", "text/html"}, {"/ui/app.js", "text/javascript"}, {"/ui/api.js", "text/javascript"},
		{"/ui/views.js", "text/javascript"}, {"/ui/dom.js", "text/javascript"}, {"/ui/app.css", "text/css"},
	} {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, c.path, nil))
		if rec.Code != http.StatusOK || !strings.HasPrefix(rec.Header().Get("Content-Type"), c.ctype) {
			t.Errorf("GET %s: %d %q; want 200 %s", c.path, rec.Code, rec.Header().Get("Content-Type"), c.ctype)
		}
		if got := rec.Header().Get("Content-Security-Policy"); got != CSP {
			t.Errorf("GET %s: CSP %q; want %q", c.path, got, CSP)
		}
		if rec.Header().Get("X-Content-Type-Options") != "nosniff" {
			t.Errorf("GET %s: no nosniff", c.path)
		}
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/ui/nothing.js", nil))
	if rec.Code != http.StatusNotFound {
		t.Errorf("GET /ui/nothing.js: %d; want 404", rec.Code)
	}
}

// TestNoExternalRequests: no file of the console names another origin, nor
// uses inline script or style the CSP would refuse.
func TestNoExternalRequests(t *testing.T) {
	external := regexp.MustCompile(`(?i)(https?:)?//[a-z0-9.-]+\.[a-z]{2,}|url\(\s*['"]?(https?:|//)|@import`)
	inline := regexp.MustCompile(`(?i)<script>|<style|\sstyle=|\son[a-z]+=`)
	err := fs.WalkDir(files, "static", func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, _ := files.ReadFile(path)
		if m := external.Find(b); m != nil {
			t.Errorf("%s names another origin: %q", path, m)
		}
		if strings.HasSuffix(path, ".html") {
			if m := inline.Find(b); m != nil {
				t.Errorf("%s has inline code the CSP refuses: %q", path, m)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
