package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// depsStack is a three-tier set of grove.noop clusters: app waits on db,
// web on the backend milestone (db and app).
const depsStack = `profile "p" {
  type    = "grove.noop"
  version = "1.0"
}

cluster "db" {
  profile          = profile.p
  desired_capacity = 1
}

cluster "app" {
  profile          = profile.p
  desired_capacity = 1
  depends_on "database" {
    grouping   = "require_all"
    restart_on = "RESTART_ON"
    members    = [cluster.db]
  }
}

milestone "backend" {
  clusters = [cluster.db, cluster.app]
}

cluster "web" {
  profile          = profile.p
  desired_capacity = 1
  depends_on "backend" {
    grouping   = "require_all"
    restart_on = "restart"
    members    = [milestone.backend]
  }
}
`

// TestHCLDependsOnApply: plan shows the start order; apply creates db,
// then app, then the milestone, then web, and declares each cluster's
// groups; a second plan is empty; a changed restart_on is an in-place
// update; grove cluster deps and grove milestone show the result.
func TestHCLDependsOnApply(t *testing.T) {
	a := startAgent(t, t.TempDir())
	dir := t.TempDir()
	write := func(restartOn string) {
		t.Helper()
		if err := os.WriteFile(filepath.Join(dir, "main.hcl"), []byte(strings.Replace(depsStack, "RESTART_ON", restartOn, 1)), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("error")
	out, errOut, code := a.grove("plan", "-set", "stack", dir)
	if code != 0 || !strings.Contains(out, "Start order (depends_on): db → app → web.") || !strings.Contains(out, "+ milestone \"backend\"") {
		t.Fatalf("plan: %d\n%s\n%s", code, out, errOut)
	}
	out, errOut, code = a.grove("apply", "-auto-approve", "-set", "stack", dir)
	if code != 0 {
		t.Fatalf("apply: %d\n%s\n%s", code, out, errOut)
	}
	steps := []string{"cluster.db: creating", "cluster.app: creating", "cluster.app: declaring 1 dependency group\n", "milestone.backend: creating",
		"cluster.web: creating", "cluster.web: declaring 1 dependency group\n"}
	at := -1
	for _, s := range steps {
		i := strings.Index(out+errOut, s)
		if i < at {
			t.Fatalf("%q comes before the step before it:\n%s%s", s, out, errOut)
		}
		if i < 0 {
			t.Fatalf("apply did not say %q:\n%s%s", s, out, errOut)
		}
		at = i
	}
	out, _, code = a.grove("plan", "-detailed-exitcode", "-set", "stack", dir)
	if code != 0 || !strings.Contains(out, "No changes.") {
		t.Fatalf("second plan: %d\n%s", code, out)
	}
	out, errOut, code = a.grove("cluster", "deps", "web")
	if code != 0 || !strings.Contains(out, "Cluster web: running; dependencies satisfied") || !strings.Contains(out, "backend  require_all  restart     milestone:backend") {
		t.Fatalf("cluster deps web: %d\n%s%s", code, out, errOut)
	}
	out, _, _ = a.grove("cluster", "deps", "db")
	if !strings.Contains(out, "Required by:") || !strings.Contains(out, "app      database  require_all  error") {
		t.Fatalf("cluster deps db:\n%s", out)
	}
	out, _, code = a.grove("milestone", "show", "backend")
	if code != 0 || !strings.Contains(out, "db") || !strings.Contains(out, "app") {
		t.Fatalf("milestone show: %d\n%s", code, out)
	}

	write("refresh")
	out, _, code = a.grove("plan", "-set", "stack", dir)
	if code != 0 || !strings.Contains(out, "cluster.app will be updated in place") || !strings.Contains(out, "~ depends_on = ") {
		t.Fatalf("plan of a restart_on change: %d\n%s", code, out)
	}
	if out, errOut, code := a.grove("apply", "-auto-approve", "-set", "stack", dir); code != 0 {
		t.Fatalf("apply the change: %d\n%s\n%s", code, out, errOut)
	}
	out, _, _ = a.grove("cluster", "deps", "-json", "app")
	if !strings.Contains(out, `"restart_on": "refresh"`) {
		t.Fatalf("app after the change:\n%s", out)
	}

	// A cycle declared from the CLI is refused with the whole cycle named.
	cyc := filepath.Join(t.TempDir(), "deps.json")
	os.WriteFile(cyc, []byte(`{"groups": [{"name": "loop", "grouping": "require_all", "restart_on": "none", "members": ["web"]}]}`), 0o644)
	_, errOut, code = a.grove("cluster", "deps", "-set", cyc, "db")
	if code == 0 || !strings.Contains(errOut, "db → web → milestone:backend → db") {
		t.Fatalf("a cycle: %d %s", code, errOut)
	}

	// destroy removes the milestone the definition declares too: milestones
	// belong to no set, so the set's objects do not list it.
	out, _, code = a.grove("plan", "-destroy", "-set", "stack", dir)
	if code != 0 || !strings.Contains(out, "milestone.backend will be destroyed") || !strings.Contains(out, "5 to destroy") {
		t.Fatalf("plan -destroy: %d\n%s", code, out)
	}
	out, errOut, code = a.grove("destroy", "-auto-approve", "-set", "stack", dir)
	if code != 0 || !strings.Contains(out+errOut, "milestone.backend: destroying") {
		t.Fatalf("destroy: %d\n%s\n%s", code, out, errOut)
	}
	if out, _, code := a.grove("milestone", "show", "backend"); code == 0 {
		t.Fatalf("milestone backend outlived the destroy of its definition:\n%s", out)
	}
	if out, _, code := a.grove("plan", "-destroy", "-detailed-exitcode", "-set", "stack", dir); code != 0 {
		t.Fatalf("plan -destroy after the destroy: %d\n%s", code, out)
	}
}

// dependentStack declares the reverse way: db names the clusters that wait
// on it, as SMF's dependent does.
const dependentStack = `profile "p" {
  type    = "grove.noop"
  version = "1.0"
}

cluster "db" {
  profile          = profile.p
  desired_capacity = 1
  dependent "database" {
    grouping   = "require_all"
    restart_on = "RESTART_ON"
    members    = [cluster.app, cluster.report]
  }
}

cluster "app" {
  profile          = profile.p
  desired_capacity = 1
}

cluster "report" {
  profile          = profile.p
  desired_capacity = 1
}
`

// TestHCLDependentApply: a dependent block orders db before the clusters
// that wait on it, is declared once they exist, and is stored on each of
// them as a group declared by db; a second plan is empty; a changed
// restart_on is an in-place update of db; destroy removes everything.
func TestHCLDependentApply(t *testing.T) {
	a := startAgent(t, t.TempDir())
	dir := t.TempDir()
	write := func(restartOn string) {
		t.Helper()
		if err := os.WriteFile(filepath.Join(dir, "main.hcl"), []byte(strings.Replace(dependentStack, "RESTART_ON", restartOn, 1)), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("error")
	out, errOut, code := a.grove("plan", "-set", "deps", dir)
	if code != 0 || !strings.Contains(out, "Start order (depends_on): db → app, report.") || !strings.Contains(out, `dependent.database = {"grouping":"require_all","members":["app","report"],"restart_on":"error"}`) {
		t.Fatalf("plan: %d\n%s\n%s", code, out, errOut)
	}
	out, errOut, code = a.grove("apply", "-auto-approve", "-set", "deps", dir)
	if code != 0 {
		t.Fatalf("apply: %d\n%s\n%s", code, out, errOut)
	}
	steps := []string{"cluster.db: creating", "cluster.app: creating", "cluster.report: creating", "cluster.db: declaring 0 dependency groups and 1 dependent\n"}
	at := -1
	for _, s := range steps {
		i := strings.Index(out+errOut, s)
		if i < 0 || i < at {
			t.Fatalf("apply did not say %q after the step before it:\n%s%s", s, out, errOut)
		}
		at = i
	}
	for _, member := range []string{"app", "report"} {
		out, _, _ = a.grove("cluster", "deps", "-json", member)
		if !strings.Contains(out, `"declared_by": "db"`) || !strings.Contains(out, `"db"`) {
			t.Fatalf("%s does not hold db's dependent:\n%s", member, out)
		}
	}
	out, _, code = a.grove("plan", "-detailed-exitcode", "-set", "deps", dir)
	if code != 0 || !strings.Contains(out, "No changes.") {
		t.Fatalf("second plan: %d\n%s", code, out)
	}

	write("restart")
	out, _, code = a.grove("plan", "-set", "deps", dir)
	if code != 0 || !strings.Contains(out, "cluster.db will be updated in place") || !strings.Contains(out, "~ dependents = ") {
		t.Fatalf("plan of a restart_on change: %d\n%s", code, out)
	}
	if out, errOut, code := a.grove("apply", "-auto-approve", "-set", "deps", dir); code != 0 {
		t.Fatalf("apply the change: %d\n%s\n%s", code, out, errOut)
	}
	out, _, _ = a.grove("cluster", "deps", "-json", "report")
	if !strings.Contains(out, `"restart_on": "restart"`) {
		t.Fatalf("report after the change:\n%s", out)
	}
	if out, errOut, code := a.grove("destroy", "-auto-approve", "-set", "deps", dir); code != 0 {
		t.Fatalf("destroy: %d\n%s\n%s", code, out, errOut)
	}
}
