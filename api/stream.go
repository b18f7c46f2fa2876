package api

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
)

// StreamEvent is one server-sent event of a stream.
type StreamEvent struct {
	// Event is the event's name: "event", "log", "dropped", "error".
	Event string
	ID    string
	// Data is the event's data, its lines joined by newlines.
	Data []byte
}

// maxStreamLine bounds one line of a stream (a log line, an event's JSON).
const maxStreamLine = 1 << 20

// Stream opens the server-sent events stream at path and calls fn with each
// event until ctx ends (it returns ctx's error), the agent ends the stream
// (nil), or fn returns an error (that error). An answer other than a
// stream is returned as an *Error, as Do returns it.
func (c *Client) Stream(ctx context.Context, path string, query url.Values, fn func(StreamEvent) error) error {
	if c.err != nil {
		return c.err
	}
	u := c.Address + path
	if len(query) > 0 {
		u += "?" + query.Encode()
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return err
	}
	req.Header.Set("Accept", "text/event-stream")
	req.Header.Set("OpenStack-API-Version", "clustering 1.14")
	if c.Token != "" {
		req.Header.Set("X-Auth-Token", c.Token)
	}
	// The client's timeout bounds whole requests; a stream has no end.
	hc := *c.HTTP
	hc.Timeout = 0
	resp, err := hc.Do(req)
	if err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		return c.reachError(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode >= 300 || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		data, _ := io.ReadAll(io.LimitReader(resp.Body, maxStreamLine))
		var eb ErrorBody
		if json.Unmarshal(data, &eb) == nil && eb.Error.Message != "" {
			retry, _ := strconv.Atoi(resp.Header.Get("Retry-After"))
			return &Error{Status: resp.StatusCode, Type: eb.Error.Type, Message: eb.Error.Message, RetryAfter: retry}
		}
		return &Error{Status: resp.StatusCode, Message: fmt.Sprintf("GET %s did not answer with an event stream: %s", path, strings.TrimSpace(string(data)))}
	}
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 0, 64*1024), maxStreamLine)
	var ev StreamEvent
	var data [][]byte
	for sc.Scan() {
		line := sc.Bytes()
		if len(line) == 0 {
			if ev.Event != "" || len(data) > 0 {
				if ev.Event == "" {
					ev.Event = "message"
				}
				ev.Data = bytes.Join(data, []byte("\n"))
				if err := fn(ev); err != nil {
					return err
				}
			}
			ev, data = StreamEvent{}, nil
			continue
		}
		field, value, _ := bytes.Cut(line, []byte(":"))
		value = bytes.TrimPrefix(value, []byte(" "))
		switch string(field) {
		case "event":
			ev.Event = string(value)
		case "id":
			ev.ID = string(value)
		case "data":
			data = append(data, bytes.Clone(value))
		}
		// A comment (keep-alive) has an empty field name and is skipped.
	}
	if ctx.Err() != nil {
		return ctx.Err()
	}
	if err := sc.Err(); err != nil && !errors.Is(err, io.ErrUnexpectedEOF) {
		return fmt.Errorf("read the stream of %s: %w", path, err)
	}
	return nil
}

// FollowEvents streams the events that match query (the list's filters,
// and limit: how many already written to send first) as they are written,
// calling fn with each, until ctx ends or fn returns an error.
func (c *Client) FollowEvents(ctx context.Context, query url.Values, fn func(Event) error) error {
	q := url.Values{}
	for k, v := range query {
		q[k] = v
	}
	q.Set("follow", "true")
	return c.Stream(ctx, "/v1/events", q, func(se StreamEvent) error {
		switch se.Event {
		case "event":
			var e Event
			if err := json.Unmarshal(se.Data, &e); err != nil {
				return fmt.Errorf("decode a streamed event: %w", err)
			}
			return fn(e)
		case "error":
			var body struct {
				Error string `json:"error"`
			}
			_ = json.Unmarshal(se.Data, &body)
			return &Error{Status: http.StatusInternalServerError, Message: body.Error}
		}
		return nil
	})
}
