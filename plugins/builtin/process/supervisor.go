//go:build linux

package process

// One supervising process per plugin data directory (so per agent) starts
// every node's process, is their parent and records their exits. It
// replaces a Go wrapper beside every node (about 7 MiB of its own memory
// and a Go runtime's start per node).
//
// Why it is safe across restarts:
//
//   - The plugin or the agent restarts: the supervisor runs in a session of
//     its own (Setsid) and has no parent-death signal, so it lives on, and
//     so do the nodes, its children. The next plugin finds it by its socket
//     in the data directory and reuses it; exits that happened meanwhile
//     were written to the nodes' exit files by the supervisor, their parent.
//   - The supervisor dies (killed, OOM): its node processes are NOT killed.
//     A workload should not die with its bookkeeper, as it did not die with
//     the plugin or the agent; they are reparented to init (or the nearest
//     subreaper). Their exit statuses can then no longer be read by anyone
//     of ours, so the next supervisor (started by the next plugin call that
//     needs one) watches them through pidfds (checked against their
//     recorded start time, so a reused pid is never taken for a node) and
//     writes "exit status unknown: its supervisor was restarted" when they
//     end; a node that ended while no supervisor ran gets "exit status
//     unknown: it exited while its supervisor was not running". Checks keep
//     working throughout: they read the node's pid and start time from
//     /proc, as before.
//   - Two supervisors for one directory never run: a supervisor holds an
//     exclusive flock on DIR/supervisor.lock for its life and binds the
//     socket only once it holds it. A second one (two plugins starting one
//     at once) fails to take the lock, says so and exits; its plugin then
//     connects to the first. The kernel drops the lock when its holder dies,
//     however it dies, so a stale lock never blocks a new supervisor.
//
// The supervisor is a child subreaper (PR_SET_CHILD_SUBREAPER): processes a
// node leaves behind when its leader exits (double-forked daemons) are
// reparented to it and reaped, rather than to init.
//
// Protocol: JSON lines over DIR/supervisor.sock. A plugin sends
// {"id":N,"start":{...}} and gets {"id":N,"pid":P,"ticks":T} or
// {"id":N,"error":"..."}; {"id":N,"ping":true} gets {"id":N}; every
// connected plugin gets {"exit":{"dir":D,"reason":R}} when a node's process
// ends.

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

const (
	supervisorSock = "supervisor.sock"
	supervisorLock = "supervisor.lock"
	// supervisorIdle is how long a supervisor with no node process and no
	// connected plugin waits before it exits.
	supervisorIdle = 10 * time.Second
)

// startRequest asks the supervisor to start a node's process.
type startRequest struct {
	// Dir is the node's runtime directory: its exit file and state.json go
	// there.
	Dir     string   `json:"dir"`
	Argv    []string `json:"argv"`
	Env     []string `json:"env"`
	Workdir string   `json:"workdir"`
	// Log receives the process's stdout and stderr (appended).
	Log string `json:"log"`
}

type supRequest struct {
	ID    uint64        `json:"id"`
	Start *startRequest `json:"start,omitempty"`
	// Ping is answered with the id alone: a plugin that has its answer
	// knows it is registered for exit reports.
	Ping bool `json:"ping,omitempty"`
}

type supExit struct {
	Dir    string `json:"dir"`
	Reason string `json:"reason"`
}

type supResponse struct {
	ID    uint64   `json:"id,omitempty"`
	PID   int      `json:"pid,omitempty"`
	Ticks uint64   `json:"ticks,omitempty"`
	Error string   `json:"error,omitempty"`
	Exit  *supExit `json:"exit,omitempty"`
}

// supervisor is the state of the running supervisor process.
type supervisor struct {
	dir string

	mu       sync.Mutex
	children map[int]string // pid -> node dir, processes we started
	orphans  map[int]string // pidfd -> node dir, processes of an earlier supervisor
	clients  map[*supClient]struct{}
	idleFrom time.Time
	epfd     int
}

type supClient struct {
	mu   sync.Mutex
	conn net.Conn
	enc  *json.Encoder
}

// send writes one message. A plugin that does not read for 5 seconds
// (stopped, stuck) is dropped rather than allowed to hold up the reaper;
// its node checks still find the exits in the exit files.
func (c *supClient) send(r supResponse) {
	c.mu.Lock()
	defer c.mu.Unlock()
	_ = c.conn.SetWriteDeadline(time.Now().Add(5 * time.Second))
	if c.enc.Encode(r) != nil {
		c.conn.Close()
	}
}

// RunSupervisor runs `__process-supervisor DIR` and returns the exit code.
// fd 3, when given, hears "ok" once the socket listens, or "busy" when
// another supervisor holds the directory's lock.
func RunSupervisor(args []string) int {
	if len(args) != 1 {
		fmt.Fprintln(os.Stderr, "usage: grove __process-supervisor DIR")
		return 2
	}
	dir := args[0]
	// Nothing the supervisor inherited beyond its standard streams (and
	// the start report) may reach a node's process.
	_ = unix.CloseRange(4, ^uint(0), unix.CLOSE_RANGE_CLOEXEC)
	report := os.NewFile(3, "start-report")
	if report != nil {
		syscall.CloseOnExec(3)
	}
	say := func(s string) {
		if report != nil {
			fmt.Fprintln(report, s)
			report.Close()
			report = nil
		}
	}
	lock, err := os.OpenFile(filepath.Join(dir, supervisorLock), os.O_CREATE|os.O_RDWR|syscall.O_CLOEXEC, 0o600)
	if err != nil {
		say("error: " + err.Error())
		return 1
	}
	if err := unix.Flock(int(lock.Fd()), unix.LOCK_EX|unix.LOCK_NB); err != nil {
		say("busy")
		return 0
	}
	if err := unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0); err != nil {
		say("error: set child subreaper: " + err.Error())
		return 1
	}
	epfd, err := unix.EpollCreate1(unix.EPOLL_CLOEXEC)
	if err != nil {
		say("error: epoll: " + err.Error())
		return 1
	}
	s := &supervisor{dir: dir, children: map[int]string{}, orphans: map[int]string{}, clients: map[*supClient]struct{}{}, idleFrom: time.Now(), epfd: epfd}
	// SIGCHLD must be caught before the first child starts, or an early
	// exit would go unnoticed until the next one.
	sigchld := make(chan os.Signal, 1)
	signal.Notify(sigchld, syscall.SIGCHLD)
	// No signal is ignored here: an ignored signal stays ignored in the
	// node processes across exec. The supervisor has no terminal (its own
	// session), and its standard streams are a file, so neither SIGHUP nor
	// SIGPIPE comes its way.
	s.adoptOrphans()
	sock := filepath.Join(dir, supervisorSock)
	os.Remove(sock) // stale: its supervisor is gone, since we hold the lock
	ln, err := listenUnix(sock)
	if err != nil {
		say("error: " + err.Error())
		return 1
	}
	if err := os.Chmod(sock, 0o600); err != nil {
		say("error: " + err.Error())
		return 1
	}
	say("ok")
	// The standard streams point at the plugin's log or nothing; the
	// supervisor writes no more to them.
	go s.reap(sigchld)
	go s.watchOrphans()
	go s.idleExit(ln, sock)
	for {
		conn, err := ln.Accept()
		if err != nil {
			return 0
		}
		go s.serve(conn)
	}
}

// idleExit ends the supervisor once it has had no node process and no
// plugin for supervisorIdle: a stopped agent with no nodes leaves nothing
// running. The socket goes before the lock, so a plugin that finds no
// socket can start a new supervisor.
func (s *supervisor) idleExit(ln net.Listener, sock string) {
	for {
		time.Sleep(time.Second)
		s.mu.Lock()
		if len(s.children) > 0 || len(s.orphans) > 0 || len(s.clients) > 0 {
			s.idleFrom = time.Now()
		} else if time.Since(s.idleFrom) > supervisorIdle {
			os.Remove(sock)
			ln.Close()
			os.Exit(0)
		}
		s.mu.Unlock()
	}
}

func (s *supervisor) serve(conn net.Conn) {
	// Whoever may start processes through the supervisor may run commands
	// as its user: only that user's processes are served (the socket's
	// mode says the same, whatever the umask).
	if !sameUser(conn) {
		conn.Close()
		return
	}
	c := &supClient{conn: conn, enc: json.NewEncoder(conn)}
	s.mu.Lock()
	s.clients[c] = struct{}{}
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		delete(s.clients, c)
		s.idleFrom = time.Now()
		s.mu.Unlock()
		conn.Close()
	}()
	sc := bufio.NewScanner(conn)
	sc.Buffer(make([]byte, 64*1024), 16*1024*1024)
	for sc.Scan() {
		var req supRequest
		if err := json.Unmarshal(sc.Bytes(), &req); err != nil {
			c.send(supResponse{ID: req.ID, Error: "bad request: " + err.Error()})
			continue
		}
		if req.Ping {
			c.send(supResponse{ID: req.ID})
			continue
		}
		if req.Start == nil {
			c.send(supResponse{ID: req.ID, Error: "unknown request"})
			continue
		}
		pid, ticks, err := s.start(*req.Start)
		if err != nil {
			c.send(supResponse{ID: req.ID, Error: err.Error()})
			continue
		}
		c.send(supResponse{ID: req.ID, PID: pid, Ticks: ticks})
	}
}

// start forks a node's process in a session of its own (the process group
// a stop signals) and records it in the node's state.json before
// answering, so a plugin that lost the answer finds it there.
func (s *supervisor) start(r startRequest) (int, uint64, error) {
	if len(r.Argv) == 0 {
		return 0, 0, errors.New("no command")
	}
	argv0, err := lookPath(r.Argv[0], r.Env, r.Workdir)
	if err != nil {
		writeExit(r.Dir, fmt.Sprintf("could not start: %v", err))
		return 0, 0, err
	}
	logf, err := os.OpenFile(r.Log, os.O_CREATE|os.O_WRONLY|os.O_APPEND|syscall.O_CLOEXEC, 0o644)
	if err != nil {
		return 0, 0, fmt.Errorf("open output log: %w", err)
	}
	defer logf.Close()
	devnull, err := os.Open(os.DevNull)
	if err != nil {
		return 0, 0, err
	}
	defer devnull.Close()
	attr := &syscall.ProcAttr{
		Dir:   r.Workdir,
		Env:   r.Env,
		Files: []uintptr{devnull.Fd(), logf.Fd(), logf.Fd()},
		Sys:   &syscall.SysProcAttr{Setsid: true},
	}
	// The lock spans the fork and the record: the reaper cannot see the
	// child's exit before it knows whose it is.
	s.mu.Lock()
	defer s.mu.Unlock()
	pid, err := syscall.ForkExec(argv0, r.Argv, attr)
	if err != nil {
		writeExit(r.Dir, fmt.Sprintf("could not start: %v", err))
		return 0, 0, err
	}
	s.children[pid] = r.Dir
	ticks, _ := startTicks(pid)
	if err := writeState(r.Dir, state{PID: pid, StartTicks: ticks, Dir: r.Dir, Supervised: true}); err != nil {
		_ = syscall.Kill(-pid, syscall.SIGKILL)
		return 0, 0, err
	}
	return pid, ticks, nil
}

// lookPath finds argv0 as exec.Command would in the node's own PATH (not
// the supervisor's); a name with a slash is taken as it is, relative to
// the working directory.
func lookPath(argv0 string, env []string, workdir string) (string, error) {
	if strings.Contains(argv0, "/") {
		p := argv0
		if !filepath.IsAbs(p) && workdir != "" {
			p = filepath.Join(workdir, p)
		}
		if err := executable(p); err != nil {
			return "", fmt.Errorf("exec: %q: %w", argv0, err)
		}
		return argv0, nil
	}
	path := NodePath
	for _, kv := range env {
		if v, ok := strings.CutPrefix(kv, "PATH="); ok {
			path = v
		}
	}
	for _, d := range filepath.SplitList(path) {
		if d == "" {
			d = "."
		}
		p := filepath.Join(d, argv0)
		if !filepath.IsAbs(p) && workdir != "" {
			p = filepath.Join(workdir, p)
		}
		if executable(p) == nil {
			return p, nil
		}
	}
	return "", fmt.Errorf("exec: %q: executable file not found in $PATH", argv0)
}

func executable(p string) error {
	fi, err := os.Stat(p)
	if err != nil {
		return err
	}
	if fi.IsDir() || fi.Mode()&0o111 == 0 {
		return fmt.Errorf("%s is not an executable file", p)
	}
	return unix.Access(p, unix.X_OK)
}

// reap waits for every child on SIGCHLD: the node processes, and as a
// subreaper whatever they left behind. A node's exit is peeked at first
// (waitid with WNOWAIT) and written to its exit file before the process is
// reaped, so whoever sees it gone from /proc finds its status written, as
// with the wrapper.
func (s *supervisor) reap(sigchld <-chan os.Signal) {
	for range sigchld {
		for {
			var info unix.Siginfo
			if err := unix.Waitid(unix.P_ALL, 0, &info, unix.WEXITED|unix.WNOHANG|unix.WNOWAIT, nil); err != nil {
				if errors.Is(err, unix.EINTR) {
					continue
				}
				break
			}
			pid, code, status := siginfoChild(&info)
			if pid <= 0 {
				break // no child has exited
			}
			s.mu.Lock()
			dir, ok := s.children[pid]
			delete(s.children, pid)
			s.mu.Unlock()
			var reason string
			if ok {
				switch code {
				case cldExited:
					reason = fmt.Sprintf("status %d", status)
				default: // CLD_KILLED, CLD_DUMPED
					reason = "killed by signal " + unix.Signal(status).String()
				}
				writeExit(dir, reason)
			}
			var ws syscall.WaitStatus
			_, _ = syscall.Wait4(pid, &ws, syscall.WNOHANG, nil)
			if ok {
				s.tell(dir, reason)
			}
		}
	}
}

// cldExited is si_code CLD_EXITED: the child called exit (otherwise a
// signal ended it).
const cldExited = 1

// siginfoChild reads si_pid, si_code and si_status of a SIGCHLD siginfo,
// which x/sys/unix leaves opaque: the union follows three ints, aligned to
// a pointer.
func siginfoChild(info *unix.Siginfo) (pid int, code int32, status int32) {
	raw := (*[128]byte)(unsafe.Pointer(info))
	off := 12
	if unsafe.Sizeof(uintptr(0)) == 8 {
		off = 16
	}
	read := func(at int) int32 { return *(*int32)(unsafe.Pointer(&raw[at])) }
	return int(read(off)), info.Code, read(off + 8)
}

// exited records a node's exit and tells the connected plugins.
func (s *supervisor) exited(dir, reason string) {
	writeExit(dir, reason)
	s.tell(dir, reason)
}

// tell sends a node's exit to the connected plugins.
func (s *supervisor) tell(dir, reason string) {
	s.mu.Lock()
	clients := make([]*supClient, 0, len(s.clients))
	for c := range s.clients {
		clients = append(clients, c)
	}
	s.mu.Unlock()
	for _, c := range clients {
		c.send(supResponse{Exit: &supExit{Dir: dir, Reason: reason}})
	}
}

// adoptOrphans finds the node processes an earlier supervisor started that
// still run (they are not our children, so their statuses are lost) and
// watches them through pidfds; those that ended while no supervisor ran
// get their exit file now.
func (s *supervisor) adoptOrphans() {
	entries, _ := os.ReadDir(filepath.Join(s.dir, "nodes"))
	for _, e := range entries {
		dir := filepath.Join(s.dir, "nodes", e.Name())
		st, err := readState(dir)
		if err != nil || !st.Supervised || st.Dir != dir {
			continue
		}
		if _, err := os.Stat(filepath.Join(dir, "exit")); err == nil {
			continue
		}
		fd, err := unix.PidfdOpen(st.PID, 0)
		if err != nil || !alive(st) {
			if fd >= 0 && err == nil {
				unix.Close(fd)
			}
			writeExit(dir, "exit status unknown: it exited while its supervisor was not running")
			continue
		}
		// Checked after the pidfd is open, so the pidfd is of the very
		// process recorded, not of one that reused its pid.
		if !alive(st) {
			unix.Close(fd)
			writeExit(dir, "exit status unknown: it exited while its supervisor was not running")
			continue
		}
		if err := unix.EpollCtl(s.epfd, unix.EPOLL_CTL_ADD, fd, &unix.EpollEvent{Events: unix.EPOLLIN, Fd: int32(fd)}); err != nil {
			unix.Close(fd)
			continue
		}
		s.orphans[fd] = dir
	}
}

// watchOrphans records the end of each process adopted by adoptOrphans.
func (s *supervisor) watchOrphans() {
	events := make([]unix.EpollEvent, 64)
	for {
		n, err := unix.EpollWait(s.epfd, events, -1)
		if err != nil {
			if errors.Is(err, unix.EINTR) {
				continue
			}
			return
		}
		for _, ev := range events[:n] {
			fd := int(ev.Fd)
			s.mu.Lock()
			dir, ok := s.orphans[fd]
			delete(s.orphans, fd)
			s.mu.Unlock()
			_ = unix.EpollCtl(s.epfd, unix.EPOLL_CTL_DEL, fd, nil)
			unix.Close(fd)
			if ok {
				s.exited(dir, "exit status unknown: its supervisor was restarted")
			}
		}
	}
}

// sameUser reports whether the peer of a unix connection runs as this
// process's user.
func sameUser(conn net.Conn) bool {
	uc, ok := conn.(*net.UnixConn)
	if !ok {
		return false
	}
	raw, err := uc.SyscallConn()
	if err != nil {
		return false
	}
	var cred *unix.Ucred
	var cerr error
	if err := raw.Control(func(fd uintptr) {
		cred, cerr = unix.GetsockoptUcred(int(fd), unix.SOL_SOCKET, unix.SO_PEERCRED)
	}); err != nil || cerr != nil {
		return false
	}
	return int(cred.Uid) == os.Geteuid()
}

// listenUnix listens on path through /proc/self/fd of its directory, so
// a data directory deeper than a socket address allows (108 bytes) works.
func listenUnix(path string) (net.Listener, error) {
	return withShortPath(path, func(p string) (net.Listener, error) { return net.Listen("unix", p) })
}

// dialUnix connects to the socket at path, as listenUnix.
func dialUnix(path string) (net.Conn, error) {
	return withShortPath(path, func(p string) (net.Conn, error) { return net.DialTimeout("unix", p, 5*time.Second) })
}

func withShortPath[T any](path string, f func(string) (T, error)) (T, error) {
	if len(path) < 100 {
		return f(path)
	}
	var zero T
	d, err := os.OpenFile(filepath.Dir(path), unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return zero, err
	}
	defer d.Close()
	return f(fmt.Sprintf("/proc/self/fd/%d/%s", d.Fd(), filepath.Base(path)))
}
