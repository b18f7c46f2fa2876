package server

import (
	"net/http"

	"github.com/grovehq/grove/core/engine"
)

func (s *Server) clusterAction(w http.ResponseWriter, r *http.Request, c engine.Caller) error {
	body, err := decode(r, "")
	if err != nil {
		return err
	}
	a, err := s.e.ClusterAction(s.ctx(r), c, r.PathValue("id"), body)
	if err != nil {
		return err
	}
	return s.accepted(w, a, nil)
}
