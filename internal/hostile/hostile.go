// Package hostile makes the inputs hostile tests send: bodies larger than
// any test could hold in memory.
package hostile

import "sync/atomic"

// Endless is a request body that starts with Prefix and then repeats 'a'
// for ever, counting what it hands out, so a test can send a body of
// hundreds of megabytes (behind an io.LimitReader) and learn how much of it
// the server made it send, without ever holding it.
type Endless struct {
	Prefix string
	sent   atomic.Int64
}

// Read fills p with the next bytes of the body.
func (e *Endless) Read(p []byte) (int, error) {
	n := 0
	if off := e.sent.Load(); off < int64(len(e.Prefix)) {
		n = copy(p, e.Prefix[off:])
	}
	for i := n; i < len(p); i++ {
		p[i] = 'a'
	}
	e.sent.Add(int64(len(p)))
	return len(p), nil
}

// Sent is how many bytes have been read from the body so far.
func (e *Endless) Sent() int64 { return e.sent.Load() }
