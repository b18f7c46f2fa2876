package docs_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

var (
	goBlock = regexp.MustCompile("(?s)```go\n(.*?)```")
	shBlock = regexp.MustCompile("(?s)```sh\n(.*?)```")
	// sdkReplace is the checkout path the guide's replace line uses.
	sdkReplace = "../grove/plugins/sdk"
)

// TestPluginGuideCompiles follows plugins.md as an author outside the
// repository would: in a temporary directory of its own, it runs the shell
// steps that make the module (with the guide's replace line pointing at
// this checkout, since the SDK is not published from here), writes every Go
// block to the file its first line names, runs the guide's `go mod tidy`
// and `go test`, and builds and vets the result. The module is not Grove's,
// so only what the SDK module provides can resolve.
func TestPluginGuideCompiles(t *testing.T) {
	raw, err := os.ReadFile("plugins.md")
	if err != nil {
		t.Fatal(err)
	}
	doc := string(raw)
	blocks := goBlock.FindAllStringSubmatch(doc, -1)
	if len(blocks) < 4 {
		t.Fatalf("found %d Go blocks in plugins.md", len(blocks))
	}
	sdkDir, err := filepath.Abs(filepath.Join("..", "plugins", "sdk"))
	if err != nil {
		t.Fatal(err)
	}
	// shell returns the guide's shell block holding want.
	shell := func(want string) string {
		for _, b := range shBlock.FindAllStringSubmatch(doc, -1) {
			if strings.Contains(b[1], want) {
				return b[1]
			}
		}
		t.Fatalf("plugins.md has no shell block with %q", want)
		return ""
	}
	// The checksums this checkout pins for the SDK's dependencies, so that
	// nothing needs the checksum database; go mod tidy trims the rest.
	sums, err := os.ReadFile(filepath.Join(sdkDir, "go.sum"))
	if err != nil {
		t.Fatal(err)
	}
	run := func(dir, script string) {
		t.Helper()
		cmd := exec.Command("sh", "-e", "-x", "-c", script)
		cmd.Dir = dir
		// Outside any workspace, like the author's machine.
		cmd.Env = append(os.Environ(), "GOWORK=off", "GOFLAGS=-buildvcs=false")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("%v\n%s", err, out)
		}
	}

	// Step 1: make the module. Its `go get ...@latest` needs the published
	// SDK; the local-checkout replace stands in for it.
	parent := t.TempDir()
	start := shell("go mod init")
	var lines []string
	for _, l := range strings.Split(start, "\n") {
		if !strings.HasPrefix(l, "go get ") {
			lines = append(lines, l)
		}
	}
	if len(lines) == len(strings.Split(start, "\n")) {
		t.Fatal("step 1 of plugins.md no longer runs go get")
	}
	run(parent, strings.Join(lines, "\n"))
	entries, err := os.ReadDir(parent)
	if err != nil || len(entries) != 1 {
		t.Fatalf("step 1 made %d directories (%v), want one", len(entries), err)
	}
	dir := filepath.Join(parent, entries[0].Name())
	run(dir, strings.ReplaceAll(shell("go mod edit -replace"), sdkReplace, sdkDir))
	gomod, err := os.ReadFile(filepath.Join(dir, "go.mod"))
	if err != nil {
		t.Fatal(err)
	}
	line := "replace github.com/grovehq/grove/plugins/sdk => " + sdkReplace
	if !strings.Contains(doc, "```\n"+line+"\n```") {
		t.Errorf("plugins.md no longer shows the line %q", line)
	}
	if !strings.Contains(string(gomod), strings.ReplaceAll(line, sdkReplace, sdkDir)) {
		t.Errorf("the guide's replace command wrote a go.mod without the line it shows:\n%s", gomod)
	}

	// Steps 2 to 5: the code, then the guide's tidy and test.
	if err := os.WriteFile(filepath.Join(dir, "go.sum"), sums, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, b := range blocks {
		first, _, _ := strings.Cut(b[1], "\n")
		name, ok := strings.CutPrefix(first, "// file: ")
		if !ok {
			t.Fatalf("a Go block must start with // file: NAME, got %q", first)
		}
		if err := os.WriteFile(filepath.Join(dir, strings.TrimSpace(name)), []byte(b[1]), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	run(dir, shell("go mod tidy")+"go build -o /dev/null .\ngo vet ./...\n")
}

var (
	fence    = regexp.MustCompile("(?ms)^```.*?^```")
	codeSpan = regexp.MustCompile("`([^`\n]+)`")
	// named is a path followed by the names it declares: `file.go` (`A`, `B`).
	named    = regexp.MustCompile("`([^`\\s]+\\.go)` \\(((?:`[A-Za-z_][A-Za-z0-9_]*`(?:, )?)+)\\)")
	pathExts = []string{".go", ".md", ".proto", ".sql", ".hcl", ".sh"}
)

// architecture returns architecture.md without its fenced blocks, whose
// pictures are not references.
func architecture(t *testing.T) string {
	t.Helper()
	doc, err := os.ReadFile("architecture.md")
	if err != nil {
		t.Fatal(err)
	}
	return fence.ReplaceAllString(string(doc), "")
}

// repoPath says whether a code span names a file or directory of the
// repository: no spaces, not a URL path, and a slash or a file extension.
func repoPath(s string) bool {
	if strings.ContainsAny(s, " \t") || strings.HasPrefix(s, "/") || strings.ContainsAny(s, "{}\"") {
		return false
	}
	if strings.Contains(s, "/") {
		return true
	}
	for _, ext := range pathExts {
		if strings.HasSuffix(s, ext) {
			return true
		}
	}
	return false
}

// TestArchitecturePathsExist keeps architecture.md from going stale: every
// repository path in a code span exists, and every name given in
// parentheses after a Go file is declared at the top level of that file.
func TestArchitecturePathsExist(t *testing.T) {
	doc := architecture(t)
	checked := 0
	for _, m := range codeSpan.FindAllStringSubmatch(doc, -1) {
		if !repoPath(m[1]) {
			continue
		}
		checked++
		if _, err := os.Stat(filepath.Join("..", filepath.FromSlash(strings.TrimSuffix(m[1], "/")))); err != nil {
			t.Errorf("architecture.md names %s, which does not exist: %v", m[1], err)
		}
	}
	if checked < 50 {
		t.Fatalf("architecture.md names %d repository paths; the test expects the page's many file references", checked)
	}
	names := 0
	for _, m := range named.FindAllStringSubmatch(doc, -1) {
		decls, err := declared(filepath.Join("..", filepath.FromSlash(m[1])))
		if err != nil {
			t.Errorf("architecture.md names %s: %v", m[1], err)
			continue
		}
		for _, n := range codeSpan.FindAllStringSubmatch(m[2], -1) {
			names++
			if !decls[n[1]] {
				t.Errorf("architecture.md says %s holds %s, which it does not declare", m[1], n[1])
			}
		}
	}
	if names < 40 {
		t.Fatalf("architecture.md names %d functions and types after their files; the test expects its request walk-through", names)
	}
}

// declared returns the names a Go file declares at the top level:
// functions, methods (by their name), types, variables and constants.
func declared(path string) (map[string]bool, error) {
	f, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.SkipObjectResolution)
	if err != nil {
		return nil, err
	}
	out := map[string]bool{}
	for _, d := range f.Decls {
		switch d := d.(type) {
		case *ast.FuncDecl:
			out[d.Name.Name] = true
		case *ast.GenDecl:
			for _, s := range d.Specs {
				switch s := s.(type) {
				case *ast.TypeSpec:
					out[s.Name.Name] = true
				case *ast.ValueSpec:
					for _, n := range s.Names {
						out[n.Name] = true
					}
				}
			}
		}
	}
	return out, nil
}

// TestArchitectureImportRules holds every package to the "may import"
// column of architecture.md's package table: each Grove import of a
// package is its own sub-package or one the table allows, and every
// package of the product has a row.
func TestArchitectureImportRules(t *testing.T) {
	const module = "github.com/grovehq/grove/"
	doc := architecture(t)
	start := strings.Index(doc, "## Packages")
	if start < 0 {
		t.Fatal("architecture.md has no Packages section")
	}
	rules := map[string][]string{} // package -> what it may import
	for _, line := range strings.Split(doc[start:], "\n")[1:] {
		if strings.HasPrefix(line, "## ") {
			break
		}
		if !strings.HasPrefix(line, "| `") {
			continue
		}
		cells := strings.Split(strings.Trim(line, "|"), "|")
		pkg := codeSpan.FindStringSubmatch(cells[0])
		if pkg == nil {
			t.Fatalf("a package row without a package: %s", line)
		}
		allowed := []string{}
		for _, a := range codeSpan.FindAllStringSubmatch(cells[len(cells)-1], -1) {
			allowed = append(allowed, strings.TrimSuffix(a[1], "/"))
		}
		rules[strings.TrimSuffix(pkg[1], "/")] = allowed
	}
	if len(rules) < 10 {
		t.Fatalf("found %d rows in architecture.md's package table", len(rules))
	}
	// Both modules: `./...` in Grove's does not reach into the SDK's.
	var out []byte
	for _, dir := range []string{"..", filepath.Join("..", "plugins", "sdk")} {
		cmd := exec.Command("go", "list", "-f", `{{.ImportPath}}{{range .Imports}} {{.}}{{end}}`, "./...")
		cmd.Dir = dir
		b, err := cmd.Output()
		if err != nil {
			t.Fatalf("go list in %s: %v", dir, err)
		}
		out = append(out, b...)
	}
	within := func(p, dir string) bool { return p == dir || strings.HasPrefix(p, dir+"/") }
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		fields := strings.Fields(line)
		pkg, ok := strings.CutPrefix(fields[0], module)
		if !ok {
			continue // the module's root: main.go, which only calls cli
		}
		if top, _, _ := strings.Cut(pkg, "/"); slices.Contains([]string{"bench", "docs", "e2e", "examples"}, top) {
			continue // tests, benchmarks and examples may use anything
		}
		row := ""
		for r := range rules {
			if within(pkg, r) && len(r) > len(row) {
				row = r
			}
		}
		if row == "" {
			t.Errorf("the package %s has no row in architecture.md's package table", pkg)
			continue
		}
		for _, imp := range fields[1:] {
			imp, ok := strings.CutPrefix(imp, module)
			if !ok || within(imp, row) {
				continue
			}
			if !slices.ContainsFunc(rules[row], func(a string) bool { return within(imp, a) }) {
				allows := strings.Join(rules[row], ", ")
				if allows == "" {
					allows = "nothing of Grove"
				}
				t.Errorf("%s imports %s, which architecture.md's table does not let %s import (it allows %s)", pkg, imp, row, allows)
			}
		}
	}
}

// TestEngineDocNamesEveryFile keeps core/engine's package comment, the
// index of its files, in step with them: every file it names exists and
// every file of the package is named.
func TestEngineDocNamesEveryFile(t *testing.T) {
	dir := filepath.Join("..", "core", "engine")
	f, err := parser.ParseFile(token.NewFileSet(), filepath.Join(dir, "doc.go"), nil, parser.ParseComments|parser.PackageClauseOnly)
	if err != nil {
		t.Fatal(err)
	}
	if f.Doc == nil {
		t.Fatal("core/engine/doc.go has no package comment")
	}
	doc := f.Doc.Text()
	named := map[string]bool{}
	for _, m := range regexp.MustCompile(`\b[a-z_]+\.go\b`).FindAllString(doc, -1) {
		named[m] = true
		if _, err := os.Stat(filepath.Join(dir, m)); err != nil {
			t.Errorf("core/engine's package comment names %s, which does not exist", m)
		}
	}
	files, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil {
		t.Fatal(err)
	}
	for _, path := range files {
		name := filepath.Base(path)
		if strings.HasSuffix(name, "_test.go") || name == "doc.go" {
			continue
		}
		if !named[name] {
			t.Errorf("core/engine's package comment (doc.go) does not say what %s holds", name)
		}
	}
}
