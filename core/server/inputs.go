package server

import (
	"bytes"
	"errors"
	"io"
	"net/http"
	"slices"
	"strconv"
	"strings"

	"github.com/grovehq/grove/core/engine"
)

// takes is what a write route reads beyond its path: the query parameters
// it knows and whether it reads a body. A write is held to it before its
// handler runs, because a parameter or body the handler never reads would
// otherwise be dropped without a word: DELETE /v1/clusters/x?forcee=true
// would do a non-force delete and DELETE /v1/profiles/x with {"force":
// true} a plain one. Reads are not checked: Senlin's clients send
// parameters to shows (show_details) that change nothing here.
type takes struct {
	query    []string
	anyQuery bool // the webhook trigger: every parameter is a param
	noBody   bool
}

// routeOpt sets part of a route's takes.
type routeOpt func(*takes)

// withQuery names the query parameters a write route reads.
func withQuery(keys ...string) routeOpt { return func(t *takes) { t.query = keys } }

// anyQuery lets a write route read any query parameter.
func anyQuery(t *takes) { t.anyQuery = true }

// noBody marks a write route that reads no body. An empty body, or an
// empty JSON object, is still accepted: some clients send {} with every
// write.
func noBody(t *takes) { t.noBody = true }

// isWrite reports whether a method changes something.
func isWrite(method string) bool {
	return method != http.MethodGet && method != http.MethodHead && method != http.MethodOptions
}

// check refuses a write whose query or body the route does not read.
func (t takes) check(r *http.Request) error {
	if !isWrite(r.Method) {
		return nil
	}
	if !t.anyQuery {
		for k := range r.URL.Query() {
			if slices.Contains(t.query, k) {
				continue
			}
			if len(t.query) == 0 {
				return engine.BadRequest("Invalid parameter %s; %s takes no query parameters.", k, r.Pattern)
			}
			return engine.BadRequest("Invalid parameter %s; %s takes only %s.", k, r.Pattern, strings.Join(t.query, ", "))
		}
	}
	if t.noBody && r.ContentLength != 0 {
		return emptyBody(r)
	}
	return nil
}

// emptyBody reads a body that should hold nothing and refuses one that
// holds anything but whitespace or {}. The body is already bounded by the
// server's MaxBytesReader. What was read is put back for the handler.
func emptyBody(r *http.Request) error {
	b, err := io.ReadAll(r.Body)
	if err != nil {
		if mb, ok := errors.AsType[*http.MaxBytesError](err); ok {
			return bodyTooLarge(mb.Limit)
		}
		return engine.BadRequest("The request body could not be read: %v.", err)
	}
	r.Body = io.NopCloser(bytes.NewReader(b))
	if len(bytes.TrimSpace(b)) == 0 {
		return nil
	}
	body, err := readBody(bytes.NewReader(b))
	if err != nil {
		return err
	}
	if len(body) > 0 {
		keys := make([]string, 0, len(body))
		for k := range body {
			keys = append(keys, strconv.Quote(k))
		}
		slices.Sort(keys)
		return engine.BadRequest("%s takes no request body, but the body sent holds %s; send no body (or {}).", r.Pattern, strings.Join(keys, ", "))
	}
	return nil
}

// queryBool reads a boolean query parameter: absent is false; true and
// false (any case, or what strconv.ParseBool reads) are themselves; any
// other value is refused, naming it, rather than read as false.
func queryBool(r *http.Request, key string) (bool, error) {
	q := r.URL.Query()
	if !q.Has(key) {
		return false, nil
	}
	vs := q[key]
	if len(vs) != 1 {
		return false, engine.BadRequest("%s is given %d times; give it once.", key, len(vs))
	}
	b, err := strconv.ParseBool(strings.ToLower(vs[0]))
	if err != nil {
		return false, engine.BadRequest("%s must be true or false, got %q.", key, vs[0])
	}
	return b, nil
}
