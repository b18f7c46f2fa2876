package docs_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

var goBlock = regexp.MustCompile("(?s)```go\n(.*?)```")

// TestPluginGuideCompiles writes every Go block of plugins.md to the file
// its first line names, compiles and vets the result, and runs its test.
func TestPluginGuideCompiles(t *testing.T) {
	doc, err := os.ReadFile("plugins.md")
	if err != nil {
		t.Fatal(err)
	}
	blocks := goBlock.FindAllStringSubmatch(string(doc), -1)
	if len(blocks) < 4 {
		t.Fatalf("found %d Go blocks in plugins.md", len(blocks))
	}
	// Inside the module, so the SDK resolves to this checkout; the leading
	// dot keeps `./...` from picking the directory up.
	dir, err := os.MkdirTemp(".", ".snippets-")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(dir)
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
	// Build, vet, and run the guide's own conformance test: the plugin the
	// guide builds must pass the kit it recommends.
	for _, args := range [][]string{{"build", "-o", os.DevNull, "./" + dir}, {"vet", "./" + dir}, {"test", "-count=1", "./" + dir}} {
		out, err := exec.Command("go", args...).CombinedOutput()
		if err != nil {
			t.Fatalf("go %s: %v\n%s", strings.Join(args, " "), err, out)
		}
	}
}
