package docs_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/grovehq/grove/cli"
)

var (
	// snapshotBlock is a JSON block placement.md names a file for.
	snapshotBlock = regexp.MustCompile("(?s)<!-- file: ([^ ]+) -->\n```json\n(.*?)```")
	// simulateRun is a shell block of one grove command and the text block
	// of its output that follows it.
	simulateRun = regexp.MustCompile("(?s)```sh\n(grove [^\n]*)\n```\n\n```text\n(.*?)```")
)

// TestPlacementExamples runs placement.md's examples word for word: each
// JSON block is written to the file its marker names, in a directory of
// its own, and each `grove ...` command in a shell block runs there (in
// process); what it prints, stdout then stderr, must be the text block
// that follows. GROVE_UPDATE_DOCS=1 rewrites the text blocks instead.
func TestPlacementExamples(t *testing.T) {
	abs, err := filepath.Abs("placement.md")
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(abs)
	if err != nil {
		t.Fatal(err)
	}
	doc := string(b)
	dir := t.TempDir()
	files := snapshotBlock.FindAllStringSubmatch(doc, -1)
	if len(files) < 8 {
		t.Fatalf("placement.md has %d snapshot files; want one per policy and more", len(files))
	}
	for _, m := range files {
		if err := os.WriteFile(filepath.Join(dir, m[1]), []byte(m[2]), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	t.Chdir(dir)
	runs := simulateRun.FindAllStringSubmatchIndex(doc, -1)
	if len(runs) < len(files) {
		t.Fatalf("placement.md runs %d commands over %d snapshot files", len(runs), len(files))
	}
	var out strings.Builder
	last := 0
	for _, r := range runs {
		command := doc[r[2]:r[3]]
		want := doc[r[4]:r[5]]
		var stdout, stderr bytes.Buffer
		code := cli.Run(context.Background(), &cli.Env{Stdin: strings.NewReader(""), Stdout: &stdout, Stderr: &stderr}, strings.Fields(strings.TrimPrefix(command, "grove ")))
		got := stdout.String() + stderr.String()
		if strings.Contains(command, "bad-") != (code != 0) {
			t.Errorf("%s: exit %d (a command on a bad- file must fail, others succeed)\n%s", command, code, got)
		}
		if got != want && os.Getenv("GROVE_UPDATE_DOCS") == "" {
			t.Errorf("%s prints\n%s\nplacement.md shows\n%s", command, got, want)
		}
		out.WriteString(doc[last:r[4]])
		out.WriteString(got)
		last = r[5]
	}
	out.WriteString(doc[last:])
	if os.Getenv("GROVE_UPDATE_DOCS") != "" {
		if err := os.WriteFile(abs, []byte(out.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}
