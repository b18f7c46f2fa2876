package server

import (
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/grovehq/grove/api"
	"github.com/grovehq/grove/core/engine"
	"github.com/grovehq/grove/core/model"
)

var receiverSort = []string{"name", "type", "action", "cluster_id", "created_at", "user"}

// hiddenChannel is what a receiver's channel shows after its creation: the
// webhook URL holds a secret that is kept only as its hash.
func hiddenChannel() map[string]any {
	return map[string]any{
		"alarm_url": nil,
		"note":      "The webhook URL holds a secret and was shown once, when the receiver was created; delete and recreate the receiver for a new one.",
	}
}

func toReceiver(v *model.Receiver, channel map[string]any) api.Receiver {
	return api.Receiver{ID: v.ID, Name: v.Name, Type: v.Type, ClusterID: v.ClusterID, Action: v.Action,
		Actor: orMap(v.Actor), Params: orMap(v.Params), Channel: channel, User: v.User, Project: v.Project, Domain: v.Domain,
		CreatedAt: ts(v.CreatedAt), UpdatedAt: tsPtr(v.UpdatedAt)}
}

// baseURL is the agent's address as the caller reached it, which is what
// the webhook URL must name for the same caller (or its alert manager) to
// reach it again.
func baseURL(r *http.Request) string {
	scheme := "http"
	if r.TLS != nil {
		scheme = "https"
	}
	return scheme + "://" + r.Host
}

// alarmURL is a webhook's URL. Unlike Senlin's, it carries no params in
// its query: the receiver's params apply anyway, and params in the URL
// would override later changes to the receiver's.
func alarmURL(r *http.Request, secret string) string {
	return baseURL(r) + "/v1/webhooks/" + secret + "/trigger?V=2"
}

func (s *Server) listReceivers(w http.ResponseWriter, r *http.Request, c engine.Caller) error {
	o, err := listOpts(r, c, []string{"name", "type", "cluster_id", "action", "user"}, receiverSort)
	if err != nil {
		return err
	}
	vs, err := s.s.ListReceivers(s.ctx(r), o)
	if err != nil {
		return err
	}
	out := make([]api.Receiver, 0, len(vs))
	for _, v := range vs {
		out = append(out, toReceiver(v, hiddenChannel()))
	}
	s.writeJSON(w, http.StatusOK, map[string]any{"receivers": out})
	return nil
}

func (s *Server) createReceiver(w http.ResponseWriter, r *http.Request, c engine.Caller) error {
	body, err := decode(r, "receiver")
	if err != nil {
		return err
	}
	// actor is Senlin's Keystone trust; Grove has none to make, so it is
	// accepted and ignored: the action runs in the receiver's project.
	if err := only(body, "receiver.", "name", "type", "cluster_id", "action", "actor", "params"); err != nil {
		return err
	}
	var req engine.ReceiverCreate
	for k, dst := range map[string]*string{"name": &req.Name, "type": &req.Type, "cluster_id": &req.ClusterID, "action": &req.Action} {
		v, err := nameField(body, k)
		if err != nil {
			return engine.BadRequest("receiver.%s", strings.TrimSpace(err.Error()))
		}
		if v != nil {
			*dst = *v
		}
	}
	if req.Params, err = object(body, "params"); err != nil {
		return engine.BadRequest("receiver.%s", err.Error())
	}
	v, secret, err := s.e.CreateReceiver(s.ctx(r), c, req)
	if err != nil {
		return err
	}
	s.writeJSON(w, http.StatusCreated, map[string]any{"receiver": toReceiver(v, map[string]any{"alarm_url": alarmURL(r, secret)})})
	return nil
}

func (s *Server) showReceiver(w http.ResponseWriter, r *http.Request, c engine.Caller) error {
	v, err := s.s.FindReceiver(s.ctx(r), c.Project, r.PathValue("id"))
	if err != nil {
		return err
	}
	s.writeJSON(w, http.StatusOK, map[string]any{"receiver": toReceiver(v, hiddenChannel())})
	return nil
}

func (s *Server) updateReceiver(w http.ResponseWriter, r *http.Request, c engine.Caller) error {
	body, err := decode(r, "receiver")
	if err != nil {
		return err
	}
	if err := only(body, "receiver.", "name", "action", "params"); err != nil {
		return err
	}
	var req engine.ReceiverUpdate
	if req.Name, err = nameField(body, "name"); err != nil {
		return engine.BadRequest("receiver.%s", err.Error())
	}
	if req.Action, err = nameField(body, "action"); err != nil {
		return engine.BadRequest("receiver.%s", err.Error())
	}
	if req.Params, err = object(body, "params"); err != nil {
		return engine.BadRequest("receiver.%s", err.Error())
	}
	v, err := s.e.UpdateReceiver(s.ctx(r), c, r.PathValue("id"), req)
	if err != nil {
		return err
	}
	s.writeJSON(w, http.StatusOK, map[string]any{"receiver": toReceiver(v, hiddenChannel())})
	return nil
}

func (s *Server) deleteReceiver(w http.ResponseWriter, r *http.Request, c engine.Caller) error {
	if err := s.e.DeleteReceiver(s.ctx(r), c, r.PathValue("id")); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

func (s *Server) notifyReceiver(w http.ResponseWriter, r *http.Request, c engine.Caller) error {
	return s.e.NotifyReceiver(s.ctx(r), c, r.PathValue("id"))
}

// triggerWebhook is POST /v1/webhooks/{secret}/trigger: no token, the
// secret in the path is the credential. Bad secrets count against the
// caller's address as bad tokens do, so guessing is slow.
//
// Params, later ones winning: the receiver's, the query's (any key but
// V), then the body's. With V=1 (below microversion 1.10) the body is
// {"params": {...}}; with V=2, or from 1.10 on, the whole body object is
// the params (Senlin's rules).
func (s *Server) triggerWebhook(w http.ResponseWriter, r *http.Request, _ engine.Caller) error {
	key := clientKey(r)
	if wait := s.failures.blocked(key, time.Now()); wait > 0 {
		s.tooMany(w, wait)
		return nil
	}
	v, err := s.e.Webhook(s.ctx(r), r.PathValue("secret"))
	if err != nil {
		if status, _ := engine.HTTPStatus(err); status == http.StatusNotFound {
			s.failures.fail(key, time.Now())
		}
		return err
	}
	q := r.URL.Query()
	ver := "2"
	if vs, ok := q["V"]; ok {
		if len(vs) != 1 || (vs[0] != "1" && vs[0] != "2") {
			return engine.BadRequest("V must be 1 or 2 (the webhook version), got %q.", strings.Join(vs, ","))
		}
		ver = vs[0]
	}
	params := map[string]any{}
	for k, vs := range q {
		if k == "V" {
			continue
		}
		if len(vs) != 1 {
			return engine.BadRequest("The query parameter %s is given %d times; give each param once.", k, len(vs))
		}
		params[k] = vs[0]
	}
	if r.ContentLength != 0 {
		body, err := readBody(r.Body)
		if err != nil {
			return err
		}
		if ver == "1" && !atLeast(requestVersion(r), 1, 10) {
			if body, err = object(body, "params"); err != nil {
				return err
			}
		}
		for k, x := range body {
			params[k] = x
		}
	}
	a, err := s.e.TriggerWebhook(s.ctx(r), v, params)
	if err != nil {
		return err
	}
	return s.accepted(w, a, nil)
}

// requestVersion is the microversion a request asked for ("1.0" when it
// asked for none), as ServeHTTP negotiated it.
func requestVersion(r *http.Request) string {
	f := strings.Fields(r.Header.Get("OpenStack-API-Version"))
	if len(f) == 2 && f[0] == "clustering" {
		if f[1] == "latest" {
			return MaxVersion
		}
		return f[1]
	}
	return MinVersion
}

// redactPath hides a webhook's secret in a path before it is logged.
func redactPath(p string) string {
	if rest, ok := strings.CutPrefix(p, "/v1/webhooks/"); ok {
		if _, tail, ok := strings.Cut(rest, "/"); ok {
			return "/v1/webhooks/(secret)/" + tail
		}
		return "/v1/webhooks/(secret)"
	}
	return p
}

// atLeast reports whether microversion v is at least major.minor.
func atLeast(v string, major, minor int) bool {
	a, b, _ := strings.Cut(v, ".")
	x, err1 := strconv.Atoi(a)
	y, err2 := strconv.Atoi(b)
	if err1 != nil || err2 != nil {
		return false
	}
	return x > major || (x == major && y >= minor)
}
