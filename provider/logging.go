package provider

import (
	"net/http"
	"strings"
	"time"

	"github.com/hashicorp/terraform-plugin-log/tflog"
)

// loggedTransport logs each of the provider's API requests with tflog
// (TF_LOG=debug or TF_LOG_PROVIDER=debug shows them): the method, path,
// status, how long it took and the action it started. Every request goes
// through the client's transport, so no call is missed. Headers and bodies
// are never logged: they carry the token and properties, which may hold
// secrets.
type loggedTransport struct{ next http.RoundTripper }

func (t loggedTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	ctx := tflog.SetField(req.Context(), "grove_method", req.Method)
	ctx = tflog.SetField(ctx, "grove_path", req.URL.Path)
	if req.URL.RawQuery != "" {
		ctx = tflog.SetField(ctx, "grove_query", req.URL.RawQuery)
	}
	tflog.Debug(ctx, "Sending a request to the Grove agent")
	start := time.Now()
	resp, err := t.next.RoundTrip(req)
	ctx = tflog.SetField(ctx, "grove_duration_ms", time.Since(start).Milliseconds())
	if err != nil {
		tflog.Debug(ctx, "The Grove agent could not be reached", map[string]any{"error": err.Error()})
		return resp, err
	}
	ctx = tflog.SetField(ctx, "grove_status", resp.StatusCode)
	if id := resp.Header.Get("X-OpenStack-Request-ID"); id != "" {
		ctx = tflog.SetField(ctx, "grove_request_id", id)
	}
	if loc := resp.Header.Get("Location"); strings.Contains(loc, "/actions/") {
		ctx = tflog.SetField(ctx, "grove_action", loc[strings.LastIndex(loc, "/")+1:])
	}
	tflog.Debug(ctx, "The Grove agent answered")
	return resp, nil
}
