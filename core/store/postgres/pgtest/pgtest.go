//go:build unix

// Package pgtest starts a throwaway PostgreSQL server from the installed
// server binaries, for tests and benchmarks.
package pgtest

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
)

// BinDir is where Debian installs the PostgreSQL 15 server binaries.
var BinDir = "/usr/lib/postgresql/15/bin"

// Server is a running throwaway server.
type Server struct {
	Dir  string
	Port int
	cred *syscall.Credential
}

// DSN returns a pgx DSN for the server's unix socket.
func (s *Server) DSN() string {
	return fmt.Sprintf("host=%s port=%d user=postgres dbname=postgres sslmode=disable", s.Dir, s.Port)
}

// Available reports whether the server binaries are installed.
func Available() bool {
	_, err := os.Stat(filepath.Join(BinDir, "initdb"))
	return err == nil
}

// Start initialises and starts a server on a unix socket; t.Cleanup stops it.
// PostgreSQL refuses to run as root, so as root the server runs as the
// postgres user. The test fails (not skips) when the binaries are missing:
// the PostgreSQL half of the store suite is part of every run.
func Start(t testing.TB, port int) *Server {
	t.Helper()
	if !Available() {
		t.Fatalf("PostgreSQL server binaries not found in %s; install postgresql-15 (see .ci/run)", BinDir)
	}
	dir, err := os.MkdirTemp("", "grovepg")
	if err != nil {
		t.Fatal(err)
	}
	s := &Server{Dir: dir, Port: port}
	if os.Geteuid() == 0 {
		u, err := user.Lookup("postgres")
		if err != nil {
			t.Fatalf("running as root needs a postgres user to run the server: %v", err)
		}
		uid, _ := strconv.Atoi(u.Uid)
		gid, _ := strconv.Atoi(u.Gid)
		s.cred = &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}
		if err := os.Chown(dir, uid, gid); err != nil {
			t.Fatal(err)
		}
	}
	s.run(t, "initdb", "-D", filepath.Join(dir, "data"), "-U", "postgres", "-A", "trust", "--no-sync", "-E", "UTF8", "--no-locale")
	s.run(t, "pg_ctl", "-D", filepath.Join(dir, "data"), "-l", filepath.Join(dir, "pg.log"), "-w", "-o",
		fmt.Sprintf("-k %s -p %d -c listen_addresses='' -c fsync=off -c synchronous_commit=off -c full_page_writes=off -c max_connections=200", dir, port), "start")
	t.Cleanup(func() {
		s.run(t, "pg_ctl", "-D", filepath.Join(dir, "data"), "-m", "immediate", "-w", "stop")
		os.RemoveAll(dir)
	})
	return s
}

func (s *Server) run(t testing.TB, name string, args ...string) {
	t.Helper()
	cmd := exec.Command(filepath.Join(BinDir, name), args...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	cmd.Dir = s.Dir
	if s.cred != nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: s.cred}
	}
	if err := cmd.Run(); err != nil {
		log, _ := os.ReadFile(filepath.Join(s.Dir, "pg.log"))
		t.Fatalf("%s %v: %v\n%s\n%s", name, args, err, out.String(), log)
	}
}
