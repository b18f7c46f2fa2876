package server

import (
	"encoding/json"
	"net/http"
	"os"
	"time"

	"github.com/grovehq/grove/core/engine"
)

// listServices is Senlin's GET /v1/services (microversion 1.7, admin):
// the agent answering is the one engine service it reports. Agents sharing
// a store do not record heartbeats there, so an agent cannot speak for the
// others; each is asked on its own address.
func (s *Server) listServices(w http.ResponseWriter, _ *http.Request, _ engine.Caller) error {
	host, err := os.Hostname()
	if err != nil {
		host = "unknown"
	}
	svc := map[string]any{
		"id": s.e.ID(), "host": host, "binary": "grove-engine", "topic": "grove-engine",
		"status": "enabled", "state": "up", "disabled_reason": nil,
		// It is up now: it is answering.
		"updated_at": time.Now().UTC().Format(time.RFC3339),
	}
	s.writeJSON(w, http.StatusOK, map[string]any{"services": []any{svc}})
	return nil
}

// validated is the document of a spec checked by POST /v1/profiles/validate
// or /v1/policies/validate: the object as if created, but with no id and
// no timestamps, as Senlin answers (it was never stored).
func validated(v any) (map[string]any, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	var doc map[string]any
	if err := json.Unmarshal(b, &doc); err != nil {
		return nil, err
	}
	doc["id"], doc["created_at"], doc["updated_at"] = nil, nil, nil
	return doc, nil
}
