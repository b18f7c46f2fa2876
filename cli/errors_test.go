package cli

import (
	"context"
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
