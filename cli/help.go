package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"slices"
	"sort"
	"strings"

	"github.com/agext/levenshtein"
	hcli "github.com/hashicorp/cli"
	"github.com/posener/complete"

	"github.com/grovehq/grove/api"
)

// entry is one command of the table in commands.go.
//
// run must parse its flags with flagSet(name, newGlobals(env)) (or a
// defFlags) before it does anything else: the help text and docs/cli.md
// are rendered by running it with "-h" and an Env that records the flag
// set, and it must stop there. A command that parses no flags sets
// noFlags, and help never runs it.
type entry struct {
	name     string // the words after grove: "cluster create"
	args     string // what follows the name in the usage line: "[options] NAME"
	synopsis string // one sentence for lists
	help     string // further paragraphs, optional
	run      func(ctx context.Context, env *Env, args []string) error
	hidden   bool
	noFlags  bool
}

// flagCapture receives a command's flag set when help asks for it.
type flagCapture struct{ fs *flag.FlagSet }

// newGlobals returns the flags every agent command shares, tied to env
// (its stderr for deprecation notes, its help capture).
func newGlobals(env *Env) *globals {
	return &globals{help: env.help, stderr: env.Stderr}
}

// flagSet returns a flag set with the global flags registered. It prints
// nothing itself: parseFlags turns its errors into usage errors.
func flagSet(name string, g *globals) *flag.FlagSet {
	// Some commands are named after Senlin's actions (scale_in); the
	// command a user types, and a hint names, is kebab-case (scale-in).
	fs := flag.NewFlagSet("grove "+strings.ReplaceAll(name, "_", "-"), flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	g.register(fs)
	if g.help != nil {
		g.help.fs = fs
	}
	return fs
}

// deprecatedFlag is an old spelling of a flag, kept for one release: it
// sets the new flag and says so on stderr. Help does not list it.
type deprecatedFlag struct {
	flag.Value
	old, new string
	w        io.Writer
}

func (d *deprecatedFlag) Set(v string) error {
	fmt.Fprintf(d.w, "Warning: -%s is deprecated and will be removed in the next release; use -%s.\n", d.old, d.new)
	return d.Value.Set(v)
}

// alias registers old as a deprecated spelling of the flag newName.
func (g *globals) alias(fs *flag.FlagSet, old, newName string) {
	w := g.stderr
	if w == nil {
		w = os.Stderr
	}
	fs.Var(&deprecatedFlag{Value: fs.Lookup(newName).Value, old: old, new: newName, w: w}, old, "deprecated: use -"+newName)
}

// agentFlags are the connection flags of globals.register; help names them
// once instead of listing them under every command.
var agentFlags = []string{"address", "token", "ca-cert", "client-cert", "client-key", "tls-skip-verify"}

// flags runs the command in help mode and returns its flag set, or nil.
func (e *entry) flags() *flag.FlagSet {
	if e.noFlags || e.run == nil {
		return nil
	}
	capt := &flagCapture{}
	ctx, cancel := context.WithCancel(context.Background())
	cancel() // nothing a command starts in help mode may run
	env := &Env{Stdin: strings.NewReader(""), Stdout: io.Discard, Stderr: io.Discard, help: capt}
	_ = e.run(ctx, env, []string{"-h"})
	return capt.fs
}

// helpText is the command's help: usage, description and flags.
func (e *entry) helpText() string {
	var b strings.Builder
	fmt.Fprintf(&b, "Usage: grove %s", e.name)
	if e.args != "" {
		fmt.Fprintf(&b, " %s", e.args)
	}
	fmt.Fprintf(&b, "\n\n  %s\n", e.synopsis)
	if e.help != "" {
		b.WriteString("\n")
		for _, line := range strings.Split(strings.TrimSpace(e.help), "\n") {
			if line == "" {
				b.WriteString("\n")
				continue
			}
			fmt.Fprintf(&b, "  %s\n", line)
		}
	}
	fs := e.flags()
	if fs == nil {
		return b.String()
	}
	var own []*flag.Flag
	agent := false
	fs.VisitAll(func(f *flag.Flag) {
		if _, old := f.Value.(*deprecatedFlag); old {
			return
		}
		if slices.Contains(agentFlags, f.Name) {
			agent = true
			return
		}
		own = append(own, f)
	})
	if len(own) > 0 {
		b.WriteString("\nOptions:\n\n")
		writeFlags(&b, own)
	}
	if agent {
		b.WriteString("\nAgent options: -address, -token, -ca-cert, -client-cert, -client-key and\n-tls-skip-verify, as `grove -h` describes them.\n")
	}
	return b.String()
}

// writeFlags lists flags as the flag package's PrintDefaults does.
func writeFlags(w io.Writer, flags []*flag.Flag) {
	for _, f := range flags {
		name, usage := flag.UnquoteUsage(f)
		if _, isBool := f.Value.(interface{ IsBoolFlag() bool }); isBool {
			name = ""
		}
		line := "  -" + f.Name
		if name != "" {
			line += " " + name
		}
		fmt.Fprintln(w, line)
		if d := f.DefValue; d != "" && d != "0" && d != "false" && d != "[]" {
			usage += fmt.Sprintf(" (default %s)", d)
		}
		fmt.Fprintf(w, "      %s\n", usage)
	}
}

// helpTemplate is hashicorp/cli's default with the subcommands' names
// aligned on the longest name.
const helpTemplate = `{{ .Help | trimSuffix "\n" }}{{ if gt (len .Subcommands) 0 }}

Subcommands:
{{- range $value := .Subcommands }}
  {{ printf "%-16s" $value.Name }}  {{ $value.Synopsis }}{{ end }}
{{- end }}`

// command adapts an entry to hashicorp/cli.
type command struct {
	e   *entry
	ctx context.Context
	env *Env
}

func (c *command) Synopsis() string     { return c.e.synopsis }
func (c *command) Help() string         { return c.e.helpText() }
func (c *command) HelpTemplate() string { return helpTemplate }

func (c *command) Run(args []string) int {
	err := c.e.run(c.ctx, c.env, args)
	var ee exitError
	if err != nil && c.ctx.Err() != nil && !errors.As(err, &ee) {
		// A request cut short by Ctrl-C fails with "context canceled";
		// the user knows why it stopped.
		err = exitError{code: interruptCode(c.ctx), note: true, msg: "Interrupted."}
	}
	return report(c.env, err, jsonRequested(args))
}

// AutocompleteArgs completes paths for the definition commands.
func (c *command) AutocompleteArgs() complete.Predictor {
	if strings.Contains(c.e.args, "PATH") {
		return complete.PredictOr(complete.PredictDirs("*"), complete.PredictFiles("*.hcl"))
	}
	return complete.PredictNothing
}

// AutocompleteFlags completes the command's own flags.
func (c *command) AutocompleteFlags() complete.Flags {
	out := complete.Flags{}
	if fs := c.e.flags(); fs != nil {
		fs.VisitAll(func(f *flag.Flag) {
			if _, old := f.Value.(*deprecatedFlag); !old {
				out["-"+f.Name] = complete.PredictAnything
			}
		})
	}
	return out
}

// suggest returns ` (did you mean "x"?)` for the candidate closest to
// given, or "" when none is close: within two edits, or a prefix.
func suggest(given string, candidates []string) string {
	best, bestDist := "", 3
	for _, c := range candidates {
		d := levenshtein.Distance(given, c, nil)
		if strings.HasPrefix(c, given) && len(given) >= 2 {
			d = min(d, 1)
		}
		if d < bestDist {
			best, bestDist = c, d
		}
	}
	if best == "" {
		return ""
	}
	return fmt.Sprintf(" (did you mean %q?)", best)
}

// cmdTable indexes the command entries.
type cmdTable struct {
	entries []*entry
	byName  map[string]*entry
}

func newTable(entries []*entry) *cmdTable {
	t := &cmdTable{entries: entries, byName: map[string]*entry{}}
	for _, e := range entries {
		t.byName[e.name] = e
	}
	// A parent ("cluster") lists its subcommands and refuses others.
	for _, e := range entries {
		if e.run == nil {
			e.run = t.parentRun(e.name)
			e.noFlags = true
			if e.args == "" {
				e.args = "<subcommand> [options] [args]"
			}
		}
	}
	return t
}

// children are the visible subcommand names of a parent, sorted.
func (t *cmdTable) children(parent string) []string {
	var out []string
	for _, e := range t.entries {
		if rest, ok := strings.CutPrefix(e.name, parent+" "); ok && !e.hidden && !strings.Contains(rest, " ") {
			out = append(out, rest)
		}
	}
	sort.Strings(out)
	return out
}

func (t *cmdTable) parentRun(name string) func(context.Context, *Env, []string) error {
	return func(_ context.Context, _ *Env, args []string) error {
		subs := t.children(name)
		if len(args) == 0 {
			return usagef("grove %s needs a subcommand: %s; run `grove %s -h` for what each does", name, strings.Join(subs, ", "), name)
		}
		return usagef("%q is not a %s subcommand%s; use one of %s", args[0], name, suggest(args[0], subs), strings.Join(subs, ", "))
	}
}

// rootHelp is `grove -h`: the commands and the agent options.
func (t *cmdTable) rootHelp() string {
	var b strings.Builder
	b.WriteString("Usage: grove [-version] [-help] [-autocomplete-install] <command> [args]\n\n")
	b.WriteString("Grove runs clusters of nodes from profiles and policies, on an agent that\nhosts the plugins. Commands:\n\n")
	for _, e := range t.entries {
		if e.hidden || strings.Contains(e.name, " ") {
			continue
		}
		fmt.Fprintf(&b, "  %-12s %s\n", e.name, e.synopsis)
	}
	b.WriteString("\nAgent options, for every command that talks to an agent:\n\n")
	fs := flag.NewFlagSet("grove", flag.ContinueOnError)
	(&globals{}).register(fs)
	var flags []*flag.Flag
	for _, n := range agentFlags {
		flags = append(flags, fs.Lookup(n))
	}
	writeFlags(&b, flags)
	b.WriteString("\nRun `grove <command> -h` or `grove help <command>` for a command's usage and\noptions. Without -address, commands use $GROVE_ADDR or " + api.DefaultAddress + ".\n")
	return b.String()
}

// Run runs one command line and returns the exit code.
func Run(ctx context.Context, env *Env, args []string) int {
	t := newTable(commands())
	// A shell asking for completions (COMP_LINE) gets them from
	// posener/complete, whatever the arguments.
	completing := os.Getenv("COMP_LINE") != ""
	if len(args) == 0 && !completing {
		fmt.Fprint(env.Stderr, t.rootHelp())
		return 2
	}
	if len(args) > 0 && args[0] == "help" {
		// `grove help cluster create` is `grove cluster create -h`.
		args = append(slices.Clone(args[1:]), "-h")
	}
	c := &hcli.CLI{
		Name:         "grove",
		Version:      "grove " + version(),
		Args:         args,
		Commands:     map[string]hcli.CommandFactory{},
		Autocomplete: true,
		HelpFunc:     func(map[string]hcli.CommandFactory) string { return strings.TrimSuffix(t.rootHelp(), "\n") },
		HelpWriter:   env.Stdout,
		ErrorWriter:  env.Stderr,
	}
	for _, e := range t.entries {
		c.Commands[e.name] = func() (hcli.Command, error) { return &command{e: e, ctx: ctx, env: env}, nil }
		if e.hidden {
			c.HiddenCommands = append(c.HiddenCommands, e.name)
		}
	}
	if sub := c.Subcommand(); !completing && t.byName[sub] == nil {
		if sub == "" && !c.IsHelp() && !c.IsVersion() && !slices.ContainsFunc(args, isAutocompleteFlag) {
			fmt.Fprintf(env.Stderr, "Error: %s is not a grove command; run `grove -h` for the list.\n", strings.Join(args, " "))
			return 2
		}
		if sub != "" {
			var top []string
			for _, e := range t.entries {
				if !e.hidden && !strings.Contains(e.name, " ") {
					top = append(top, e.name)
				}
			}
			fmt.Fprintf(env.Stderr, "Error: %q is not a grove command%s; run `grove -h` for the list.\n", sub, suggest(sub, top))
			return 2
		}
	}
	code, err := c.Run()
	if err != nil {
		fmt.Fprintf(env.Stderr, "Error: %s\n", err)
		return 1
	}
	return code
}

func isAutocompleteFlag(a string) bool {
	a = strings.TrimLeft(a, "-")
	return a == "autocomplete-install" || a == "autocomplete-uninstall"
}

// writeReference writes docs/cli.md: every visible command's own help, as
// `grove ... -h` prints it, in the table's order.
func writeReference(w io.Writer) {
	fmt.Fprint(w, "# grove command reference\n\n"+
		"<!-- Generated from the commands' own help by cli's TestCLIReference; do not edit.\n"+
		"     Regenerate with: GROVE_UPDATE_DOCS=1 go test ./cli -run TestCLIReference -->\n\n"+
		"Every section is what `grove COMMAND -h` (or `grove help COMMAND`) prints.\n\n")
	t := newTable(commands())
	section := func(title string, args []string) {
		var out strings.Builder
		Run(context.Background(), &Env{Stdin: strings.NewReader(""), Stdout: &out, Stderr: io.Discard}, args)
		fmt.Fprintf(w, "## %s\n\n```text\n%s\n```\n\n", title, strings.TrimRight(out.String(), "\n"))
	}
	section("grove", []string{"-h"})
	for _, e := range t.entries {
		if e.hidden {
			continue
		}
		section("grove "+e.name, append(strings.Fields(e.name), "-h"))
	}
}
