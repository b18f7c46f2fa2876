package server

import (
	"net/http"

	"github.com/grovehq/grove/core/engine"
)

func versionDoc() map[string]any {
	return map[string]any{"id": "1.0", "status": "CURRENT", "min_version": MinVersion, "max_version": MaxVersion, "updated": "2016-01-18T00:00:00Z",
		"links":       []any{map[string]any{"href": "/v1/", "rel": "self"}},
		"media-types": []any{map[string]any{"base": "application/json", "type": "application/vnd.openstack.clustering-v1+json"}}}
}

func (s *Server) versions(w http.ResponseWriter, _ *http.Request, _ engine.Caller) error {
	s.writeJSON(w, http.StatusMultipleChoices, map[string]any{"versions": []any{versionDoc()}})
	return nil
}

func (s *Server) version(w http.ResponseWriter, _ *http.Request, _ engine.Caller) error {
	s.writeJSON(w, http.StatusOK, map[string]any{"version": versionDoc()})
	return nil
}

func (s *Server) buildInfo(w http.ResponseWriter, _ *http.Request, _ engine.Caller) error {
	v := s.opts.Version
	if v == "" {
		v = "dev"
	}
	s.writeJSON(w, http.StatusOK, map[string]any{"build_info": map[string]any{"api": map[string]any{"revision": "1.0"}, "engine": map[string]any{"revision": v}}})
	return nil
}
