package sdk

import (
	"container/list"
	"sync"

	pb "github.com/grovehq/grove/plugins/proto"
	"github.com/grovehq/grove/plugins/sdk/schema"
)

// specCache remembers validated properties by their wire form. Every call
// carries its spec and the plugin validates what it is given, but the same
// profile arrives on call after call: decoding and validating it once keeps
// a call's cost close to a bare round trip.
type specCache struct {
	mu    sync.Mutex
	max   int
	order *list.List
	items map[string]*list.Element
}

type specEntry struct {
	key  string
	spec Spec
	err  error
}

func newSpecCache(max int) *specCache {
	return &specCache{max: max, order: list.New(), items: map[string]*list.Element{}}
}

func (c *specCache) get(p *pb.Spec, sc schema.Schema) (Spec, error) {
	key := p.GetType() + "\x00" + p.GetVersion() + "\x00" + p.GetId() + "\x00" + p.GetName() + "\x00" + string(p.GetPropertiesJson())
	c.mu.Lock()
	if el, ok := c.items[key]; ok {
		c.order.MoveToFront(el)
		e := el.Value.(*specEntry)
		c.mu.Unlock()
		return e.spec, e.err
	}
	c.mu.Unlock()
	sp := SpecFromProto(p)
	props, diags := sc.Validate("properties", sp.Properties)
	sp.Properties = props
	e := &specEntry{key: key, spec: sp, err: diags.Err()}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.items[key] = c.order.PushFront(e)
	for c.order.Len() > c.max {
		last := c.order.Back()
		c.order.Remove(last)
		delete(c.items, last.Value.(*specEntry).key)
	}
	return e.spec, e.err
}
