package engine

import (
	"context"
	"fmt"
	"net"
	"sync"
	"time"

	"github.com/grovehq/grove/core/model"
)

// portAllocator hands out free 127.0.0.1 ports for nodes of profile types
// that ask for one. A port is free when the kernel gives it to a listener;
// ports handed out recently are not given again, so a node whose process has
// not bound its port yet does not lose it to the next node.
type portAllocator struct {
	mu     sync.Mutex
	recent map[int]time.Time
}

func newPortAllocator() *portAllocator { return &portAllocator{recent: map[int]time.Time{}} }

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
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
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
