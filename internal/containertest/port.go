package containertest

import (
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"strconv"
	"strings"
	"testing"
)

// Port is a 127.0.0.1 port free now for a host-networked container of the
// test, chosen from 10000 up to the kernel's ephemeral range, as the
// engine's portAllocator chooses node ports (core/engine/ports.go): a port
// a listener on port 0 got can be taken by any process on the machine once
// the test's container has stopped, and recreating the container on it
// then fails. Test helpers may not import the engine (docs/architecture.md),
// hence the few lines that read the range again. Where the range is unknown
// or leaves too little room below it, the kernel chooses.
func Port(t testing.TB) int {
	t.Helper()
	lo, hi := 0, 0
	if b, err := os.ReadFile("/proc/sys/net/ipv4/ip_local_port_range"); err == nil {
		if f := strings.Fields(string(b)); len(f) == 2 {
			if start, err := strconv.Atoi(f[0]); err == nil && start > 12000 {
				lo, hi = 10000, start-1
			}
		}
	}
	for range 100 {
		addr := "127.0.0.1:0"
		if hi > lo {
			addr = fmt.Sprintf("127.0.0.1:%d", lo+rand.IntN(hi-lo+1))
		}
		l, err := net.Listen("tcp", addr)
		if err != nil {
			continue // taken: try another
		}
		port := l.Addr().(*net.TCPAddr).Port
		l.Close()
		return port
	}
	t.Fatal("no free port on 127.0.0.1 in 100 tries")
	return 0
}
