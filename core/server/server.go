// Package server is Grove's HTTP API, in Senlin's v1 wire shape: paths, JSON
// envelopes, 202 with a Location header for asynchronous work, the fault body
// and microversion headers, so Senlin clients work against it unchanged.
package server

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/hashicorp/go-hclog"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/grovehq/grove/api"
	"github.com/grovehq/grove/core/engine"
	"github.com/grovehq/grove/core/model"
	"github.com/grovehq/grove/core/store"
	"github.com/grovehq/grove/plugins/host"
)

// Microversions served.
const (
	MinVersion = "1.0"
	MaxVersion = "1.14"
)

// Options configures the server.
type Options struct {
	// AdminToken is the legacy static admin token of the agent config: a
	// request carrying it is an admin of Project. Tokens made with
	// POST /v1/tokens are the way to authenticate; this one cannot be
	// listed, given an expiry or revoked except by editing the config.
	AdminToken string
	// Project is the project of AdminToken's caller (default "default").
	Project string
	// Dev trusts callers on a loopback address that send no token: they are
	// admins of project "default". A token, when sent, is checked as usual.
	Dev bool
	// UI serves the web console (package core/server/ui) at /ui/: static
	// files only, which call this same API from the browser.
	UI bool
	// FailedAuthBurst is how many requests with bad tokens an address may
	// send before it is answered 429 (default 10); FailedAuthEvery is how
	// often one more is allowed (default 1s).
	FailedAuthBurst int
	FailedAuthEvery time.Duration
	// FailedAuthAddrs bounds how many addresses' failures are remembered
	// (default 10000).
	FailedAuthAddrs int
	Version         string
	Logger          hclog.Logger
	Host            *host.Host
	// MaxRequestBytes bounds a request body (DefaultMaxRequestBytes when
	// zero); a larger one is answered 413 without being read.
	MaxRequestBytes int64
	// Metrics receives the API's request metrics (none when nil).
	Metrics *Metrics
	// Gatherer is what GET /metrics serves; without it there is no
	// /metrics route.
	Gatherer prometheus.Gatherer
	// Logs is the agent's logger, whose lines GET /v1/agent/monitor
	// streams; without it that route answers 501.
	Logs hclog.InterceptLogger
	// FollowEvery is how often an event stream looks for new events
	// (default 500ms).
	FollowEvery time.Duration
	// MaxStreams bounds the event and log streams open at once (default
	// 64); more are answered 503.
	MaxStreams int
}

// Server serves the API.
type Server struct {
	e *engine.Engine
	s store.Store
	// r is the store the API's top-level reads use: a pool of read-only
	// connections on SQLite, so a read never waits for the engine's
	// writes; s itself on PostgreSQL. Writes and reads inside the
	// engine's transactions never go through it.
	r    store.Store
	opts Options
	mux  *http.ServeMux
	// table is the route table as registered, for the access tests.
	table []route
	// adminHash is the SHA-256 of Options.AdminToken, or nil.
	adminHash []byte
	failures  *failures
	// streams holds a token per open stream (events?follow=true, the
	// monitor): a full channel refuses more.
	streams chan struct{}
}

// New returns the API handler for an engine.
func New(e *engine.Engine, opts Options) *Server {
	if opts.Project == "" {
		opts.Project = "default"
	}
	if opts.MaxRequestBytes <= 0 {
		opts.MaxRequestBytes = DefaultMaxRequestBytes
	}
	if opts.Logger == nil {
		opts.Logger = hclog.NewNullLogger()
	}
	if opts.FailedAuthBurst <= 0 {
		opts.FailedAuthBurst = 10
	}
	if opts.FailedAuthEvery <= 0 {
		opts.FailedAuthEvery = time.Second
	}
	if opts.FailedAuthAddrs <= 0 {
		opts.FailedAuthAddrs = 10000
	}
	if opts.FollowEvery <= 0 {
		opts.FollowEvery = 500 * time.Millisecond
	}
	if opts.MaxStreams <= 0 {
		opts.MaxStreams = 64
	}
	srv := &Server{e: e, s: e.Store(), r: store.ReadsOf(e.Store()), opts: opts, mux: http.NewServeMux(), streams: make(chan struct{}, opts.MaxStreams),
		failures: newFailures(opts.FailedAuthEvery, opts.FailedAuthBurst, opts.FailedAuthAddrs)}
	if opts.AdminToken != "" {
		sum := sha256.Sum256([]byte(opts.AdminToken))
		srv.adminHash = sum[:]
	}
	srv.routes()
	return srv
}

type handler func(w http.ResponseWriter, r *http.Request, c engine.Caller) error

// handle registers a route any token may read and a member or admin may
// write (by method). opts say what a write reads beyond its path (takes).
func (s *Server) handle(pattern string, h handler, opts ...routeOpt) {
	s.register(pattern, byMethod, h, opts...)
}

// public registers a route that needs no token.
func (s *Server) public(pattern string, h handler, opts ...routeOpt) {
	s.register(pattern, public, h, opts...)
}

// admin registers a route only an admin may call.
func (s *Server) admin(pattern string, h handler, opts ...routeOpt) {
	s.register(pattern, adminOnly, h, opts...)
}

func (s *Server) register(pattern string, a access, h handler, opts ...routeOpt) {
	s.table = append(s.table, route{Pattern: pattern, Access: a})
	var in takes
	for _, o := range opts {
		o(&in)
	}
	s.mux.HandleFunc(pattern, func(w http.ResponseWriter, r *http.Request) {
		var c engine.Caller
		if a != public {
			var ok bool
			if c, ok = s.authenticate(w, r); !ok {
				return
			}
			if err := authorize(a, r.Method, c); err != nil {
				s.fail(w, err)
				return
			}
		}
		if err := in.check(r); err != nil {
			s.fail(w, err)
			return
		}
		if err := h(w, r, c); err != nil {
			s.fail(w, err)
		}
	})
}

// ServeHTTP implements http.Handler: request ids, microversion negotiation.
func (s *Server) ServeHTTP(rw http.ResponseWriter, r *http.Request) {
	// Every answer is counted, those refused before routing (a version
	// out of range, a body too large) under the route "unmatched".
	start := time.Now()
	w := &statusWriter{ResponseWriter: rw}
	defer func() {
		took := time.Since(start)
		if w.code == 0 {
			w.code = http.StatusOK // what net/http sends for a handler that wrote nothing
		}
		s.opts.Metrics.observe(r, w.code, took)
		s.opts.Logger.Debug("request", "method", r.Method, "path", redactPath(r.URL.Path), "status", w.code, "duration", took)
	}()
	w.Header().Set("X-OpenStack-Request-ID", "req-"+uuid.NewString())
	ver := MinVersion
	if h := r.Header.Get("OpenStack-API-Version"); h != "" {
		f := strings.Fields(h)
		if len(f) == 2 && f[0] == "clustering" {
			ver = f[1]
			if ver == "latest" {
				ver = MaxVersion
			}
			if !versionInRange(ver) {
				s.writeError(w, http.StatusNotAcceptable, "InvalidGlobalAPIVersion",
					fmt.Sprintf("Version %s is not supported by the API. Minimum is %s and maximum is %s.", f[1], MinVersion, MaxVersion))
				return
			}
		}
	}
	w.Header().Set("OpenStack-API-Version", "clustering "+ver)
	w.Header().Set("Vary", "OpenStack-API-Version")
	if err := checkQuery(r.URL.RawQuery); err != nil {
		s.fail(w, err)
		return
	}
	// A body that says it is too large is refused before a byte of it is
	// read; one that does not say (chunked) is cut off at the limit.
	if r.ContentLength > s.opts.MaxRequestBytes {
		w.Header().Set("Connection", "close")
		s.fail(w, bodyTooLarge(s.opts.MaxRequestBytes))
		return
	}
	r.Body = http.MaxBytesReader(w, r.Body, s.opts.MaxRequestBytes)
	if s.unrouted(w, r) {
		return
	}
	s.mux.ServeHTTP(w, r)
}

// unrouted answers a request that no route matches (404) or that a route
// matches under another method (405) with Senlin's fault body, as
// docs/api.md promises for every error; the mux's own answers are plain
// text. It reports whether it answered.
func (s *Server) unrouted(w http.ResponseWriter, r *http.Request) bool {
	h, pattern := s.mux.Handler(r)
	if pattern != "" {
		return false
	}
	// The mux's answer is run against a recorder rather than worked out
	// again here, so the 404-or-405 decision and the Allow list stay the
	// mux's. Anything else without a pattern (a redirect to a cleaned
	// path) is left to the mux.
	rec := &headerRecorder{header: http.Header{}}
	h.ServeHTTP(rec, r)
	path := redactPath(r.URL.Path)
	switch rec.code {
	case http.StatusNotFound:
		s.writeError(w, http.StatusNotFound, "NotFound", fmt.Sprintf("No resource of the API is at %s.", path))
	case http.StatusMethodNotAllowed:
		allow := rec.header.Get("Allow")
		w.Header().Set("Allow", allow)
		s.writeError(w, http.StatusMethodNotAllowed, "MethodNotAllowed", fmt.Sprintf("The method %s is not allowed on %s; allowed methods are %s.", r.Method, path, allow))
	default:
		return false
	}
	return true
}

// headerRecorder keeps the status and headers a handler writes and drops
// its body.
type headerRecorder struct {
	header http.Header
	code   int
}

func (h *headerRecorder) Header() http.Header { return h.header }

func (h *headerRecorder) WriteHeader(code int) {
	if h.code == 0 {
		h.code = code
	}
}

func (h *headerRecorder) Write(b []byte) (int, error) {
	if h.code == 0 {
		h.code = http.StatusOK
	}
	return len(b), nil
}

// checkQuery refuses a query string that url.ParseQuery cannot read in
// full. r.URL.Query() drops what it cannot read without a word, so
// "status=ERROR;x" would list every cluster and a webhook's "V=2;count=2"
// would lose its count: the request would do something other than asked.
func checkQuery(raw string) error {
	_, err := url.ParseQuery(raw)
	if err == nil {
		return nil
	}
	if strings.Contains(raw, ";") {
		return engine.BadRequest("The query string is malformed: it contains a semicolon, which does not separate parameters; separate them with & and write a semicolon in a value as %%3B.")
	}
	return engine.BadRequest("The query string is malformed: %v.", err)
}

func versionInRange(v string) bool {
	parse := func(s string) (int, int, bool) {
		a, b, ok := strings.Cut(s, ".")
		x, err1 := strconv.Atoi(a)
		y, err2 := strconv.Atoi(b)
		return x, y, ok && err1 == nil && err2 == nil
	}
	x, y, ok := parse(v)
	if !ok {
		return false
	}
	_, maxMinor, _ := parse(MaxVersion)
	return x == 1 && y >= 0 && y <= maxMinor
}

func (s *Server) writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	if v != nil {
		_ = json.NewEncoder(w).Encode(v)
	}
}

func (s *Server) writeError(w http.ResponseWriter, status int, typ, msg string) {
	var body api.ErrorBody
	body.Code, body.Title, body.Explanation = status, http.StatusText(status), msg
	body.Error.Code, body.Error.Message, body.Error.Type = status, msg, typ
	s.writeJSON(w, status, body)
}

func (s *Server) fail(w http.ResponseWriter, err error) {
	status, typ := engine.HTTPStatus(err)
	if ue, ok := errors.AsType[*host.UnavailableError](err); ok {
		w.Header().Set("Retry-After", strconv.Itoa(int(max(time.Second, ue.RetryAfter.Round(time.Second))/time.Second)))
	}
	if status == http.StatusInternalServerError {
		s.opts.Logger.Error("request failed", "error", err)
	}
	s.writeError(w, status, typ, err.Error())
}

// accepted answers an asynchronous request: 202, Location, and a body.
func (s *Server) accepted(w http.ResponseWriter, a *model.Action, body any) error {
	w.Header().Set("Location", "/v1/actions/"+a.ID)
	if body == nil {
		body = map[string]any{"action": a.ID}
	}
	s.writeJSON(w, http.StatusAccepted, body)
	return nil
}

func only(body map[string]any, prefix string, allowed ...string) error {
	for k := range body {
		if !slices.Contains(allowed, k) {
			return engine.BadRequest("%s%s is not a recognised field; allowed fields are %s.", prefix, k, strings.Join(allowed, ", "))
		}
	}
	return nil
}

// listOpts parses Senlin's list parameters: filters, limit, marker, sort and
// global_project; any other key is refused.
func listOpts(r *http.Request, c engine.Caller, filters, sortKeys []string) (store.ListOpts, error) {
	o := store.ListOpts{Project: c.Project, Filters: map[string][]string{}}
	for k, vals := range r.URL.Query() {
		switch {
		case k == "limit":
			n, err := strconv.Atoi(vals[0])
			if err != nil || n < 0 {
				return o, engine.BadRequest("limit must be a non-negative integer, got %q.", vals[0])
			}
			o.Limit = n
		case k == "marker":
			o.Marker = vals[0]
		case k == "sort":
			for _, part := range strings.Split(vals[0], ",") {
				key, dir, _ := strings.Cut(part, ":")
				if !slices.Contains(sortKeys, key) {
					return o, engine.BadRequest("Unsupported sort key '%s'; use one of %s.", key, strings.Join(sortKeys, ", "))
				}
				if dir != "" && dir != "asc" && dir != "desc" {
					return o, engine.BadRequest("Unsupported sort dir '%s' for '%s'; use asc or desc.", dir, key)
				}
				o.Sort = append(o.Sort, store.SortKey{Key: key, Desc: dir == "desc"})
			}
		case k == "global_project":
			b, err := strconv.ParseBool(vals[0])
			if err != nil {
				return o, engine.BadRequest("global_project must be a boolean, got %q.", vals[0])
			}
			if b {
				if !c.IsAdmin() {
					return o, engine.Forbidden("Only an admin may list across projects (global_project=true).")
				}
				o.Project = ""
			}
		case slices.Contains(filters, k):
			o.Filters[k] = vals
		default:
			return o, engine.BadRequest("Invalid parameter %s", k)
		}
	}
	if o.Marker != "" {
		if _, err := uuid.Parse(o.Marker); err != nil {
			return o, engine.BadRequest("marker must be the id of the last item seen, got %q.", o.Marker)
		}
	}
	return o, nil
}

func (s *Server) ctx(r *http.Request) context.Context { return r.Context() }

// forceParam reads Senlin's delete "force" from ?force=true or a
// {"force": true} body (microversion 1.8). The body is held to the rule of
// every other body: a key it does not know is refused, since a misspelt
// "force" would otherwise be a non-force delete the client did not ask for.
// A chunked body (length -1) is read too, not skipped.
func forceParam(r *http.Request) (bool, error) {
	force, err := queryBool(r, "force")
	if err != nil {
		return false, err
	}
	if r.ContentLength != 0 {
		body, err := decode(r, "")
		if err != nil {
			return false, err
		}
		if err := only(body, "", "force"); err != nil {
			return false, err
		}
		b, err := boolean(body, "force")
		if err != nil {
			return false, err
		}
		if b != nil {
			force = *b
		}
	}
	return force, nil
}

// deleted answers an asynchronous delete: 202, Location and no body.
func deleted(w http.ResponseWriter, a *model.Action) error {
	w.Header().Set("Location", "/v1/actions/"+a.ID)
	w.WriteHeader(http.StatusAccepted)
	return nil
}

func contains(ss []string, s string) bool {
	for _, x := range ss {
		if x == s {
			return true
		}
	}
	return false
}
