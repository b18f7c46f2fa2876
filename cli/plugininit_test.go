package cli

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"golang.org/x/mod/modfile"
	"sigs.k8s.io/yaml"
)

// TestPluginInit writes a plugin of each kind with `grove plugin init`
// into a directory outside Grove's module, with a replace line naming this
// checkout's SDK, and builds, vets and tests it through its own
// GNUmakefile: the conformance test it ships must pass against the plugin
// it ships.
func TestPluginInit(t *testing.T) {
	sdkDir, err := filepath.Abs(filepath.Join("..", "plugins", "sdk"))
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(sdkDir, "go.mod"))
	if err != nil {
		t.Fatal(err)
	}
	sdkMod, err := modfile.ParseLax("go.mod", b, nil)
	if err != nil {
		t.Fatal(err)
	}
	if sdkMod.Go == nil || sdkMod.Go.Version != pluginGoVersion {
		t.Errorf("plugins/sdk/go.mod says go %v; pluginGoVersion says %s: keep them the same", sdkMod.Go, pluginGoVersion)
	}
	// The checksums this checkout pins, so that nothing needs the checksum
	// database; go mod tidy trims the rest.
	sums, err := os.ReadFile(filepath.Join(sdkDir, "go.sum"))
	if err != nil {
		t.Fatal(err)
	}
	run := func(t *testing.T, dir string, args ...string) string {
		t.Helper()
		cmd := exec.Command(args[0], args[1:]...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "GOWORK=off", "GOFLAGS=-buildvcs=false")
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("%s: %v\n%s", strings.Join(args, " "), err, out)
		}
		return string(out)
	}

	for _, kind := range []string{"profile", "policy"} {
		t.Run(kind, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "grove-plugin-demo")
			var stdout, stderr bytes.Buffer
			env := &Env{Stdout: &stdout, Stderr: &stderr}
			if err := runPluginInit(context.Background(), env, []string{"-kind", kind, "-dir", dir, "-sdk", sdkDir, "-module", "example.org/demo", "demo"}); err != nil {
				t.Fatalf("plugin init: %v\n%s", err, stderr.String())
			}
			if !strings.Contains(stdout.String(), "demo."+map[string]string{"profile": "node", "policy": "policy"}[kind]) || !strings.Contains(stdout.String(), "go mod tidy") {
				t.Errorf("plugin init says what it made and what to do next, got:\n%s", stdout.String())
			}
			var names []string
			filepath.WalkDir(dir, func(p string, e os.DirEntry, err error) error {
				if err == nil && !e.IsDir() {
					rel, _ := filepath.Rel(dir, p)
					names = append(names, filepath.ToSlash(rel))
				}
				return err
			})
			slices.Sort(names)
			want := []string{".gitignore", ".goreleaser.yaml", "GNUmakefile", "README.md", "go.mod", "main.go", "plugin_test.go", kind + ".go"}
			slices.Sort(want)
			if !slices.Equal(names, want) {
				t.Fatalf("plugin init -kind %s wrote %v, want %v", kind, names, want)
			}

			gomod, err := os.ReadFile(filepath.Join(dir, "go.mod"))
			if err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(string(gomod), "module example.org/demo\n") || !strings.Contains(string(gomod), "replace github.com/grovehq/grove/plugins/sdk => "+sdkDir+"\n") {
				t.Errorf("go.mod names the module and replaces the SDK with the checkout:\n%s", gomod)
			}
			checkReleaseConfig(t, filepath.Join(dir, ".goreleaser.yaml"))

			// What the printed next steps say, then build and vet.
			if err := os.WriteFile(filepath.Join(dir, "go.sum"), sums, 0o644); err != nil {
				t.Fatal(err)
			}
			run(t, dir, "go", "mod", "tidy")
			out := run(t, dir, "make", "test", "vet", "build")
			if !strings.Contains(out, "ok ") {
				t.Errorf("make test ran no test package:\n%s", out)
			}
			if _, err := os.Stat(filepath.Join(dir, "bin", "grove-plugin-demo")); err != nil {
				t.Errorf("make build: %v", err)
			}
			if gofmt := run(t, dir, "gofmt", "-l", "."); gofmt != "" {
				t.Errorf("the plugin's Go files are not gofmt-clean: %s", gofmt)
			}
			if _, err := exec.LookPath("goreleaser"); err == nil {
				// goreleaser names the release repository from the clone's
				// origin, as in an author's checkout; nothing is contacted.
				run(t, dir, "git", "init", "-q")
				run(t, dir, "git", "remote", "add", "origin", "https://github.com/example/grove-plugin-demo.git")
				run(t, dir, "goreleaser", "check")
			}
		})
	}
}

// checkReleaseConfig reads the goreleaser configuration plugin init wrote:
// one build of the plugin's binary for linux, darwin and windows on amd64
// and arm64, without cgo, and SHA-256 checksums, which the agent's plugin
// block takes.
func checkReleaseConfig(t *testing.T, path string) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var cfg struct {
		Version int `json:"version"`
		Builds  []struct {
			Binary string   `json:"binary"`
			Env    []string `json:"env"`
			GOOS   []string `json:"goos"`
			GOARCH []string `json:"goarch"`
		} `json:"builds"`
		Checksum struct {
			Algorithm string `json:"algorithm"`
		} `json:"checksum"`
	}
	if err := yaml.Unmarshal(b, &cfg); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	if cfg.Version != 2 || len(cfg.Builds) != 1 {
		t.Fatalf("%s: want goreleaser's version 2 with one build, got %+v", path, cfg)
	}
	bld := cfg.Builds[0]
	if bld.Binary != "grove-plugin-demo" || !slices.Contains(bld.Env, "CGO_ENABLED=0") {
		t.Errorf("%s builds %q with env %v", path, bld.Binary, bld.Env)
	}
	for _, os := range []string{"linux", "darwin", "windows"} {
		if !slices.Contains(bld.GOOS, os) {
			t.Errorf("%s does not build for %s: %v", path, os, bld.GOOS)
		}
	}
	for _, arch := range []string{"amd64", "arm64"} {
		if !slices.Contains(bld.GOARCH, arch) {
			t.Errorf("%s does not build for %s: %v", path, arch, bld.GOARCH)
		}
	}
	if cfg.Checksum.Algorithm != "sha256" {
		t.Errorf("%s: checksums with %q, want sha256 (the agent's plugin block takes SHA-256)", path, cfg.Checksum.Algorithm)
	}
}

// TestPluginInitRefuses checks that bad input is refused with an error
// naming the flag or argument and the rule, before anything is written.
func TestPluginInitRefuses(t *testing.T) {
	notSDK := t.TempDir()
	os.WriteFile(filepath.Join(notSDK, "go.mod"), []byte("module example.com/other\n"), 0o644)
	full := t.TempDir()
	os.WriteFile(filepath.Join(full, "x"), nil, 0o644)
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{}, "usage: grove plugin init"},
		{[]string{"Bad_Name"}, `"Bad_Name" is not a valid plugin name`},
		{[]string{"-kind", "driver", "x"}, "-kind must be profile or policy"},
		{[]string{"-module", "bad path", "x"}, "-module \"bad path\" is not a valid Go module path"},
		{[]string{"-sdk", notSDK, "x"}, "is not the plugin SDK"},
		{[]string{"-sdk", t.TempDir(), "x"}, "must be the plugin SDK's directory"},
		{[]string{"-dir", full, "x"}, "already exists and is not empty"},
	} {
		var out bytes.Buffer
		err := runPluginInit(context.Background(), &Env{Stdout: &out, Stderr: &out}, c.args)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("plugin init %v: got %v, want an error with %q", c.args, err, c.want)
		}
	}
	if entries, _ := os.ReadDir(full); len(entries) != 1 {
		t.Errorf("a refused init wrote into the directory: %v", entries)
	}
}
