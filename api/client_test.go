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
	if _, err := c.Do(context.Background(), http.MethodGet, "/v1/clusters", nil, nil, nil); err != nil || sent.Load() != 1 {
		t.Errorf("an ordinary path must be sent: %v", err)
	}
}
