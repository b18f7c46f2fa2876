package server

import (
	"net/http"
	"strings"

	"github.com/grovehq/grove/api"
	"github.com/grovehq/grove/core/engine"
	"github.com/grovehq/grove/core/store"
)

func (s *Server) listEvents(w http.ResponseWriter, r *http.Request, c engine.Caller) error {
	o, err := listOpts(r, c, []string{"oid", "oname", "otype", "cluster_id", "action", "level"},
		[]string{"timestamp", "level", "otype", "oname", "action", "status", "oid", "cluster_id"})
	if err != nil {
		return err
	}
	if lv := o.Filters["level"]; len(lv) > 0 {
		for i, l := range lv {
			switch strings.ToUpper(l) {
			case "DEBUG":
				lv[i] = "10"
			case "INFO":
				lv[i] = "20"
			case "WARNING", "WARN":
				lv[i] = "30"
			case "ERROR":
				lv[i] = "40"
			case "CRITICAL":
				lv[i] = "50"
			}
		}
	}
	evs, err := s.s.ListEvents(s.ctx(r), o)
	if err != nil {
		return err
	}
	out := make([]api.Event, 0, len(evs))
	for _, e := range evs {
		out = append(out, toEvent(e))
	}
	s.writeJSON(w, http.StatusOK, map[string]any{"events": out})
	return nil
}

func (s *Server) showEvent(w http.ResponseWriter, r *http.Request, c engine.Caller) error {
	e, err := s.s.GetEvent(s.ctx(r), r.PathValue("id"))
	if err != nil {
		return err
	}
	// Another project's event is not found, as another project's objects
	// are not, whoever asks (an admin lists them with global_project=true).
	if e.Project != c.Project {
		return &store.NotFoundError{Kind: "event", Ident: e.ID}
	}
	s.writeJSON(w, http.StatusOK, map[string]any{"event": toEvent(e)})
	return nil
}
