package e2e

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/grovehq/grove/api"
	"github.com/grovehq/grove/internal/hostile"
)

// TestValidation sends every validation of seed 004 and senlin.md as a bad
// request: each is a 400 (or the documented status) whose message names the
// field and the rule, and nothing is written.
func TestValidation(t *testing.T) {
	a := startAgent(t, t.TempDir())
	t.Cleanup(func() { killProcessesOf("v") })
	a.webProfile("p")
	a.createProfile("other-type-proof", map[string]any{"command": []any{"true"}})
	a.mustDo(http.MethodPost, "/v1/profiles", map[string]any{"profile": map[string]any{"name": "noop",
		"spec": map[string]any{"type": "grove.noop", "version": "1.0", "properties": map[string]any{}}}}, nil)
	a.waitAction(a.createCluster("v", "p", 2, map[string]any{"min_size": 1, "max_size": 4}))
	a.mustDo(http.MethodPost, "/v1/policies", map[string]any{"policy": map[string]any{"name": "del",
		"spec": map[string]any{"type": "senlin.policy.deletion", "version": "1.0", "properties": map[string]any{}}}}, nil)
	a.mustDo(http.MethodPost, "/v1/policies", map[string]any{"policy": map[string]any{"name": "del2",
		"spec": map[string]any{"type": "senlin.policy.deletion", "version": "1.1", "properties": map[string]any{"criteria": "YOUNGEST_FIRST"}}}}, nil)
	a.waitAction(a.clusterAction("v", "policy_attach", map[string]any{"policy_id": "del"}))
	r := a.mustDo(http.MethodPost, "/v1/nodes", map[string]any{"node": map[string]any{"name": "orphan", "profile_id": "noop"}}, nil)
	a.waitAction(r.ActionID())

	counts := func() map[string]int {
		out := map[string]int{}
		for _, coll := range []string{"profiles", "policies", "clusters", "nodes", "actions"} {
			var body map[string][]any
			a.mustDo(http.MethodGet, "/v1/"+coll, nil, &body)
			out[coll] = len(body[coll])
		}
		return out
	}
	before := counts()

	cases := []struct {
		name   string
		method string
		path   string
		body   any
		status int
		want   []string // fragments the message must contain
	}{
		// profiles
		{"profile without name", "POST", "/v1/profiles", map[string]any{"profile": map[string]any{"spec": map[string]any{"type": "local.process", "version": "1.0", "properties": map[string]any{"command": []any{"x"}}}}}, 400, []string{"name is required"}},
		{"profile bad name", "POST", "/v1/profiles", map[string]any{"profile": map[string]any{"name": "a b", "spec": map[string]any{"type": "local.process", "version": "1.0"}}}, 400, []string{"name", "not valid"}},
		{"profile unknown type", "POST", "/v1/profiles", map[string]any{"profile": map[string]any{"name": "x", "spec": map[string]any{"type": "os.nova.nope", "version": "1.0"}}}, 400, []string{"spec.type", "os.nova.nope", "local.process"}},
		{"profile bad version", "POST", "/v1/profiles", map[string]any{"profile": map[string]any{"name": "x", "spec": map[string]any{"type": "local.process", "version": "9.9", "properties": map[string]any{"command": []any{"x"}}}}}, 400, []string{"spec.version", "9.9", "1.0"}},
		{"profile missing property", "POST", "/v1/profiles", map[string]any{"profile": map[string]any{"name": "x", "spec": map[string]any{"type": "local.process", "version": "1.0", "properties": map[string]any{}}}}, 400, []string{"spec.properties.command", "required"}},
		{"profile wrong property type", "POST", "/v1/profiles", map[string]any{"profile": map[string]any{"name": "x", "spec": map[string]any{"type": "local.process", "version": "1.0", "properties": map[string]any{"command": "sleep 1"}}}}, 400, []string{"spec.properties.command", "must be a list"}},
		{"profile unknown property", "POST", "/v1/profiles", map[string]any{"profile": map[string]any{"name": "x", "spec": map[string]any{"type": "local.process", "version": "1.0", "properties": map[string]any{"command": []any{"x"}, "comand": 1}}}}, 400, []string{"spec.properties.comand", "not a property"}},
		{"profile relative workdir", "POST", "/v1/profiles", map[string]any{"profile": map[string]any{"name": "x", "spec": map[string]any{"type": "local.process", "version": "1.0", "properties": map[string]any{"command": []any{"x"}, "workdir": "rel"}}}}, 400, []string{"spec.properties.workdir", "absolute"}},
		{"profile range", "POST", "/v1/profiles", map[string]any{"profile": map[string]any{"name": "x", "spec": map[string]any{"type": "local.process", "version": "1.0", "properties": map[string]any{"command": []any{"x"}, "stop_timeout": -1}}}}, 400, []string{"spec.properties.stop_timeout", "at least 0"}},
		{"profile delete in use", "DELETE", "/v1/profiles/p", nil, 409, []string{"still used"}},
		// policies
		{"policy bad criteria", "POST", "/v1/policies", map[string]any{"policy": map[string]any{"name": "x", "spec": map[string]any{"type": "senlin.policy.deletion", "version": "1.0", "properties": map[string]any{"criteria": "NEWEST"}}}}, 400, []string{"spec.properties.criteria", "NEWEST", "OLDEST_FIRST"}},
		{"policy delete attached", "DELETE", "/v1/policies/del", nil, 409, []string{"attached"}},
		// cluster create
		{"cluster without name", "POST", "/v1/clusters", map[string]any{"cluster": map[string]any{"profile_id": "p"}}, 400, []string{"name is required"}},
		{"cluster without profile", "POST", "/v1/clusters", map[string]any{"cluster": map[string]any{"name": "c1"}}, 400, []string{"profile_id is required"}},
		{"cluster unknown profile", "POST", "/v1/clusters", map[string]any{"cluster": map[string]any{"name": "c1", "profile_id": "nope"}}, 400, []string{"profile_id", "nope", "could not be found"}},
		{"cluster negative desired", "POST", "/v1/clusters", map[string]any{"cluster": map[string]any{"name": "c1", "profile_id": "p", "desired_capacity": -1}}, 400, []string{"desired_capacity", "non-negative"}},
		{"cluster negative min", "POST", "/v1/clusters", map[string]any{"cluster": map[string]any{"name": "c1", "profile_id": "p", "min_size": -1}}, 400, []string{"min_size", "non-negative"}},
		{"cluster max below -1", "POST", "/v1/clusters", map[string]any{"cluster": map[string]any{"name": "c1", "profile_id": "p", "max_size": -2}}, 400, []string{"max_size", "at least -1"}},
		{"cluster negative timeout", "POST", "/v1/clusters", map[string]any{"cluster": map[string]any{"name": "c1", "profile_id": "p", "timeout": -5}}, 400, []string{"timeout", "non-negative"}},
		{"cluster non-integer desired", "POST", "/v1/clusters", map[string]any{"cluster": map[string]any{"name": "c1", "profile_id": "p", "desired_capacity": 1.5}}, 400, []string{"desired_capacity", "integer"}},
		{"cluster desired below min", "POST", "/v1/clusters", map[string]any{"cluster": map[string]any{"name": "c1", "profile_id": "p", "desired_capacity": 1, "min_size": 2}}, 400, []string{"target capacity (1) is less than the specified min_size (2)"}},
		{"cluster desired above max", "POST", "/v1/clusters", map[string]any{"cluster": map[string]any{"name": "c1", "profile_id": "p", "desired_capacity": 5, "max_size": 3}}, 400, []string{"target capacity (5) is greater than the specified max_size (3)"}},
		{"cluster min above max", "POST", "/v1/clusters", map[string]any{"cluster": map[string]any{"name": "c1", "profile_id": "p", "min_size": 4, "max_size": 3, "desired_capacity": 3}}, 400, []string{"less than the specified min_size"}},
		{"cluster over global limit", "POST", "/v1/clusters", map[string]any{"cluster": map[string]any{"name": "c1", "profile_id": "p", "desired_capacity": 200000}}, 400, []string{"maximum number of nodes allowed per cluster"}},
		{"cluster unknown field", "POST", "/v1/clusters", map[string]any{"cluster": map[string]any{"name": "c1", "profile_id": "p", "size": 3}}, 400, []string{"cluster.size", "not a recognised field"}},
		{"cluster duplicate name", "POST", "/v1/clusters", map[string]any{"cluster": map[string]any{"name": "v", "profile_id": "p"}}, 409, []string{"already exists"}},
		{"cluster no envelope", "POST", "/v1/clusters", map[string]any{"name": "c1"}, 400, []string{`{"cluster": {...}}`}},
		// cluster get
		{"cluster not found", "GET", "/v1/clusters/missing", nil, 404, []string{"missing", "could not be found"}},
		// cluster update
		{"update nothing", "PATCH", "/v1/clusters/v", map[string]any{"cluster": map[string]any{}}, 400, []string{"No property needs an update."}},
		{"update other profile type", "PATCH", "/v1/clusters/v", map[string]any{"cluster": map[string]any{"profile_id": "noop"}}, 400, []string{"profile_id", "grove.noop", "local.process"}},
		{"update min above max", "PATCH", "/v1/clusters/v", map[string]any{"cluster": map[string]any{"min_size": 5}}, 400, []string{"min_size (5) is greater than the current max_size (4)"}},
		{"update max below desired", "PATCH", "/v1/clusters/v", map[string]any{"cluster": map[string]any{"max_size": 1}}, 400, []string{"max_size (1) is less than the current desired_capacity (2)"}},
		{"update desired above max", "PATCH", "/v1/clusters/v", map[string]any{"cluster": map[string]any{"desired_capacity": 9}}, 400, []string{"greater than the cluster's max_size (4)"}},
		// cluster actions
		{"no action", "POST", "/v1/clusters/v/actions", map[string]any{}, 400, []string{"No action specified"}},
		{"two actions", "POST", "/v1/clusters/v/actions", map[string]any{"scale_in": map[string]any{}, "scale_out": map[string]any{}}, 400, []string{"Multiple actions specified"}},
		{"unknown action", "POST", "/v1/clusters/v/actions", map[string]any{"explode": map[string]any{}}, 400, []string{"Unrecognized action 'explode'"}},
		{"action params not object", "POST", "/v1/clusters/v/actions", map[string]any{"resize": 3}, 400, []string{"resize", "must be an object"}},
		{"resize nothing", "POST", "/v1/clusters/v/actions", map[string]any{"resize": map[string]any{}}, 400, []string{"Not enough parameters to do resize action."}},
		{"resize type without number", "POST", "/v1/clusters/v/actions", map[string]any{"resize": map[string]any{"adjustment_type": "EXACT_CAPACITY"}}, 400, []string{"Missing number value for size adjustment."}},
		{"resize number without type", "POST", "/v1/clusters/v/actions", map[string]any{"resize": map[string]any{"number": 2}}, 400, []string{"Missing adjustment_type value for size adjustment."}},
		{"resize bad type", "POST", "/v1/clusters/v/actions", map[string]any{"resize": map[string]any{"adjustment_type": "DOUBLE", "number": 2}}, 400, []string{"adjustment_type", "DOUBLE"}},
		{"resize min above max", "POST", "/v1/clusters/v/actions", map[string]any{"resize": map[string]any{"min_size": 3, "max_size": 2}}, 400, []string{"The specified min_size (3) is greater than the specified max_size (2)."}},
		{"resize negative exact", "POST", "/v1/clusters/v/actions", map[string]any{"resize": map[string]any{"adjustment_type": "EXACT_CAPACITY", "number": -1}}, 400, []string{"The 'number' must be non-negative integer for adjustment type 'EXACT_CAPACITY'."}},
		{"resize strict beyond max", "POST", "/v1/clusters/v/actions", map[string]any{"resize": map[string]any{"adjustment_type": "EXACT_CAPACITY", "number": 9}}, 400, []string{"greater than the cluster's max_size (4)"}},
		{"resize strict below min", "POST", "/v1/clusters/v/actions", map[string]any{"resize": map[string]any{"adjustment_type": "CHANGE_IN_CAPACITY", "number": -2}}, 400, []string{"less than the cluster's min_size (1)"}},
		{"resize unknown param", "POST", "/v1/clusters/v/actions", map[string]any{"resize": map[string]any{"adjustment": 2}}, 400, []string{"resize.adjustment", "not a resize parameter"}},
		{"resize fractional capacity", "POST", "/v1/clusters/v/actions", map[string]any{"resize": map[string]any{"adjustment_type": "CHANGE_IN_CAPACITY", "number": 1.5}}, 400, []string{"resize.number", "integer"}},
		{"scale_out zero", "POST", "/v1/clusters/v/actions", map[string]any{"scale_out": map[string]any{"count": 0}}, 400, []string{"scale_out.count", "positive integer"}},
		{"scale_in not number", "POST", "/v1/clusters/v/actions", map[string]any{"scale_in": map[string]any{"count": "two"}}, 400, []string{"scale_in.count", "positive integer"}},
		{"scale_out over limit", "POST", "/v1/clusters/v/actions", map[string]any{"scale_out": map[string]any{"count": 200000}}, 400, []string{"maximum number of nodes allowed per cluster"}},
		{"add_nodes empty", "POST", "/v1/clusters/v/actions", map[string]any{"add_nodes": map[string]any{"nodes": []any{}}}, 400, []string{"add_nodes.nodes", "must not be empty"}},
		{"add_nodes not a list", "POST", "/v1/clusters/v/actions", map[string]any{"add_nodes": map[string]any{"nodes": "orphan"}}, 400, []string{"add_nodes.nodes", "list"}},
		{"add_nodes unknown node", "POST", "/v1/clusters/v/actions", map[string]any{"add_nodes": map[string]any{"nodes": []any{"ghost"}}}, 400, []string{"add_nodes.nodes", "ghost", "could not be found"}},
		{"add_nodes other profile type", "POST", "/v1/clusters/v/actions", map[string]any{"add_nodes": map[string]any{"nodes": []any{"orphan"}}}, 400, []string{"orphan", "grove.noop", "local.process"}},
		{"del_nodes empty", "POST", "/v1/clusters/v/actions", map[string]any{"del_nodes": map[string]any{"nodes": []any{}}}, 400, []string{"del_nodes.nodes", "must not be empty"}},
		{"del_nodes not member", "POST", "/v1/clusters/v/actions", map[string]any{"del_nodes": map[string]any{"nodes": []any{"orphan"}}}, 400, []string{"orphan", "not a member"}},
		{"del_nodes unknown", "POST", "/v1/clusters/v/actions", map[string]any{"del_nodes": map[string]any{"nodes": []any{"ghost"}}}, 400, []string{"ghost", "could not be found"}},
		{"replace_nodes empty", "POST", "/v1/clusters/v/actions", map[string]any{"replace_nodes": map[string]any{"nodes": map[string]any{}}}, 400, []string{"replace_nodes.nodes", "must not be empty"}},
		{"replace_nodes not map", "POST", "/v1/clusters/v/actions", map[string]any{"replace_nodes": map[string]any{"nodes": []any{"a"}}}, 400, []string{"replace_nodes.nodes", "map"}},
		{"replace_nodes old not member", "POST", "/v1/clusters/v/actions", map[string]any{"replace_nodes": map[string]any{"nodes": map[string]any{"orphan": "orphan"}}}, 400, []string{"not a member"}},
		{"policy_attach unknown", "POST", "/v1/clusters/v/actions", map[string]any{"policy_attach": map[string]any{"policy_id": "ghost"}}, 400, []string{"policy_attach.policy_id", "ghost"}},
		{"policy_attach second of a type", "POST", "/v1/clusters/v/actions", map[string]any{"policy_attach": map[string]any{"policy_id": "del2"}}, 400, []string{"at most one policy of a type"}},
		{"policy_attach without id", "POST", "/v1/clusters/v/actions", map[string]any{"policy_attach": map[string]any{}}, 400, []string{"policy_attach.policy_id is required"}},
		{"policy_detach not attached", "POST", "/v1/clusters/v/actions", map[string]any{"policy_detach": map[string]any{"policy_id": "del2"}}, 400, []string{"not attached"}},
		{"policy_update not attached", "POST", "/v1/clusters/v/actions", map[string]any{"policy_update": map[string]any{"policy_id": "del2", "enabled": false}}, 400, []string{"not attached"}},
		{"policy_update bad enabled", "POST", "/v1/clusters/v/actions", map[string]any{"policy_update": map[string]any{"policy_id": "del", "enabled": "maybe"}}, 400, []string{"policy_update.enabled", "boolean"}},
		{"recover bad operation", "POST", "/v1/clusters/v/actions", map[string]any{"recover": map[string]any{"operation": "reinstall"}}, 400, []string{"recover.operation", "REBOOT, REBUILD, RECREATE"}},
		{"recover unknown key", "POST", "/v1/clusters/v/actions", map[string]any{"recover": map[string]any{"purge": true}}, 400, []string{"recover.purge"}},
		// nodes and actions
		{"node unknown profile", "POST", "/v1/nodes", map[string]any{"node": map[string]any{"name": "n", "profile_id": "ghost"}}, 400, []string{"profile_id", "ghost"}},
		{"node cluster of other type", "POST", "/v1/nodes", map[string]any{"node": map[string]any{"name": "n", "profile_id": "noop", "cluster_id": "v"}}, 400, []string{"profile_id", "grove.noop"}},
		{"node action unknown", "POST", "/v1/nodes/orphan/actions", map[string]any{"reboot": map[string]any{}}, 400, []string{"Unrecognized action 'reboot'"}},
		{"action cancel bad status", "PATCH", "/v1/actions/" + r.ActionID(), map[string]any{"action": map[string]any{"status": "SUCCEEDED"}}, 400, []string{"only CANCELLED"}},
		{"action cancel finished", "PATCH", "/v1/actions/" + r.ActionID(), map[string]any{"action": map[string]any{"status": "CANCELLED"}}, 409, []string{"already SUCCEEDED"}},
		// numbers are judged as sent, before conversion (docs/api.md "Request limits")
		{"cluster timeout wraps a duration", "POST", "/v1/clusters", map[string]any{"cluster": map[string]any{"name": "c1", "profile_id": "p", "timeout": 18446744074}}, 400, []string{"timeout", "at most 2147483647", "got 18446744074"}},
		{"cluster huge desired", "POST", "/v1/clusters", map[string]any{"cluster": map[string]any{"name": "c1", "profile_id": "p", "desired_capacity": 1e20}}, 400, []string{"desired_capacity", "at most 2147483647", "got 100000000000000000000"}},
		{"update timeout wraps a duration", "PATCH", "/v1/clusters/v", map[string]any{"cluster": map[string]any{"timeout": 18446744074}}, 400, []string{"timeout", "at most 2147483647", "got 18446744074"}},
		{"update huge max", "PATCH", "/v1/clusters/v", map[string]any{"cluster": map[string]any{"max_size": 9223372036854775807}}, 400, []string{"max_size", "at most 2147483647", "got 9223372036854775808"}},
		{"scale_out huge count", "POST", "/v1/clusters/v/actions", map[string]any{"scale_out": map[string]any{"count": 1e20}}, 400, []string{"scale_out.count", "at most 2147483647", "got 100000000000000000000"}},
		{"scale_in count wraps int", "POST", "/v1/clusters/v/actions", map[string]any{"scale_in": map[string]any{"count": 9223372036854775807}}, 400, []string{"scale_in.count", "at most 2147483647", "got 9223372036854775808"}},
		{"resize huge percentage", "POST", "/v1/clusters/v/actions", map[string]any{"resize": map[string]any{"adjustment_type": "CHANGE_IN_PERCENTAGE", "number": 1e300}}, 400, []string{"resize.number", "from -2147483647 to 2147483647", "got 1e+300"}},
		{"resize huge min_size", "POST", "/v1/clusters/v/actions", map[string]any{"resize": map[string]any{"min_size": 1e20}}, 400, []string{"resize.min_size", "at most 2147483647", "got 100000000000000000000"}},
		{"resize huge min_step", "POST", "/v1/clusters/v/actions", map[string]any{"resize": map[string]any{"adjustment_type": "CHANGE_IN_PERCENTAGE", "number": 10, "min_step": 1e19}}, 400, []string{"resize.min_step", "at most 2147483647", "got 10000000000000000000"}},
		{"policy_update huge priority", "POST", "/v1/clusters/v/actions", map[string]any{"policy_update": map[string]any{"policy_id": "del", "priority": 1e20}}, 400, []string{"policy_update.priority", "at most 2147483647", "got 100000000000000000000"}},
		{"profile huge stop_timeout", "POST", "/v1/profiles", map[string]any{"profile": map[string]any{"name": "x", "spec": map[string]any{"type": "local.process", "version": "1.0", "properties": map[string]any{"command": []any{"x"}, "stop_timeout": 1e20}}}}, 400, []string{"spec.properties.stop_timeout", "at most 3600", "got 100000000000000000000"}},
		{"container huge memory", "POST", "/v1/profiles", map[string]any{"profile": map[string]any{"name": "x", "spec": map[string]any{"type": "container.docker", "version": "1.0", "properties": map[string]any{"image": "x", "memory": 1e20}}}}, 400, []string{"spec.properties.memory", "at most 1073741824", "got 100000000000000000000"}},
		{"container port out of range", "POST", "/v1/profiles", map[string]any{"profile": map[string]any{"name": "x", "spec": map[string]any{"type": "container.docker", "version": "1.0", "properties": map[string]any{"image": "x", "ports": []any{70000}}}}}, 400, []string{"spec.properties.ports[0]", "at most 65535", "got 70000"}},
		{"config huge max_attempts", "POST", "/v1/clusters", map[string]any{"cluster": map[string]any{"name": "c1", "profile_id": "p", "config": map[string]any{"grove.restart": map[string]any{"max_attempts": 1e20}}}}, 400, []string{"restart.max_attempts", "from 0 to 2147483647", "got 100000000000000000000"}},
		// lists
		{"list unknown param", "GET", "/v1/clusters?colour=red", nil, 400, []string{"Invalid parameter colour"}},
		{"list bad sort key", "GET", "/v1/clusters?sort=colour", nil, 400, []string{"Unsupported sort key 'colour'"}},
		{"list bad sort dir", "GET", "/v1/clusters?sort=name:up", nil, 400, []string{"Unsupported sort dir 'up'"}},
		{"list bad limit", "GET", "/v1/clusters?limit=-1", nil, 400, []string{"limit must be a non-negative integer"}},
		{"list bad marker", "GET", "/v1/clusters?marker=xyz", nil, 400, []string{"marker"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := a.do(c.method, c.path, c.body)
			var ae *api.Error
			if !errors.As(err, &ae) {
				t.Fatalf("want HTTP %d, got %v", c.status, err)
			}
			if ae.Status != c.status {
				t.Fatalf("want HTTP %d, got %d: %s", c.status, ae.Status, ae.Message)
			}
			for _, w := range c.want {
				if !strings.Contains(ae.Message, w) {
					t.Errorf("message %q does not contain %q", ae.Message, w)
				}
			}
		})
	}
	// Dev mode's loopback caller is an admin: a member's token is refused a
	// list across projects.
	t.Run("global_project non-admin", func(t *testing.T) {
		var out struct {
			Token struct {
				Secret string `json:"secret"`
			} `json:"token"`
		}
		a.mustDo("POST", "/v1/tokens", map[string]any{"token": map[string]any{"name": "m", "project": "default", "role": "member"}}, &out)
		member := *a.client
		member.Token = out.Token.Secret
		_, err := member.Do(context.Background(), "GET", "/v1/clusters?global_project=true", nil, nil, nil)
		var ae *api.Error
		if !errors.As(err, &ae) || ae.Status != 403 || !strings.Contains(ae.Message, "Only an admin") {
			t.Fatalf("a member with global_project=true: %v; want 403 Only an admin", err)
		}
	})
	after := counts()
	for k, v := range before {
		if after[k] != v {
			t.Errorf("a refused request wrote %s: %d before, %d after", k, v, after[k])
		}
	}

	// Bodies the JSON decoder alone would have accepted are refused, and a
	// body over the limit is refused without being read: today's agent
	// read a 200 MB body whole and grew to 8.7 GB.
	for _, c := range []struct{ name, body, want string }{
		{"trailing data", `{"cluster": {"name": "c1", "profile_id": "p"}} {"cluster": {}}`, "data after its JSON object"},
		{"duplicate key", `{"cluster": {"name": "c1", "profile_id": "p", "name": "c2"}}`, `"name" appears twice`},
	} {
		status, eb := rawPost(t, a.addr+"/v1/clusters", strings.NewReader(c.body), int64(len(c.body)))
		if status != 400 || !strings.Contains(eb.Error.Message, c.want) {
			t.Errorf("%s: want a 400 saying %q, got %d %+v", c.name, c.want, status, eb)
		}
	}
	for _, declared := range []bool{true, false} {
		const huge = 200 << 20
		r := &hostile.Endless{Prefix: `{"cluster": {"name": "c1", "profile_id": "p", "metadata": {"k": "`}
		length := int64(-1)
		if declared {
			length = huge
		}
		status, eb := rawPost(t, a.addr+"/v1/clusters", io.LimitReader(r, huge), length)
		if status != http.StatusRequestEntityTooLarge || eb.Error.Type != "RequestEntityTooLarge" || !strings.Contains(eb.Error.Message, "1048576 bytes") {
			t.Errorf("200 MB body (declared length %v): want 413, got %d %+v", declared, status, eb)
		}
		if n := r.Sent(); n > 32<<20 {
			t.Errorf("200 MB body (declared length %v): the agent made the client send %d bytes before answering", declared, n)
		}
	}

	// Lookups by short id and ambiguous names.
	a.webProfile("twin")
	a.webProfile("twin")
	_, err := a.do(http.MethodGet, "/v1/profiles/twin", nil)
	var amb *api.Error
	if !errors.As(err, &amb) || amb.Status != 400 || amb.Type != "MultipleChoices" || !strings.Contains(amb.Message, `Multiple profiles have been found matching "twin"`) {
		t.Errorf("an ambiguous name: %v", err)
	}
	cl := a.cluster("v")
	if got, err := a.client.GetCluster(t.Context(), cl.ID[:6]); err != nil || got.ID != cl.ID {
		t.Errorf("short id lookup: %v %v", got, err)
	}
	// A microversion outside the supported range is refused with 406.
	req, _ := http.NewRequest(http.MethodGet, a.addr+"/v1/clusters", nil)
	req.Header.Set("OpenStack-API-Version", "clustering 2.0")
	resp, err := http.DefaultClient.Do(req)
	if err != nil || resp.StatusCode != http.StatusNotAcceptable {
		t.Errorf("microversion 2.0: %v %v", resp.StatusCode, err)
	}
	resp.Body.Close()
}

// TestRequestBodyLimitConfig: the api block of the agent config sets the
// body limit and the read and idle timeouts, so a client that sends slowly
// or idles is disconnected.
func TestRequestBodyLimitConfig(t *testing.T) {
	dir := t.TempDir()
	cfg := filepath.Join(dir, "agent.hcl")
	hcl := "api {\n  max_request_bytes = 4096\n  read_timeout = \"2s\"\n  idle_timeout = \"2s\"\n}\n"
	if err := os.WriteFile(cfg, []byte(hcl), 0o600); err != nil {
		t.Fatal(err)
	}
	a := startAgent(t, dir, "-config", cfg)
	body := `{"profile": {"name": "big", "metadata": {"k": "` + strings.Repeat("x", 5000) + `"}}}`
	status, eb := rawPost(t, a.addr+"/v1/profiles", strings.NewReader(body), -1)
	if status != http.StatusRequestEntityTooLarge || !strings.Contains(eb.Error.Message, "4096 bytes") {
		t.Errorf("a 5 KB body under a 4 KiB limit: want 413 naming 4096 bytes, got %d %+v", status, eb)
	}
	a.webProfile("small") // a body under the limit is served as usual

	host := strings.TrimPrefix(a.addr, "http://")
	closedWithin := func(what, send string, answered bool) {
		t.Helper()
		conn, err := net.Dial("tcp", host)
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		if err := conn.SetDeadline(time.Now().Add(30 * time.Second)); err != nil {
			t.Fatal(err)
		}
		if _, err := io.WriteString(conn, send); err != nil {
			t.Fatal(err)
		}
		br := bufio.NewReader(conn)
		if answered {
			resp, err := http.ReadResponse(br, nil)
			if err != nil {
				t.Fatalf("%s: %v", what, err)
			}
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
		}
		// The agent closes the connection; the 30-second deadline is
		// only there so a missing timeout fails instead of hanging.
		_, err = io.Copy(io.Discard, br)
		var ne net.Error
		if errors.As(err, &ne) && ne.Timeout() {
			t.Errorf("%s: the agent kept the connection open for 30 seconds", what)
		}
	}
	closedWithin("a body that never finishes", "POST /v1/profiles HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{", false)
	closedWithin("an idle keep-alive connection", "GET /v1/ HTTP/1.1\r\nHost: x\r\n\r\n", true)
}

// rawPost posts a body as given and returns the status and fault body.
func rawPost(t *testing.T, url string, body io.Reader, length int64) (int, api.ErrorBody) {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, url, body)
	if err != nil {
		t.Fatal(err)
	}
	req.ContentLength = length
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("POST %s: %v", url, err)
	}
	defer resp.Body.Close()
	var eb api.ErrorBody
	if resp.StatusCode >= 400 {
		if err := json.NewDecoder(resp.Body).Decode(&eb); err != nil {
			t.Fatalf("POST %s: HTTP %d with a body that is not Senlin's fault body: %v", url, resp.StatusCode, err)
		}
	}
	return resp.StatusCode, eb
}
