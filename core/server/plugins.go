package server

import (
	"net/http"

	"github.com/grovehq/grove/api"
	"github.com/grovehq/grove/core/engine"
	"github.com/grovehq/grove/plugins/host"
)

func pluginStatus(st host.Status) api.PluginStatus {
	out := api.PluginStatus{Name: st.Name, Command: st.Command, State: st.State, PID: st.PID, Restarts: st.Restarts,
		LastError: st.LastError, Components: st.Components, APIVersions: st.APIVersions}
	if !st.StartedAt.IsZero() {
		out.StartedAt = *ts(st.StartedAt)
	}
	return out
}

func (s *Server) listPlugins(w http.ResponseWriter, _ *http.Request, _ engine.Caller) error {
	out := []api.PluginStatus{}
	for _, st := range s.opts.Host.Statuses() {
		out = append(out, pluginStatus(st))
	}
	s.writeJSON(w, http.StatusOK, map[string]any{"plugins": out})
	return nil
}

func (s *Server) showPlugin(w http.ResponseWriter, r *http.Request, _ engine.Caller) error {
	name := r.PathValue("name")
	for _, st := range s.opts.Host.Statuses() {
		if st.Name != name {
			continue
		}
		out := pluginStatus(st)
		for _, c := range s.opts.Host.PluginComponents(name) {
			schema := map[string]any{}
			for k, p := range c.Schema {
				schema[k] = p
			}
			out.Details = append(out.Details, api.PluginComponent{Kind: c.Kind, Type: c.Type, Versions: c.Versions, Description: c.Description, Schema: schema})
		}
		s.writeJSON(w, http.StatusOK, map[string]any{"plugin": out})
		return nil
	}
	return &engine.Error{Status: http.StatusNotFound, Type: "ResourceNotFound", Message: "No plugin named '" + name + "' is known to this agent."}
}
