package server

import (
	"net/http"
	"time"

	"github.com/grovehq/grove/core/engine"
	"github.com/grovehq/grove/core/model"
)

// Tokens and project grants are Grove's own (Senlin had Keystone); only an
// admin reaches these handlers (routes.go registers them with admin).

// tokenView is a token on the wire. Secret is set only in the answer to
// its creation: the store does not keep it.
type tokenView struct {
	ID        string  `json:"id"`
	Name      string  `json:"name"`
	Project   string  `json:"project"`
	Role      string  `json:"role"`
	CreatedAt string  `json:"created_at"`
	ExpiresAt *string `json:"expires_at"`
	CreatedBy string  `json:"created_by"`
	Secret    string  `json:"secret,omitempty"`
}

func toToken(t *model.Token) tokenView {
	v := tokenView{ID: t.ID, Name: t.Name, Project: t.Project, Role: t.Role, CreatedAt: t.CreatedAt.UTC().Format(time.RFC3339), CreatedBy: t.CreatedBy}
	if t.ExpiresAt != nil {
		s := t.ExpiresAt.UTC().Format(time.RFC3339)
		v.ExpiresAt = &s
	}
	return v
}

func (s *Server) health(w http.ResponseWriter, _ *http.Request, _ engine.Caller) error {
	s.writeJSON(w, http.StatusOK, map[string]any{"status": "ok"})
	return nil
}

func (s *Server) createToken(w http.ResponseWriter, r *http.Request, c engine.Caller) error {
	body, err := decode(r, "token")
	if err != nil {
		return err
	}
	if err := only(body, "token.", "name", "project", "role", "ttl"); err != nil {
		return err
	}
	var req engine.TokenCreate
	for k, dst := range map[string]*string{"name": &req.Name, "project": &req.Project, "role": &req.Role, "ttl": &req.TTL} {
		v, err := str(body, k)
		if err != nil {
			return err
		}
		*dst = deref(v)
	}
	t, secret, err := s.e.CreateToken(s.ctx(r), c, req)
	if err != nil {
		return err
	}
	v := toToken(t)
	v.Secret = secret
	w.Header().Set("Location", "/v1/tokens/"+t.ID)
	s.writeJSON(w, http.StatusCreated, map[string]any{"token": v})
	return nil
}

func (s *Server) listTokens(w http.ResponseWriter, r *http.Request, _ engine.Caller) error {
	ts, err := s.e.Tokens(s.ctx(r))
	if err != nil {
		return err
	}
	out := make([]tokenView, 0, len(ts))
	for _, t := range ts {
		out = append(out, toToken(t))
	}
	s.writeJSON(w, http.StatusOK, map[string]any{"tokens": out})
	return nil
}

func (s *Server) showToken(w http.ResponseWriter, r *http.Request, _ engine.Caller) error {
	t, err := s.e.Token(s.ctx(r), r.PathValue("id"))
	if err != nil {
		return err
	}
	s.writeJSON(w, http.StatusOK, map[string]any{"token": toToken(t)})
	return nil
}

func (s *Server) deleteToken(w http.ResponseWriter, r *http.Request, _ engine.Caller) error {
	if err := s.e.RevokeToken(s.ctx(r), r.PathValue("id")); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

func (s *Server) listGrants(w http.ResponseWriter, r *http.Request, _ engine.Caller) error {
	gs, err := s.e.Grants(s.ctx(r), r.PathValue("project"))
	if err != nil {
		return err
	}
	s.writeJSON(w, http.StatusOK, map[string]any{"grants": gs})
	return nil
}

func (s *Server) putGrant(w http.ResponseWriter, r *http.Request, _ engine.Caller) error {
	if err := s.e.Grant(s.ctx(r), r.PathValue("project"), r.PathValue("type")); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

func (s *Server) deleteGrant(w http.ResponseWriter, r *http.Request, _ engine.Caller) error {
	if err := s.e.Ungrant(s.ctx(r), r.PathValue("project"), r.PathValue("type")); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}
