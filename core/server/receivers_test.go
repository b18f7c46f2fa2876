package server_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/grovehq/grove/core/model"
	"github.com/grovehq/grove/core/server"
)

type receiverBody struct {
	Receiver struct {
		ID        string         `json:"id"`
		Name      string         `json:"name"`
		Type      string         `json:"type"`
		ClusterID string         `json:"cluster_id"`
		Action    string         `json:"action"`
		Params    map[string]any `json:"params"`
		Channel   map[string]any `json:"channel"`
		User      string         `json:"user"`
		Project   string         `json:"project"`
		CreatedAt string         `json:"created_at"`
	} `json:"receiver"`
}

func (a *authAPI) newCluster(member, name string, size int) string {
	a.t.Helper()
	var id struct {
		Profile struct{ ID string } `json:"profile"`
		Cluster struct{ ID string } `json:"cluster"`
	}
	a.must(member, http.MethodPost, "/v1/profiles", map[string]any{"profile": map[string]any{"name": name + "-prof", "spec": noopSpec}}, &id)
	ans := a.must(member, http.MethodPost, "/v1/clusters", map[string]any{"cluster": map[string]any{"name": name, "profile_id": id.Profile.ID,
		"desired_capacity": size, "max_size": 10}}, &id)
	a.waitAction(member, ans)
	return id.Cluster.ID
}

func (a *authAPI) nodeCount(token, cluster string) int {
	a.t.Helper()
	var out struct {
		Cluster struct {
			Nodes []string `json:"nodes"`
		} `json:"cluster"`
	}
	a.must(token, http.MethodGet, "/v1/clusters/"+cluster, nil, &out)
	return len(out.Cluster.Nodes)
}

// TestReceiverWebhookScales: a member creates a webhook receiver; its URL,
// shown once, scales the cluster without a token, with the receiver's
// params under the trigger's (query, then body); the action runs in the
// receiver's project, named after the receiver; the secret is never shown
// again, and a deleted receiver's URL is refused.
func TestReceiverWebhookScales(t *testing.T) {
	a := newAuthAPI(t, server.Options{})
	member := a.token("p", model.RoleMember)
	cl := a.newCluster(member, "web", 1)

	var rc receiverBody
	ans := a.call(member, http.MethodPost, "/v1/receivers", map[string]any{"receiver": map[string]any{
		"name": "up", "type": "webhook", "cluster_id": "web", "action": "CLUSTER_SCALE_OUT", "params": map[string]any{"count": "1"}}})
	if ans.status != http.StatusCreated {
		t.Fatalf("create: %d %s", ans.status, ans.body)
	}
	if err := json.Unmarshal([]byte(ans.body), &rc); err != nil {
		t.Fatal(err)
	}
	url, _ := rc.Receiver.Channel["alarm_url"].(string)
	if rc.Receiver.ClusterID != cl || rc.Receiver.Type != "webhook" || rc.Receiver.Project != "p" || rc.Receiver.CreatedAt == "" ||
		!strings.HasPrefix(url, a.url+"/v1/webhooks/grove_wh_") || !strings.HasSuffix(url, "/trigger?V=2") {
		t.Fatalf("created receiver: %s", ans.body)
	}

	// No token: the URL is the credential. The receiver says count 1; the
	// query says 2; that is what runs.
	req, _ := http.NewRequest(http.MethodPost, url+"&count=2", nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusAccepted || resp.Header.Get("Location") == "" {
		t.Fatalf("trigger: %d", resp.StatusCode)
	}
	a.waitAction(member, answer{header: resp.Header})
	if n := a.nodeCount(member, cl); n != 3 {
		t.Errorf("after a trigger with count=2 over the receiver's 1: %d nodes, want 3", n)
	}
	var act struct {
		Action struct {
			Name    string `json:"name"`
			Project string `json:"project"`
			User    string `json:"user"`
		} `json:"action"`
	}
	a.must(member, http.MethodGet, resp.Header.Get("Location"), nil, &act)
	if act.Action.Name != "webhook_"+rc.Receiver.ID[:8] || act.Action.Project != "p" || act.Action.User != rc.Receiver.User {
		t.Errorf("the webhook's action: %+v; want named webhook_%s in project p as %s", act.Action, rc.Receiver.ID[:8], rc.Receiver.User)
	}

	// A V=2 body is the params: count 1 wins over the receiver's (also 1)
	// and over nothing else; the cluster grows by one.
	ans = a.call("", http.MethodPost, strings.TrimPrefix(url, a.url), map[string]any{"count": 1})
	if ans.status != http.StatusAccepted {
		t.Fatalf("trigger with a body: %d %s", ans.status, ans.body)
	}
	a.waitAction(member, ans)
	// V=1 (below 1.10): the body's "params" object holds them.
	ans = a.call("", http.MethodPost, strings.TrimPrefix(strings.Replace(url, "V=2", "V=1", 1), a.url), map[string]any{"params": map[string]any{"count": 2}})
	if ans.status != http.StatusAccepted {
		t.Fatalf("trigger V=1: %d %s", ans.status, ans.body)
	}
	a.waitAction(member, ans)
	if n := a.nodeCount(member, cl); n != 6 {
		t.Errorf("after three triggers (2, 1, 2): %d nodes, want 6", n)
	}
	// Alertmanager's own JSON body, at the V=1 URL (no microversion
	// header: 1.0): only a "params" object would be params, so the body
	// adds none and the receiver's count 1 runs.
	alert := map[string]any{"version": "4", "status": "firing", "receiver": "grove", "groupLabels": map[string]any{"alertname": "HighLoad"},
		"alerts": []any{map[string]any{"status": "firing", "labels": map[string]any{"alertname": "HighLoad"}}}}
	ans = a.call("", http.MethodPost, strings.TrimPrefix(strings.Replace(url, "V=2", "V=1", 1), a.url), alert)
	if ans.status != http.StatusAccepted {
		t.Fatalf("an Alertmanager notification at V=1: %d %s", ans.status, ans.body)
	}
	a.waitAction(member, ans)
	if n := a.nodeCount(member, cl); n != 7 {
		t.Errorf("after an Alertmanager notification: %d nodes, want 7", n)
	}
	// The same body at V=2 is taken as params, which an action refuses,
	// naming the field.
	if ans := a.call("", http.MethodPost, strings.TrimPrefix(url, a.url), alert); ans.status != http.StatusBadRequest || !strings.Contains(ans.body, "params.alerts") {
		t.Errorf("an Alertmanager notification at V=2: %d %s; want 400 naming params.alerts", ans.status, ans.body)
	}
	// Bad params are the action's 400, naming the field.
	ans = a.call("", http.MethodPost, strings.TrimPrefix(url, a.url)+"&count=0", nil)
	if ans.status != http.StatusBadRequest || !strings.Contains(ans.body, "scale_out.count") {
		t.Errorf("count=0: %d %s; want 400 naming scale_out.count", ans.status, ans.body)
	}
	// A parameter without a name is refused as such, not as "scale_out.".
	ans = a.call("", http.MethodPost, strings.TrimPrefix(url, a.url)+"&=1", nil)
	if ans.status != http.StatusBadRequest || !strings.Contains(ans.body, "scale_out holds a parameter with an empty name") {
		t.Errorf("&=1: %d %s; want 400 naming the empty parameter", ans.status, ans.body)
	}

	// The secret is not shown again, in a show or a list.
	show := a.call(member, http.MethodGet, "/v1/receivers/up", nil)
	list := a.call(member, http.MethodGet, "/v1/receivers?cluster_id="+cl+"&action=CLUSTER_SCALE_OUT", nil)
	secret := strings.TrimSuffix(strings.TrimPrefix(url, a.url+"/v1/webhooks/"), "/trigger?V=2")
	for _, got := range []answer{show, list} {
		if got.status != http.StatusOK || strings.Contains(got.body, secret) || !strings.Contains(got.body, rc.Receiver.ID) {
			t.Errorf("show/list: %d %s; want the receiver without its secret", got.status, got.body)
		}
	}

	// PATCH (1.7): new params apply to the same URL.
	a.must(member, http.MethodPatch, "/v1/receivers/up", map[string]any{"receiver": map[string]any{"name": "down", "action": "CLUSTER_SCALE_IN", "params": map[string]any{"count": "2"}}}, &rc)
	if rc.Receiver.Name != "down" || rc.Receiver.Action != "CLUSTER_SCALE_IN" || rc.Receiver.Params["count"] != "2" {
		t.Errorf("after update: %+v", rc.Receiver)
	}
	ans = a.call("", http.MethodPost, strings.TrimPrefix(url, a.url), nil)
	if ans.status != http.StatusAccepted {
		t.Fatalf("trigger after update: %d %s", ans.status, ans.body)
	}
	a.waitAction(member, ans)
	if n := a.nodeCount(member, cl); n != 5 {
		t.Errorf("after the updated receiver's scale-in by 2: %d nodes, want 5", n)
	}

	// notify is for message receivers.
	if ans := a.call(member, http.MethodPost, "/v1/receivers/down/notify", nil); ans.status != http.StatusBadRequest || !strings.Contains(ans.body, "message receivers") {
		t.Errorf("notify a webhook receiver: %d %s", ans.status, ans.body)
	}

	if ans := a.call(member, http.MethodDelete, "/v1/receivers/down", nil); ans.status != http.StatusNoContent {
		t.Fatalf("delete: %d %s", ans.status, ans.body)
	}
	if ans := a.call("", http.MethodPost, strings.TrimPrefix(url, a.url), nil); ans.status != http.StatusNotFound || strings.Contains(ans.body, secret) {
		t.Errorf("a deleted receiver's webhook: %d %s; want 404 without the secret", ans.status, ans.body)
	}
}

// TestReceiverRefusals: each bad receiver is a 400 naming the field and
// the rule; a message receiver is refused with the reason.
func TestReceiverRefusals(t *testing.T) {
	a := newAuthAPI(t, server.Options{})
	member := a.token("p", model.RoleMember)
	a.newCluster(member, "web", 0)
	for _, tc := range []struct {
		body map[string]any
		want string
	}{
		{map[string]any{"name": "m", "type": "message", "cluster_id": "web", "action": "CLUSTER_SCALE_OUT"}, "Grove has none"},
		{map[string]any{"name": "m", "type": "queue", "cluster_id": "web", "action": "CLUSTER_SCALE_OUT"}, "receiver.type"},
		{map[string]any{"name": "m", "type": "webhook", "action": "CLUSTER_SCALE_OUT"}, "receiver.cluster_id is required"},
		{map[string]any{"name": "m", "type": "webhook", "cluster_id": "nope", "action": "CLUSTER_SCALE_OUT"}, "receiver.cluster_id"},
		{map[string]any{"name": "m", "type": "webhook", "cluster_id": "web"}, "receiver.action is required"},
		{map[string]any{"name": "m", "type": "webhook", "cluster_id": "web", "action": "CLUSTER_CREATE"}, "a cluster that exists"},
		{map[string]any{"name": "m", "type": "webhook", "cluster_id": "web", "action": "CLUSTER_DELETE"}, "destroy the cluster"},
		{map[string]any{"name": "m", "type": "webhook", "cluster_id": "web", "action": "NODE_CREATE"}, "not a cluster action"},
		{map[string]any{"name": "m", "type": "webhook", "cluster_id": "web", "action": "CLUSTER_SCALE_OUT", "params": map[string]any{"x": map[string]any{}}}, "receiver.params.x"},
		{map[string]any{"name": "m", "type": "webhook", "cluster_id": "web", "action": "CLUSTER_SCALE_OUT", "params": map[string]any{"count": -5}}, "receiver.params.count must be a positive integer of at most 2147483647, got -5."},
		{map[string]any{"name": "m", "type": "webhook", "cluster_id": "web", "action": "CLUSTER_SCALE_OUT", "params": map[string]any{"zzz": 1}}, "receiver.params.zzz is not a scale_out parameter; use count."},
		{map[string]any{"name": "m", "type": "webhook", "cluster_id": "web", "action": "CLUSTER_RESIZE", "params": map[string]any{"count": 1}}, "receiver.params.count is not a resize parameter"},
		{map[string]any{"name": "m", "type": "webhook", "cluster_id": "web", "action": "CLUSTER_RESIZE", "params": map[string]any{"adjustment_type": "MORE"}}, "receiver.params.adjustment_type: MORE is not one of"},
		{map[string]any{"name": "m", "type": "webhook", "cluster_id": "web", "action": "CLUSTER_RECOVER", "params": map[string]any{"check": "maybe"}}, "receiver.params.check must be a boolean."},
		{map[string]any{"name": "m", "type": "webhook", "cluster_id": "web", "action": "CLUSTER_DEL_NODES", "params": map[string]any{"destroy_after_deletion": "perhaps"}}, "receiver.params.destroy_after_deletion must be a boolean."},
		{map[string]any{"name": "m", "type": "webhook", "cluster_id": "web", "action": "CLUSTER_SCALE_OUT", "bogus": 1}, "receiver.bogus"},
		{map[string]any{"name": "", "type": "webhook", "cluster_id": "web", "action": "CLUSTER_SCALE_OUT"}, "receiver.name"},
	} {
		ans := a.call(member, http.MethodPost, "/v1/receivers", map[string]any{"receiver": tc.body})
		if ans.status != http.StatusBadRequest || !strings.Contains(ans.body, tc.want) {
			t.Errorf("%v: %d %s; want 400 with %q", tc.body, ans.status, ans.body, tc.want)
		}
	}
	if ans := a.call(member, http.MethodGet, "/v1/receivers", nil); ans.status != http.StatusOK || strings.Contains(ans.body, `"m"`) {
		t.Errorf("a refused receiver was stored: %d %s", ans.status, ans.body)
	}

	// Params the action needs but the receiver leaves out are the
	// trigger's to add; an update is judged on the action and params it
	// leaves, so changing the action under params it does not take is
	// refused, and the receiver is left as it was.
	for _, body := range []map[string]any{
		{"name": "up", "type": "webhook", "cluster_id": "web", "action": "CLUSTER_SCALE_OUT", "params": map[string]any{"count": 2}},
		{"name": "grow", "type": "webhook", "cluster_id": "web", "action": "CLUSTER_RESIZE", "params": map[string]any{"adjustment_type": "CHANGE_IN_CAPACITY"}},
	} {
		if ans := a.call(member, http.MethodPost, "/v1/receivers", map[string]any{"receiver": body}); ans.status != http.StatusCreated {
			t.Fatalf("create %v: %d %s", body, ans.status, ans.body)
		}
	}
	for _, tc := range []struct {
		patch map[string]any
		want  string
	}{
		{map[string]any{"action": "CLUSTER_RESIZE"}, "receiver.params.count is not a resize parameter"},
		{map[string]any{"params": map[string]any{"count": -5}}, "receiver.params.count must be a positive integer"},
		{map[string]any{"params": map[string]any{"zzz": 1}}, "receiver.params.zzz is not a scale_out parameter"},
	} {
		ans := a.call(member, http.MethodPatch, "/v1/receivers/up", map[string]any{"receiver": tc.patch})
		if ans.status != http.StatusBadRequest || !strings.Contains(ans.body, tc.want) {
			t.Errorf("PATCH %v: %d %s; want 400 with %q", tc.patch, ans.status, ans.body, tc.want)
		}
	}
	var rc receiverBody
	a.must(member, http.MethodGet, "/v1/receivers/up", nil, &rc)
	if rc.Receiver.Action != "CLUSTER_SCALE_OUT" || rc.Receiver.Params["count"] != float64(2) {
		t.Errorf("after refused updates: %+v, want CLUSTER_SCALE_OUT with count 2", rc.Receiver)
	}
	for _, path := range []string{"/v1/webhooks/nope/trigger", "/v1/webhooks/grove_wh_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA/trigger?V=2"} {
		if ans := a.call("", http.MethodPost, path, nil); ans.status != http.StatusNotFound {
			t.Errorf("%s: %d %s; want 404", path, ans.status, ans.body)
		}
	}
}

// TestBadWebhooksAreRateLimited: guessing webhook secrets is slowed down
// as guessing tokens is.
func TestBadWebhooksAreRateLimited(t *testing.T) {
	a := newAuthAPI(t, server.Options{FailedAuthBurst: 3, FailedAuthEvery: time.Hour})
	for i := range 3 {
		if ans := a.call("", http.MethodPost, "/v1/webhooks/guess/trigger", nil); ans.status != http.StatusNotFound {
			t.Fatalf("guess %d: %d %s", i, ans.status, ans.body)
		}
	}
	ans := a.call("", http.MethodPost, "/v1/webhooks/guess/trigger", nil)
	if ans.status != http.StatusTooManyRequests || ans.header.Get("Retry-After") == "" {
		t.Errorf("the fourth guess: %d %s; want 429 with Retry-After", ans.status, ans.body)
	}
}

// TestServicesAndValidate: GET /v1/services lists the agent as Senlin's
// engine service (admin only); validate answers the object with no id and
// no timestamps, as Senlin does.
func TestServicesAndValidate(t *testing.T) {
	a := newAuthAPI(t, server.Options{})
	admin := a.token("p", model.RoleAdmin)
	var out struct {
		Services []map[string]any `json:"services"`
	}
	a.must(admin, http.MethodGet, "/v1/services", nil, &out)
	if len(out.Services) != 1 {
		t.Fatalf("services: %+v", out)
	}
	svc := out.Services[0]
	if svc["id"] != a.e.ID() || svc["binary"] != "grove-engine" || svc["status"] != "enabled" || svc["state"] != "up" ||
		svc["host"] == "" || svc["updated_at"] == nil {
		t.Errorf("service: %+v", svc)
	}
	if _, ok := svc["disabled_reason"]; !ok {
		t.Errorf("service without disabled_reason: %+v", svc)
	}
	var pol struct {
		Policy map[string]any `json:"policy"`
	}
	a.must(admin, http.MethodPost, "/v1/policies/validate", map[string]any{"policy": map[string]any{"spec": delSpec}}, &pol)
	if pol.Policy["id"] != nil || pol.Policy["name"] != "validated_policy" || pol.Policy["type"] != "senlin.policy.deletion-1.1" ||
		pol.Policy["created_at"] != nil || pol.Policy["spec"] == nil {
		t.Errorf("validated policy: %+v", pol.Policy)
	}
	var prof struct {
		Profile map[string]any `json:"profile"`
	}
	a.must(admin, http.MethodPost, "/v1/profiles/validate", map[string]any{"profile": map[string]any{"spec": noopSpec}}, &prof)
	if prof.Profile["id"] != nil || prof.Profile["name"] != "validated_profile" || prof.Profile["created_at"] != nil {
		t.Errorf("validated profile: %+v", prof.Profile)
	}
}
