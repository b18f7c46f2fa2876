package cli

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"go/format"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"strings"
	"text/template"

	"golang.org/x/mod/modfile"
	"golang.org/x/mod/module"

	plugintemplate "github.com/grovehq/grove/examples/plugins/template"
)

// sdkModule is the module path of Grove's plugin SDK.
const sdkModule = "github.com/grovehq/grove/plugins/sdk"

// pluginGoVersion is the go line of the modules plugin init writes: the
// SDK module's own (plugins/sdk/go.mod), so a plugin needs no newer Go than
// the SDK does. TestPluginInit holds the two together.
const pluginGoVersion = "1.26.0"

// pluginInitName is what a plugin's name may be: it names the binary
// (grove-plugin-NAME), the directory, the module and the agent's plugin
// block, so it stays within what all of them accept.
var pluginInitName = regexp.MustCompile(`^[a-z][a-z0-9-]{0,62}$`)

// pluginInitData is what the template's files are rendered with.
type pluginInitData struct {
	Name        string // the plugin's name, as in the agent's plugin block
	Binary      string // grove-plugin-NAME
	Module      string // the Go module path
	Kind        string // profile or policy
	Type        string // the type the plugin serves: ProfileType or PolicyType
	ProfileType string
	PolicyType  string
	GoVersion   string
	SDKDir      string // a local SDK checkout to replace the module with, or ""
}

// runPluginInit is `grove plugin init [flags] NAME` (args are what follows
// "init"): it writes a new plugin module from examples/plugins/template,
// with a profile or a policy to start from, its conformance test, a
// GNUmakefile and a goreleaser configuration.
func runPluginInit(ctx context.Context, env *Env, args []string) error {
	const usage = "usage: grove plugin init [-kind profile|policy] [-module PATH] [-dir DIR] [-sdk DIR] NAME"
	// flagSet lets `grove plugin init -h` show these flags, and stops at
	// -h before anything is written.
	fset := flagSet("plugin init", newGlobals(env))
	kind := fset.String("kind", "profile", "What the plugin serves to start with: `profile` (a driver that makes nodes) or policy (a rule checked around actions).")
	modPath := fset.String("module", "", "The plugin's Go module `path` (default example.com/grove-plugin-NAME).")
	dir := fset.String("dir", "", "The `directory` to write the plugin into; it must not exist or be empty (default ./grove-plugin-NAME).")
	sdkDir := fset.String("sdk", "", "Build against the plugin SDK in this local `directory` (a checkout's plugins/sdk) through a replace line, instead of the published module.")
	pos, err := parseFlags(fset, args)
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		return usagef(usage)
	}
	name := pos[0]
	if !pluginInitName.MatchString(name) {
		return usagef("%q is not a valid plugin name: it must start with a lowercase letter and hold only lowercase letters, digits and -, at most 63 characters.", name)
	}
	if *kind != "profile" && *kind != "policy" {
		return usagef("-kind must be profile or policy, not %q.", *kind)
	}
	d := pluginInitData{
		Name: name, Binary: "grove-plugin-" + name, Module: *modPath, Kind: *kind,
		ProfileType: name + ".node", PolicyType: name + ".policy", GoVersion: pluginGoVersion,
	}
	d.Type = d.ProfileType
	if d.Kind == "policy" {
		d.Type = d.PolicyType
	}
	if d.Module == "" {
		d.Module = "example.com/" + d.Binary
	}
	if err := module.CheckImportPath(d.Module); err != nil {
		return usagef("-module %q is not a valid Go module path: %v.", d.Module, err)
	}
	if *sdkDir != "" {
		if d.SDKDir, err = checkSDKDir(*sdkDir); err != nil {
			return err
		}
	}
	out := *dir
	if out == "" {
		out = d.Binary
	}
	if entries, err := os.ReadDir(out); err == nil && len(entries) > 0 {
		return usagef("%s already exists and is not empty; name another directory with -dir.", out)
	} else if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("read %s: %w", out, err)
	}

	files, err := renderPluginTemplate(ctx, d)
	if err != nil {
		return err
	}
	for _, f := range files {
		p := filepath.Join(out, filepath.FromSlash(f.name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return fmt.Errorf("create %s: %w", filepath.Dir(p), err)
		}
		if err := os.WriteFile(p, f.data, 0o644); err != nil {
			return fmt.Errorf("write %s: %w", p, err)
		}
	}
	fmt.Fprintf(env.Stdout, "Created %s: a Grove plugin serving the %s type %s (module %s).\n\nNext:\n  cd %s\n  go mod tidy\n  make test\n",
		out, d.Kind, d.Type, d.Module, out)
	return nil
}

// checkSDKDir returns dir as an absolute path after checking that it holds
// the plugin SDK's module.
func checkSDKDir(dir string) (string, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", fmt.Errorf("-sdk %s: %w", dir, err)
	}
	b, err := readInput(nil, "the SDK's go.mod", filepath.Join(abs, "go.mod"), maxInputBytes)
	if err != nil {
		return "", usagef("-sdk %s must be the plugin SDK's directory (a checkout's plugins/sdk), which has a go.mod: %v.", dir, err)
	}
	if got := modfile.ModulePath(b); got != sdkModule {
		return "", usagef("-sdk %s is not the plugin SDK: its go.mod is the module %q, not %s.", dir, got, sdkModule)
	}
	return abs, nil
}

// pluginFile is one rendered file of a new plugin, by its slash path.
type pluginFile struct {
	name string
	data []byte
}

// renderPluginTemplate renders the template's files for d: files/ always,
// files/profile/ or files/policy/ for d's kind, each without its .tmpl
// suffix. Go files come out gofmt-formatted, whatever the template's
// conditionals left.
func renderPluginTemplate(ctx context.Context, d pluginInitData) ([]pluginFile, error) {
	var out []pluginFile
	err := fs.WalkDir(plugintemplate.FS, "files", func(p string, e fs.DirEntry, err error) error {
		if err != nil || e.IsDir() {
			return err
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		rel := strings.TrimPrefix(p, "files/")
		if sub, rest, ok := strings.Cut(rel, "/"); ok {
			if sub != d.Kind {
				return nil
			}
			rel = rest
		}
		name, ok := strings.CutSuffix(rel, ".tmpl")
		if !ok {
			return fmt.Errorf("the plugin template's %s has no .tmpl suffix", p)
		}
		src, err := fs.ReadFile(plugintemplate.FS, p)
		if err != nil {
			return err
		}
		tmpl, err := template.New(p).Delims("[[", "]]").Option("missingkey=error").Parse(string(src))
		if err != nil {
			return fmt.Errorf("the plugin template's %s: %w", p, err)
		}
		var buf bytes.Buffer
		if err := tmpl.Execute(&buf, d); err != nil {
			return fmt.Errorf("render the plugin template's %s: %w", p, err)
		}
		data := buf.Bytes()
		if path.Ext(name) == ".go" {
			if data, err = format.Source(data); err != nil {
				return fmt.Errorf("the plugin template's %s renders Go that does not parse: %w", p, err)
			}
		}
		out = append(out, pluginFile{name: name, data: data})
		return nil
	})
	return out, err
}
