package ids

import (
	"strings"
	"sync"
	"testing"

	"github.com/google/uuid"
)

func TestIDsFollowCreationWithDistinctShortIDs(t *testing.T) {
	s := NewSource()
	s.next.Store(1 << 20) // far from the wrap, which the next test covers
	prev := s.New()
	for i := 0; i < 10000; i++ {
		id := s.New()
		u, err := uuid.Parse(id)
		if err != nil {
			t.Fatalf("id %q does not parse as a UUID: %v", id, err)
		}
		if u.Version() != 8 || u.Variant() != uuid.RFC4122 {
			t.Fatalf("id %s is version %d, variant %s; want version 8 of RFC 9562's variant", id, u.Version(), u.Variant())
		}
		if id <= prev {
			t.Fatalf("id %s made after %s sorts before it", id, prev)
		}
		if id[:8] == prev[:8] {
			t.Fatalf("ids %s and %s share their short id", prev, id)
		}
		prev = id
	}
}

func TestIDsStayUniqueAcrossTheCountersWrap(t *testing.T) {
	s := NewSource()
	s.next.Store(^uint32(0) - 2)
	seen := map[string]bool{}
	for i := 0; i < 6; i++ {
		id := s.New()
		if seen[id] {
			t.Fatalf("id %s made twice", id)
		}
		seen[id] = true
	}
	if id := s.New(); !strings.HasPrefix(id, "00000004-") {
		t.Errorf("after the wrap the counter goes on from zero: got %s", id)
	}
}

func TestIDsFromConcurrentCallersAreUnique(t *testing.T) {
	s := NewSource()
	const callers, each = 8, 2000
	out := make([][]string, callers)
	var wg sync.WaitGroup
	for c := range callers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range each {
				out[c] = append(out[c], s.New())
			}
		}()
	}
	wg.Wait()
	short := map[string]bool{}
	for _, ids := range out {
		for _, id := range ids {
			if short[id[:8]] {
				t.Fatalf("short id %s given twice", id[:8])
			}
			short[id[:8]] = true
		}
	}
	if len(short) != callers*each {
		t.Errorf("%d distinct ids from %d calls", len(short), callers*each)
	}
}
