package server

import (
	"net/http"

	"github.com/grovehq/grove/api"
	"github.com/grovehq/grove/core/engine"
	"github.com/grovehq/grove/core/store"
)

func (s *Server) listEvents(w http.ResponseWriter, r *http.Request, c engine.Caller) error {
	follow, err := followParam(r)
	if err != nil {
		return err
	}
	o, err := listOpts(r, c, []string{"oid", "oname", "otype", "cluster_id", "action", "level"},
		[]string{"timestamp", "level", "otype", "oname", "action", "status", "oid", "cluster_id"})
	if err != nil {
		return err
	}
	eventLevels(o.Filters["level"])
	if follow {
		return s.followEvents(w, r, o)
	}
	evs, err := s.r.ListEvents(s.ctx(r), o)
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
	e, err := s.r.GetEvent(s.ctx(r), r.PathValue("id"))
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
