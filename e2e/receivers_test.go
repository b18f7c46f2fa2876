package e2e

import (
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/gophercloud/gophercloud"
	"github.com/gophercloud/gophercloud/openstack/clustering/v1/clusters"
	"github.com/gophercloud/gophercloud/openstack/clustering/v1/receivers"
	"github.com/gophercloud/gophercloud/openstack/clustering/v1/webhooks"

	"github.com/grovehq/grove/api"
)

// secureAgent starts an agent without -dev (every request needs a token)
// whose project "default" may run local.process nodes, and a cluster of
// sleeping processes in it, deleted at the end of the test.
func secureAgent(t *testing.T, cluster string, size int) *agentProc {
	t.Helper()
	t.Setenv("GROVE_TOKEN", "") // whatever the test's caller exported
	dir := t.TempDir()
	cfg := filepath.Join(dir, "agent.hcl")
	if err := os.WriteFile(cfg, []byte("bind     = \"127.0.0.1:0\"\ndata_dir = \""+dir+"\"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	a := startAgentWith(t, agentOptions{secure: true}, dir, "-config", cfg)
	a.mustDo(http.MethodPut, "/v1/projects/default/grants/local.process", nil, nil)
	a.createProfile(cluster+"-prof", map[string]any{"command": []any{"sleep", "600"}, "stop_timeout": 0})
	a.waitAction(a.createCluster(cluster, cluster+"-prof", size, map[string]any{"max_size": 10}))
	// Cleanups run last first: this one runs while the agent still does.
	t.Cleanup(func() {
		if r, err := a.do(http.MethodDelete, "/v1/clusters/"+cluster+"?force=true", nil); err == nil {
			a.waitAction(r.ActionID())
		}
	})
	return a
}

// TestReceiversDriveScaling: a webhook receiver made with the CLI scales a
// cluster when its URL is POSTed with plain HTTP and no token, as an
// alert manager would call it; receivers made, listed, changed and
// triggered with gophercloud's unmodified Senlin client do too; the
// secret is shown once, and a deleted receiver's URL is refused.
func TestReceiversDriveScaling(t *testing.T) {
	a := secureAgent(t, "rw", 1)
	as := []string{"GROVE_TOKEN=" + a.token}

	out, errOut, code := a.groveEnv(as, "receiver", "create", "-cluster", "rw", "-action", "CLUSTER_SCALE_OUT", "-param", "count=2", "up")
	if code != 0 || !strings.Contains(out, "Receiver ") {
		t.Fatalf("receiver create: exit %d\n%s%s", code, out, errOut)
	}
	var alarm string
	for _, line := range strings.Split(out, "\n") {
		if l := strings.TrimSpace(line); strings.HasPrefix(l, a.addr+"/v1/webhooks/") {
			alarm = l
		}
	}
	if alarm == "" {
		t.Fatalf("receiver create printed no webhook URL on %s:\n%s", a.addr, out)
	}
	secret := strings.TrimSuffix(strings.TrimPrefix(alarm, a.addr+"/v1/webhooks/"), "/trigger?V=2")

	// An alert manager's call: a POST, no token, no body.
	resp, err := http.Post(alarm, "application/json", nil)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	loc := resp.Header.Get("Location")
	if resp.StatusCode != http.StatusAccepted || !strings.HasPrefix(loc, "/v1/actions/") {
		t.Fatalf("webhook: %d, Location %q; want 202 and the action", resp.StatusCode, loc)
	}
	a.waitAction(strings.TrimPrefix(loc, "/v1/actions/"))
	if n := len(a.nodes("rw")); n != 3 {
		t.Fatalf("after the webhook: %d nodes, want 3", n)
	}

	out, errOut, code = a.groveEnv(as, "receiver", "list", "-cluster", "rw")
	if code != 0 || !strings.Contains(out, "up") || !strings.Contains(out, "CLUSTER_SCALE_OUT") || strings.Contains(out, secret) {
		t.Errorf("receiver list: exit %d\n%s%s", code, out, errOut)
	}
	out, errOut, code = a.groveEnv(as, "receiver", "show", "up")
	if code != 0 || !strings.Contains(out, "CLUSTER_SCALE_OUT") || strings.Contains(out, secret) {
		t.Errorf("receiver show: exit %d\n%s%s", code, out, errOut)
	}

	// gophercloud's Senlin client, with the token for the API and none
	// for the webhook.
	sc := &gophercloud.ServiceClient{
		ProviderClient: &gophercloud.ProviderClient{HTTPClient: http.Client{Timeout: time.Minute}, TokenID: a.token},
		Endpoint:       a.addr + "/", Type: "clustering", Microversion: "1.12",
	}
	anon := &gophercloud.ServiceClient{
		ProviderClient: &gophercloud.ProviderClient{HTTPClient: http.Client{Timeout: time.Minute}},
		Endpoint:       a.addr + "/", Type: "clustering",
	}
	rc, err := receivers.Create(sc, receivers.CreateOpts{Name: "down", Type: receivers.WebhookReceiver, ClusterID: "rw",
		Action: "CLUSTER_SCALE_IN", Params: map[string]interface{}{"count": "1"}}).Extract()
	if err != nil {
		t.Fatalf("gophercloud receivers.Create: %v", err)
	}
	downURL, _ := rc.Channel["alarm_url"].(string)
	u, err := url.Parse(downURL)
	if err != nil || rc.Type != "webhook" || rc.Action != "CLUSTER_SCALE_IN" || rc.CreatedAt.IsZero() {
		t.Fatalf("created receiver: %+v %v", rc, err)
	}
	downSecret := strings.TrimSuffix(strings.TrimPrefix(u.Path, "/v1/webhooks/"), "/trigger")
	pages, err := receivers.List(sc, receivers.ListOpts{Type: "webhook", Sort: "name:asc"}).AllPages()
	if err != nil {
		t.Fatal(err)
	}
	list, err := receivers.ExtractReceivers(pages)
	if err != nil || len(list) != 2 || list[0].Name != "down" || list[1].Name != "up" {
		t.Fatalf("gophercloud receivers.List: %+v %v", list, err)
	}
	if _, err := receivers.Update(sc, rc.ID, receivers.UpdateOpts{Name: "shrink"}).Extract(); err != nil {
		t.Fatalf("gophercloud receivers.Update: %v", err)
	}
	if got, err := receivers.Get(sc, "shrink").Extract(); err != nil || got.ID != rc.ID {
		t.Fatalf("gophercloud receivers.Get: %+v %v", got, err)
	}
	// V=1 with a param in the query: it overrides the receiver's count 1.
	id, err := webhooks.Trigger(anon, downSecret, webhooks.TriggerOpts{V: "1", Params: map[string]string{"count": "2"}}).Extract()
	if err != nil {
		t.Fatalf("gophercloud webhooks.Trigger: %v", err)
	}
	a.waitAction(id)
	if n := len(a.nodes("rw")); n != 1 {
		t.Fatalf("after the scale-in webhook with count=2: %d nodes, want 1", n)
	}
	if _, err := receivers.Notify(sc, rc.ID).Extract(); err == nil {
		t.Error("notify of a webhook receiver succeeded; only message receivers take it")
	}
	if err := receivers.Delete(sc, rc.ID).ExtractErr(); err != nil {
		t.Fatalf("gophercloud receivers.Delete: %v", err)
	}
	if _, err := webhooks.Trigger(anon, downSecret, webhooks.TriggerOpts{V: "2"}).Extract(); err == nil {
		t.Error("a deleted receiver's webhook still triggers")
	}

	out, errOut, code = a.groveEnv(as, "receiver", "delete", "up")
	if code != 0 {
		t.Fatalf("receiver delete: exit %d\n%s%s", code, out, errOut)
	}
	if resp, err := http.Post(alarm, "application/json", nil); err != nil || resp.StatusCode != http.StatusNotFound {
		t.Errorf("the CLI-deleted receiver's webhook: %v %v; want 404", resp, err)
	}
}

// TestSenlinCollectAdoptServices: gophercloud's clusters.Collect reads an
// attribute of every node; a process the test started is previewed and
// adopted by its pid through POST /v1/nodes/adopt-preview and /adopt
// (gophercloud has no adopt), and deleting its node stops it; GET
// /v1/services reports the agent.
func TestSenlinCollectAdoptServices(t *testing.T) {
	a := secureAgent(t, "rc", 2)
	sc := &gophercloud.ServiceClient{
		ProviderClient: &gophercloud.ProviderClient{HTTPClient: http.Client{Timeout: time.Minute}, TokenID: a.token},
		Endpoint:       a.addr + "/", Type: "clustering", Microversion: "1.12",
	}
	attrs, err := clusters.Collect(sc, "rc", clusters.CollectOpts{Path: "details.pid"}).Extract()
	if err != nil || len(attrs) != 2 {
		t.Fatalf("gophercloud clusters.Collect: %+v %v", attrs, err)
	}
	ns := a.nodes("rc")
	for i, at := range attrs {
		if at.ID != ns[i].ID || at.Value != ns[i].Data["pid"] {
			t.Errorf("attribute %d: %+v, want node %s's pid %v", i, at, ns[i].ID, ns[i].Data["pid"])
		}
	}

	cmd := exec.Command("sleep", "600")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	reaped := make(chan struct{})
	go func() { _ = cmd.Wait(); close(reaped) }()
	t.Cleanup(func() { _ = cmd.Process.Kill(); <-reaped })
	pid := strconv.Itoa(cmd.Process.Pid)

	var prev struct {
		Profile struct {
			Type       string         `json:"type"`
			Version    string         `json:"version"`
			Properties map[string]any `json:"properties"`
		} `json:"node_profile"`
	}
	a.mustDo(http.MethodPost, "/v1/nodes/adopt-preview", map[string]any{"identity": pid, "type": "local.process-1.0"}, &prev)
	if prev.Profile.Type != "local.process" || prev.Profile.Version != "1.0" || len(prev.Profile.Properties["command"].([]any)) != 2 {
		t.Fatalf("adopt-preview: %+v", prev)
	}
	var adopted struct {
		Node api.Node `json:"node"`
	}
	r := a.mustDo(http.MethodPost, "/v1/nodes/adopt", map[string]any{"identity": pid, "type": "local.process-1.0", "name": "adoptee",
		"overrides": map[string]any{"stop_timeout": 1}}, &adopted)
	if r.Status != http.StatusOK || adopted.Node.Status != "ACTIVE" || adopted.Node.PhysicalID != "pid-"+pid {
		t.Fatalf("adopt: %d %+v", r.Status, adopted.Node)
	}
	if _, err := a.do(http.MethodPost, "/v1/nodes/adopt", map[string]any{"identity": "x", "type": "container.docker"}); err == nil {
		t.Error("adopting a container that does not exist succeeded")
	}
	a.waitAction(a.mustDo(http.MethodDelete, "/v1/nodes/adoptee", nil, nil).ActionID())
	select {
	case <-reaped:
	case <-time.After(30 * time.Second):
		t.Fatalf("the adopted process %s still runs after its node was deleted", pid)
	}
	if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); !ok || !ws.Signaled() {
		t.Errorf("the adopted process ended with %v; want it stopped by a signal", cmd.ProcessState)
	}

	var svc struct {
		Services []map[string]any `json:"services"`
	}
	a.mustDo(http.MethodGet, "/v1/services", nil, &svc)
	if len(svc.Services) != 1 || svc.Services[0]["binary"] != "grove-engine" || svc.Services[0]["state"] != "up" {
		t.Errorf("services: %+v", svc)
	}
}
