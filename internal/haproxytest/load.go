package haproxytest

import (
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// Load is a request loop through the frontend: a few clients on kept-alive
// connections send GETs until Stop, counting the requests that failed (an
// error or a status other than 200) and noting when each of grove's demo
// HTTP servers ("hello from NAME ...") first answered.
type Load struct {
	sent, failed atomic.Int64
	firstErr     atomic.Value
	stop         chan struct{}
	wg           sync.WaitGroup

	mu        sync.Mutex
	firstSeen map[string]time.Time
}

// StartLoad starts a request loop of clients clients; the caller stops it.
func (h *HAProxy) StartLoad(clients int) *Load {
	l := &Load{stop: make(chan struct{}), firstSeen: map[string]time.Time{}}
	for range clients {
		l.wg.Add(1)
		go func() {
			defer l.wg.Done()
			hc := http.Client{Timeout: 5 * time.Second}
			for {
				select {
				case <-l.stop:
					return
				default:
				}
				l.sent.Add(1)
				if err := l.get(&hc, "http://"+h.Frontend+"/"); err != nil {
					l.failed.Add(1)
					l.firstErr.CompareAndSwap(nil, err.Error())
				}
			}
		}()
	}
	return l
}

func (l *Load) get(hc *http.Client, url string) error {
	resp, err := hc.Get(url)
	if err != nil {
		return err
	}
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		return err
	}
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("status %d", resp.StatusCode)
	}
	if name, ok := strings.CutPrefix(string(body), "hello from "); ok {
		if f := strings.Fields(name); len(f) > 0 {
			l.mu.Lock()
			if _, seen := l.firstSeen[f[0]]; !seen {
				l.firstSeen[f[0]] = time.Now()
			}
			l.mu.Unlock()
		}
	}
	return nil
}

// Sent is how many requests were sent so far.
func (l *Load) Sent() int64 { return l.sent.Load() }

// Failed is how many of them failed.
func (l *Load) Failed() int64 { return l.failed.Load() }

// FirstError is the first failure's message, empty if none failed.
func (l *Load) FirstError() string {
	s, _ := l.firstErr.Load().(string)
	return s
}

// FirstSeen is when the server named name first answered.
func (l *Load) FirstSeen(name string) (time.Time, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	t, ok := l.firstSeen[name]
	return t, ok
}

// Stop ends the loop and waits for its clients.
func (l *Load) Stop() {
	close(l.stop)
	l.wg.Wait()
}
