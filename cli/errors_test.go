package cli

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/grovehq/grove/api"
)

// TestUnavailablePluginMessage follows a 503 from the agent to the sentence
// the CLI prints: it says when to try again and keeps the agent's reason.
func TestUnavailablePluginMessage(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Retry-After", "7")
		w.WriteHeader(http.StatusServiceUnavailable)
		w.Write([]byte(`{"code":503,"error":{"code":503,"type":"PluginUnavailable","message":"The plugin \"builtin\" did not answer within 5s."}}`))
	}))
	defer srv.Close()
	c := api.NewClient(strings.TrimPrefix(srv.URL, "http://"))
	_, err := c.Do(context.Background(), http.MethodGet, "/v1/profile-types", nil, nil, nil)
	got := describeError(err)
	want := `The agent cannot serve this now; try again in 7 seconds: The plugin "builtin" did not answer within 5s.`
	if got != want {
		t.Errorf("describeError:\n got %q\nwant %q", got, want)
	}
}

// TestAgentAnswerInsideAnError checks that an agent's answer wrapped in the
// middle of an error (apply's "...: ANSWER; profile.web was removed again")
// is explained in place, not printed twice with the words run together.
func TestAgentAnswerInsideAnError(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusConflict)
		w.Write([]byte(`{"code":409,"error":{"code":409,"type":"ResourceInUse","message":"The profile is in use."}}`))
	}))
	defer srv.Close()
	c := api.NewClient(strings.TrimPrefix(srv.URL, "http://"))
	_, err := c.Do(context.Background(), http.MethodPut, "/v1/sets/s/objects/profile/x", nil, nil, nil)
	err = fmt.Errorf("record that set \"s\" owns profile.web: %w; profile.web was removed again", err)
	got := describeError(err)
	want := `record that set "s" owns profile.web: The request conflicts with the current state: The profile is in use.; profile.web was removed again`
	if got != want {
		t.Errorf("describeError:\n got %q\nwant %q", got, want)
	}
}
