package hcl

import (
	"fmt"
	"os"
	"reflect"
	"slices"
	"strings"
	"testing"
)

const threeTierHCL = `profile "p" {
  type    = "grove.noop"
  version = "1.0"
}

cluster "db" {
  profile = profile.p
}

cluster "app" {
  profile = profile.p
  depends_on "database" {
    grouping   = "require_all"
    restart_on = "error"
    members    = [cluster.db, "path:/etc/app.conf"]
  }
}

cluster "web" {
  profile = profile.p
  depends_on "backend" {
    grouping   = "require_all"
    restart_on = "restart"
    members    = [milestone.backend]
  }
  depends_on "no_maintenance" {
    grouping = "exclude_all"
    members  = ["maint"]
  }
}

milestone "backend" {
  clusters = [cluster.db, cluster.app]
}
`

// TestDependsOnAndMilestones: depends_on blocks decode into groups
// (restart_on defaulting to none, references and strings as members),
// milestone blocks into sets; the order puts each cluster after what it
// waits on and a milestone after its clusters; the start order comes in
// waves.
func TestDependsOnAndMilestones(t *testing.T) {
	def, diags := load(t, threeTierHCL, Options{})
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	want := []DependsOn{
		{Name: "backend", Grouping: "require_all", RestartOn: "restart", Members: []string{"milestone:backend"}},
		{Name: "no_maintenance", Grouping: "exclude_all", RestartOn: "none", Members: []string{"maint"}},
	}
	if got := def.Clusters["web"].DependsOn; !reflect.DeepEqual(got, want) {
		t.Errorf("web depends on %+v", got)
	}
	if got := def.Clusters["app"].DependsOn[0].Members; strings.Join(got, ",") != "db,path:/etc/app.conf" {
		t.Errorf("app's members %v", got)
	}
	if m := def.Milestones["backend"]; m == nil || strings.Join(m.Clusters, ",") != "db,app" {
		t.Errorf("milestone %+v", m)
	}
	pos := map[string]int{}
	for i, r := range def.Order {
		pos[r.String()] = i
	}
	if !(pos["cluster.db"] < pos["cluster.app"] && pos["cluster.app"] < pos["milestone.backend"] && pos["milestone.backend"] < pos["cluster.web"]) {
		t.Errorf("order %v", def.Order)
	}
	snap := &Snapshot{Clusters: def.Clusters, Milestones: def.Milestones}
	if got := fmt.Sprint(snap.StartOrder()); got != "[[db] [app] [web]]" {
		t.Errorf("start order %s", got)
	}
}

// TestDependsOnErrors: each rule is named at the attribute at fault.
func TestDependsOnErrors(t *testing.T) {
	const head = "profile \"p\" {\n  type    = \"grove.noop\"\n  version = \"1.0\"\n}\n\ncluster \"db\" {\n  profile = profile.p\n"
	cases := []struct {
		body      string
		want      string
		line, col int
	}{
		{"  depends_on \"d\" {\n    grouping = \"require_some\"\n    members  = []\n  }\n}\n",
			`grouping must be one of require_all, require_any, optional_all or exclude_all, not "require_some"`, 9, 16},
		{"  depends_on \"d\" {\n    grouping   = \"require_all\"\n    restart_on = \"always\"\n    members    = []\n  }\n}\n",
			`restart_on must be one of none, error, restart or refresh, not "always"`, 10, 18},
		{"  depends_on \"d\" {\n    grouping = \"require_all\"\n    members  = [\"path:etc/x\"]\n  }\n}\n",
			"must be an absolute path", 10, 17},
		{"  depends_on \"d\" {\n    grouping = \"require_all\"\n    members  = [\"web\", \"web\"]\n  }\n}\n",
			`member "web" is listed twice`, 10, 24},
		{"  depends_on \"d\" {\n    grouping = \"require_all\"\n    members  = [{ a = 1 }]\n  }\n}\n",
			"members must be a list of cluster references", 10, 16},
		{"  depends_on \"d\" {\n    grouping = \"require_all\"\n    members  = []\n  }\n  depends_on \"d\" {\n    grouping = \"require_all\"\n    members  = []\n  }\n}\n",
			`depends_on "d" is declared twice`, 12, 14},
		{"  depends_on \"d\" {\n    grouping = \"require_all\"\n  }\n}\n",
			`The argument "members" is required`, 8, 18},
		{"  depends_on \"d\" {\n    grouping = \"require_all\"\n    members  = [\"db\"]\n  }\n}\n",
			"wait on each other: db → db", 6, 1},
	}
	for _, c := range cases {
		def, diags := load(t, head+c.body, Options{})
		if !diags.HasErrors() {
			t.Errorf("%q: no error", c.body)
			continue
		}
		diagAt(t, def, diags, c.want, c.line, c.col)
	}
}

// TestDependencyCycleThroughNames: a cycle of string members, which the
// references do not see, is refused naming every cluster in it; one
// through exclude_all is not a cycle.
func TestDependencyCycleThroughNames(t *testing.T) {
	src := `profile "p" {
  type    = "grove.noop"
  version = "1.0"
}
cluster "a" {
  profile = profile.p
  depends_on "g" {
    grouping = "require_all"
    members  = ["b"]
  }
}
cluster "b" {
  profile = profile.p
  depends_on "g" {
    grouping = "GROUPING"
    members  = ["a"]
  }
}
`
	_, diags := load(t, strings.Replace(src, "GROUPING", "require_any", 1), Options{})
	if !diags.HasErrors() || !strings.Contains(diags.Error(), "a → b → a") {
		t.Errorf("diags %v", diags)
	}
	if _, diags := load(t, strings.Replace(src, "GROUPING", "exclude_all", 1), Options{}); diags.HasErrors() {
		t.Errorf("an exclusion cycle: %v", diags)
	}
}

// TestMilestoneBlockErrors: reserved names and repeated clusters.
func TestMilestoneBlockErrors(t *testing.T) {
	const head = "profile \"p\" {\n  type    = \"grove.noop\"\n  version = \"1.0\"\n}\n\ncluster \"db\" {\n  profile = profile.p\n}\n"
	def, diags := load(t, head+"milestone \"all\" {\n  clusters = [cluster.db]\n}\n", Options{})
	diagAt(t, def, diags, `The milestone name "all" is reserved`, 9, 11)
	def, diags = load(t, head+"milestone \"m\" {\n  clusters = [cluster.db, \"db\"]\n}\n", Options{})
	diagAt(t, def, diags, `clusters lists "db" twice`, 10, 14)
	def, diags = load(t, head+"milestone \"m\" {\n  clusters = [cluster.nosuch]\n}\n", Options{})
	diagAt(t, def, diags, `No cluster named "nosuch"`, 10, 15)
}

// TestDependenciesDocExample: docs/dependencies.md's three-tier example
// loads and starts in the order the page says.
func TestDependenciesDocExample(t *testing.T) {
	b, err := os.ReadFile("../docs/dependencies.md")
	if err != nil {
		t.Fatal(err)
	}
	_, rest, _ := strings.Cut(string(b), "```hcl\n")
	src, _, _ := strings.Cut(rest, "```")
	def, diags := load(t, src, Options{})
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	var parts []string
	for _, w := range (&Snapshot{Clusters: def.Clusters, Milestones: def.Milestones}).StartOrder() {
		parts = append(parts, strings.Join(w, ", "))
	}
	order := strings.Join(parts, " → ")
	if !strings.Contains(strings.Join(strings.Fields(string(b)), " "), "Start order (depends_on): "+order+".") {
		t.Errorf("the page does not give the start order %q", order)
	}
}

const dependentHCL = `profile "p" {
  type    = "grove.noop"
  version = "1.0"
}

cluster "db" {
  profile = profile.p
  dependent "database" {
    grouping   = "require_all"
    restart_on = "error"
    members    = [cluster.app, "report"]
  }
}

cluster "app" {
  profile = profile.p
}

cluster "report" {
  profile = profile.p
}
`

// TestDependentBlocks: a dependent block decodes as a group declared by
// its cluster; it reverses the order (db, which its members wait on,
// comes first although app is referenced from db), the start order sees
// it stored on each member, and the plan's create lines show it.
func TestDependentBlocks(t *testing.T) {
	def, diags := load(t, dependentHCL, Options{})
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	want := []DependsOn{{Name: "database", Grouping: "require_all", RestartOn: "error", Members: []string{"app", "report"}}}
	if got := def.Clusters["db"].Dependents; !reflect.DeepEqual(got, want) {
		t.Errorf("db's dependents %+v", got)
	}
	pos := map[string]int{}
	for i, r := range def.Order {
		pos[r.String()] = i
	}
	if !(pos["cluster.db"] < pos["cluster.app"]) {
		t.Errorf("order %v: db must come before app, which waits on it", def.Order)
	}
	snap := &Snapshot{Profiles: def.Profiles, Policies: def.Policies, Clusters: def.Clusters, Milestones: def.Milestones, Order: def.Order}
	if got := fmt.Sprint(snap.StartOrder()); got != "[[db] [app report]]" {
		t.Errorf("start order %s", got)
	}
	lines := strings.Join(createLines(snap, Ref{Kind: "cluster", Name: "db"}), "\n")
	if !strings.Contains(lines, `dependent.database = {"grouping":"require_all","members":["app","report"],"restart_on":"error"}`) {
		t.Errorf("create lines:\n%s", lines)
	}
}

// TestDependentErrors: a dependent block is checked with depends_on's
// rules, named at the attribute at fault; its members are clusters only;
// a cycle through it is refused whole; a name its member already holds is
// refused.
func TestDependentErrors(t *testing.T) {
	const head = "profile \"p\" {\n  type    = \"grove.noop\"\n  version = \"1.0\"\n}\n\ncluster \"web\" {\n  profile = profile.p\n  depends_on \"database\" {\n    grouping = \"require_all\"\n    members  = [\"other\"]\n  }\n}\n\ncluster \"db\" {\n  profile = profile.p\n"
	cases := []struct {
		body      string
		want      string
		line, col int
	}{
		{"  dependent \"d\" {\n    grouping = \"require_some\"\n    members  = [\"web\"]\n  }\n}\n",
			`grouping must be one of require_all, require_any, optional_all or exclude_all, not "require_some"`, 17, 16},
		{"  dependent \"d\" {\n    grouping   = \"require_all\"\n    restart_on = \"always\"\n    members    = [\"web\"]\n  }\n}\n",
			`restart_on must be one of none, error, restart or refresh, not "always"`, 18, 18},
		{"  dependent \"d\" {\n    grouping = \"require_all\"\n    members  = [\"path:/etc/x\"]\n  }\n}\n",
			`member "path:/etc/x" is not a cluster`, 18, 16},
		{"  dependent \"d\" {\n    grouping = \"require_all\"\n    members  = [\"web\"]\n  }\n  dependent \"d\" {\n    grouping = \"require_all\"\n    members  = [\"web\"]\n  }\n}\n",
			`dependent "d" is declared twice`, 20, 13},
		{"  dependent \"database\" {\n    grouping = \"require_all\"\n    members  = [\"web\"]\n  }\n}\n",
			`cluster "web" already holds a dependency group named "database"`, 18, 16},
		{"  depends_on \"w\" {\n    grouping = \"require_all\"\n    members  = [\"web\"]\n  }\n  dependent \"d\" {\n    grouping = \"require_all\"\n    members  = [\"web\"]\n  }\n}\n",
			"wait on each other: db → web → db", 14, 1},
	}
	for _, c := range cases {
		def, diags := load(t, head+c.body, Options{})
		if !diags.HasErrors() {
			t.Errorf("%q: no error", c.body)
			continue
		}
		diagAt(t, def, diags, c.want, c.line, c.col)
	}
}

// TestDependentDeclarations: apply declares a cluster's dependents once
// the clusters that wait on it exist, and again when one of them is
// replaced (the agent drops the groups a deleted cluster held).
func TestDependentDeclarations(t *testing.T) {
	def, diags := load(t, dependentHCL, Options{})
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	desired := &Snapshot{Clusters: def.Clusters}
	created := &Plan{Desired: desired, Changes: []Change{
		{Action: Create, Ref: Ref{Kind: "cluster", Name: "db"}},
		{Action: Create, Ref: Ref{Kind: "cluster", Name: "app"}},
		{Action: Create, Ref: Ref{Kind: "cluster", Name: "report"}},
	}}
	d := newDeclarations(created)
	for _, name := range []string{"db", "app"} {
		delete(d.creating, name)
		if d.ready("db") {
			t.Fatalf("db is ready to declare after %s, before report exists", name)
		}
	}
	delete(d.creating, "report")
	if !d.ready("db") {
		t.Errorf("db is not ready once app and report exist")
	}
	replaced := newDeclarations(&Plan{Desired: desired, Changes: []Change{{Action: Replace, Ref: Ref{Kind: "cluster", Name: "report"}}}})
	if !slices.Contains(replaced.order, "db") {
		t.Errorf("report replaced: declarations %v, want db declared again", replaced.order)
	}
	if unchanged := newDeclarations(&Plan{Desired: desired}); len(unchanged.order) != 0 {
		t.Errorf("nothing changed: declarations %v", unchanged.order)
	}
}
