//go:build linux

package process

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/grovehq/grove/plugins/sdk"
)

// supConn is the plugin's connection to its data directory's supervisor.
type supConn struct {
	conn net.Conn
	wmu  sync.Mutex
	enc  *json.Encoder

	mu      sync.Mutex
	nextID  uint64
	pending map[uint64]chan supResponse
	done    chan struct{} // closed when the connection is lost
	err     error
}

// startNode asks the supervisor to start a node's process, starting the
// supervisor first when none runs.
func (d *Driver) startNode(ctx context.Context, req startRequest) (supResponse, error) {
	c, err := d.supervisor(ctx, true)
	if err != nil {
		return supResponse{}, err
	}
	return c.call(ctx, supRequest{Start: &req})
}

// call sends one request and waits for its answer.
func (c *supConn) call(ctx context.Context, req supRequest) (supResponse, error) {
	c.mu.Lock()
	c.nextID++
	id := c.nextID
	ch := make(chan supResponse, 1)
	c.pending[id] = ch
	c.mu.Unlock()
	defer func() {
		c.mu.Lock()
		delete(c.pending, id)
		c.mu.Unlock()
	}()
	req.ID = id
	c.wmu.Lock()
	err := c.enc.Encode(req)
	c.wmu.Unlock()
	if err != nil {
		c.conn.Close()
		return supResponse{}, fmt.Errorf("send a request to the process supervisor: %w", err)
	}
	select {
	case r := <-ch:
		return r, nil
	case <-c.done:
		return supResponse{}, fmt.Errorf("the process supervisor went away before answering: %w", c.err)
	case <-ctx.Done():
		return supResponse{}, ctx.Err()
	}
}

// supervisor returns the connection to the data directory's supervisor:
// the one this plugin holds, a running supervisor's (one an earlier plugin
// started), or, when spawn, a new supervisor's.
func (d *Driver) supervisor(ctx context.Context, spawn bool) (*supConn, error) {
	d.supMu.Lock()
	defer d.supMu.Unlock()
	if d.sup != nil {
		select {
		case <-d.sup.done:
		default:
			return d.sup, nil
		}
	}
	root := d.root()
	if err := os.MkdirAll(root, 0o755); err != nil {
		return nil, fmt.Errorf("create the runtime directory: %w", err)
	}
	sock := filepath.Join(root, supervisorSock)
	conn, err := dialUnix(sock)
	if err != nil && !spawn {
		return nil, fmt.Errorf("connect to the process supervisor at %s: %w", sock, err)
	}
	for attempt := 0; err != nil; attempt++ {
		if attempt >= 50 || ctx.Err() != nil {
			return nil, fmt.Errorf("connect to the process supervisor at %s: %w", sock, err)
		}
		if attempt%10 == 0 {
			// None listens (or it is leaving): start one. If another
			// plugin started one at the same time, ours finds the lock
			// taken and exits, and we connect to theirs.
			if serr := spawnSupervisor(ctx, root); serr != nil {
				return nil, serr
			}
		} else {
			time.Sleep(50 * time.Millisecond)
		}
		conn, err = dialUnix(sock)
	}
	c := &supConn{conn: conn, enc: json.NewEncoder(conn), pending: map[uint64]chan supResponse{}, done: make(chan struct{})}
	go d.readSupervisor(c)
	// One round trip: once answered, the supervisor has registered this
	// connection for exit reports (and is not one that was dying as we
	// connected).
	pctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	if _, err := c.call(pctx, supRequest{Ping: true}); err != nil {
		c.conn.Close()
		return nil, fmt.Errorf("reach the process supervisor at %s: %w", sock, err)
	}
	d.sup = c
	return c, nil
}

// readSupervisor dispatches the supervisor's answers and exit reports
// until the connection ends.
func (d *Driver) readSupervisor(c *supConn) {
	sc := bufio.NewScanner(c.conn)
	sc.Buffer(make([]byte, 64*1024), 16*1024*1024)
	for sc.Scan() {
		var r supResponse
		if json.Unmarshal(sc.Bytes(), &r) != nil {
			continue
		}
		if r.Exit != nil {
			// The node's id names its runtime directory.
			if filepath.Dir(r.Exit.Dir) == filepath.Join(d.root(), "nodes") {
				d.publish(sdk.NodeEvent{NodeID: filepath.Base(r.Exit.Dir), Reason: "process exited: " + r.Exit.Reason, Completed: r.Exit.Reason == "status 0"})
			}
			continue
		}
		c.mu.Lock()
		ch := c.pending[r.ID]
		c.mu.Unlock()
		if ch != nil {
			ch <- r
		}
	}
	c.err = sc.Err()
	if c.err == nil {
		c.err = io.EOF
	}
	close(c.done)
	c.conn.Close()
}

// spawnSupervisor starts `grove __process-supervisor ROOT`, detached in a
// session of its own so it outlives this plugin and the agent, and waits
// until it listens or says another one holds the directory.
func spawnSupervisor(ctx context.Context, root string) error {
	exe, err := os.Executable()
	if err != nil {
		return fmt.Errorf("find own executable for the process supervisor: %w", err)
	}
	logf, err := os.OpenFile(filepath.Join(root, "supervisor.log"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return fmt.Errorf("open the process supervisor's log: %w", err)
	}
	defer logf.Close()
	r, w, err := os.Pipe()
	if err != nil {
		return fmt.Errorf("create start pipe: %w", err)
	}
	defer r.Close()
	cmd := exec.Command(exe, SupervisorCommand, root)
	cmd.Dir = "/"
	cmd.Env = []string{"PATH=" + NodePath}
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.ExtraFiles = []*os.File{w}
	// A new session: no signal meant for the agent's terminal or process
	// group reaches it, and nothing ties its life to the plugin's.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := cmd.Start(); err != nil {
		w.Close()
		return fmt.Errorf("start the process supervisor: %w", err)
	}
	w.Close()
	// Reap it if it exits while this plugin is its parent (it usually
	// outlives the plugin and is then reparented).
	go func() { _ = cmd.Wait() }()
	line := make(chan string, 1)
	go func() {
		l, _ := bufio.NewReader(io.LimitReader(r, 4096)).ReadString('\n')
		line <- strings.TrimSpace(l)
	}()
	select {
	case <-ctx.Done():
		return sdk.Retryable(ctx.Err())
	case l := <-line:
		switch {
		case l == "ok", l == "busy":
			return nil
		case strings.HasPrefix(l, "error: "):
			return fmt.Errorf("start the process supervisor: %s", strings.TrimPrefix(l, "error: "))
		}
		return errors.New("the process supervisor exited without reporting a start (see supervisor.log in the plugin's data directory)")
	}
}
