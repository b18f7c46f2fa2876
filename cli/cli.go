// Package cli is the grove command line: the agent, the plugin server, and
// commands that talk to an agent's API.
//
// The command tree runs on github.com/hashicorp/cli (the maintained
// successor of mitchellh/cli) with github.com/posener/complete, as Terraform
// and Nomad do, rather than on cobra: hashicorp/cli leaves each command's
// flag parsing to the standard flag package, so every existing single-dash
// flag (-spec-file, -wait, -json) keeps working unchanged, where cobra's
// pflag would read -wait as the shorthands -w -a -i -t. The library gives
// -h/-help/--help at every level, -version, nested subcommands, hidden
// commands and shell completion (-autocomplete-install); this package adds
// the help text rendered from each command's own flag set, `help CMD`, and
// "did you mean" suggestions for an unknown command.
//
// commands.go is the command table: adding a command is one entry.
package cli

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime/debug"
	"strconv"
	"strings"
	"syscall"

	"github.com/grovehq/grove/api"
	"github.com/grovehq/grove/plugins/builtin/process"
)

// Version is stamped at build time by the GNUmakefile's build target
// (-ldflags "-X github.com/grovehq/grove/cli.Version=$(git describe)").
// Empty, version() falls back to what the Go toolchain recorded.
var Version = ""

// version is the version this binary reports: the stamped one, else the
// module version or VCS revision recorded at build (go install, go build
// in a checkout), else a development marker.
func version() string {
	if Version != "" {
		return Version
	}
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return "0.1.0-dev"
	}
	if v := info.Main.Version; v != "" && v != "(devel)" {
		return v
	}
	rev, dirty := "", false
	for _, s := range info.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			dirty = s.Value == "true"
		}
	}
	if rev == "" {
		return "0.1.0-dev"
	}
	if len(rev) > 12 {
		rev = rev[:12]
	}
	if dirty {
		rev += "-dirty"
	}
	return "0.1.0-dev+" + rev
}

// Env is what a command may touch; tests swap the writers.
type Env struct {
	Stdin  io.Reader
	Stdout io.Writer
	Stderr io.Writer
	// Terminal is true when Stderr is a terminal (progress is redrawn).
	Terminal bool
	// Interactive is true when Stdin is a terminal (questions may be asked).
	Interactive bool
	// Width is the terminal's columns when Terminal, else 0.
	Width int

	// help, when set, asks a command only to declare its flags: flagSet
	// records the command's flag set there for the help text, and the
	// command stops at parsing "-h".
	help *flagCapture
}

// Main runs the CLI and returns the exit code.
func Main(args []string) int {
	if len(args) > 0 && args[0] == process.WrapCommand {
		return process.RunWrapper(args[1:])
	}
	if len(args) > 0 && args[0] == process.SupervisorCommand {
		return process.RunSupervisor(args[1:])
	}
	env := &Env{Stdin: os.Stdin, Stdout: os.Stdout, Stderr: os.Stderr, Terminal: isTerminal(os.Stderr), Interactive: isTerminal(os.Stdin)}
	if env.Terminal {
		env.Width = terminalWidth(os.Stderr)
	}
	// The context ends with the signal as its cause, so that an interrupted
	// wait exits 130 (143 for SIGTERM) and says the action goes on.
	ctx, cancel := context.WithCancelCause(context.Background())
	defer cancel(nil)
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	defer signal.Stop(sigs)
	go func() {
		select {
		case s := <-sigs:
			cancel(signalCause{s})
		case <-ctx.Done():
		}
	}()
	return Run(ctx, env, args)
}

type usageError struct{ msg string }

func (u usageError) Error() string { return u.msg }

func usagef(format string, args ...any) error { return usageError{fmt.Sprintf(format, args...)} }

// report prints a command's error and returns its exit code: 2 for a
// usage error, the chosen code for an exitError, else 1. With -json the
// error is a JSON object shaped as the API's, on stdout, so a script that
// reads stdout sees either the result or the error.
func report(env *Env, err error, jsonMode bool) int {
	if err == nil || errors.Is(err, flag.ErrHelp) {
		return 0
	}
	code, typ, msg := 1, "Error", describeError(err)
	var ee exitError
	var ue usageError
	var ae *api.Error
	switch {
	case errors.As(err, &ee):
		code, msg = ee.code, ee.msg
		if ee.note {
			typ = "Interrupted"
		}
		if ee.answered {
			return code
		}
		if code == 2 && msg == "" {
			// plan -detailed-exitcode: changes are not an error.
			return code
		}
	case errors.As(err, &ue):
		code, typ, msg = 2, "UsageError", ue.msg
	case errors.As(err, &ae):
		typ = ae.Type
		if typ == "" {
			typ = "APIError"
		}
	}
	if !jsonMode {
		if msg != "" && ee.note {
			fmt.Fprintln(env.Stderr, msg)
		} else if msg != "" {
			fmt.Fprintf(env.Stderr, "Error: %s\n", msg)
		}
		return code
	}
	if msg == "" {
		// The command printed its own account on stderr (a failed apply).
		msg = "the command failed; see the messages on stderr"
	}
	// code is the agent's HTTP status when the agent refused, else the
	// exit code; exit_code is always the exit code.
	body := map[string]any{"code": code, "type": typ, "message": msg, "exit_code": code}
	if ae != nil {
		body["code"] = ae.Status
	}
	printJSON(env.Stdout, map[string]any{"error": body})
	return code
}

// jsonRequested reports whether a command line asks for -json output,
// before the command's own flags are parsed (so a flag error is JSON too).
func jsonRequested(args []string) bool {
	for _, a := range args {
		if a == "--" {
			return false
		}
		if !strings.HasPrefix(a, "-") {
			continue
		}
		name, val, hasVal := strings.Cut(strings.TrimLeft(a, "-"), "=")
		if name != "json" {
			continue
		}
		if !hasVal {
			return true
		}
		b, _ := strconv.ParseBool(val)
		return b
	}
	return false
}

// describeError turns an API failure into one sentence plus the API's reason.
func describeError(err error) string {
	var ae *api.Error
	if !errors.As(err, &ae) {
		return err.Error()
	}
	// What the CLI said around the agent's answer ("create cluster.web: "
	// before it, "; profile.web was removed again" after it) stays where it
	// was, and the answer is replaced by the sentence that explains it.
	msg := err.Error()
	i := strings.LastIndex(msg, ae.Error())
	if i < 0 {
		return msg
	}
	return msg[:i] + explainAPIError(ae) + msg[i+len(ae.Error()):]
}

// explainAPIError is the sentence the CLI prints for an answer of the agent:
// what its status means, then the agent's message.
func explainAPIError(ae *api.Error) string {
	if ae.Foreign {
		return ae.Error() // it says what answered, and that it may not be Grove
	}
	switch ae.Status {
	case 400:
		return "The request was refused: " + ae.Message
	case 401:
		return "The agent needs a valid token: pass one with -token or GROVE_TOKEN (this one is missing, unknown, expired or revoked): " + ae.Message
	case 403:
		return "The token's role or project does not allow this: " + ae.Message
	case 404:
		return ae.Message
	case 409:
		return "The request conflicts with the current state: " + ae.Message
	case 413:
		return "The request is too large: " + ae.Message
	case 503:
		if ae.RetryAfter > 0 {
			return fmt.Sprintf("The agent cannot serve this now; try again in %s: %s", plural(ae.RetryAfter, "second", "seconds"), ae.Message)
		}
		return "The agent cannot serve this now; try again shortly: " + ae.Message
	}
	return ae.Error()
}

// parseFlags parses flags that may come before or after positional
// arguments. A flag error is a usage error that names the command's help.
func parseFlags(fs *flag.FlagSet, args []string) ([]string, error) {
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				return nil, err
			}
			return nil, usagef("%s; run `%s -h` for its flags", err, fs.Name())
		}
		args = fs.Args()
		if len(args) == 0 {
			return pos, nil
		}
		pos = append(pos, args[0])
		args = args[1:]
	}
}

func printJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

// kv parses KEY=VALUE pairs.
func kv(pairs []string) (map[string]any, error) {
	out := map[string]any{}
	for _, p := range pairs {
		k, v, ok := strings.Cut(p, "=")
		if !ok || k == "" {
			return nil, usagef("%q is not KEY=VALUE", p)
		}
		out[k] = v
	}
	return out, nil
}

type multiFlag []string

func (m *multiFlag) String() string     { return strings.Join(*m, ",") }
func (m *multiFlag) Set(v string) error { *m = append(*m, v); return nil }
