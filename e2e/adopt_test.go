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
	"github.com/vmware/govmomi/property"
	"github.com/vmware/govmomi/view"
	"github.com/vmware/govmomi/vim25/mo"
	"github.com/vmware/govmomi/vim25/types"

	"github.com/grovehq/grove/api"
	"github.com/grovehq/grove/internal/novatest"
	"github.com/grovehq/grove/internal/vcsimtest"
)

// TestNovaAdopt: a Nova server booted outside Grove is previewed through
// POST /v1/nodes/adopt-preview and `grove node adopt -preview`, adopted
// with `grove node adopt` (an override, the node's name and role, and
// -snapshot, which makes a snapshot of the server the profile's image), then
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
		"-override", `metadata={"owner":"grove"}`, "-metadata", "team=ops", "-snapshot", s.ID)
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
	// -snapshot: the profile boots new servers from a snapshot of this one.
	snap, _ := n.Data["snapshot_image"].(string)
	legacy := nv.Compute("")
	t.Cleanup(func() { _, _ = legacy.Delete(context.Background(), legacy.ServiceURL("images", snap), nil) })
	var img struct {
		Image struct{ ID, Name string } `json:"image"`
	}
	if _, err := legacy.Get(ctx, legacy.ServiceURL("images", snap), &img, nil); err != nil || snap == "" || img.Image.Name != name+"-adopted-"+n.ID {
		t.Errorf("the snapshot %q the adopted node records: %+v %v", snap, img.Image, err)
	}
	if props, _ := prof.Profile.Spec["properties"].(map[string]any); fmt.Sprint(props["metadata"]) != "map[owner:grove]" || props["flavor"] != "m1.tiny" || props["image"] != snap {
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

// TestVSphereAdopt: a VM made outside Grove on the simulator is previewed
// through POST /v1/nodes/adopt-preview by name and adopted with `grove node
// adopt` by its managed object id; the node is checked like any other, a
// node made from the adopted profile fails for want of a template (naming
// the VM it was adopted from), and deleting the adopted node destroys the
// VM.
func TestVSphereAdopt(t *testing.T) {
	vc, f := vcsim(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	tmpl, err := f.VirtualMachine(ctx, vcsimtest.Template)
	if err != nil {
		t.Fatal(err)
	}
	cl, err := f.ClusterComputeResource(ctx, vcsimtest.Cluster)
	if err != nil {
		t.Fatal(err)
	}
	pool, err := cl.ResourcePool(ctx)
	if err != nil {
		t.Fatal(err)
	}
	folder, err := f.DefaultFolder(ctx)
	if err != nil {
		t.Fatal(err)
	}
	poolRef := pool.Reference()
	task, err := tmpl.Clone(ctx, folder, "legacy", types.VirtualMachineCloneSpec{Location: types.VirtualMachineRelocateSpec{Pool: &poolRef}, PowerOn: true})
	if err != nil {
		t.Fatal(err)
	}
	info, err := task.WaitForResult(ctx)
	if err != nil {
		t.Fatal(err)
	}
	moid := info.Result.(types.ManagedObjectReference).Value
	a := startAgent(t, t.TempDir())

	var prev struct {
		Profile struct {
			Type       string         `json:"type"`
			Properties map[string]any `json:"properties"`
		} `json:"node_profile"`
	}
	a.mustDo(http.MethodPost, "/v1/nodes/adopt-preview", map[string]any{"identity": "legacy", "type": "vsphere.vm"}, &prev)
	if p := prev.Profile.Properties; prev.Profile.Type != "vsphere.vm" || p["adopted_from"] != "/DC0/vm/legacy" || p["template"] != nil || p["datacenter"] != "DC0" {
		t.Fatalf("adopt-preview: %+v", prev.Profile)
	}
	out, errOut, code := a.grove("node", "adopt", "-json", "-type", "vsphere.vm-1.0", "-name", "legacy-node", moid)
	var n api.Node
	if code != 0 || json.Unmarshal([]byte(out), &n) != nil {
		t.Fatalf("grove node adopt: %d\n%s%s", code, out, errOut)
	}
	if n.Status != "ACTIVE" || n.Data["moid"] != moid {
		t.Fatalf("the adopted node: %+v", n)
	}
	if act := a.waitAction(a.mustDo(http.MethodPost, "/v1/nodes/legacy-node/actions", map[string]any{"check": map[string]any{}}, nil).ActionID()); act.Status != "SUCCEEDED" {
		t.Errorf("check of the adopted node: %s %s", act.Status, act.StatusReason)
	}
	r := a.mustDo(http.MethodPost, "/v1/nodes", map[string]any{"node": map[string]any{"name": "clone", "profile_id": n.ProfileID}}, nil)
	if act := a.waitFailed(r.ActionID()); !strings.Contains(act.StatusReason, "needs a template") || !strings.Contains(act.StatusReason, "/DC0/vm/legacy") {
		t.Errorf("a node made from the adopted profile: %s %s", act.Status, act.StatusReason)
	}
	a.waitAction(a.mustDo(http.MethodDelete, "/v1/nodes/clone", nil, nil).ActionID())
	if act := a.waitAction(a.mustDo(http.MethodDelete, "/v1/nodes/legacy-node", nil, nil).ActionID()); act.Status != "SUCCEEDED" {
		t.Fatalf("delete of the adopted node: %s %s", act.Status, act.StatusReason)
	}
	var left []mo.VirtualMachine
	v, err := view.NewManager(vc.Client).CreateContainerView(ctx, vc.ServiceContent.RootFolder, []string{"VirtualMachine"}, true)
	if err != nil {
		t.Fatal(err)
	}
	defer v.Destroy(ctx)
	if err := v.RetrieveWithFilter(ctx, []string{"VirtualMachine"}, []string{"name"}, &left, property.Match{"name": "legacy"}); err == nil && len(left) > 0 {
		t.Errorf("the adopted VM is still there after its node was deleted: %v", left)
	}
	_, errOut, code = a.grove("node", "adopt", "-type", "vsphere.vm", "vm-999999")
	if code == 0 || !strings.Contains(errOut, "vCenter has no VM vm-999999") {
		t.Errorf("grove node adopt of a missing VM: exit %d\n%s", code, errOut)
	}
}
