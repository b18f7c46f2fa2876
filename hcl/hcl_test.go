package hcl

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	hclv2 "github.com/hashicorp/hcl/v2"

	"github.com/grovehq/grove/api"
	"github.com/grovehq/grove/plugins/builtin"
	"github.com/grovehq/grove/plugins/sdk"
)

func builtinSchemas(t *testing.T) SchemaSource {
	d, err := sdk.DescriptionToJSON(builtin.Plugin("test").Describe())
	if err != nil {
		t.Fatal(err)
	}
	return &DescribedSchemas{Components: d.Components}
}

func load(t *testing.T, src string, opts Options) (*Definition, hclv2.Diagnostics) {
	t.Helper()
	return LoadSources(map[string][]byte{"main.hcl": []byte(src)}, opts)
}

// diagAt asserts one diagnostic mentioning want, at line:col.
func diagAt(t *testing.T, def *Definition, diags hclv2.Diagnostics, want string, line, col int) {
	t.Helper()
	for _, d := range diags {
		if strings.Contains(d.Summary+" "+d.Detail, want) {
			if d.Subject == nil || d.Subject.Start.Line != line || d.Subject.Start.Column != col {
				t.Errorf("diagnostic %q at %v, want line %d column %d", want, d.Subject, line, col)
			}
			var buf bytes.Buffer
			WriteDiagnostics(&buf, hclv2.Diagnostics{d}, def.Files)
			if got := caretColumn(buf.String(), "main.hcl", line); got != col {
				t.Errorf("rendered diagnostic does not point at line %d column %d (carets at column %d):\n%s", line, col, got, buf.String())
			}
			return
		}
	}
	t.Errorf("no diagnostic mentions %q; got %v", want, diags)
}

func TestExamplesLoadAndValidate(t *testing.T) {
	dirs, _ := filepath.Glob("../examples/hcl/*")
	n := 0
	for _, dir := range dirs {
		if st, err := os.Stat(dir); err != nil || !st.IsDir() {
			continue
		}
		n++
		def, diags := Load(dir, Options{})
		if diags.HasErrors() {
			t.Errorf("%s: %v", dir, diags)
			continue
		}
		if ds := Validate(def, builtinSchemas(t)); ds.HasErrors() {
			t.Errorf("%s: %v", dir, ds)
		}
	}
	if n == 0 {
		t.Fatal("no examples found")
	}
}

func TestQuickstart(t *testing.T) {
	def, diags := Load("../examples/hcl/quickstart", Options{Vars: []string{"nodes=4"}, Executable: "/bin/grove"})
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	c := def.Clusters["quickstart"]
	if def.Set != "quickstart" || *c.DesiredCapacity != 4 || c.Profile != "web" || len(c.Bindings) != 1 || c.Bindings[0].Policy != "oldest_first" {
		t.Fatalf("cluster: %+v", c)
	}
	if cmd := def.Profiles["web"].Properties["command"].([]any); cmd[0] != "/bin/grove" {
		t.Fatalf("grove_executable(): %v", cmd)
	}
	restart := c.Config[api.ConfigRestart].(map[string]any)
	if restart["condition"] != "on-failure" || restart["max_attempts"] != 5.0 {
		t.Fatalf("restart settings: %v", restart)
	}
	want := []Ref{{"profile", "web"}, {"policy", "oldest_first"}, {"cluster", "quickstart"}}
	if len(def.Order) != 3 || def.Order[2] != want[2] {
		t.Fatalf("order: %v", def.Order)
	}
}

const base = `
profile "p" {
  type    = "local.process"
  version = "1.0"
  properties {
    command = ["x"]
  }
}
`

func TestVariables(t *testing.T) {
	src := `
variable "n" {
  type    = number
  default = 2
  validation {
    condition     = var.n < 10
    error_message = "n must be below 10."
  }
}
variable "name" {
  type = string
}
variable "tags" {
  type    = map(string)
  default = {}
}
` + base + `
cluster "c" {
  profile          = profile.p
  desired_capacity = var.n
  metadata         = merge(var.tags, { owner = upper(var.name) })
}
`
	dir := t.TempDir()
	varFile := filepath.Join(dir, "vars.hcl")
	os.WriteFile(varFile, []byte(`n = 3`+"\n"+`tags = { team = "web" }`), 0o644)

	def, diags := load(t, src, Options{Env: []string{"GROVE_VAR_name=ann"}, VarFiles: []string{varFile}})
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	c := def.Clusters["c"]
	if *c.DesiredCapacity != 3 || c.Metadata["owner"] != "ANN" || c.Metadata["team"] != "web" {
		t.Fatalf("var file and env: %+v", c)
	}
	def, diags = load(t, src, Options{Env: []string{"GROVE_VAR_name=ann"}, VarFiles: []string{varFile}, Vars: []string{"n=5"}})
	if diags.HasErrors() || *def.Clusters["c"].DesiredCapacity != 5 {
		t.Fatalf("-var wins over the var file: %v", diags)
	}
	def, diags = load(t, src, Options{Env: []string{}})
	diagAt(t, def, diags, `Variable "name" has no default`, 10, 1)
	def, diags = load(t, src, Options{Env: []string{"GROVE_VAR_name=a"}, Vars: []string{"n=12"}})
	diagAt(t, def, diags, "n must be below 10.", 6, 21)
	_, diags = load(t, src, Options{Env: []string{"GROVE_VAR_name=a"}, Vars: []string{"n=lots"}})
	if !diags.HasErrors() || !strings.Contains(diags.Error(), `"n" must be number`) {
		t.Errorf("a non-number for a number variable: %v", diags)
	}
	_, diags = load(t, src, Options{Env: []string{"GROVE_VAR_name=a"}, Vars: []string{"m=1"}})
	if !diags.HasErrors() || !strings.Contains(diags.Error(), "no variable of that name") {
		t.Errorf("-var for an undeclared variable: %v", diags)
	}
}

func TestLocalsAndFunctions(t *testing.T) {
	src := `
locals {
  size  = local.base * 2
  base  = length(["a", "b"])
  names = [for i in range(local.size) : format("n-%02d", i)]
}
` + base + `
cluster "c" {
  profile          = profile.p
  desired_capacity = local.size
  metadata         = { first = local.names[0], joined = join(",", local.names) }
}
`
	def, diags := load(t, src, Options{})
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	c := def.Clusters["c"]
	if *c.DesiredCapacity != 4 || c.Metadata["first"] != "n-00" || c.Metadata["joined"] != "n-00,n-01,n-02,n-03" {
		t.Fatalf("locals: %+v", c)
	}
	_, diags = load(t, "locals {\n  a = local.b\n  b = local.a\n}\n", Options{})
	if !diags.HasErrors() || !strings.Contains(diags.Error(), "local.a, local.b") {
		t.Errorf("a cycle in locals: %v", diags)
	}
}

func TestCycleNamesEveryBlock(t *testing.T) {
	src := base + `
cluster "a" {
  profile = profile.p
  dependency "x" {
    grouping = "require_all"
    clusters = [cluster.b]
  }
}
cluster "b" {
  profile       = profile.p
  soft_affinity = [cluster.c]
}
cluster "c" {
  profile            = profile.p
  hard_anti_affinity = [cluster.a]
}
`
	_, diags := load(t, src, Options{})
	if !diags.HasErrors() {
		t.Fatal("a cycle must be an error")
	}
	msg := diags.Error()
	for _, name := range []string{"cluster.a", "cluster.b", "cluster.c"} {
		if !strings.Contains(msg, name) {
			t.Errorf("the cycle error must name %s: %s", name, msg)
		}
	}
}

func TestReferencesAndSettings(t *testing.T) {
	src := base + `
cluster "c" {
  profile = profile.nope
}
`
	def, diags := load(t, src, Options{})
	diagAt(t, def, diags, `No profile named "nope"`, 11, 13)

	src = base + `
policy "d" {
  type    = "senlin.policy.deletion"
  version = "1.1"
}
cluster "c" {
  profile = profile.p
  binding {
    policy   = policy.d
    priority = 5
  }
  placement {
    policy = "random"
  }
  restart {
    condition    = "sometimes"
    delay        = "soon"
    max_attempts = -1
  }
  update {
    failure_action    = "panic"
    max_failure_ratio = 2
    order             = "start-first"
  }
  dependency "db" {
    grouping   = "require_some"
    restart_on = "error"
    clusters   = ["db"]
  }
}
`
	def, diags = load(t, src, Options{})
	diagAt(t, def, diags, "placement.policy", 21, 14)
	diagAt(t, def, diags, "restart.condition", 24, 20)
	diagAt(t, def, diags, "restart.delay", 25, 20)
	diagAt(t, def, diags, "restart.max_attempts", 26, 20)
	diagAt(t, def, diags, "update.failure_action", 29, 25)
	diagAt(t, def, diags, "update.max_failure_ratio", 30, 25)
	diagAt(t, def, diags, "dependency.db.grouping", 34, 18)
	if len(diags) != 7 {
		t.Errorf("want 7 diagnostics, got %d: %v", len(diags), diags)
	}
}

func TestPropertiesAgainstSchemas(t *testing.T) {
	src := `
profile "p" {
  type    = "local.process"
  version = "1.0"
  properties {
    command      = ["ok", { not = "a string" }]
    stop_timeout = -3
    colour       = "red"
  }
}
policy "d" {
  type    = "senlin.policy.deletion"
  version = "2.0"
}
profile "q" {
  type    = "acme.cloud.server"
  version = "1.0"
}
`
	def, diags := load(t, src, Options{})
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	diags = Validate(def, builtinSchemas(t))
	diagAt(t, def, diags, "properties.command[1]: must be a string", 6, 27)
	diagAt(t, def, diags, "properties.stop_timeout: must be at least 0", 7, 20)
	diagAt(t, def, diags, "properties.colour", 8, 20)
	diagAt(t, def, diags, `Version "2.0" of senlin.policy.deletion is not supported`, 13, 13)
	diagAt(t, def, diags, `"acme.cloud.server" is not built in`, 16, 13)
}

func TestDuplicatesAndNames(t *testing.T) {
	_, diags := load(t, base+base, Options{})
	if !diags.HasErrors() || !strings.Contains(diags.Error(), "profile.p is declared twice") {
		t.Errorf("duplicate block: %v", diags)
	}
	_, diags = load(t, `profile "a b" {
  type = "x"
  version = "1"
}`, Options{})
	if !diags.HasErrors() || !strings.Contains(diags.Error(), "not a valid profile name") {
		t.Errorf("bad name: %v", diags)
	}
	_, diags = load(t, `cluster "c" {}`, Options{})
	if !diags.HasErrors() || !strings.Contains(diags.Error(), `"profile" is required`) {
		t.Errorf("missing profile: %v", diags)
	}
}

func TestAgentNameIsContentAddressed(t *testing.T) {
	a := AgentName("profile", "web", "local.process", "1.0", map[string]any{"command": []any{"a"}})
	b := AgentName("profile", "web", "local.process", "1.0", map[string]any{"command": []any{"a"}})
	c := AgentName("profile", "web", "local.process", "1.0", map[string]any{"command": []any{"b"}})
	if a != b || a == c || !strings.HasPrefix(a, "web-") || AgentName("cluster", "web", "", "", nil) != "web" {
		t.Fatalf("agent names: %s %s %s", a, b, c)
	}
}

// TestFailoverBlock: a cluster's failover block becomes its grove.failover
// setting, checked by the API's rules with each bad value pointed at.
func TestFailoverBlock(t *testing.T) {
	src := base + `
cluster "c" {
  profile = profile.p
  failover {
    topology    = "flex"
    orchestrate = "ha"
    flex_min    = 1
    flex_target = 2
    ready_period = "5s"
  }
}
`
	def, diags := load(t, src, Options{})
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	got := def.Clusters["c"].Config[api.ConfigFailover]
	want := map[string]any{"topology": "flex", "orchestrate": "ha", "flex_min": float64(1), "flex_target": float64(2), "ready_period": "5s"}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("grove.failover = %#v, want %#v", got, want)
	}

	src = base + `
cluster "c" {
  profile = profile.p
  failover {
    topology    = "mesh"
    orchestrate = "always"
  }
}
`
	def, diags = load(t, src, Options{})
	diagAt(t, def, diags, "failover.topology", 13, 19)
	diagAt(t, def, diags, "failover.orchestrate", 14, 19)
}

// TestNamesTheAgentRefuses checks that validate refuses the names the agent
// would refuse or could not address, instead of plan or apply failing on
// them halfway.
func TestNamesTheAgentRefuses(t *testing.T) {
	spec := func(kind, name string) string {
		return fmt.Sprintf("%s %q {\n  type    = \"local.process\"\n  version = \"1.0\"\n}\n", kind, name)
	}
	for name, tc := range map[string]struct {
		src, want string
		opts      Options
	}{
		"dot cluster":        {src: spec("profile", "p") + `cluster "." { profile = profile.p }`, want: `"." is not a valid cluster name: "." and ".." cannot name an object`},
		"dot-dot profile":    {src: spec("profile", ".."), want: `".." is not a valid profile name`},
		"accented letter":    {src: spec("profile", "p") + `cluster "wéb" { profile = profile.p }`, want: `"wéb" is not a valid cluster name: use 1 to 255 characters`},
		"bidi override":      {src: spec("policy", "a\u202eb"), want: `is not a valid policy name: use 1 to 255 characters`},
		"long profile":       {src: spec("profile", strings.Repeat("p", 247)), want: "a profile name may have at most 246 characters"},
		"long policy":        {src: spec("policy", strings.Repeat("p", 247)), want: "a policy name may have at most 246 characters"},
		"dot set by flag":    {src: spec("profile", "p"), opts: Options{Set: ".."}, want: `The definition set's name ".." (from -set) is not valid`},
		"control in set":     {src: "grove {\n  set = \"a\\nb\"\n}\n" + spec("profile", "p"), want: "cannot hold control characters"},
		"dot set by block":   {src: "grove {\n  set = \".\"\n}\n" + spec("profile", "p"), want: `(from the grove block's set) is not valid`},
		"empty set by block": {src: "grove {\n  set = \"\"\n}\n" + spec("profile", "p"), want: "a set's name cannot be empty"},
	} {
		t.Run(name, func(t *testing.T) {
			_, diags := load(t, tc.src, tc.opts)
			if !diags.HasErrors() || !strings.Contains(diags.Error(), tc.want) {
				t.Errorf("want an error containing %q, got %v", tc.want, diags)
			}
		})
	}
	// The longest names the agent takes, and letters of CJK scripts, stay valid.
	ok := spec("profile", strings.Repeat("p", 246)) + spec("policy", strings.Repeat("q", 246)) +
		fmt.Sprintf("cluster %q { profile = profile.%s }\n", strings.Repeat("c", 255), strings.Repeat("p", 246)) + `cluster "ウェブ" { profile = profile.` + strings.Repeat("p", 246) + " }\n"
	if _, diags := load(t, ok, Options{}); diags.HasErrors() {
		t.Errorf("names the agent accepts are refused: %v", diags)
	}
}

// TestTwoPoliciesOfOneType checks that validate refuses a cluster bound to
// two policies of one type, which the agent refuses at the second attach,
// after apply created the cluster; policies of different types may be bound
// together.
func TestTwoPoliciesOfOneType(t *testing.T) {
	src := `
cluster "web" {
  profile = profile.p
  binding {
    policy = policy.oldest
  }
  binding {
    policy = policy.youngest
  }
}
profile "p" {
  type    = "local.process"
  version = "1.0"
  properties {
    command = ["/bin/true"]
  }
}
policy "oldest" {
  type    = "senlin.policy.deletion"
  version = "1.1"
}
policy "youngest" {
  type    = "senlin.policy.deletion"
  version = "1.1"
  properties {
    criteria = "YOUNGEST_FIRST"
  }
}
`
	def, diags := load(t, src, Options{})
	diagAt(t, def, diags, "policy.oldest and policy.youngest are both of type senlin.policy.deletion; a cluster takes at most one policy of a type", 7, 3)
	if n := len(diags); n != 1 {
		t.Errorf("want one diagnostic, got %d: %v", n, diags)
	}
	other := strings.Replace(src, `type    = "senlin.policy.deletion"
  version = "1.1"
  properties {
    criteria = "YOUNGEST_FIRST"
  }`, `type    = "senlin.policy.scaling"
  version = "1.0"
  properties {
    event = "CLUSTER_SCALE_IN"
  }`, 1)
	if _, diags := load(t, other, Options{}); diags.HasErrors() {
		t.Errorf("policies of two types: %v", diags)
	}
}

// TestMetadataTheAgentRefuses checks that validate applies the agent's rules
// for metadata (api.ValidateMetadata) at the attribute, for profiles and
// clusters: before, apply stopped at the object the agent refused, after
// creating the ones before it.
func TestMetadataTheAgentRefuses(t *testing.T) {
	profile := func(meta string) string {
		return "profile \"p\" {\n  type     = \"local.process\"\n  version  = \"1.0\"\n  metadata = " + meta + "\n}\n"
	}
	cluster := func(meta string) string {
		return profile("{}") + "cluster \"c\" {\n  profile  = profile.p\n  metadata = " + meta + "\n}\n"
	}
	for name, tc := range map[string]struct {
		src, want string
		line, col int
	}{
		"empty key":        {cluster(`{ "" = "x" }`), "metadata: keys must not be empty.", 8, 14},
		"too many keys":    {cluster(`{ for i in range(129) : "k${i}" => i }`), "metadata has 129 keys; at most 128 are allowed.", 8, 14},
		"value too large":  {cluster(`{ a = format("%16383s", "") }`), "metadata.a is 16385 bytes as JSON; a metadata value may be at most 16384 bytes.", 8, 14},
		"profile metadata": {profile(`{ "" = 1 }`), "metadata: keys must not be empty.", 4, 14},
	} {
		t.Run(name, func(t *testing.T) {
			def, diags := load(t, tc.src, Options{})
			diagAt(t, def, diags, tc.want, tc.line, tc.col)
		})
	}
	edges := cluster(`merge({ for i in range(127) : "k${i}" => i }, { a = format("%16382s", "") })`)
	if _, diags := load(t, edges, Options{}); diags.HasErrors() {
		t.Errorf("metadata at the edges of the rules: %v", diags)
	}
}
