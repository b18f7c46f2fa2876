package sdk

import (
	"bytes"
	"hash/maphash"

	pb "github.com/grovehq/grove/plugins/sdk/proto"
	"github.com/grovehq/grove/plugins/sdk/schema"
)

// specCache remembers validated properties by their wire form. Every call
// carries its spec and the plugin validates what it is given, but the same
// profile arrives on call after call: decoding and validating it once keeps
// a call's cost close to a bare round trip. Entries are found by a hash of
// the wire form, so a lookup allocates nothing, and confirmed against it.
type specCache struct {
	seed  maphash.Seed
	specs *lru[uint64, *specEntry]
}

type specEntry struct {
	wire *pb.Spec
	spec Spec
	err  error
}

func newSpecCache(max int) *specCache {
	return &specCache{seed: maphash.MakeSeed(), specs: newLRU[uint64, *specEntry](max)}
}

func (c *specCache) get(p *pb.Spec, sc schema.Schema) (Spec, error) {
	var h maphash.Hash
	h.SetSeed(c.seed)
	for _, s := range []string{p.GetType(), p.GetVersion(), p.GetId(), p.GetName()} {
		h.WriteString(s)
		h.WriteByte(0)
	}
	h.Write(p.GetPropertiesJson())
	key := h.Sum64()
	if e, ok := c.specs.get(key); ok && sameSpec(e.wire, p) {
		return e.spec, e.err
	}
	sp := SpecFromProto(p)
	props, diags := sc.Validate("properties", sp.Properties)
	sp.Properties = props
	e := &specEntry{wire: &pb.Spec{Type: p.GetType(), Version: p.GetVersion(), Id: p.GetId(), Name: p.GetName(),
		PropertiesJson: bytes.Clone(p.GetPropertiesJson())}, spec: sp, err: diags.Err()}
	c.specs.put(key, e)
	return e.spec, e.err
}

func sameSpec(a, b *pb.Spec) bool {
	return a.GetType() == b.GetType() && a.GetVersion() == b.GetVersion() && a.GetId() == b.GetId() &&
		a.GetName() == b.GetName() && bytes.Equal(a.GetPropertiesJson(), b.GetPropertiesJson())
}
