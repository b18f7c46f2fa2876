// Package cli is the grove command line: the agent, the plugin server, and
// commands that talk to an agent's API.
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
	"sort"
	"strings"
	"syscall"

	"github.com/grovehq/grove/api"
	"github.com/grovehq/grove/plugins/builtin/process"
)

// Version is stamped at build time.
var Version = "0.1.0-dev"

// Env is what a command may touch; tests swap the writers.
type Env struct {
	Stdin  io.Reader
	Stdout io.Writer
	Stderr io.Writer
	// Terminal is true when Stderr is a terminal (progress is redrawn).
	Terminal bool
	// Interactive is true when Stdin is a terminal (questions may be asked).
	Interactive bool
}

type command struct {
	summary string
	run     func(ctx context.Context, env *Env, args []string) error
}

func commands() map[string]command {
	return map[string]command{
		"agent":      {"Run a Grove agent (the API, the engine and the plugins).", runAgent},
		"quickstart": {"Bring up a 3-node local.process cluster on an embedded agent and show its nodes.", runQuickstart},
		"plugin":     {"Serve, describe and inspect plugins.", runPlugin},
		"profile":    {"Manage profiles: create, list, show, update, delete, validate, types.", resourceCommand(profileRes)},
		"policy":     {"Manage policies: create, list, show, update, delete, validate, types.", resourceCommand(policyRes)},
		"cluster":    {"Manage clusters and run cluster actions.", resourceCommand(clusterRes)},
		"node":       {"Manage nodes: create, list, show, update, delete, check, recover.", resourceCommand(nodeRes)},
		"action":     {"Inspect, wait for and cancel actions.", resourceCommand(actionRes)},
		"event":      {"List and show events.", resourceCommand(eventRes)},
		"token":      {"Manage API tokens: create, list, show, revoke (admin).", resourceCommand(tokenCmd)},
		"project":    {"Grant projects host-access profile types: allow, deny, grants (admin).", resourceCommand(projectCmd)},
		"version": {"Print the version.", func(_ context.Context, env *Env, _ []string) error {
			fmt.Fprintln(env.Stdout, "grove", Version)
			return nil
		}},
		"demo-http":  {"Serve a small HTTP page on $GROVE_NODE_PORT (used by the quick start's nodes).", runDemoHTTP},
		"demo-image": {"Import a static grove binary into the engine at $DOCKER_HOST as the demo image (make demo-image).", runDemoImage},
		"validate":   {"Check HCL service definitions: syntax, references, settings and plugin schemas.", runValidate},
		"plan":       {"Show what applying HCL service definitions would change on the agent.", runPlan},
		"apply":      {"Apply HCL service definitions (or a saved plan) to the agent.", runApply},
		"destroy":    {"Destroy everything a definition set owns.", runDestroy},
		"fmt":        {"Rewrite HCL service definitions in the canonical format.", runFmt},
	}
}

// Main runs the CLI and returns the exit code.
func Main(args []string) int {
	if len(args) > 0 && args[0] == process.WrapCommand {
		return process.RunWrapper(args[1:])
	}
	env := &Env{Stdin: os.Stdin, Stdout: os.Stdout, Stderr: os.Stderr, Terminal: isTerminal(os.Stderr), Interactive: isTerminal(os.Stdin)}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	return Run(ctx, env, args)
}

// Run runs one command line.
func Run(ctx context.Context, env *Env, args []string) int {
	cmds := commands()
	if len(args) == 0 || args[0] == "-h" || args[0] == "-help" || args[0] == "help" {
		usage(env.Stderr, cmds)
		if len(args) == 0 {
			return 2
		}
		return 0
	}
	cmd, ok := cmds[args[0]]
	if !ok {
		fmt.Fprintf(env.Stderr, "Error: %q is not a grove command.\n\n", args[0])
		usage(env.Stderr, cmds)
		return 2
	}
	if err := cmd.run(ctx, env, args[1:]); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		var ee exitError
		if errors.As(err, &ee) {
			if ee.msg != "" {
				fmt.Fprintf(env.Stderr, "Error: %s\n", ee.msg)
			}
			return ee.code
		}
		var ue usageError
		if errors.As(err, &ue) {
			fmt.Fprintf(env.Stderr, "Error: %s\n", ue.msg)
			return 2
		}
		fmt.Fprintf(env.Stderr, "Error: %s\n", describeError(err))
		return 1
	}
	return 0
}

func usage(w io.Writer, cmds map[string]command) {
	fmt.Fprintln(w, "Usage: grove <command> [arguments]\n\nCommands:")
	names := make([]string, 0, len(cmds))
	for n := range cmds {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		fmt.Fprintf(w, "  %-11s %s\n", n, cmds[n].summary)
	}
	fmt.Fprintln(w, "\nRun `grove <command> -h` for a command's flags. Commands that talk to an agent use -address or $GROVE_ADDR (default "+api.DefaultAddress+"),\n-token or $GROVE_TOKEN, and for an https:// agent -ca-cert or $GROVE_CACERT.")
}

type usageError struct{ msg string }

func (u usageError) Error() string { return u.msg }

func usagef(format string, args ...any) error { return usageError{fmt.Sprintf(format, args...)} }

// describeError turns an API failure into one sentence plus the API's reason.
func describeError(err error) string {
	var ae *api.Error
	if !errors.As(err, &ae) {
		return err.Error()
	}
	// What the CLI said around the agent's answer ("create cluster.web: ")
	// stays in front of the sentence that explains the answer.
	context := strings.TrimSuffix(err.Error(), ae.Error())
	switch ae.Status {
	case 400:
		return context + "The request was refused: " + ae.Message
	case 401:
		return context + "The agent needs a valid token: pass one with -token or GROVE_TOKEN (this one is missing, unknown, expired or revoked): " + ae.Message
	case 403:
		return context + "The token's role or project does not allow this: " + ae.Message
	case 404:
		return context + ae.Message
	case 409:
		return context + "The request conflicts with the current state: " + ae.Message
	case 413:
		return context + "The request is too large: " + ae.Message
	case 503:
		if ae.RetryAfter > 0 {
			return fmt.Sprintf("%sThe agent cannot serve this now; try again in %s: %s", context, plural(ae.RetryAfter, "second", "seconds"), ae.Message)
		}
		return context + "The agent cannot serve this now; try again shortly: " + ae.Message
	}
	return err.Error()
}

// flags parses flags that may come before or after positional arguments.
func parseFlags(fs *flag.FlagSet, args []string) ([]string, error) {
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			return nil, err
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
