// Package hcl is Grove's service-definition language: HCL files declaring
// profiles, policies and clusters, with variables, locals, functions and
// references between blocks. It loads and validates a definition set, plans
// it against what an agent holds, and applies the plan through the API.
package hcl

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	hclv2 "github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclparse"

	"github.com/grovehq/grove/plugins/sdk/schema"
)

// Definition is a loaded and evaluated definition set.
type Definition struct {
	// Set names the definition set; the agent records which set owns which
	// object. It defaults to the directory's (or file's) base name.
	Set      string
	Profiles map[string]*Profile
	Policies map[string]*Policy
	Clusters map[string]*Cluster
	// Milestones are named sets of clusters (docs/dependencies.md).
	Milestones map[string]*Milestone
	// Order lists every block so that each comes after what it references.
	Order []Ref
	// Files are the parsed sources, for diagnostics.
	Files map[string]*hclv2.File
}

// Ref names a block: kind is profile, policy, cluster or milestone.
type Ref struct {
	Kind string `json:"kind"`
	Name string `json:"name"`
}

func (r Ref) String() string { return r.Kind + "." + r.Name }

// Profile is a profile block.
type Profile struct {
	Name       string         `json:"name"`
	Type       string         `json:"type"`
	Version    string         `json:"version"`
	Properties map[string]any `json:"properties"`
	Metadata   map[string]any `json:"metadata,omitempty"`
	decl       blockInfo
	// schema is the type's, once Validate has found it: the plan shows
	// the properties it marks sensitive as "(sensitive)".
	schema schema.Schema
}

// Policy is a policy block.
type Policy struct {
	Name       string         `json:"name"`
	Type       string         `json:"type"`
	Version    string         `json:"version"`
	Properties map[string]any `json:"properties"`
	decl       blockInfo
	schema     schema.Schema
}

// Binding attaches a policy to a cluster.
type Binding struct {
	Policy   string `json:"policy"`
	Enabled  bool   `json:"enabled"`
	Priority *int   `json:"priority,omitempty"`
}

// Cluster is a cluster block.
type Cluster struct {
	Name            string         `json:"name"`
	Profile         string         `json:"profile"`
	DesiredCapacity *int           `json:"desired_capacity,omitempty"`
	MinSize         *int           `json:"min_size,omitempty"`
	MaxSize         *int           `json:"max_size,omitempty"`
	Timeout         *int           `json:"timeout,omitempty"`
	Metadata        map[string]any `json:"metadata,omitempty"`
	// Config holds the user's config and the orchestration settings under
	// their grove.* keys, as the API stores them.
	Config   map[string]any `json:"config,omitempty"`
	Bindings []Binding      `json:"bindings,omitempty"`
	// DependsOn are the cluster's dependency groups, in the order written.
	DependsOn []DependsOn `json:"depends_on,omitempty"`
	// Dependents are the cluster's dependent blocks (SMF's `dependent`):
	// each is declared, as the agent stores it, as a group held by each
	// member that waits on this cluster.
	Dependents []DependsOn `json:"dependents,omitempty"`
	decl       blockInfo
}

// DependsOn is a depends_on block: one named dependency group of a cluster
// (docs/dependencies.md); a dependent block has the same fields, its
// members being the clusters that wait on the declaring one.
type DependsOn struct {
	Name      string `json:"name"`
	Grouping  string `json:"grouping"`
	RestartOn string `json:"restart_on"`
	// Members are cluster names, "milestone:NAME" or "path:/...".
	Members []string `json:"members"`
}

// Milestone is a milestone block: a named set of clusters.
type Milestone struct {
	Name     string   `json:"name"`
	Clusters []string `json:"clusters"`
}

// blockInfo keeps source ranges for diagnostics raised after decoding.
type blockInfo struct {
	rng   hclv2.Range
	props hclv2.Attributes // the properties block's attributes
	// fields maps a setting path such as "restart.condition" to its range.
	fields map[string]hclv2.Range
}

// Options are the inputs of Load besides the files.
type Options struct {
	// Vars are -var NAME=VALUE assignments, in order.
	Vars []string
	// VarFiles are -var-file paths.
	VarFiles []string
	// Env is the environment for GROVE_VAR_<name> (defaults to os.Environ).
	Env []string
	// Set overrides the definition set's name.
	Set string
	// Executable is what grove_executable() returns (defaults to this binary).
	Executable string
}

// Load parses and evaluates the .hcl files at path (a file or a directory).
// Every problem is a diagnostic with a source range.
func Load(path string, opts Options) (*Definition, hclv2.Diagnostics) {
	files, err := sourceFiles(path)
	if err != nil {
		return nil, hclv2.Diagnostics{{Severity: hclv2.DiagError, Summary: "Cannot read the definition", Detail: err.Error()}}
	}
	srcs := map[string][]byte{}
	total := 0
	for _, f := range files {
		b, err := readLimited(f, MaxSourceBytes-total)
		if errors.Is(err, ErrTooLarge) {
			return nil, hclv2.Diagnostics{sourceTooLarge(fmt.Sprintf("Reading %s takes the definition over the limit", f))}
		}
		if err != nil {
			return nil, hclv2.Diagnostics{{Severity: hclv2.DiagError, Summary: "Cannot read a definition file", Detail: err.Error()}}
		}
		srcs[f] = b
		total += len(b)
	}
	set := opts.Set
	if set == "" {
		abs, _ := filepath.Abs(path)
		set = filepath.Base(abs)
		if st, err := os.Stat(path); err == nil && !st.IsDir() {
			set = strings.TrimSuffix(set, filepath.Ext(set))
		}
	}
	return loadSources(srcs, opts, set)
}

// LoadSources is Load over in-memory sources: file name to content. The set
// is named by opts.Set, a grove block, or "default".
func LoadSources(srcs map[string][]byte, opts Options) (*Definition, hclv2.Diagnostics) {
	set := opts.Set
	if set == "" {
		set = "default"
	}
	return loadSources(srcs, opts, set)
}

func loadSources(srcs map[string][]byte, opts Options, set string) (*Definition, hclv2.Diagnostics) {
	p := hclparse.NewParser()
	b := &budget{}
	var diags hclv2.Diagnostics
	var bodies []*hclv2.File
	names := make([]string, 0, len(srcs))
	total := 0
	for n, src := range srcs {
		names = append(names, n)
		total += len(src)
	}
	sort.Strings(names)
	def := &Definition{Set: set, Profiles: map[string]*Profile{}, Policies: map[string]*Policy{}, Clusters: map[string]*Cluster{}, Milestones: map[string]*Milestone{}, Files: map[string]*hclv2.File{}}
	if total > MaxSourceBytes {
		return def, hclv2.Diagnostics{sourceTooLarge(fmt.Sprintf("The definition files hold %d bytes", total))}
	}
	for _, n := range names {
		if ds := checkSource(srcs[n], n, hclv2.InitialPos); ds.HasErrors() {
			def.Files[n] = &hclv2.File{Bytes: srcs[n]} // for the diagnostic's snippet
			diags = append(diags, ds...)
			continue
		}
		f, ds := p.ParseHCL(srcs[n], n)
		diags = append(diags, ds...)
		if f != nil {
			diags = append(diags, b.boundBody(f.Body)...)
			bodies = append(bodies, f)
		}
	}
	for n, f := range p.Files() {
		def.Files[n] = f
	}
	if diags.HasErrors() {
		return def, diags
	}
	e := newEvaluator(def, opts, b, MaxSourceBytes-total)
	diags = append(diags, e.run(bodies)...)
	if rule := setNameRule(def.Set); rule != "" {
		diags = append(diags, &hclv2.Diagnostic{Severity: hclv2.DiagError, Summary: "Invalid definition set name",
			Detail: fmt.Sprintf("The definition set's name %q (from %s) is not valid: %s.", def.Set, setSource(opts, e.setRange), rule), Subject: e.setRange})
	}
	// A stopped evaluation reports its diagnostic through the expression
	// that stopped it; make sure no enclosing expression dropped it.
	if b.diag != nil && !slices.Contains(diags, b.diag) {
		diags = append(diags, b.diag)
	}
	return def, diags
}

// setSource says where the set's name came from, for its diagnostic.
func setSource(opts Options, rng *hclv2.Range) string {
	switch {
	case opts.Set != "":
		return "-set"
	case rng != nil:
		return "the grove block's set"
	}
	return "the directory's or file's name; name the set with -set or a grove block's set"
}

func sourceTooLarge(what string) *hclv2.Diagnostic {
	return &hclv2.Diagnostic{Severity: hclv2.DiagError, Summary: "Definition too large",
		Detail: fmt.Sprintf("%s; definition files, -var-file files and -var values together may hold at most %d MiB (%s).", what, MaxSourceBytes>>20, limitsDoc)}
}

// readLimited reads a file of at most limit bytes, without reading more of
// a larger one.
func readLimited(path string, limit int) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return ReadLimited(f, limit)
}

// ReadLimited reads r to its end when it holds at most limit bytes, and
// otherwise answers ErrTooLarge having read limit+1 bytes at most: what a
// user names may be endless (/dev/zero) or huge, and must end in an error
// rather than in memory growing until the process is killed. The CLI reads
// every file a user names through it.
func ReadLimited(r io.Reader, limit int) ([]byte, error) {
	b, err := io.ReadAll(io.LimitReader(r, int64(max(limit, 0))+1))
	if err != nil {
		return nil, err
	}
	if len(b) > limit {
		return nil, ErrTooLarge
	}
	return b, nil
}

// ErrTooLarge is ReadLimited's answer to input over its limit.
var ErrTooLarge = errors.New("larger than the limit")

func sourceFiles(path string) ([]string, error) {
	st, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	if !st.IsDir() {
		return []string{path}, nil
	}
	matches, err := filepath.Glob(filepath.Join(path, "*.hcl"))
	if err != nil {
		return nil, err
	}
	if len(matches) == 0 {
		return nil, fmt.Errorf("no .hcl files in %s", path)
	}
	sort.Strings(matches)
	return matches, nil
}
