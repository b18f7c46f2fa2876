package cli

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"

	hclv2 "github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclwrite"

	"github.com/grovehq/grove/api"
	"github.com/grovehq/grove/hcl"
	"github.com/grovehq/grove/plugins/builtin"
	"github.com/grovehq/grove/plugins/sdk"
)

// exitError ends a command with a chosen exit code.
type exitError struct {
	code int
	msg  string
	// answered is set when the command's JSON output already is its
	// answer, failure included (validate -json): nothing more is printed.
	answered bool
	// note is set when msg is news rather than an error (an interrupted
	// wait): it is printed without "Error: ".
	note bool
}

func (e exitError) Error() string { return e.msg }

type defFlags struct {
	globals
	vars, varFiles multiFlag
	set            string
}

func (d *defFlags) register(name string) *flag.FlagSet {
	fs := flagSet(name, &d.globals)
	fs.Var(&d.vars, "var", "set a variable: NAME=VALUE (repeatable)")
	fs.Var(&d.varFiles, "var-file", "read variables from an HCL file (repeatable)")
	fs.StringVar(&d.set, "set", "", "definition set name (default: a grove { set = ... } block, or the directory's name)")
	return fs
}

// load reads and evaluates a definition, printing diagnostics.
func (d *defFlags) load(env *Env, path string) (*hcl.Definition, error) {
	def, diags := hcl.Load(path, d.options())
	files := map[string]*hclv2.File{}
	if def != nil {
		files = def.Files
	}
	// Warnings too: a cluster over the agent's default size is one.
	printDiagnostics(env, diags, files)
	if diags.HasErrors() {
		return nil, notValid("the definition in "+path, diags)
	}
	return def, nil
}

func (d *defFlags) options() hcl.Options {
	return hcl.Options{Vars: d.vars, VarFiles: d.varFiles, Set: d.set}
}

func errCount(diags hclv2.Diagnostics) int {
	n := 0
	for _, d := range diags {
		if d.Severity == hclv2.DiagError {
			n++
		}
	}
	return n
}

// schemas picks where schemas come from: the agent when it answers, else the
// built-in plugin's description (third-party types then need an agent).
// The error says why the agent did not serve them.
func (d *defFlags) schemas(ctx context.Context, env *Env) (hcl.SchemaSource, error) {
	c := d.client()
	probe, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	_, err := c.Do(probe, http.MethodGet, "/v1/build-info", nil, nil, nil)
	if err == nil {
		return &hcl.AgentSchemas{Client: c}, nil
	}
	desc, _ := sdk.DescriptionToJSON(builtin.Plugin(version()).Describe())
	return &hcl.DescribedSchemas{Components: desc.Components}, err
}

func (d *defFlags) validate(ctx context.Context, env *Env, def *hcl.Definition) error {
	src, offline := d.schemas(ctx, env)
	diags := hcl.Validate(def, src)
	if diags.HasErrors() {
		printDiagnostics(env, diags, def.Files)
		return notValid("the definition", diags)
	}
	if offline != nil {
		// Say why: an agent that refused the token or the certificate is
		// not the same as no agent.
		fmt.Fprintf(env.Stderr, "Note: no agent answered at %s; properties were checked against the built-in plugins' schemas only. (%s)\n", d.client().Address, describeError(offline))
	}
	return nil
}

func pathArg(pos []string) (string, error) {
	switch len(pos) {
	case 0:
		return ".", nil
	case 1:
		return pos[0], nil
	}
	return "", usagef("give one file or directory")
}

func runValidate(ctx context.Context, env *Env, args []string) error {
	d := &defFlags{globals: *newGlobals(env)}
	fs := d.register("validate")
	pos, err := parseFlags(fs, args)
	if err != nil {
		return err
	}
	path, err := pathArg(pos)
	if err != nil {
		return err
	}
	if d.json {
		return d.validateJSON(ctx, env, path)
	}
	def, err := d.load(env, path)
	if err != nil {
		return err
	}
	if err := d.validate(ctx, env, def); err != nil {
		return err
	}
	fmt.Fprintf(env.Stdout, "The definition set %q is valid: %s, %s, %s.\n", def.Set,
		plural(len(def.Profiles), "profile", "profiles"), plural(len(def.Policies), "policy", "policies"), plural(len(def.Clusters), "cluster", "clusters"))
	return nil
}

func (d *defFlags) plan(ctx context.Context, env *Env, path string, destroy bool) (*hcl.Definition, *hcl.Plan, error) {
	def, err := d.load(env, path)
	if err != nil {
		return nil, nil, err
	}
	if !destroy {
		if err := d.validate(ctx, env, def); err != nil {
			return nil, nil, err
		}
	}
	plan, err := hcl.MakePlan(ctx, d.client(), def, destroy)
	if err != nil {
		return nil, nil, err
	}
	return def, plan, nil
}

func runPlan(ctx context.Context, env *Env, args []string) error {
	d := &defFlags{globals: *newGlobals(env)}
	fs := d.register("plan")
	out := fs.String("out", "", "save the plan to FILE for `grove apply FILE`")
	detailed := fs.Bool("detailed-exitcode", false, "exit 0 with no changes, 2 with changes, 1 on error")
	destroy := fs.Bool("destroy", false, "plan the destruction of everything the set owns")
	pos, err := parseFlags(fs, args)
	if err != nil {
		return err
	}
	path, err := pathArg(pos)
	if err != nil {
		return err
	}
	_, plan, err := d.plan(ctx, env, path, *destroy)
	if err != nil {
		return err
	}
	if d.json {
		printJSON(env.Stdout, plan)
	} else {
		plan.Render(env.Stdout)
	}
	if *out != "" {
		b, _ := json.MarshalIndent(plan, "", "  ")
		if err := os.WriteFile(*out, b, 0o600); err != nil {
			return fmt.Errorf("save the plan: %w", err)
		}
		fmt.Fprintf(env.Stdout, "\nSaved the plan to %s. Apply exactly it with: grove apply %s\n", *out, *out)
	}
	if *detailed && !plan.Empty() {
		return exitError{code: 2, msg: ""}
	}
	return nil
}

// confirm asks on a terminal; without one, -auto-approve is required.
func confirm(env *Env, auto bool, question string) error {
	if auto {
		return nil
	}
	if !env.Interactive {
		return usagef("not running on a terminal: pass -auto-approve to %s without a question", question)
	}
	fmt.Fprintf(env.Stdout, "\nDo you want to %s?\n  Only 'yes' will be accepted to approve.\n\n  Enter a value: ", question)
	line, _ := bufio.NewReader(env.Stdin).ReadString('\n')
	if strings.TrimSpace(line) != "yes" {
		return exitError{code: 1, msg: "cancelled: nothing was changed"}
	}
	return nil
}

func runApply(ctx context.Context, env *Env, args []string) error {
	d := &defFlags{globals: *newGlobals(env)}
	fs := d.register("apply")
	auto := fs.Bool("auto-approve", false, "apply without asking")
	d.healthFlag(fs)
	pos, err := parseFlags(fs, args)
	if err != nil {
		return err
	}
	path, err := pathArg(pos)
	if err != nil {
		return err
	}
	var plan *hcl.Plan
	saved := false
	if st, err := os.Stat(path); err == nil && !st.IsDir() && !strings.HasSuffix(path, ".hcl") {
		// A saved plan holds one evaluation's values.
		b, err := readInput(env.Stdin, "the plan file", path, maxLargeInputBytes)
		if err != nil {
			return err
		}
		plan = &hcl.Plan{}
		if err := json.Unmarshal(b, plan); err != nil || plan.Version != 1 || plan.Desired == nil {
			return fmt.Errorf("%s is not a plan saved by `grove plan -out`", path)
		}
		if err := plan.Check(); err != nil {
			return exitError{code: 1, msg: fmt.Sprintf("%s: %s", path, err)}
		}
		saved = true
		*auto = true // a saved plan was reviewed when it was made
	} else {
		_, plan, err = d.plan(ctx, env, path, false)
		if err != nil {
			return err
		}
	}
	return applyPlan(ctx, env, d, plan, saved, *auto, "apply these changes")
}

func applyPlan(ctx context.Context, env *Env, d *defFlags, plan *hcl.Plan, saved, auto bool, question string) error {
	if !saved {
		plan.Render(env.Stdout)
		if plan.Empty() {
			return nil
		}
		if err := confirm(env, auto, question); err != nil {
			return err
		}
	}
	c := d.client()
	a := &hcl.Applier{Client: c, Progress: env.Stdout, Terminal: env.Terminal}
	p := newProgress(env, d.json)
	a.Follow = func(ctx context.Context, what, id string) (*api.Action, error) {
		return watchAction(ctx, p, c, id, "  "+what)
	}
	if err := a.Apply(ctx, plan, saved); err != nil {
		if errors.Is(err, hcl.ErrStalePlan) || errors.Is(err, hcl.ErrDamagedPlan) {
			// Refused before anything was sent.
			return exitError{code: 1, msg: err.Error()}
		}
		var stopped exitError
		if errors.As(err, &stopped) && stopped.note {
			// Interrupted: what the apply left is said after the news
			// that the action goes on.
			var pe *hcl.PartialError
			if errors.As(err, &pe) {
				pe.Report(env.Stderr)
			}
			return stopped
		}
		// Say exactly what the failed apply left behind.
		fmt.Fprintf(env.Stderr, "Error: %s\n\n", describeError(err))
		var pe *hcl.PartialError
		switch {
		case plan.Destroy:
			fmt.Fprintln(env.Stderr, "The destroy stopped before it removed everything: `grove plan -destroy` shows what remains.")
		case errors.As(err, &pe):
			pe.Report(env.Stderr)
		default:
			fmt.Fprintln(env.Stderr, "The apply created nothing before it stopped.")
		}
		return exitError{code: 1, msg: ""}
	}
	counts := map[string]int{}
	for _, c := range plan.Changes {
		counts[c.Action]++
	}
	adopted := ""
	if counts[hcl.Adopt] > 0 {
		adopted = fmt.Sprintf(", %d adopted", counts[hcl.Adopt])
	}
	if plan.Destroy {
		fmt.Fprintf(env.Stdout, "\nDestroy complete! Resources: %d destroyed.\n", counts[hcl.Delete])
		return nil
	}
	resources := fmt.Sprintf("Resources: %d added, %d changed, %d replaced, %d destroyed%s.",
		counts[hcl.Create], counts[hcl.Update], counts[hcl.Replace], counts[hcl.Delete], adopted)
	if err := checkCreated(ctx, env, c, d, a.Created()); err != nil {
		var ee exitError
		if errors.As(err, &ee) && !ee.note && ee.code == 1 {
			ee.msg += "\nThe apply made its changes (" + strings.TrimSuffix(resources, ".") + "), but these nodes are not healthy."
			return ee
		}
		return err
	}
	fmt.Fprintf(env.Stdout, "\nApply complete! %s\n", resources)
	return nil
}

// checkCreated watches the nodes of the clusters an apply created for their
// first health check; nodes that fail it fail the apply.
func checkCreated(ctx context.Context, env *Env, c *api.Client, d *defFlags, created []hcl.Created) error {
	var msgs []string
	for _, cr := range created {
		if cr.Ref.Kind != "cluster" {
			continue
		}
		total, failed, err := watchHealth(ctx, newProgress(env, d.json), c, cr.ID, cr.Name, "  "+cr.Ref.String(), d.healthWatch)
		if err != nil {
			return err
		}
		if len(failed) > 0 {
			var ee exitError
			errors.As(healthError(cr.Name, total, failed, d.healthWatch), &ee)
			msgs = append(msgs, ee.msg)
		}
	}
	if len(msgs) > 0 {
		return exitError{code: 1, msg: strings.Join(msgs, "\n")}
	}
	return nil
}

func runDestroy(ctx context.Context, env *Env, args []string) error {
	d := &defFlags{globals: *newGlobals(env)}
	fs := d.register("destroy")
	auto := fs.Bool("auto-approve", false, "destroy without asking")
	pos, err := parseFlags(fs, args)
	if err != nil {
		return err
	}
	path, err := pathArg(pos)
	if err != nil {
		return err
	}
	_, plan, err := d.plan(ctx, env, path, true)
	if err != nil {
		return err
	}
	return applyPlan(ctx, env, d, plan, false, *auto, "destroy everything definition set "+fmt.Sprintf("%q", plan.Set)+" owns")
}

func runFmt(_ context.Context, env *Env, args []string) error {
	g := newGlobals(env)
	fs := flagSet("fmt", g)
	check := fs.Bool("check", false, "list files that are not formatted and exit 3, changing nothing")
	pos, err := parseFlags(fs, args)
	if err != nil {
		return err
	}
	if len(pos) == 0 {
		pos = []string{"."}
	}
	var files []string
	for _, p := range pos {
		st, err := os.Stat(p)
		if err != nil {
			return err
		}
		if !st.IsDir() {
			files = append(files, p)
			continue
		}
		matches, _ := filepath.Glob(filepath.Join(p, "*.hcl"))
		files = append(files, matches...)
	}
	var unformatted []string
	for _, f := range files {
		src, err := readInput(env.Stdin, "the file", f, maxInputBytes)
		if err != nil {
			return err
		}
		if diags := hcl.CheckSource(src, f); diags.HasErrors() {
			printDiagnostics(env, diags, map[string]*hclv2.File{f: {Bytes: src}})
			return exitError{code: 1, msg: f + " is beyond grove's limits; fix it before formatting"}
		}
		if _, diags := hclwrite.ParseConfig(src, f, hclv2.InitialPos); diags.HasErrors() {
			printDiagnostics(env, diags, map[string]*hclv2.File{f: {Bytes: src}})
			return exitError{code: 1, msg: f + " has syntax errors; fix them before formatting"}
		}
		out := hclwrite.Format(src)
		if bytes.Equal(out, src) {
			continue
		}
		unformatted = append(unformatted, f)
		if !*check {
			if err := os.WriteFile(f, out, 0o644); err != nil {
				return err
			}
		}
		fmt.Fprintln(env.Stdout, f)
	}
	if *check && len(unformatted) > 0 {
		return exitError{code: 3, msg: ""}
	}
	return nil
}
