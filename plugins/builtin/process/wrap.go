//go:build linux

package process

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"syscall"
)

// RunWrapper runs `__process-wrap DIR -- COMMAND...` and returns the exit code.
func RunWrapper(args []string) int {
	if len(args) < 3 || args[1] != "--" {
		fmt.Fprintln(os.Stderr, "usage: grove __process-wrap DIR -- COMMAND [ARGS...]")
		return 2
	}
	dir, argv := args[0], args[2:]
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = nil, os.Stdout, os.Stderr
	// The process dies with its wrapper, so a SIGKILL of the wrapper leaves
	// nothing behind.
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	sigs := make(chan os.Signal, 4)
	signal.Notify(sigs, syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP)
	// fd 3, when the driver passed one, hears whether the start worked, so a
	// missing binary fails the node's creation instead of a later check.
	report := os.NewFile(3, "start-report")
	if report != nil {
		// The node's process must not inherit the report pipe, or the
		// driver would wait for its end forever.
		syscall.CloseOnExec(3)
	}
	if err := cmd.Start(); err != nil {
		writeExit(dir, fmt.Sprintf("could not start: %v", err))
		if report != nil {
			fmt.Fprintf(report, "error: %v\n", err)
			report.Close()
		}
		return 127
	}
	if report != nil {
		fmt.Fprintln(report, "ok")
		report.Close()
	}
	go func() {
		for s := range sigs {
			_ = cmd.Process.Signal(s)
		}
	}()
	err := cmd.Wait()
	var ee *exec.ExitError
	switch {
	case err == nil:
		writeExit(dir, "status 0")
		return 0
	case errors.As(err, &ee):
		ws := ee.Sys().(syscall.WaitStatus)
		if ws.Signaled() {
			writeExit(dir, "killed by signal "+ws.Signal().String())
			return 128 + int(ws.Signal())
		}
		writeExit(dir, fmt.Sprintf("status %d", ws.ExitStatus()))
		return ws.ExitStatus()
	default:
		writeExit(dir, err.Error())
		return 1
	}
}

// writeExit records a node's exit status. The file appears whole (written
// aside, then renamed), so a check never reads it half-written.
func writeExit(dir, msg string) {
	tmp := filepath.Join(dir, "exit.tmp")
	if os.WriteFile(tmp, []byte(msg+"\n"), 0o644) == nil {
		_ = os.Rename(tmp, filepath.Join(dir, "exit"))
	}
}
