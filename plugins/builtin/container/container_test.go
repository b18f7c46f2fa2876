package container_test

import (
	"context"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/moby/moby/client"

	"github.com/grovehq/grove/internal/containertest"
	"github.com/grovehq/grove/plugins/builtin/container"
	"github.com/grovehq/grove/plugins/sdk"
)

func spec(props map[string]any) sdk.Spec {
	p := map[string]any{"image": container.DemoImage, "network": "host", "stop_timeout": int64(1)}
	for k, v := range props {
		p[k] = v
	}
	return sdk.Spec{ID: "p", Name: "p", Type: container.TypeName, Version: "1.0", Properties: p}
}

func node(t *testing.T, data map[string]any) sdk.Node {
	if data == nil {
		data = map[string]any{}
	}
	if _, ok := data["port"]; !ok {
		data["port"] = containertest.Port(t)
	}
	return sdk.Node{ID: strings.ReplaceAll(t.Name(), "/", "-") + "-" + time.Now().Format("150405.000000"), Name: "n1", Index: 1,
		ClusterID: "unit", ClusterName: "unit", Data: data}
}

func apply(n *sdk.Node, r sdk.Result) {
	n.PhysicalID, n.State, n.Data = r.PhysicalID, r.State, r.Data
}

func TestEngineErrorsAreReasons(t *testing.T) {
	host := containertest.Require(t)
	t.Setenv("GROVE_DOCKER_HOSTS", "a="+host+",b="+host)
	d := container.Type().Driver
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()

	r := d.Create(ctx, spec(map[string]any{"image": "localhost/grove-missing:1"}), []sdk.Node{node(t, nil)})[0]
	if r.Err == nil || !strings.Contains(r.Err.Error(), "image not found: localhost/grove-missing:1") {
		t.Errorf("a missing image: %v", r.Err)
	}

	busy, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer busy.Close()
	port := busy.Addr().(*net.TCPAddr).Port
	r = d.Create(ctx, spec(nil), []sdk.Node{node(t, map[string]any{"port": port})})[0]
	if r.Err == nil || !strings.Contains(r.Err.Error(), "already in use") || !strings.Contains(r.Err.Error(), "port") {
		t.Errorf("a busy port: %v", r.Err)
	}

	r = d.Create(ctx, spec(nil), []sdk.Node{node(t, map[string]any{"placement": map[string]any{"host": "nowhere"}})})[0]
	if r.Err == nil || !strings.Contains(r.Err.Error(), `no engine endpoint named "nowhere"`) {
		t.Errorf("an unknown host: %v", r.Err)
	}
}

func TestPlacementCheckAndDelete(t *testing.T) {
	host := containertest.Require(t)
	t.Setenv("GROVE_DOCKER_HOSTS", "a="+host+",b="+host)
	d := container.Type().Driver
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	eng, err := client.New(client.WithHost(host))
	if err != nil {
		t.Fatal(err)
	}
	defer eng.Close()

	// Placement data chooses the host.
	n := node(t, map[string]any{"placement": map[string]any{"host": "b"}})
	r := d.Create(ctx, spec(nil), []sdk.Node{n})[0]
	if r.Err != nil || r.Data["host"] != "b" || !r.Healthy {
		t.Fatalf("create on host b: %+v", r)
	}
	apply(&n, r)
	defer d.Delete(context.Background(), spec(nil), []sdk.Node{n})

	// Running, then exited with its code, then missing.
	if c := d.Check(ctx, spec(nil), []sdk.Node{n})[0]; !c.Healthy {
		t.Fatalf("check a running container: %+v", c)
	}
	if _, err := eng.ContainerKill(ctx, "grove-"+n.ID, client.ContainerKillOptions{Signal: "KILL"}); err != nil {
		t.Fatal(err)
	}
	var c sdk.Result
	deadline := time.Now().Add(20 * time.Second)
	for c = d.Check(ctx, spec(nil), []sdk.Node{n})[0]; c.Healthy && time.Now().Before(deadline); c = d.Check(ctx, spec(nil), []sdk.Node{n})[0] {
		time.Sleep(50 * time.Millisecond) // polling interval
	}
	if c.Healthy || c.Completed || !strings.Contains(c.Reason, "exit code 137") {
		t.Errorf("check a killed container: %+v", c)
	}

	// Recover keeps the node's identity and host.
	r = d.Recover(ctx, spec(nil), []sdk.Node{n}, "RECREATE", nil)[0]
	if r.Err != nil || r.Data["host"] != "b" || r.Data["container"] != "grove-"+n.ID {
		t.Fatalf("recover: %+v", r)
	}
	apply(&n, r)
	if c := d.Check(ctx, spec(nil), []sdk.Node{n})[0]; !c.Healthy {
		t.Fatalf("check after recover: %+v", c)
	}

	// Delete twice: the second finds nothing and succeeds.
	for i := 0; i < 2; i++ {
		if r := d.Delete(ctx, spec(nil), []sdk.Node{n})[0]; r.Err != nil {
			t.Fatalf("delete #%d: %v", i+1, r.Err)
		}
	}
	if c := d.Check(ctx, spec(nil), []sdk.Node{n})[0]; c.Healthy || !strings.Contains(c.Reason, "missing") {
		t.Errorf("check a deleted container: %+v", c)
	}

	// A cancelled context bounds every call.
	done, stop := context.WithCancel(ctx)
	stop()
	if r := d.Create(done, spec(nil), []sdk.Node{node(t, nil)})[0]; r.Err == nil {
		t.Errorf("create with a cancelled context succeeded")
	}
}

func TestHostsReportEachEngine(t *testing.T) {
	host := containertest.Require(t)
	t.Setenv("GROVE_DOCKER_HOSTS", "a="+host+",down=unix:///tmp/grove-no-engine-here.sock")
	d := container.Type().Driver.(*container.Driver)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	n := node(t, nil)
	r := d.Create(ctx, spec(map[string]any{"memory": int64(32), "cpu": 0.5}), []sdk.Node{n})[0]
	if r.Err != nil || r.Data["host"] != "a" {
		t.Fatalf("create skips the engine that does not answer: %+v", r)
	}
	apply(&n, r)
	defer d.Delete(context.Background(), spec(nil), []sdk.Node{n})

	hosts, err := d.Hosts(ctx)
	if err != nil || len(hosts) != 2 {
		t.Fatalf("hosts: %v %+v", err, hosts)
	}
	a, down := hosts[0], hosts[1]
	if a.Name != "a" || a.Err != "" || a.Load["containers"] < 1 || a.Load["cpu"] < 0.5 || a.Load["memory_mib"] < 32 || a.Attributes["server_version"] == "" {
		t.Errorf("host a: %+v", a)
	}
	if down.Name != "down" || !strings.Contains(down.Err, "does not answer") || down.Load != nil {
		t.Errorf("an engine that does not answer is listed with the reason: %+v", down)
	}
}

// TestOperations runs each node operation on a real container and checks
// what the engine says of it afterwards: stopped and paused containers are
// not healthy, started, unpaused and restarted ones are.
func TestOperations(t *testing.T) {
	host := containertest.Require(t)
	t.Setenv("GROVE_DOCKER_HOSTS", "a="+host)
	typ := container.Type()
	op, ok := typ.Driver.(sdk.Operator)
	if !ok {
		t.Fatal("container.docker's driver has no Operate")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	n := node(t, nil)
	r := typ.Driver.Create(ctx, spec(nil), []sdk.Node{n})[0]
	if r.Err != nil {
		t.Fatalf("create: %v", r.Err)
	}
	apply(&n, r)
	defer typ.Driver.Delete(context.Background(), spec(nil), []sdk.Node{n})
	for _, step := range []struct {
		op      string
		healthy bool
		reason  string
	}{
		{"stop", false, "container exited"},
		{"start", true, "container running"},
		{"pause", false, "container paused"},
		{"unpause", true, "container running"},
		{"restart", true, "container running"},
	} {
		r := op.Operate(ctx, spec(nil), []sdk.Node{n}, step.op, nil)[0]
		if r.Err != nil || r.Healthy != step.healthy || r.Reason != step.reason {
			t.Errorf("%s: %+v, want healthy %v and %q", step.op, r, step.healthy, step.reason)
		}
	}
	if r := op.Operate(ctx, spec(nil), []sdk.Node{n}, "explode", nil)[0]; r.Err == nil || !strings.Contains(r.Err.Error(), `no operation "explode"`) {
		t.Errorf("an unknown operation: %+v", r)
	}
	names := map[string]bool{}
	for _, o := range typ.NodeOperations {
		names[o.Name] = true
	}
	for _, want := range []string{"start", "stop", "restart", "pause", "unpause"} {
		if !names[want] {
			t.Errorf("the type does not declare %s", want)
		}
	}
}

// TestAdopt: a running container is adopted by its name, on any engine or
// on the one named: its image, network and stop timeout make the
// properties (Grove's own labels left out), the node's state names the
// container, a check finds it running and deleting the node removes it.
// Names that cannot be containers, missing containers and unknown engines
// are refused with the reason.
func TestAdopt(t *testing.T) {
	host := containertest.Require(t)
	t.Setenv("GROVE_DOCKER_HOSTS", "a="+host)
	typ := container.Type()
	ad, ok := typ.Driver.(sdk.Adopter)
	if !ok {
		t.Fatal("container.docker's driver has no Adopt")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	orig := node(t, nil)
	r := typ.Driver.Create(ctx, spec(map[string]any{"labels": map[string]any{"team": "web"}}), []sdk.Node{orig})[0]
	if r.Err != nil {
		t.Fatalf("create: %v", r.Err)
	}
	apply(&orig, r)
	name, _ := r.Data["container"].(string)
	defer typ.Driver.Delete(context.Background(), spec(nil), []sdk.Node{orig})

	prev, err := ad.Adopt(ctx, sdk.AdoptRequest{Type: container.TypeName, Version: "1.0", Identity: name, Preview: true})
	if err != nil {
		t.Fatal(err)
	}
	p := prev.Properties
	labels, _ := p["labels"].(map[string]any)
	if p["image"] != container.DemoImage || p["network"] != "host" || p["stop_timeout"] != 1 || labels["team"] != "web" || len(labels) != 1 {
		t.Errorf("preview properties: %#v", p)
	}
	// The preview names the container, so the engine can refuse one a
	// node already holds (orig here); nothing else of a node result.
	if prev.Result.PhysicalID != orig.PhysicalID || prev.Result.State != nil || prev.Result.Data != nil {
		t.Errorf("preview result: %+v, want only the physical id %s", prev.Result, orig.PhysicalID)
	}

	adopted := sdk.Node{ID: orig.ID + "-adopted", Name: "adopted"}
	got, err := ad.Adopt(ctx, sdk.AdoptRequest{Type: container.TypeName, Version: "1.0", Identity: "a/" + name, Node: adopted})
	if err != nil {
		t.Fatal(err)
	}
	if got.Result.PhysicalID != orig.PhysicalID || got.Result.Data["container"] != name || got.Result.Data["host"] != "a" {
		t.Fatalf("adopted result: %+v, want the container %s (%s)", got.Result, name, orig.PhysicalID)
	}
	apply(&adopted, got.Result)
	if c := typ.Driver.Check(ctx, spec(nil), []sdk.Node{adopted})[0]; !c.Healthy {
		t.Errorf("check of the adopted node: %+v", c)
	}
	if d := typ.Driver.Delete(ctx, spec(nil), []sdk.Node{adopted})[0]; d.Err != nil {
		t.Fatalf("delete the adopted node: %v", d.Err)
	}
	if c := typ.Driver.Check(ctx, spec(nil), []sdk.Node{orig})[0]; c.Healthy || c.Reason != "the container is missing" {
		t.Errorf("the adopted container after its node's deletion: %+v", c)
	}

	if _, err := ad.Adopt(ctx, sdk.AdoptRequest{Type: container.TypeName, Version: "1.0", Identity: name, Node: adopted, Snapshot: true}); err == nil || !strings.Contains(err.Error(), "docker commit") {
		t.Errorf("adopt with snapshot: %v; want it refused", err)
	}
	for ident, want := range map[string]string{
		"../etc":      "no engine endpoint named",
		"-rm":         "must be a container id or name",
		"no-such-box": "no container",
		"b/" + name:   "no engine endpoint named",
		"a/x y":       "must be a container id or name",
	} {
		if _, err := ad.Adopt(ctx, sdk.AdoptRequest{Type: container.TypeName, Version: "1.0", Identity: ident, Preview: true}); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: %v; want %q", ident, err, want)
		}
	}
}
