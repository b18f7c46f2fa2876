package engine

import (
	"testing"

	"github.com/grovehq/grove/core/model"
)

// TestDownHostsUpdate: an agent's host loop wakes its health round when a
// host is down that was not at its last look, whoever marked it; the first
// look, a host still down, and a host back up wake nothing.
func TestDownHostsUpdate(t *testing.T) {
	hosts := func(states ...string) []*model.Host {
		var out []*model.Host
		for i, s := range states {
			out = append(out, &model.Host{Name: string(rune('a' + i)), State: s})
		}
		return out
	}
	up, down, maint := model.HostUp, model.HostDown, model.HostMaintenance
	var d downHosts
	for i, step := range []struct {
		hosts []*model.Host
		want  bool
	}{
		{hosts(up, down, up), false},      // first look: b was down before
		{hosts(up, down, up), false},      // b still down
		{hosts(up, down, down), true},     // c went down
		{hosts(up, down, down), false},    // no change
		{hosts(up, up, down), false},      // b is back
		{hosts(up, down, down), true},     // b down again
		{hosts(maint, down, down), false}, // maintenance is not down
		{hosts(down, down, down), true},   // a went down from maintenance
		{hosts(), false},                  // every host gone
		{hosts(down), true},               // a new host a, down
	} {
		if got := d.update(step.hosts); got != step.want {
			t.Errorf("look %d: update says %v, want %v", i+1, got, step.want)
		}
	}
}
