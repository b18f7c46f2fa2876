package engine

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/grovehq/grove/core/model"
)

// portAllocator hands out free 127.0.0.1 ports for nodes of profile types
// that ask for one. A port is free when the kernel lets a listener bind it;
// ports handed out recently are not given again, so a node whose process has
// not bound its port yet does not lose it to the next node.
//
// Ports come from below the kernel's ephemeral range when it is known: a
// port from that range (what a listener on port 0 gets) can be taken, in the
// moment between its allocation and the node binding it, as the local port
// of any outgoing connection on the machine, which a busy machine makes all
// the time.
type portAllocator struct {
	mu     sync.Mutex
	recent map[int]time.Time
	// lo and hi bound the ports handed out; zero lets the kernel choose.
	lo, hi int
}

func newPortAllocator() *portAllocator {
	p := &portAllocator{recent: map[int]time.Time{}}
	p.lo, p.hi = belowEphemeral("/proc/sys/net/ipv4/ip_local_port_range")
	return p
}

// belowEphemeral is the range node ports come from: 10000 up to the start
// of the ephemeral range the file gives, or zeros when the file is missing
// (not Linux) or leaves too little room below.
func belowEphemeral(path string) (lo, hi int) {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0, 0
	}
	f := strings.Fields(string(b))
	if len(f) != 2 {
		return 0, 0
	}
	start, err := strconv.Atoi(f[0])
	if err != nil || start <= 12000 {
		return 0, 0
	}
	return 10000, start - 1
}

const portMemory = 10 * time.Minute

func (p *portAllocator) allocate(n int) ([]int, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	now := time.Now()
	for port, at := range p.recent {
		if now.Sub(at) > portMemory {
			delete(p.recent, port)
		}
	}
	var listeners []net.Listener
	defer func() {
		for _, l := range listeners {
			l.Close()
		}
	}()
	ports := make([]int, 0, n)
	for attempts := 0; len(ports) < n; attempts++ {
		if attempts > n*10+100 {
			return nil, fmt.Errorf("could not find %d free ports on 127.0.0.1", n)
		}
		want := 0
		if p.hi > p.lo {
			want = p.lo + rand.IntN(p.hi-p.lo+1)
			if _, used := p.recent[want]; used {
				continue
			}
		}
		l, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", want))
		if err != nil {
			if want != 0 {
				continue // taken: try another
			}
			return nil, fmt.Errorf("allocate a port on 127.0.0.1: %w", err)
		}
		listeners = append(listeners, l)
		port := l.Addr().(*net.TCPAddr).Port
		if _, used := p.recent[port]; used {
			continue
		}
		p.recent[port] = now
		ports = append(ports, port)
	}
	return ports, nil
}

// preparePorts gives each node a port in its data when the profile's driver
// asks for one.
func (e *Engine) preparePorts(_ context.Context, prof *model.Profile, nodes []*model.Node) error {
	comp, ok := e.plugins.Component("profile", prof.Type)
	if !ok || !comp.NeedsPort {
		return nil
	}
	var need []*model.Node
	for _, n := range nodes {
		if _, has := n.Data["port"]; !has {
			need = append(need, n)
		}
	}
	ports, err := e.ports.allocate(len(need))
	if err != nil {
		return err
	}
	for i, n := range need {
		if n.Data == nil {
			n.Data = map[string]any{}
		}
		n.Data["port"] = ports[i]
	}
	return nil
}
