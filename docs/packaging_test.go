package docs_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"

	"github.com/grovehq/grove/core/agent"
	"github.com/grovehq/grove/internal/tlstest"
)

// The packaging's fixed points: where the binary, its config and its data
// live. The unit, the image and the sample configs must agree on them.
const (
	installedBinary = "/usr/local/bin/grove"
	installedConfig = "/etc/grove/agent.hcl"
	dataDir         = "/var/lib/grove"
)

// unitDirectives reads a systemd unit's Key=Value lines, keeping every value
// of a key that is given more than once.
func unitDirectives(t *testing.T, path string) map[string][]string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	d := map[string][]string{}
	s := bufio.NewScanner(f)
	for s.Scan() {
		line := strings.TrimSpace(s.Text())
		if line == "" || strings.HasPrefix(line, "#") || strings.HasPrefix(line, ";") || strings.HasPrefix(line, "[") {
			continue
		}
		k, v, ok := strings.Cut(line, "=")
		if !ok {
			t.Fatalf("%s: %q is not Key=Value", path, line)
		}
		d[k] = append(d[k], v)
	}
	return d
}

// TestSystemdUnit holds the unit to what README and the agent need: it runs
// the installed agent with the installed config as an unprivileged user,
// leaves local.process nodes running when the agent stops or restarts (they
// are meant to survive it), lets the agent write only its data dir, and is
// a unit systemd accepts.
func TestSystemdUnit(t *testing.T) {
	const unit = "../packaging/systemd/grove.service"
	d := unitDirectives(t, unit)
	want := map[string]string{
		"Type":            "simple",
		"User":            "grove",
		"ExecStart":       installedBinary + " agent -config " + installedConfig,
		"KillMode":        "process",
		"NoNewPrivileges": "yes",
		"ProtectSystem":   "strict",
		"ReadWritePaths":  dataDir,
		"StateDirectory":  "grove",
		"PrivateTmp":      "yes",
		"ProtectHome":     "yes",
	}
	for k, v := range want {
		if got := d[k]; len(got) != 1 || got[0] != v {
			t.Errorf("%s: %s = %q, want exactly %q", unit, k, got, v)
		}
	}
	// The ExecStart's flags are the agent's: grove agent -config FILE.
	if _, err := os.Stat("../packaging/systemd/agent.hcl"); err != nil {
		t.Errorf("the unit's config has no sample to install: %v", err)
	}

	// systemd's own parser, where there is one: it warns (and still exits 0)
	// on an unknown key or a bad value, so any output is a failure. It needs
	// ExecStart's binary to exist, so the check runs on a copy naming one
	// that does.
	analyze, err := exec.LookPath("systemd-analyze")
	if err != nil {
		t.Log("systemd-analyze is not installed: the unit was checked by the directives above only")
		return
	}
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(unit)
	if err != nil {
		t.Fatal(err)
	}
	copyPath := filepath.Join(t.TempDir(), "grove.service")
	if err := os.WriteFile(copyPath, bytes.ReplaceAll(b, []byte(installedBinary), []byte(self)), 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(analyze, "verify", "--man=no", copyPath).CombinedOutput()
	if err != nil || len(bytes.TrimSpace(out)) > 0 {
		t.Errorf("systemd-analyze verify %s: %v\n%s", unit, err, out)
	}
}

// TestSampleAgentConfigsLoad loads the agent configs the packaging ships as
// the agent does, and validates them with the TLS files they name replaced
// by real ones: a key renamed in the agent's config fails here, not on a
// user's first start.
func TestSampleAgentConfigsLoad(t *testing.T) {
	tlsFiles := tlstest.Issue(t)
	for _, path := range []string{"../packaging/systemd/agent.hcl", "../packaging/oci/agent.hcl"} {
		t.Run(path, func(t *testing.T) {
			cfg, err := agent.LoadConfig(path)
			if err != nil {
				t.Fatal(err)
			}
			if cfg.DataDir != dataDir {
				t.Errorf("data_dir = %q, want %q (the unit's StateDirectory and the image's volume)", cfg.DataDir, dataDir)
			}
			if cfg.TLS != nil {
				cfg.TLS.CertFile, cfg.TLS.KeyFile = tlsFiles.ServerCert, tlsFiles.ServerKey
			}
			if err := cfg.Validate(); err != nil {
				t.Fatalf("the agent refuses %s: %v", path, err)
			}
		})
	}
}

// containerInstruction is one instruction of a Containerfile, its
// continuation lines joined.
type containerInstruction struct {
	line int
	op   string
	args string
}

// parseContainerfile splits a Containerfile into instructions as the
// Dockerfile format defines them: comments and blank lines dropped, a
// trailing backslash continuing the instruction, and each instruction one
// of the format's keywords.
func parseContainerfile(t *testing.T, path string) []containerInstruction {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	known := []string{"ADD", "ARG", "CMD", "COPY", "ENTRYPOINT", "ENV", "EXPOSE", "FROM", "HEALTHCHECK",
		"LABEL", "ONBUILD", "RUN", "SHELL", "STOPSIGNAL", "USER", "VOLUME", "WORKDIR"}
	var out []containerInstruction
	var cur *containerInstruction
	for i, raw := range strings.Split(string(b), "\n") {
		line := strings.TrimSpace(raw)
		if strings.HasPrefix(line, "#") || (line == "" && cur == nil) {
			continue
		}
		cont := strings.HasSuffix(line, "\\")
		line = strings.TrimSuffix(line, "\\")
		if cur == nil {
			op, args, _ := strings.Cut(line, " ")
			if !slices.Contains(known, strings.ToUpper(op)) {
				t.Fatalf("%s:%d: %q is not a Containerfile instruction", path, i+1, op)
			}
			cur = &containerInstruction{line: i + 1, op: strings.ToUpper(op), args: strings.TrimSpace(args)}
		} else {
			cur.args += " " + line
		}
		if !cont {
			out = append(out, *cur)
			cur = nil
		}
	}
	if cur != nil {
		t.Fatalf("%s: the last instruction ends in a line continuation", path)
	}
	return out
}

// TestContainerfile checks the agent's image definition without building
// it (building needs the Go base image from a registry, which tests and CI
// do not pull): it parses, it builds in a Go stage at go.mod's Go version,
// copies only from stages it declared and from files the repository has,
// builds a static binary with the version stamped, and runs the agent as a
// non-root user with the data dir a volume.
func TestContainerfile(t *testing.T) {
	const path = "../packaging/oci/Containerfile"
	ins := parseContainerfile(t, path)
	stages := map[string]bool{}
	var froms []containerInstruction
	args := map[string]string{}
	for _, in := range ins {
		switch in.op {
		case "ARG":
			k, v, _ := strings.Cut(in.args, "=")
			args[k] = v
		case "FROM":
			froms = append(froms, in)
			if f := strings.Fields(in.args); len(f) == 3 && strings.EqualFold(f[1], "AS") {
				stages[f[2]] = true
			}
		case "COPY":
			f := strings.Fields(in.args)
			if from, ok := strings.CutPrefix(f[0], "--from="); ok {
				if !stages[from] {
					t.Errorf("%s:%d: COPY --from=%s names no earlier stage", path, in.line, from)
				}
				continue
			}
			for _, src := range f[:len(f)-1] {
				if _, err := os.Stat(filepath.Join("..", src)); err != nil {
					t.Errorf("%s:%d: COPY of %s, which the repository does not have", path, in.line, src)
				}
			}
		}
	}
	if len(froms) < 2 {
		t.Fatalf("%s: %d stages, want a build stage and a runtime stage", path, len(froms))
	}
	goMod, err := os.ReadFile("../go.mod")
	if err != nil {
		t.Fatal(err)
	}
	goLine := regexp.MustCompile(`(?m)^go (\d+\.\d+)`).FindSubmatch(goMod)
	if goLine == nil || !strings.Contains(froms[0].args, "golang:${GO_VERSION}") || args["GO_VERSION"] != string(goLine[1]) {
		t.Errorf("%s: the build stage is %q with GO_VERSION %q, want golang:${GO_VERSION} at go.mod's %s", path, froms[0].args, args["GO_VERSION"], goLine)
	}

	// The runtime stage: everything after the last FROM.
	last := slices.IndexFunc(ins, func(in containerInstruction) bool { return in.line == froms[len(froms)-1].line })
	runtime := map[string][]string{}
	for _, in := range ins[last+1:] {
		runtime[in.op] = append(runtime[in.op], in.args)
	}
	build := strings.Join(func() []string {
		var s []string
		for _, in := range ins[:last] {
			if in.op == "RUN" {
				s = append(s, in.args)
			}
		}
		return s
	}(), "\n")
	if !strings.Contains(build, "CGO_ENABLED=0 go build") {
		t.Errorf("%s: the build stage does not build a static binary (CGO_ENABLED=0 go build)", path)
	}
	if !strings.Contains(build, "-X "+versionVariable(t)+"=") {
		t.Errorf("%s: the build does not stamp the version into %s", path, versionVariable(t))
	}
	if u := runtime["USER"]; len(u) != 1 || strings.HasPrefix(u[0], "0") || strings.HasPrefix(u[0], "root") {
		t.Errorf("%s: the runtime stage's USER is %q, want one non-root user", path, u)
	}
	if v := runtime["VOLUME"]; len(v) != 1 || !strings.Contains(v[0], `"`+dataDir+`"`) {
		t.Errorf("%s: VOLUME is %q, want the data dir %s", path, v, dataDir)
	}
	var entry, cmd []string
	if len(runtime["ENTRYPOINT"]) != 1 || json.Unmarshal([]byte(runtime["ENTRYPOINT"][0]), &entry) != nil ||
		len(runtime["CMD"]) != 1 || json.Unmarshal([]byte(runtime["CMD"][0]), &cmd) != nil {
		t.Fatalf("%s: want one ENTRYPOINT and one CMD in exec (JSON) form, got %q and %q", path, runtime["ENTRYPOINT"], runtime["CMD"])
	}
	if got := strings.Join(append(entry, cmd...), " "); got != installedBinary+" agent -config "+installedConfig {
		t.Errorf("%s: the image runs %q, want %q", path, got, installedBinary+" agent -config "+installedConfig)
	}
	if !slices.Contains(runtime["COPY"], "packaging/oci/agent.hcl "+installedConfig) {
		t.Errorf("%s: the image does not install packaging/oci/agent.hcl as %s", path, installedConfig)
	}
}

// versionVariable is the package variable `grove -version` prints, which
// the release build stamps with -X.
func versionVariable(t *testing.T) string {
	t.Helper()
	src, err := os.ReadFile("../cli/cli.go")
	if err != nil {
		t.Fatal(err)
	}
	if !regexp.MustCompile(`(?m)^var Version = `).Match(src) {
		t.Fatal("cli/cli.go declares no `var Version`, which the release builds stamp; update .goreleaser.yaml, the Containerfile and this test together")
	}
	return "github.com/grovehq/grove/cli.Version"
}

// TestGoreleaserConfig checks what the release config promises beyond what
// `goreleaser check` can know: both binaries for the six targets, static,
// with the version stamped into a variable that exists, and the provider
// archived under the names the Terraform registry expects with a manifest
// naming the protocol the provider serves.
func TestGoreleaserConfig(t *testing.T) {
	b, err := os.ReadFile("../.goreleaser.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var cfg struct {
		Version int `json:"version"`
		Builds  []struct {
			ID      string   `json:"id"`
			Main    string   `json:"main"`
			Binary  string   `json:"binary"`
			Env     []string `json:"env"`
			Ldflags []string `json:"ldflags"`
			Goos    []string `json:"goos"`
			Goarch  []string `json:"goarch"`
		} `json:"builds"`
		Archives []struct {
			ID           string   `json:"id"`
			IDs          []string `json:"ids"`
			NameTemplate string   `json:"name_template"`
			Formats      []string `json:"formats"`
		} `json:"archives"`
		Checksum struct {
			NameTemplate string `json:"name_template"`
			ExtraFiles   []struct {
				Glob         string `json:"glob"`
				NameTemplate string `json:"name_template"`
			} `json:"extra_files"`
		} `json:"checksum"`
	}
	// Keys this test does not model are left to `goreleaser check`.
	if err := yaml.Unmarshal(b, &cfg); err != nil {
		t.Fatalf(".goreleaser.yaml: %v", err)
	}
	if cfg.Version != 2 {
		t.Errorf(".goreleaser.yaml: version %d, want the version 2 schema", cfg.Version)
	}
	stamps := map[string]string{
		".": "-X " + versionVariable(t) + "={{ .Version }}",
		"./provider/cmd/terraform-provider-grove": "-X main.version={{ .Version }}",
	}
	provMain, err := os.ReadFile("../provider/cmd/terraform-provider-grove/main.go")
	if err != nil {
		t.Fatal(err)
	}
	if !regexp.MustCompile(`(?m)^var version = `).Match(provMain) {
		t.Error("the provider's main declares no `var version`, which the release build stamps")
	}
	for _, bld := range cfg.Builds {
		stamp, ok := stamps[bld.Main]
		if !ok {
			t.Errorf("build %s builds %q, which is neither grove nor the provider", bld.ID, bld.Main)
			continue
		}
		delete(stamps, bld.Main)
		if !slices.Contains(bld.Env, "CGO_ENABLED=0") {
			t.Errorf("build %s is not static (CGO_ENABLED=0)", bld.ID)
		}
		if !strings.Contains(strings.Join(bld.Ldflags, " "), stamp) {
			t.Errorf("build %s: ldflags %q do not stamp %q", bld.ID, bld.Ldflags, stamp)
		}
		slices.Sort(bld.Goos)
		slices.Sort(bld.Goarch)
		if !slices.Equal(bld.Goos, []string{"darwin", "linux", "windows"}) || !slices.Equal(bld.Goarch, []string{"amd64", "arm64"}) {
			t.Errorf("build %s targets %v × %v, want darwin, linux, windows × amd64, arm64", bld.ID, bld.Goos, bld.Goarch)
		}
		if bld.Main != "." && bld.Binary != "terraform-provider-grove_v{{ .Version }}" {
			t.Errorf("the provider's binary is %q; Terraform looks for terraform-provider-grove_vVERSION", bld.Binary)
		}
	}
	for main := range stamps {
		t.Errorf("no build of %s", main)
	}
	var provArchive bool
	for _, a := range cfg.Archives {
		if slices.Contains(a.IDs, "terraform-provider-grove") {
			provArchive = a.NameTemplate == "terraform-provider-grove_{{ .Version }}_{{ .Os }}_{{ .Arch }}" && slices.Equal(a.Formats, []string{"zip"})
		}
	}
	if !provArchive {
		t.Error("the provider is not archived as terraform-provider-grove_VERSION_OS_ARCH.zip")
	}
	if cfg.Checksum.NameTemplate != "terraform-provider-grove_{{ .Version }}_SHA256SUMS" {
		t.Errorf("checksums are %q, not the registry's terraform-provider-grove_VERSION_SHA256SUMS", cfg.Checksum.NameTemplate)
	}
	if len(cfg.Checksum.ExtraFiles) != 1 || cfg.Checksum.ExtraFiles[0].NameTemplate != "terraform-provider-grove_{{ .Version }}_manifest.json" {
		t.Fatalf("the checksums do not cover the registry manifest: %+v", cfg.Checksum.ExtraFiles)
	}
	var manifest struct {
		Version  int `json:"version"`
		Metadata struct {
			ProtocolVersions []string `json:"protocol_versions"`
		} `json:"metadata"`
	}
	mb, err := os.ReadFile(filepath.Join("..", cfg.Checksum.ExtraFiles[0].Glob))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(mb, &manifest); err != nil {
		t.Fatalf("the registry manifest: %v", err)
	}
	// The provider serves protocol 6 (terraform-plugin-framework's providerserver).
	provSrc, err := os.ReadFile("../provider/provider.go")
	if err != nil {
		t.Fatal(err)
	}
	if manifest.Version != 1 || !slices.Equal(manifest.Metadata.ProtocolVersions, []string{"6.0"}) || !strings.Contains(string(provSrc), "protocol 6") {
		t.Errorf("the registry manifest is %+v; the provider serves protocol 6, so it must say version 1 and protocol_versions [\"6.0\"]", manifest)
	}
}

// TestMakeInstall installs into a staging directory as a packager would
// (PREFIX and DESTDIR) and finds both binaries there, executable, and grove
// answering -version. The binaries are built into the test's own directory.
func TestMakeInstall(t *testing.T) {
	makeBin, err := exec.LookPath("make")
	if err != nil {
		t.Skip("make is not installed")
	}
	tmp := t.TempDir()
	cmd := exec.Command(makeBin, "install", "BIN="+filepath.Join(tmp, "bin"), "PREFIX=/usr", "DESTDIR="+filepath.Join(tmp, "root"))
	cmd.Dir = ".."
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("make install: %v\n%s", err, out)
	}
	for _, name := range []string{"grove", "terraform-provider-grove"} {
		p := filepath.Join(tmp, "root", "usr", "bin", name)
		st, err := os.Stat(p)
		if err != nil {
			t.Fatalf("make install did not install %s: %v", name, err)
		}
		if st.Mode().Perm() != 0o755 {
			t.Errorf("%s is installed mode %v, want 0755", p, st.Mode().Perm())
		}
	}
	out, err := exec.Command(filepath.Join(tmp, "root", "usr", "bin", "grove"), "version").CombinedOutput()
	if err != nil || !strings.HasPrefix(string(out), "grove ") {
		t.Errorf("the installed grove version: %v\n%s", err, out)
	}
}
