package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/gophercloud/gophercloud/v2"
	"github.com/gophercloud/gophercloud/v2/openstack/compute/v2/servers"

	"github.com/grovehq/grove/api"
	"github.com/grovehq/grove/internal/novatest"
)

// TestNovaAdopt: a Nova server booted outside Grove is previewed through
// POST /v1/nodes/adopt-preview and `grove node adopt -preview`, adopted
// with `grove node adopt` (an override and the node's name and role), then
// checked, rebooted and deleted as any node of the agent: its server goes
// with it. A server Nova does not have is a 400 and a CLI error naming it.
func TestNovaAdopt(t *testing.T) {
	nv, c := nova(t)
	dir := t.TempDir()
	a := startAgent(t, dir, "-config", fastConfig(t, dir, ""))
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	name := fmt.Sprintf("legacy-%d", time.Now().UnixNano())
	s, err := servers.Create(ctx, c, servers.CreateOpts{Name: name, ImageRef: nv.ImageID, FlavorRef: "1", Networks: "none",
		Metadata: map[string]string{"owner": "ops"}}, nil).Extract()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = servers.Delete(context.Background(), c, s.ID).ExtractErr() })
	if _, err := novatest.WaitServer(ctx, c, s.ID, "ACTIVE"); err != nil {
		t.Fatal(err)
	}

	var prev struct {
		Profile struct {
			Type       string         `json:"type"`
			Version    string         `json:"version"`
			Properties map[string]any `json:"properties"`
		} `json:"node_profile"`
	}
	a.mustDo(http.MethodPost, "/v1/nodes/adopt-preview", map[string]any{"identity": s.ID, "type": "os.nova.server-1.0"}, &prev)
	p := prev.Profile.Properties
	if prev.Profile.Type != "os.nova.server" || p["flavor"] != "m1.tiny" || p["image"] != nv.ImageID || p["name"] != name ||
		fmt.Sprint(p["metadata"]) != "map[owner:ops]" {
		t.Fatalf("adopt-preview: %+v", prev.Profile)
	}
	out, errOut, code := a.grove("node", "adopt", "-preview", "-json", "-type", "os.nova.server", name)
	var cliPrev map[string]any
	if code != 0 || json.Unmarshal([]byte(out), &cliPrev) != nil {
		t.Fatalf("grove node adopt -preview: %d\n%s%s", code, out, errOut)
	}
	if props, _ := cliPrev["properties"].(map[string]any); props["flavor"] != "m1.tiny" || props["image"] != nv.ImageID {
		t.Errorf("grove node adopt -preview by name: %v", cliPrev)
	}

	out, errOut, code = a.grove("node", "adopt", "-json", "-type", "os.nova.server-1.0", "-name", "legacy", "-role", "db",
		"-override", `metadata={"owner":"grove"}`, "-metadata", "team=ops", s.ID)
	var n api.Node
	if code != 0 || json.Unmarshal([]byte(out), &n) != nil {
		t.Fatalf("grove node adopt: %d\n%s%s", code, out, errOut)
	}
	if n.Status != "ACTIVE" || n.PhysicalID != s.ID || n.Role != "db" || n.ClusterID != "" || n.Metadata["team"] != "ops" || n.Data["server_id"] != s.ID {
		t.Fatalf("the adopted node: %+v", n)
	}
	var prof struct {
		Profile api.Profile `json:"profile"`
	}
	a.mustDo(http.MethodGet, "/v1/profiles/"+n.ProfileID, nil, &prof)
	if props, _ := prof.Profile.Spec["properties"].(map[string]any); fmt.Sprint(props["metadata"]) != "map[owner:grove]" || props["flavor"] != "m1.tiny" {
		t.Errorf("the adopted node's profile: %v", prof.Profile.Spec)
	}

	if act := a.waitAction(a.mustDo(http.MethodPost, "/v1/nodes/legacy/actions", map[string]any{"check": map[string]any{}}, nil).ActionID()); act.Status != "SUCCEEDED" {
		t.Errorf("check of the adopted node: %s %s", act.Status, act.StatusReason)
	}
	if act := a.waitAction(a.mustDo(http.MethodPost, "/v1/nodes/legacy/ops", map[string]any{"reboot": map[string]any{"type": "HARD"}}, nil).ActionID()); act.Status != "SUCCEEDED" {
		t.Errorf("reboot of the adopted node: %s %s", act.Status, act.StatusReason)
	}
	if act := a.waitAction(a.mustDo(http.MethodDelete, "/v1/nodes/legacy", nil, nil).ActionID()); act.Status != "SUCCEEDED" {
		t.Fatalf("delete of the adopted node: %s %s", act.Status, act.StatusReason)
	}
	eventually(t, time.Minute, "the adopted server deleted with its node", func() (bool, string) {
		got, err := servers.Get(ctx, c, s.ID).Extract()
		if gophercloud.ResponseCodeIs(err, 404) || (err == nil && got.Status == "DELETED") {
			return true, ""
		}
		return false, fmt.Sprintf("%v %v", got, err)
	})

	missing := "00000000-0000-4000-8000-000000000000"
	_, err = a.do(http.MethodPost, "/v1/nodes/adopt", map[string]any{"identity": missing, "type": "os.nova.server"})
	if !isStatus(err, http.StatusBadRequest) || !strings.Contains(err.Error(), "has no server with id "+missing) {
		t.Errorf("adopting a server Nova does not have: %v", err)
	}
	_, errOut, code = a.grove("node", "adopt", "-type", "os.nova.server", "no-such-server")
	if code == 0 || !strings.Contains(errOut, `has no server with id or name "no-such-server"`) {
		t.Errorf("grove node adopt of a missing server: exit %d\n%s", code, errOut)
	}
}
