package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/url"
	"sync"

	"github.com/grovehq/grove/api"
)

// followHelp says what -follow shows and how it ends.
const followHelp = "With -follow, the newest -limit events are shown, then each new one as it\n" +
	"is written (GET /v1/events?follow=true, server-sent events), until Ctrl-C;\n" +
	"-json prints one JSON object a line."

// followEvents prints the events the query matches as the agent streams
// them, until ctx ends (a clean end: Ctrl-C is how a follow stops).
func followEvents(ctx context.Context, env *Env, c *api.Client, q url.Values, asJSON bool) error {
	out := &lockedWriter{w: env.Stdout}
	if !asJSON {
		fmt.Fprintf(out, "%-27s %-7s %-8s %-22s %-6s %-7s %s\n", "TIMESTAMP", "TYPE", "OBJECT", "ACTION", "STATUS", "LEVEL", "REASON")
	}
	err := c.FollowEvents(ctx, q, func(e api.Event) error { return printEvent(out, e, asJSON) })
	if ctx.Err() != nil {
		return nil
	}
	return err
}

func printEvent(w io.Writer, e api.Event, asJSON bool) error {
	if asJSON {
		b, err := json.Marshal(e)
		if err != nil {
			return err
		}
		_, err = fmt.Fprintf(w, "%s\n", b)
		return err
	}
	_, err := fmt.Fprintf(w, "%-27s %-7s %-8s %-22s %-6s %-7s %s\n", e.Timestamp, e.OType, short(e.OID), e.Action, e.Status, e.Level, e.StatusReason)
	return err
}

func short(id string) string {
	if len(id) > 8 {
		return id[:8]
	}
	return id
}

// lockedWriter serialises the lines of two streams onto one output.
type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

// runMonitor streams the agent's log lines (GET /v1/agent/monitor, admin
// only) and its events, as `nomad monitor` does, until Ctrl-C.
func runMonitor(ctx context.Context, env *Env, args []string) error {
	g := newGlobals(env)
	fs := flagSet("monitor", g)
	level := fs.String("log-level", "info", "the lowest level of log lines shown: trace, debug, info, warn or error (it may be below the agent's own)")
	events := fs.Bool("events", true, "show the events as they are written too (-events=false: log lines only)")
	if _, err := parseFlags(fs, args); err != nil {
		return err
	}
	c := g.client()
	out := &lockedWriter{w: env.Stdout}
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	var wg sync.WaitGroup
	if *events {
		wg.Add(1)
		go func() {
			defer wg.Done()
			err := c.FollowEvents(ctx, nil, func(e api.Event) error {
				if g.json {
					return printEvent(out, e, true)
				}
				_, err := fmt.Fprintf(out, "%s [EVENT] %s %s %s %s: %s\n", e.Timestamp, e.Level, e.Action, e.Status, short(e.OID), e.StatusReason)
				return err
			})
			if ctx.Err() == nil {
				cancel(fmt.Errorf("the event stream ended: %w", orEnded(err)))
			}
		}()
	}
	q := url.Values{"log_level": {*level}}
	if g.json {
		q.Set("log_json", "true")
	}
	err := c.Stream(ctx, "/v1/agent/monitor", q, func(se api.StreamEvent) error {
		switch se.Event {
		case "log":
			_, err := fmt.Fprintf(out, "%s\n", se.Data)
			return err
		case "dropped":
			fmt.Fprintf(env.Stderr, "grove monitor: %s log lines were dropped: this terminal took them too slowly.\n", se.Data)
		}
		return nil
	})
	if ctx.Err() == nil {
		cancel(fmt.Errorf("the agent's log stream ended: %w", orEnded(err)))
	}
	wg.Wait()
	if cause := context.Cause(ctx); cause != nil {
		var sc signalCause
		if errors.As(cause, &sc) {
			return nil // Ctrl-C is how a monitor stops
		}
		return cause
	}
	return nil
}

// orEnded names a stream the agent closed without an error.
func orEnded(err error) error {
	if err == nil {
		return errors.New("the agent closed it (is it stopping?)")
	}
	return err
}
