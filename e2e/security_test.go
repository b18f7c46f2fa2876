package e2e

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/grovehq/grove/api"
)

// secretRE matches a token secret: "grove_" and 32 bytes in base64url.
var secretRE = regexp.MustCompile(`grove_[A-Za-z0-9_-]{43}`)

// createdRE matches the first line `grove token create` prints.
var createdRE = regexp.MustCompile(`Token ([0-9a-f-]{36}) created: project (\S+), role (\w+), never expires\.`)

// TestSecurityTokensProjectsAndGrants drives an agent started without -dev,
// as README's "Using Grove" and docs/security.md tell an operator to, with
// the grove CLI alone: the bootstrap token, tokens per project and role,
// host-access grants, another project's objects hidden, revocation, and
// HCL apply with a member's token. Tokens travel in GROVE_TOKEN and in
// -token.
func TestSecurityTokensProjectsAndGrants(t *testing.T) {
	t.Setenv("GROVE_TOKEN", "") // whatever the test's caller exported
	dir := t.TempDir()
	cfg := filepath.Join(dir, "agent.hcl")
	// As README's non-dev agent config, on a free port.
	if err := os.WriteFile(cfg, []byte("bind     = \"127.0.0.1:0\"\ndata_dir = \""+dir+"\"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	a := startAgentWith(t, agentOptions{secure: true}, dir, "-config", cfg)
	t.Cleanup(func() { killProcessesOf("sec-web") })

	// The bootstrap token: a 0600 file the log names, the secret nowhere else.
	bootstrapFile := filepath.Join(dir, "bootstrap-token")
	fi, err := os.Stat(bootstrapFile)
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("bootstrap token file: %v %v; want mode 0600", fi, err)
	}
	admin := a.token
	if !secretRE.MatchString(admin) || len(admin) != len("grove_")+43 {
		t.Fatalf("bootstrap token file holds %q; want grove_ and 43 base64url characters", admin)
	}
	if log := a.logText(); !strings.Contains(log, "bootstrap token created") || !strings.Contains(log, bootstrapFile) {
		t.Fatalf("the agent's log must name the bootstrap token's file %s:\n%s", bootstrapFile, log)
	}
	as := func(token string, args ...string) (string, string, int) {
		t.Helper()
		return a.groveEnv([]string{"GROVE_TOKEN=" + token}, args...)
	}
	// must runs a command that must succeed and returns its stdout.
	must := func(token string, args ...string) string {
		t.Helper()
		out, errOut, code := as(token, args...)
		if code != 0 {
			t.Fatalf("grove %s: exit %d\n%s%s", strings.Join(args, " "), code, out, errOut)
		}
		return out
	}
	// refused runs a command that must fail with exit 1 and a message
	// holding each of want.
	refused := func(token string, want []string, args ...string) {
		t.Helper()
		out, errOut, code := as(token, args...)
		for _, w := range want {
			if code != 1 || !strings.Contains(errOut, w) {
				t.Fatalf("grove %s: exit %d, stderr %q; want exit 1 and %q\nstdout: %s", strings.Join(args, " "), code, errOut, w, out)
			}
		}
	}
	const (
		unauthorized = "Error: The agent needs a valid token: pass one with -token or GROVE_TOKEN"
		forbidden    = "Error: The token's role or project does not allow this: "
		grantHint    = "an admin grants it with `grove project allow team-a local.process`"
	)

	// No token: a sentence saying which flag or variable to set.
	refused("", []string{unauthorized, "A token is required"}, "cluster", "list")
	// The bootstrap token is an admin of "default".
	if out := must(admin, "cluster", "list", "-json"); strings.TrimSpace(out) != "[]" {
		t.Fatalf("cluster list as the bootstrap admin: %s", out)
	}

	// The admin makes tokens; each secret is printed once.
	create := func(args ...string) (id, secret string) {
		t.Helper()
		out := must(admin, append([]string{"token", "create"}, args...)...)
		m := createdRE.FindStringSubmatch(out)
		secrets := secretRE.FindAllString(out, -1)
		if m == nil || len(secrets) != 1 || !strings.Contains(out, "shown this once") {
			t.Fatalf("token create %v printed:\n%s", args, out)
		}
		return m[1], secrets[0]
	}
	memberID, member := create("-project", "team-a", "-role", "member") // as README shows
	readerID, reader := create("-project", "team-a", "-role", "reader", "-name", "a-reader")
	// -json, with the admin token given by -token rather than GROVE_TOKEN.
	out := must("", "token", "create", "-token", admin, "-json", "-project", "team-b", "-role", "member")
	var bTok api.Token
	if err := json.Unmarshal([]byte(out), &bTok); err != nil || !secretRE.MatchString(bTok.Secret) || bTok.Project != "team-b" || bTok.Role != "member" || bTok.ID == "" {
		t.Fatalf("token create -json must hold the secret: %v\n%s", err, out)
	}
	outsider := bTok.Secret
	if got := must(admin, "token", "show", memberID); !strings.Contains(got, "team-a") || !strings.Contains(got, "name: team-a-member") || secretRE.MatchString(got) {
		t.Fatalf("token show %s (by id, without the secret):\n%s", memberID, got)
	}

	// local.process is host access: a member may use it only once granted.
	spec := filepath.Join(t.TempDir(), "web.yaml")
	os.WriteFile(spec, []byte("type: local.process\nversion: \"1.0\"\nproperties:\n  command: [\""+groveBin+"\", \"demo-http\"]\n  stop_timeout: 5\n"), 0o644)
	refused(member, []string{forbidden, grantHint}, "profile", "create", "-spec-file", spec, "web")
	if got := must(admin, "project", "allow", "team-a", "local.process"); !strings.Contains(got, "Project team-a may now use local.process profiles.") {
		t.Fatalf("project allow: %s", got)
	}
	if got := must(admin, "project", "grants", "team-a"); !strings.Contains(got, "local.process") {
		t.Fatalf("project grants team-a: %s", got)
	}
	if got := must(member, "profile", "create", "-spec-file", spec, "web"); !strings.Contains(got, "Profile web created") {
		t.Fatalf("profile create once granted: %s", got)
	}
	if got := must(member, "cluster", "create", "-profile", "web", "-desired-capacity", "2", "-wait", "sec-web"); !strings.Contains(got, "Cluster creation succeeded") {
		t.Fatalf("cluster create: %s", got)
	}
	memberClient := api.New(api.Options{Address: a.addr, Token: member})
	cl, err := memberClient.GetCluster(context.Background(), "sec-web")
	if err != nil || cl.Status != "ACTIVE" || len(cl.Nodes) != 2 || cl.Project != "team-a" {
		t.Fatalf("cluster sec-web as its member: %+v %v", cl, err)
	}
	nodes, err := memberClient.ListNodes(context.Background(), map[string][]string{"cluster_id": {"sec-web"}})
	if err != nil || len(nodes) != 2 {
		t.Fatalf("nodes of sec-web: %v %v", nodes, err)
	}
	for _, n := range nodes {
		nodeAnswers(t, n) // real processes, answering
	}

	// A reader reads its project and writes nothing.
	if got := must(reader, "cluster", "list"); !strings.Contains(got, "sec-web") {
		t.Fatalf("cluster list as reader: %s", got)
	}
	if got := must(reader, "cluster", "show", "sec-web"); !strings.Contains(got, "status: ACTIVE") {
		t.Fatalf("cluster show as reader: %s", got)
	}
	refused(reader, []string{forbidden}, "cluster", "delete", "sec-web")

	// Another project's member: the cluster is missing, as if it did not exist.
	refused(outsider, []string{"The cluster 'sec-web' could not be found."}, "cluster", "show", "sec-web")
	if _, err := api.New(api.Options{Address: a.addr, Token: outsider}).GetCluster(context.Background(), "sec-web"); !api.IsNotFound(err) {
		t.Fatalf("team-b's GET of team-a's cluster: %v; want 404", err)
	}
	for _, kind := range []string{"cluster", "profile", "node"} {
		if got := must(outsider, kind, "list", "-json"); strings.TrimSpace(got) != "[]" {
			t.Fatalf("%s list as team-b: %s", kind, got)
		}
	}

	// The admin lists tokens by id, never their secrets.
	list := must(admin, "token", "list")
	if !strings.Contains(list, "a-reader") {
		t.Errorf("token list lacks the reader's name:\n%s", list)
	}
	for _, id := range []string{memberID, readerID, bTok.ID} {
		if !strings.Contains(list, id) {
			t.Errorf("token list lacks %s:\n%s", id, list)
		}
	}
	if secretRE.MatchString(list) || len(strings.Split(strings.TrimSpace(list), "\n")) != 5 || !strings.Contains(list, "bootstrap") {
		t.Fatalf("token list (4 tokens, no secrets):\n%s", list)
	}
	if got := must(admin, "token", "list", "-json"); strings.Contains(got, `"secret"`) || secretRE.MatchString(got) {
		t.Fatalf("token list -json shows a secret:\n%s", got)
	}
	// Revoked: the next request with it is 401.
	if got := must(admin, "token", "revoke", bTok.ID); !strings.Contains(got, "Token "+bTok.ID+" revoked") {
		t.Fatalf("token revoke: %s", got)
	}
	refused(outsider, []string{unauthorized}, "cluster", "list")
	if _, err := api.New(api.Options{Address: a.addr, Token: outsider}).ListNodes(context.Background(), nil); !isStatus(err, 401) {
		t.Fatalf("a revoked token: %v; want 401", err)
	}

	// Taking the grant back stops new clusters from the profile; the running
	// one keeps running.
	if got := must(admin, "project", "deny", "team-a", "local.process"); !strings.Contains(got, "Project team-a may no longer use local.process profiles.") {
		t.Fatalf("project deny: %s", got)
	}
	refused(member, []string{forbidden, grantHint}, "cluster", "create", "-profile", "web", "-desired-capacity", "1", "sec-web2")
	if cl, err := memberClient.GetCluster(context.Background(), "sec-web"); err != nil || cl.Status != "ACTIVE" || len(cl.Nodes) != 2 {
		t.Fatalf("sec-web after the grant was taken back: %+v %v", cl, err)
	}

	// HCL with a member's token: a definition set in team-a.
	def := filepath.Join(t.TempDir(), "sec-noop")
	os.MkdirAll(def, 0o755)
	os.WriteFile(filepath.Join(def, "main.hcl"), []byte(`profile "noop" {
  type    = "grove.noop"
  version = "1.0"
}

cluster "sec-noop" {
  profile          = profile.noop
  desired_capacity = 2
}
`), 0o644)
	if got := must(member, "apply", "-auto-approve", def); !strings.Contains(got, "Apply complete! Resources: 2 added") {
		t.Fatalf("apply as a member: %s", got)
	}
	if got := must(reader, "plan", "-detailed-exitcode", def); !strings.Contains(got, "No changes.") {
		t.Fatalf("plan as team-a's reader after the member's apply: %s", got)
	}
	cl, err = memberClient.GetCluster(context.Background(), "sec-noop")
	if err != nil || cl.Status != "ACTIVE" || len(cl.Nodes) != 2 || cl.Project != "team-a" {
		t.Fatalf("cluster sec-noop after apply: %+v %v", cl, err)
	}
	refused(reader, []string{"The token's role or project does not allow this", "A reader may only read", "The destroy stopped before it removed everything"}, "destroy", "-auto-approve", def)
	if got := must(member, "destroy", "-auto-approve", def); !strings.Contains(got, "2 destroyed") {
		t.Fatalf("destroy as a member: %s", got)
	}
	if got := must(member, "cluster", "delete", "-wait", "sec-web"); !strings.Contains(got, "Cluster deletion succeeded") {
		t.Fatalf("cluster delete as a member: %s", got)
	}

	// No secret ever reached the agent's log.
	log := a.logText()
	for name, s := range map[string]string{"bootstrap": admin, "member": member, "reader": reader, "team-b": outsider} {
		if strings.Contains(log, s) {
			t.Errorf("the agent's log holds the %s token's secret", name)
		}
	}
}

// isStatus reports whether err is an API error with this HTTP status.
func isStatus(err error, status int) bool {
	var ae *api.Error
	return errors.As(err, &ae) && ae.Status == status
}

// TestSecurityDocsShowTheseCommands: README's "Using Grove" and
// docs/security.md show an operator the commands
// TestSecurityTokensProjectsAndGrants runs, word for word (the test's
// cluster is sec-web, its agent on a free port and its spec file in a
// temporary directory).
func TestSecurityDocsShowTheseCommands(t *testing.T) {
	docs := map[string][]string{
		"../README.md": {
			"bind     = \"127.0.0.1:7470\"\ndata_dir = \"$HOME/.grove-shared\"\n",
			"bin/grove agent -config agent.hcl\n",
			"export GROVE_TOKEN=$(cat ~/.grove-shared/bootstrap-token)\n",
			"bin/grove token create -project team-a -role member ",
			"bin/grove project allow team-a local.process\n",
			"bin/grove profile create -spec-file web.yaml web\n",
			"bin/grove cluster create -profile web -desired-capacity 2 -wait web\n",
			"The agent needs a valid token: pass one\nwith -token or GROVE_TOKEN",
		},
		"../docs/security.md": {
			"<data_dir>/bootstrap-token` (mode 0600)",
			"export GROVE_TOKEN=$(cat ~/.grove-shared/bootstrap-token)\n",
			"bin/grove token create -project team-a -role member ",
			"bin/grove token list ",
			"bin/grove token revoke ID\n",
			"grove project allow team-a local.process ",
			"grove project deny team-a local.process ",
			"grove project grants team-a ",
		},
	}
	for file, want := range docs {
		b, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		for _, w := range want {
			if !strings.Contains(string(b), w) {
				t.Errorf("%s does not show %q", file, w)
			}
		}
	}
}
