package docs_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	hclv2 "github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/hashicorp/hcl/v2/hclwrite"

	"github.com/grovehq/grove/cli"
	"github.com/grovehq/grove/core/agent"
	"github.com/grovehq/grove/hcl"
	"github.com/grovehq/grove/plugins/builtin"
	"github.com/grovehq/grove/plugins/sdk"
)

// hclBlock is one ```hcl block of a Markdown file.
type hclBlock struct {
	where string // file:line of the opening fence
	kind  string // the marker's kind; "" is a whole definition set
	src   string // without the fence's indentation
}

// Block kinds a `<!-- hcl: KIND -->` comment on the line before a fence
// may give. Without one a block is a definition set, validated as
// `grove validate` does.
const (
	// agentConfig is an agent configuration file (`grove agent -config`).
	agentConfig = "agent-config"
	// terraform is Terraform configuration for the grove provider.
	terraform = "terraform"
	// fragment is part of a file, shown alone; it must at least parse.
	fragment = "fragment"
)

var (
	hclFence = regexp.MustCompile("^([ \t]*)```hcl[ \t]*$")
	marker   = regexp.MustCompile(`^\s*<!--\s*hcl:\s*([a-z-]+)\s*-->\s*$`)
)

func hclBlocks(t *testing.T, path string) []hclBlock {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(string(b), "\n")
	var out []hclBlock
	for i := 0; i < len(lines); i++ {
		m := hclFence.FindStringSubmatch(lines[i])
		if m == nil {
			continue
		}
		blk := hclBlock{where: path + ":" + strconv.Itoa(i+1)}
		for j := i - 1; j >= 0; j-- {
			if strings.TrimSpace(lines[j]) == "" {
				continue
			}
			if mk := marker.FindStringSubmatch(lines[j]); mk != nil {
				blk.kind = mk[1]
			}
			break
		}
		var src strings.Builder
		closed := false
		for i++; i < len(lines); i++ {
			if strings.TrimSpace(lines[i]) == "```" {
				closed = true
				break
			}
			src.WriteString(strings.TrimPrefix(lines[i], m[1]) + "\n")
		}
		if !closed {
			t.Fatalf("%s: the hcl block is not closed", blk.where)
		}
		blk.src = src.String()
		out = append(out, blk)
	}
	return out
}

// TestHCLBlocksInDocs runs every ```hcl block of README.md and docs/*.md:
// a definition set loads and validates against the built-in plugins'
// schemas, an agent config decodes with the agent's loader, Terraform
// configuration and fragments parse; and `grove fmt -check` passes on each.
func TestHCLBlocksInDocs(t *testing.T) {
	files, _ := filepath.Glob("*.md")
	files = append(files, "../README.md")
	desc, err := sdk.DescriptionToJSON(builtin.Plugin("test").Describe())
	if err != nil {
		t.Fatal(err)
	}
	schemas := &hcl.DescribedSchemas{Components: desc.Components}
	dir := t.TempDir()
	n := map[string]int{}
	for _, f := range files {
		for _, blk := range hclBlocks(t, f) {
			n[blk.kind]++
			name := filepath.Join(dir, "block.hcl")
			if err := os.WriteFile(name, []byte(blk.src), 0o644); err != nil {
				t.Fatal(err)
			}
			switch blk.kind {
			case "":
				def, diags := hcl.LoadSources(map[string][]byte{"block.hcl": []byte(blk.src)}, hcl.Options{Executable: "/usr/local/bin/grove"})
				if !diags.HasErrors() {
					diags = append(diags, hcl.Validate(def, schemas)...)
				}
				if diags.HasErrors() {
					var buf bytes.Buffer
					hcl.WriteDiagnostics(&buf, diags, def.Files)
					t.Errorf("%s: the definition does not validate (mark a block that is not a definition set with <!-- hcl: agent-config -->, <!-- hcl: terraform --> or <!-- hcl: fragment --> on the line before it):\n%s", blk.where, buf.String())
				}
			case agentConfig:
				if _, err := agent.LoadConfig(name); err != nil {
					t.Errorf("%s: the agent config does not load: %v", blk.where, err)
				}
			case terraform, fragment:
				if _, diags := hclsyntax.ParseConfig([]byte(blk.src), blk.where, hclv2.InitialPos); diags.HasErrors() {
					t.Errorf("%s: the block does not parse: %v", blk.where, diags)
				}
			default:
				t.Errorf("%s: unknown block kind %q; use %s, %s or %s", blk.where, blk.kind, agentConfig, terraform, fragment)
				continue
			}
			var stdout, stderr bytes.Buffer
			env := &cli.Env{Stdin: strings.NewReader(""), Stdout: &stdout, Stderr: &stderr}
			if code := cli.Run(context.Background(), env, []string{"fmt", "-check", name}); code != 0 {
				t.Errorf("%s: `grove fmt -check` exits %d: %s; formatted, the block reads:\n%s", blk.where, code, stderr.String(), hclwrite.Format([]byte(blk.src)))
			}
		}
	}
	// The test must have something to check: hcl.md's blocks at least.
	if n[""] == 0 || n[agentConfig] == 0 {
		t.Errorf("found %v blocks by kind; expected definitions and agent configs", n)
	}
}
