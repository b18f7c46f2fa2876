package docs_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// The forms a Markdown renderer turns into a link: inline links and images
// [text](target "title"), reference definitions [label]: target, autolinks
// <scheme:...>, and bare http(s) URLs, which GitHub's renderer links too.
var (
	inlineLink = regexp.MustCompile(`!?\[[^\]]*\]\(\s*<?([^)\s>]*)>?(?:\s+"[^"]*")?\s*\)`)
	refDef     = regexp.MustCompile(`(?m)^ {0,3}\[[^\]]+\]:\s*<?(\S+?)>?(?:\s|$)`)
	autolink   = regexp.MustCompile(`<([a-zA-Z][a-zA-Z0-9+.-]*:[^>\s]+)>`)
	bareURL    = regexp.MustCompile(`(?i)\b(?:https?://|www\.)[^\s<>()\[\]"'` + "`" + `]+`)

	fencedBlock  = regexp.MustCompile("(?ms)^ {0,3}(```|~~~)[^\n]*\n.*?^ {0,3}(```|~~~)[ \t]*$")
	inlineCode   = regexp.MustCompile("``[^`]+``|`[^`\n]+`")
	htmlComment  = regexp.MustCompile(`(?s)<!--.*?-->`)
	frontMatter  = regexp.MustCompile(`(?s)\A---\n.*?\n---\n`)
	webTarget    = regexp.MustCompile(`^(?i)(https?:|www\.)`)
	schemeTarget = regexp.MustCompile(`^[a-zA-Z][a-zA-Z0-9+.-]*:`)
	// Loopback addresses and the names reserved for examples (RFC 2606 and
	// RFC 6761) illustrate an agent's address; they name no page.
	illustration = regexp.MustCompile(`(?i)^(?:https?://)?(?:127\.0\.0\.1|localhost|\[::1\]|(?:[a-z0-9-]+\.)*(?:example\.(?:com|net|org)|example|test|invalid|localhost))(?:[:/]|$)`)
)

// markdownFiles lists the repository's Markdown files as git tracks them (so
// untracked scratch files and the module cache do not count), or, outside a
// git checkout, as the tree holds them.
func markdownFiles(t *testing.T, root string) []string {
	t.Helper()
	out, err := exec.Command("git", "-C", root, "ls-files", "--cached", "--others", "--exclude-standard", "*.md").Output()
	if err == nil {
		var files []string
		for _, f := range strings.Fields(string(out)) {
			if _, err := os.Stat(filepath.Join(root, f)); err == nil {
				files = append(files, f)
			}
		}
		return files
	}
	var files []string
	err = filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (strings.HasPrefix(d.Name(), ".") && p != root) {
			return filepath.SkipDir
		}
		if !d.IsDir() && strings.HasSuffix(p, ".md") {
			rel, _ := filepath.Rel(root, p)
			files = append(files, rel)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}

// prose returns a Markdown document with what a renderer does not link
// blanked out: front matter, fenced code, code spans and HTML comments. Each
// is replaced by as many newlines as it held, so line numbers stay true.
func prose(doc string) string {
	keepLines := func(s string) string { return strings.Repeat("\n", strings.Count(s, "\n")) }
	doc = frontMatter.ReplaceAllStringFunc(doc, keepLines)
	doc = fencedBlock.ReplaceAllStringFunc(doc, keepLines)
	doc = htmlComment.ReplaceAllStringFunc(doc, keepLines)
	return inlineCode.ReplaceAllString(doc, "")
}

// linkProblem says what is wrong with a link target found in file (relative
// to root), or "" when it points inside the repository at something that
// exists. Loopback and example addresses illustrate an agent's address and
// are not pages outside the repository.
func linkProblem(root, file, target string) string {
	switch {
	case target == "" || strings.HasPrefix(target, "#"):
		return ""
	case illustration.MatchString(target):
		return ""
	case webTarget.MatchString(target):
		return "points outside the repository (name the project or tool instead)"
	case schemeTarget.MatchString(target):
		return "uses a scheme other than a relative path (" + strings.SplitN(target, ":", 2)[0] + ")"
	}
	path := target
	if i := strings.IndexAny(path, "#?"); i >= 0 {
		path = path[:i]
	}
	var abs string
	if strings.HasPrefix(path, "/") {
		abs = filepath.Join(root, path)
	} else {
		abs = filepath.Join(root, filepath.Dir(file), path)
	}
	if rel, err := filepath.Rel(root, abs); err != nil || strings.HasPrefix(rel, "..") {
		return "leaves the repository"
	}
	if _, err := os.Stat(abs); err != nil {
		return "names a file that does not exist"
	}
	return ""
}

// links returns every link target in a document's prose with its line.
func links(doc string) []struct {
	line   int
	target string
} {
	text := prose(doc)
	var found []struct {
		line   int
		target string
	}
	add := func(re *regexp.Regexp, whole bool) {
		for _, m := range re.FindAllStringSubmatchIndex(text, -1) {
			start, end := m[0], m[1]
			if !whole {
				start, end = m[2], m[3]
			}
			found = append(found, struct {
				line   int
				target string
			}{strings.Count(text[:m[0]], "\n") + 1, strings.TrimRight(text[start:end], ".,;:!?")})
		}
	}
	add(inlineLink, false)
	add(refDef, false)
	add(autolink, false)
	// Bare URLs outside the links already found: blank those first so an
	// inline link's target is not reported twice.
	rest := inlineLink.ReplaceAllStringFunc(text, func(s string) string { return strings.Repeat(" ", len(s)) })
	rest = refDef.ReplaceAllStringFunc(rest, func(s string) string { return strings.Repeat(" ", len(s)) })
	rest = autolink.ReplaceAllStringFunc(rest, func(s string) string { return strings.Repeat(" ", len(s)) })
	for _, m := range bareURL.FindAllStringIndex(rest, -1) {
		found = append(found, struct {
			line   int
			target string
		}{strings.Count(rest[:m[0]], "\n") + 1, strings.TrimRight(rest[m[0]:m[1]], ".,;:!?")})
	}
	return found
}

// TestNoLinkLeavesTheRepository keeps every Markdown file self-contained: no
// link points outside the repository (a reader offline, or a mirror, must
// not meet dead or moved pages; the standards name projects and tools
// instead), and every relative link names a file or directory that exists.
func TestNoLinkLeavesTheRepository(t *testing.T) {
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	files := markdownFiles(t, root)
	if len(files) < 10 {
		t.Fatalf("found only %d Markdown files under %s; the scan is not looking where the docs are", len(files), root)
	}
	checked := 0
	for _, f := range files {
		doc, err := os.ReadFile(filepath.Join(root, f))
		if err != nil {
			t.Fatal(err)
		}
		for _, l := range links(string(doc)) {
			checked++
			if p := linkProblem(root, f, l.target); p != "" {
				t.Errorf("%s:%d: link %q %s", f, l.line, l.target, p)
			}
		}
	}
	if checked == 0 {
		t.Fatal("no links found in any Markdown file; the link patterns are broken")
	}
}

// TestLinkScanner proves the scanner sees each form of link and ignores code,
// so TestNoLinkLeavesTheRepository cannot pass by seeing nothing.
func TestLinkScanner(t *testing.T) {
	doc := strings.Join([]string{
		"---",
		"# generated by https://front.matter.dev",
		"---",
		"See [the guide](docs/plugins.md#writing) and ![logo](missing.png).",
		"An [outside page](https://outside.dev/page \"title\").",
		"Autolink <https://auto.dev/x> and bare https://bare.dev/y.",
		"[ref]: https://ref.dev/z",
		"A local agent at http://127.0.0.1:7470/v1 is an example, not a page.",
		"`https://in.code.dev` and <!-- https://in.comment.dev -->",
		"```sh",
		"curl https://in.fenced.dev",
		"```",
		"[anchor](#section) [up](../README.md)",
	}, "\n")
	var got []string
	for _, l := range links(doc) {
		got = append(got, l.target)
	}
	want := []string{
		"docs/plugins.md#writing", "missing.png", "https://outside.dev/page", "../README.md",
		"https://ref.dev/z", "https://auto.dev/x", "https://bare.dev/y", "http://127.0.0.1:7470/v1",
	}
	for _, w := range want {
		if !strings.Contains("\x00"+strings.Join(got, "\x00")+"\x00", "\x00"+w+"\x00") {
			t.Errorf("scanner missed %q; found %q", w, got)
		}
	}
	for _, g := range got {
		if strings.Contains(g, "front.matter") || strings.Contains(g, "in.code.dev") || strings.Contains(g, "in.comment.dev") || strings.Contains(g, "in.fenced") {
			t.Errorf("scanner reported %q, which is in code, a comment or front matter", g)
		}
	}

	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	for target, wantProblem := range map[string]bool{
		"docs/plugins.md#writing":         false,
		"docs/plugins.md":                 false,
		"docs/":                           false,
		"#section":                        false,
		"http://127.0.0.1:7470/v1":        false,
		"https://grove.example.com:7470":  false,
		"https://example.org/x":           false,
		"https://grove.example.community": true,
		"https://outside.dev/page":        true,
		"www.outside.dev":                 true,
		"mailto:someone@example.com":      true,
		"missing.png":                     true,
		"../../outside-the-repo.md":       true,
	} {
		if p := linkProblem(root, "README.md", target); (p != "") != wantProblem {
			t.Errorf("linkProblem(README.md, %q) = %q, want a problem: %v", target, p, wantProblem)
		}
	}
}
