package haproxy

// The runtime-API client is Grove's own, a small client of HAProxy's line
// protocol, not haproxytech's client-native v6: client-native v6.2.0 works
// against HAProxy 2.6 but pulls about 25 indirect modules (and nearly a
// minute of build) into the grove binary for the six commands a policy
// sends. The protocol is one command per connection, answered in text
// and closed; what Grove sends is checked word by word (no ';' or newline
// can smuggle a second command in) and what it reads is fuzzed
// (FuzzParse*).

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// Runtime talks to one HAProxy's runtime API (its "stats socket ... level
// admin").
type Runtime struct {
	network, addr string
}

// ParseSocket checks the policy's socket property: an absolute unix socket
// path or host:port of a TCP stats socket.
func ParseSocket(s string) (*Runtime, error) {
	if strings.HasPrefix(s, "/") {
		return &Runtime{network: "unix", addr: filepath.Clean(s)}, nil
	}
	host, port, err := net.SplitHostPort(s)
	if err != nil || host == "" {
		return nil, fmt.Errorf("must be an absolute unix socket path or host:port, such as 127.0.0.1:9999; got %q", s)
	}
	if p, err := strconv.Atoi(port); err != nil || p < 1 || p > 65535 {
		return nil, fmt.Errorf("has port %q, which is not a number from 1 to 65535", port)
	}
	return &Runtime{network: "tcp", addr: s}, nil
}

// String is the socket's address as the policy's properties give it.
func (r *Runtime) String() string { return r.addr }

// ioTimeout bounds one command when ctx has no earlier deadline: the
// runtime API answers in milliseconds.
const ioTimeout = 10 * time.Second

// Exec sends one command and returns HAProxy's answer, trailing blank
// lines removed. Words are checked by word.
func (r *Runtime) Exec(ctx context.Context, words ...string) (string, error) {
	for _, w := range words {
		if err := checkWord(w); err != nil {
			return "", err
		}
	}
	d := net.Dialer{Timeout: ioTimeout}
	conn, err := d.DialContext(ctx, r.network, r.addr)
	if err != nil {
		return "", fmt.Errorf("HAProxy's runtime API at %s does not answer: %w", r.addr, err)
	}
	defer conn.Close()
	deadline := time.Now().Add(ioTimeout)
	if dl, ok := ctx.Deadline(); ok && dl.Before(deadline) {
		deadline = dl
	}
	_ = conn.SetDeadline(deadline)
	cmd := strings.Join(words, " ")
	if _, err := io.WriteString(conn, cmd+"\n"); err != nil {
		return "", fmt.Errorf("sending %q to HAProxy at %s: %w", cmd, r.addr, err)
	}
	out, err := io.ReadAll(io.LimitReader(conn, 16<<20))
	if err != nil {
		return "", fmt.Errorf("reading HAProxy's answer to %q at %s: %w", cmd, r.addr, err)
	}
	return strings.TrimRight(string(out), "\n"), nil
}

// checkWord refuses what would change the command HAProxy reads: its
// separators (';', newline, space inside a word) and escapes.
func checkWord(w string) error {
	if w == "" {
		return errors.New("an empty word cannot be sent to HAProxy's runtime API")
	}
	for _, c := range w {
		ok := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.ContainsRune("-_.:/[]", c)
		if !ok {
			return fmt.Errorf("%q cannot be sent to HAProxy's runtime API: it has %q, which is not a letter, digit or one of -_.:/[]", w, c)
		}
	}
	return nil
}

// expect runs a command whose success is one of the given answers (often
// the empty one); any other answer is HAProxy's refusal.
func (r *Runtime) expect(ctx context.Context, ok []string, words ...string) error {
	out, err := r.Exec(ctx, words...)
	if err != nil {
		return err
	}
	for _, o := range ok {
		if strings.TrimSpace(out) == o || (o != "" && strings.HasPrefix(out, o)) {
			return nil
		}
	}
	return fmt.Errorf("HAProxy refused %q: %s", strings.Join(words, " "), strings.TrimSpace(out))
}

// Server is one server of a backend as "show servers state" and "show
// stat" report it.
type Server struct {
	Name string
	// Addr is host:port.
	Addr string
	// Admin is srv_admin_state, a bit set: 0x01 maintenance forced by the
	// runtime API, 0x08 drain forced by it.
	Admin int
	// Op is srv_op_state: 0 stopped, 1 starting, 2 running, 3 stopping.
	Op int
	// Sessions is scur, the server's current sessions.
	Sessions int
}

// Admin state bits of "show servers state" (HAProxy's SRV_ADMF_*).
const (
	AdminForcedMaint = 0x01
	AdminForcedDrain = 0x08
)

// Ready says the server takes new traffic as far as the runtime API is
// concerned.
func (s Server) Ready() bool { return s.Admin&(AdminForcedMaint|AdminForcedDrain) == 0 }

// Servers lists a backend's servers with their sessions. A missing backend
// is an error saying so.
func (r *Runtime) Servers(ctx context.Context, backend string) ([]Server, error) {
	out, err := r.Exec(ctx, "show", "servers", "state", backend)
	if err != nil {
		return nil, err
	}
	servers, err := ParseServersState(out)
	if err != nil {
		return nil, fmt.Errorf("backend %q: %w", backend, err)
	}
	if len(servers) == 0 {
		return nil, nil
	}
	stat, err := r.Exec(ctx, "show", "stat")
	if err != nil {
		return nil, err
	}
	sessions, err := ParseStatSessions(stat, backend)
	if err != nil {
		return nil, err
	}
	for i := range servers {
		servers[i].Sessions = sessions[servers[i].Name]
	}
	return servers, nil
}

// ParseServersState reads the answer to "show servers state BACKEND":
// a version line, a "# " header naming the columns, a row per server.
// HAProxy's refusal (such as "Can't find backend.") is returned as an
// error.
func ParseServersState(out string) ([]Server, error) {
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) < 2 || strings.TrimSpace(lines[0]) != "1" || !strings.HasPrefix(lines[1], "# ") {
		return nil, fmt.Errorf("HAProxy answered: %s", strings.TrimSpace(out))
	}
	col := map[string]int{}
	for i, f := range strings.Fields(strings.TrimPrefix(lines[1], "# ")) {
		col[f] = i
	}
	for _, need := range []string{"srv_name", "srv_addr", "srv_port", "srv_op_state", "srv_admin_state"} {
		if _, ok := col[need]; !ok {
			return nil, fmt.Errorf("HAProxy's server state has no column %s", need)
		}
	}
	var out2 []Server
	for _, l := range lines[2:] {
		f := strings.Fields(l)
		if len(f) == 0 {
			continue
		}
		if len(f) != len(col) {
			return nil, fmt.Errorf("HAProxy's server state row %q has %d fields, the header %d", l, len(f), len(col))
		}
		op, err1 := strconv.Atoi(f[col["srv_op_state"]])
		adm, err2 := strconv.Atoi(f[col["srv_admin_state"]])
		if err := errors.Join(err1, err2); err != nil {
			return nil, fmt.Errorf("HAProxy's server state row %q: %w", l, err)
		}
		out2 = append(out2, Server{Name: f[col["srv_name"]], Addr: net.JoinHostPort(f[col["srv_addr"]], f[col["srv_port"]]), Op: op, Admin: adm})
	}
	return out2, nil
}

// ParseStatSessions reads the current sessions (scur) of each server of
// backend from the CSV answer to "show stat".
func ParseStatSessions(out, backend string) (map[string]int, error) {
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) == 0 || !strings.HasPrefix(lines[0], "# ") {
		return nil, fmt.Errorf("HAProxy answered: %s", strings.TrimSpace(out))
	}
	col := map[string]int{}
	for i, f := range strings.Split(strings.TrimPrefix(lines[0], "# "), ",") {
		col[f] = i
	}
	px, okp := col["pxname"]
	sv, oks := col["svname"]
	sc, okc := col["scur"]
	if !okp || !oks || !okc {
		return nil, errors.New("HAProxy's stats have no pxname, svname or scur column")
	}
	res := map[string]int{}
	for _, l := range lines[1:] {
		f := strings.Split(l, ",")
		if len(f) <= max(px, sv, sc) || f[px] != backend || f[sv] == "BACKEND" || f[sv] == "FRONTEND" {
			continue
		}
		n, err := strconv.Atoi(f[sc])
		if err != nil {
			return nil, fmt.Errorf("HAProxy's stats give server %s the sessions %q: %w", f[sv], f[sc], err)
		}
		res[f[sv]] = n
	}
	return res, nil
}

// AddServer adds a server at addr (host:port); HAProxy starts it in
// maintenance. With check, its health checks are enabled.
func (r *Runtime) AddServer(ctx context.Context, backend, name, addr string, weight int, check bool) error {
	words := []string{"add", "server", backend + "/" + name, addr, "weight", strconv.Itoa(weight)}
	if check {
		words = append(words, "check")
	}
	if err := r.expect(ctx, []string{"New server registered."}, words...); err != nil {
		return err
	}
	if check {
		return r.expect(ctx, []string{""}, "enable", "health", backend+"/"+name)
	}
	return nil
}

// SetState sets a server's administrative state: ready, drain or maint.
func (r *Runtime) SetState(ctx context.Context, backend, name, state string) error {
	return r.expect(ctx, []string{""}, "set", "server", backend+"/"+name, "state", state)
}

// SetAddr moves a server to addr (host:port).
func (r *Runtime) SetAddr(ctx context.Context, backend, name, addr string) error {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("address %q: %w", addr, err)
	}
	// HAProxy words a change it made as a sentence ("... changed from
	// ... by 'stats socket command'"), and an unchanged one as "no need
	// to change the addr".
	out, err := r.Exec(ctx, "set", "server", backend+"/"+name, "addr", host, "port", port)
	if err != nil {
		return err
	}
	if strings.Contains(out, "changed from") || strings.Contains(out, "no need to change") || strings.TrimSpace(out) == "" {
		return nil
	}
	return fmt.Errorf("HAProxy refused to move server %s/%s to %s: %s", backend, name, addr, strings.TrimSpace(out))
}

// DelServer deletes a server, which must be in maintenance.
func (r *Runtime) DelServer(ctx context.Context, backend, name string) error {
	return r.expect(ctx, []string{"Server deleted."}, "del", "server", backend+"/"+name)
}
