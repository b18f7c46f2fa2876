package server

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/grovehq/grove/core/engine"
	"github.com/grovehq/grove/core/model"
	"github.com/grovehq/grove/core/store"
)

const (
	// followWindow is how far back each look for new events reaches: an
	// event is stamped before its transaction commits, and an agent
	// sharing the store may run a little behind, so an event can appear
	// with a time before the newest one already sent. One that appears
	// later than this after its time is in the list, not the stream.
	followWindow = 5 * time.Second
	// writeWait is how long a stream waits for a client to take what it
	// sent: a client that reads nothing for that long is dropped.
	writeWait = 30 * time.Second
	// keepAlive is how often an idle stream sends a comment, so a client
	// (and any proxy between) sees it alive and a client gone is noticed.
	keepAlive = 15 * time.Second
	// monitorLines bounds the log lines waiting for a slow monitor client;
	// lines beyond are dropped and the client told how many.
	monitorLines = 512
)

// sse is a server-sent events stream on one response.
type sse struct {
	w  http.ResponseWriter
	rc *http.ResponseController
}

// startStream answers a request with an event stream, or refuses it (503)
// when MaxStreams are open. done must be called when the stream ends.
func (s *Server) startStream(w http.ResponseWriter) (st *sse, done func(), err error) {
	select {
	case s.streams <- struct{}{}:
	default:
		return nil, nil, &engine.Error{Status: http.StatusServiceUnavailable, Type: "ServiceUnavailable",
			Message: fmt.Sprintf("The agent already serves %d streams, its limit; close one or try again later.", cap(s.streams))}
	}
	s.opts.Metrics.streamsOpen(1)
	done = func() {
		s.opts.Metrics.streamsOpen(-1)
		<-s.streams
	}
	st = &sse{w: w, rc: http.NewResponseController(w)}
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-cache")
	h.Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	return st, done, st.flush()
}

// send writes one event: its name, an id when given, and data, one line
// of it per data: field.
func (st *sse) send(event, id string, data []byte) error {
	var b bytes.Buffer
	b.WriteString("event: " + event + "\n")
	if id != "" {
		b.WriteString("id: " + id + "\n")
	}
	for _, line := range bytes.Split(bytes.TrimRight(data, "\n"), []byte("\n")) {
		b.WriteString("data: ")
		b.Write(line)
		b.WriteByte('\n')
	}
	b.WriteByte('\n')
	_ = st.rc.SetWriteDeadline(time.Now().Add(writeWait))
	if _, err := st.w.Write(b.Bytes()); err != nil {
		return err
	}
	return st.flush()
}

func (st *sse) comment(text string) error {
	_ = st.rc.SetWriteDeadline(time.Now().Add(writeWait))
	if _, err := fmt.Fprintf(st.w, ": %s\n\n", text); err != nil {
		return err
	}
	return st.flush()
}

func (st *sse) flush() error { return st.rc.Flush() }

// followEvents streams the events that match o as they are written,
// after the newest o.Limit of those already written. It reads the store,
// not the engine: events written by every agent sharing it come through,
// and a stream holds no more than the ids of one window of events, however
// slowly its client reads.
func (s *Server) followEvents(w http.ResponseWriter, r *http.Request, o store.ListOpts) error {
	if len(o.Sort) > 0 || o.Marker != "" {
		return engine.BadRequest("follow=true streams events oldest first as they come; sort and marker do not apply to it.")
	}
	ctx := r.Context()
	first := o
	first.Sort = []store.SortKey{{Key: "timestamp", Desc: true}}
	var backlog []*model.Event
	if o.Limit > 0 {
		evs, err := s.r.ListEvents(ctx, first)
		if err != nil {
			return err
		}
		slices.Reverse(evs)
		backlog = evs
	}
	// What is already written, within the window, is seen: only the
	// backlog of it is sent.
	o.Limit = 0
	o.Since = time.Now().Add(-followWindow)
	recent, err := s.r.ListEvents(ctx, o)
	if err != nil {
		return err
	}
	seen := map[string]time.Time{}
	var newest time.Time
	mark := func(e *model.Event) {
		seen[e.ID] = e.Timestamp
		if e.Timestamp.After(newest) {
			newest = e.Timestamp
		}
	}
	for _, e := range recent {
		mark(e)
	}
	st, done, err := s.startStream(w)
	if done == nil {
		return err
	}
	defer done()
	if err != nil {
		return nil // the client went before the stream started
	}
	send := func(e *model.Event) error {
		b, _ := json.Marshal(toEvent(e))
		return st.send("event", e.ID, b)
	}
	for _, e := range backlog {
		if err := send(e); err != nil {
			return nil
		}
		mark(e)
	}
	poll := time.NewTicker(s.opts.FollowEvery)
	defer poll.Stop()
	idle := time.Now()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-poll.C:
		}
		if !newest.IsZero() {
			o.Since = newest.Add(-followWindow)
		}
		evs, err := s.r.ListEvents(ctx, o)
		if err != nil {
			if ctx.Err() == nil {
				b, _ := json.Marshal(map[string]string{"error": "Reading events failed: " + err.Error()})
				_ = st.send("error", "", b)
			}
			return nil
		}
		for _, e := range evs {
			if _, ok := seen[e.ID]; ok {
				continue
			}
			if err := send(e); err != nil {
				return nil
			}
			mark(e)
			idle = time.Now()
		}
		for id, ts := range seen {
			if ts.Before(newest.Add(-2 * followWindow)) {
				delete(seen, id)
			}
		}
		if time.Since(idle) >= keepAlive {
			if st.comment("keep-alive") != nil {
				return nil
			}
			idle = time.Now()
		}
	}
}

// followParam reads ?follow= and takes it out of the query, so the list's
// own parameters are checked as they always are.
func followParam(r *http.Request) (bool, error) {
	q := r.URL.Query()
	if !q.Has("follow") {
		return false, nil
	}
	v := q.Get("follow")
	q.Del("follow")
	r.URL.RawQuery = q.Encode()
	b, err := strconv.ParseBool(v)
	if err != nil {
		return false, engine.BadRequest("follow must be true or false, got %q.", v)
	}
	return b, nil
}

// monitor streams the agent's log lines, from now on, at the level asked
// (?log_level=, default info; it may be lower than the agent's own), as
// text or (?log_json=true) JSON; each line is one "log" event. Lines the
// client is too slow to take are dropped, never queued without bound: a
// "dropped" event says how many.
func (s *Server) monitor(w http.ResponseWriter, r *http.Request, _ engine.Caller) error {
	q := r.URL.Query()
	for k := range q {
		if k != "log_level" && k != "log_json" {
			return engine.BadRequest("Invalid parameter %s; the monitor takes log_level and log_json.", k)
		}
	}
	level := hclog.Info
	if v := q.Get("log_level"); v != "" {
		level = hclog.LevelFromString(v)
		if level == hclog.NoLevel {
			return engine.BadRequest("log_level must be trace, debug, info, warn or error, got %q.", v)
		}
	}
	asJSON := false
	if v := q.Get("log_json"); v != "" {
		b, err := strconv.ParseBool(v)
		if err != nil {
			return engine.BadRequest("log_json must be true or false, got %q.", v)
		}
		asJSON = b
	}
	if s.opts.Logs == nil {
		return &engine.Error{Status: http.StatusNotImplemented, Type: "NotImplemented", Message: "This agent's logger cannot be monitored."}
	}
	st, done, err := s.startStream(w)
	if done == nil {
		return err
	}
	defer done()
	if err != nil {
		return nil // the client went before the stream started
	}
	lines := &lineQueue{ch: make(chan []byte, monitorLines)}
	sink := hclog.NewSinkAdapter(&hclog.LoggerOptions{Level: level, Output: lines, JSONFormat: asJSON})
	s.opts.Logs.RegisterSink(sink)
	defer s.opts.Logs.DeregisterSink(sink)
	ctx := r.Context()
	alive := time.NewTicker(keepAlive)
	defer alive.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case line := <-lines.ch:
			if err := st.send("log", "", line); err != nil {
				return nil
			}
		case <-alive.C:
			if st.comment("keep-alive") != nil {
				return nil
			}
		}
		if n := lines.dropped.Swap(0); n > 0 {
			if st.send("dropped", "", []byte(strconv.FormatInt(n, 10))) != nil {
				return nil
			}
		}
	}
}

// lineQueue is the monitor's sink output: the logger writes each line once
// (hclog writes a whole entry per Write), and must never wait on a client,
// so a full queue drops the line and counts it.
type lineQueue struct {
	ch      chan []byte
	dropped atomic.Int64
}

func (q *lineQueue) Write(p []byte) (int, error) {
	select {
	case q.ch <- bytes.Clone(p):
	default:
		q.dropped.Add(1)
	}
	return len(p), nil
}

// eventLevels maps the level names the API shows to the stored numbers.
func eventLevels(lv []string) {
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
