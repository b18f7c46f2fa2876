package server

import "testing"

// TestLineQueueDrops: the monitor's sink never blocks the logger: lines a
// slow client has not taken beyond the queue's size are dropped and counted.
func TestLineQueueDrops(t *testing.T) {
	q := &lineQueue{ch: make(chan []byte, 2)}
	line := []byte("a line\n")
	for range 5 {
		if n, err := q.Write(line); n != len(line) || err != nil {
			t.Fatalf("Write = %d, %v; the logger must see every line written", n, err)
		}
	}
	line[0] = 'X' // the queue holds copies: hclog reuses its buffer
	if got := string(<-q.ch); got != "a line\n" {
		t.Errorf("queued %q", got)
	}
	if d := q.dropped.Load(); d != 3 {
		t.Errorf("dropped %d lines, want 3 (5 written, 2 queued)", d)
	}
}
