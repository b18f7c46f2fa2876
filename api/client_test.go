package api

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
)

// TestUnaddressableNames checks that the client sends no request for a
// name or id of ".", ".." or "": the agent's router would clean the path
// and answer for another resource (the list of clusters for
// "/v1/clusters/."), which a caller read as the object. Each is a 404
// naming the rule instead.
func TestUnaddressableNames(t *testing.T) {
	var sent atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		sent.Add(1)
		w.Write([]byte(`{"clusters":[]}`))
	}))
	defer srv.Close()
	c := NewClient(srv.URL)
	for ident, want := range map[string]string{".": `No object is named "."`, "..": `No object is named ".."`, "": "No object has an empty name or id."} {
		_, err := c.GetCluster(context.Background(), ident)
		if !IsNotFound(err) || !strings.Contains(err.Error(), want) {
			t.Errorf("GetCluster(%q): want a 404 saying %q, got %v", ident, want, err)
		}
		if _, err := c.Do(context.Background(), http.MethodDelete, "/v1/clusters/"+ident+"/actions", nil, nil, nil); !IsNotFound(err) {
			t.Errorf("DELETE of cluster %q: want a 404, got %v", ident, err)
		}
	}
	if n := sent.Load(); n != 0 {
		t.Errorf("%d requests reached the agent", n)
	}
	// Ordinary paths are sent, and so are the documents whose paths end
	// in a slash: the versions (/) and the version (/v1/).
	for i, path := range []string{"/v1/clusters", "/", "/v1/"} {
		if _, err := c.Do(context.Background(), http.MethodGet, path, nil, nil, nil); err != nil || sent.Load() != int32(i+1) {
			t.Errorf("GET %s must be sent: %v", path, err)
		}
	}
	if _, err := c.Do(context.Background(), http.MethodGet, "/v1/clusters/", nil, nil, nil); !IsNotFound(err) || sent.Load() != 3 {
		t.Errorf("GET of an empty cluster id: want a 404 without a request, got %v", err)
	}
}
