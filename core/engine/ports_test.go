package engine

import (
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestNodePortsComeFromBelowTheEphemeralRange: with the kernel's ephemeral
// range known, node ports come from below it, are distinct, skip a port a
// listener holds, and a range with too few free ports is an error; without
// it (no file, or no room below) the kernel chooses.
func TestNodePortsComeFromBelowTheEphemeralRange(t *testing.T) {
	dir := t.TempDir()
	file := func(body string) string {
		p := filepath.Join(dir, strconv.Itoa(len(body))+".range")
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	for _, c := range []struct {
		path   string
		lo, hi int
	}{
		{file("32768\t60999\n"), 10000, 32767},
		{file("1024 65000\n"), 0, 0},
		{file("garbage\n"), 0, 0},
		{filepath.Join(dir, "missing"), 0, 0},
	} {
		if lo, hi := belowEphemeral(c.path); lo != c.lo || hi != c.hi {
			t.Errorf("%s: range %d-%d, want %d-%d", c.path, lo, hi, c.lo, c.hi)
		}
	}

	p := &portAllocator{recent: map[int]time.Time{}, lo: 10000, hi: 32767}
	ports, err := p.allocate(50)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[int]bool{}
	for _, port := range ports {
		if port < 10000 || port > 32767 || seen[port] {
			t.Errorf("port %d: outside 10000-32767 or given twice (%v)", port, ports)
		}
		seen[port] = true
	}

	// Two ports in the range, one held by a listener: the other is given,
	// then none is left.
	// The port after the held one must be free for the test to mean
	// anything; another process on the machine may hold it, so look for a
	// pair where it is not.
	var held net.Listener
	var h int
	for range 50 {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		port := l.Addr().(*net.TCPAddr).Port
		if next, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", port+1)); err == nil {
			next.Close()
			held, h = l, port
			break
		}
		l.Close()
	}
	if held == nil {
		t.Fatal("no port with a free port after it in 50 tries")
	}
	defer held.Close()
	tight := &portAllocator{recent: map[int]time.Time{}, lo: h, hi: h + 1}
	got, err := tight.allocate(1)
	if err != nil || len(got) != 1 || got[0] != h+1 {
		t.Fatalf("with %d held: %v, %v; want %d", h, got, err, h+1)
	}
	if _, err := tight.allocate(1); err == nil || !strings.Contains(err.Error(), "could not find 1 free ports") {
		t.Errorf("an exhausted range: %v", err)
	}
}
