// Package ids makes the ids of the rows Grove's engine writes by the
// thousand: nodes, actions and events.
package ids

import (
	"encoding/binary"
	"math/rand/v2"
	"sync/atomic"

	"github.com/google/uuid"
)

// Source makes ids: UUIDs whose first 32 bits count up from a random
// start, the rest random (RFC 9562 version 8, the version for layouts of
// one's own).
//
// Random (version 4) ids put every new node, action and event on a page
// of its own in each index keyed by id, so a large create writes about one
// page per row per index and slows as the tables grow. Ids that follow
// creation keep a batch's rows on a few adjacent pages. Time-ordered
// (version 7) ids would do that too, but their first 8 hex digits, the
// short id Senlin's clients show and accept, are the same for every id
// made in the same minute; a counter's differ from one id to the next.
// Each source starts at a random point, so agents sharing a store, and an
// agent after a restart, count in ranges of their own; the 90 random bits
// that follow keep ids unique where ranges meet, and unguessable. Objects
// made one at a time (clusters, profiles, receivers, tokens) keep random
// ids: nothing is gained by ordering them, and a 6-character short id of
// one would often name its neighbours too.
type Source struct {
	next atomic.Uint32
}

// NewSource returns a source counting from a random point.
func NewSource() *Source {
	s := &Source{}
	s.next.Store(rand.Uint32())
	return s
}

// New returns the next id.
func (s *Source) New() string {
	u := uuid.New()
	binary.BigEndian.PutUint32(u[0:4], s.next.Add(1))
	u[6] = u[6]&0x0f | 0x80 // version 8; uuid.New set the RFC 9562 variant
	return u.String()
}
