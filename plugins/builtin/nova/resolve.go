package nova

import (
	"context"
	"fmt"
	"net/url"
	"regexp"
	"strings"

	"github.com/gophercloud/gophercloud/v2"
	"github.com/gophercloud/gophercloud/v2/openstack/compute/v2/flavors"
	"github.com/gophercloud/gophercloud/v2/openstack/compute/v2/keypairs"
	"github.com/gophercloud/gophercloud/v2/openstack/compute/v2/servers"
	"github.com/gophercloud/gophercloud/v2/openstack/image/v2/images"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/networks"

	"github.com/grovehq/grove/plugins/sdk"
	"github.com/grovehq/grove/plugins/sdk/schema"
)

// resolved is a profile's names resolved to ids. A profile's properties
// never change under its id, so it is resolved once per profile and kept.
type resolved struct {
	c          *clients
	pr         Properties
	imageID    string
	flavorID   string
	flavorName string
	networks   []servers.Network
	// entries and specs are networks item by item: what Nova is asked for
	// and what Grove does in Neutron for it.
	entries []netEntry
	specs   []portSpec
}

var uuidRE = regexp.MustCompile(`^[0-9a-fA-F]{8}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{12}$`)

// found is one candidate of a name lookup.
type found struct{ id, name string }

// pick chooses the one candidate matching value by id, else by name; none
// or several is a diagnostic on the property naming the value.
func pick(field, what, value string, cands []found) (found, *schema.Diagnostic) {
	var byName []found
	for _, c := range cands {
		if c.id == value {
			return c, nil
		}
		if c.name == value {
			byName = append(byName, c)
		}
	}
	switch len(byName) {
	case 1:
		return byName[0], nil
	case 0:
		return found{}, &schema.Diagnostic{Field: field, Message: fmt.Sprintf("no %s %q was found.", what, value)}
	}
	ids := make([]string, len(byName))
	for i, c := range byName {
		ids[i] = c.id
	}
	return found{}, &schema.Diagnostic{Field: field, Message: fmt.Sprintf("%q names %d %ss (%s); give its id.", value, len(byName), what, strings.Join(ids, ", "))}
}

// lookupError is a diagnostic for a lookup the cloud failed (not a name
// it does not know).
// A cloud that does not answer is one diagnostic on properties.context.
func lookupError(ctx context.Context, field, what, value string, err error) *schema.Diagnostic {
	if isUnreachable(err) {
		return &schema.Diagnostic{Field: "properties.context", Message: fmt.Sprintf("the cloud does not answer (%v).", err)}
	}
	return &schema.Diagnostic{Field: field, Message: apiError(ctx, fmt.Sprintf("look up %s %q", what, value), err).Error()}
}

// resolve looks the profile's image, flavor, networks and key pair up.
// Each failure is a diagnostic on its property.
func resolve(ctx context.Context, c *clients, pr Properties) (*resolved, schema.Diagnostics) {
	r := &resolved{c: c, pr: pr}
	var ds schema.Diagnostics
	add := func(d *schema.Diagnostic) {
		if d != nil {
			ds = append(ds, *d)
		}
	}
	var d *schema.Diagnostic
	r.flavorID, r.flavorName, d = findFlavor(ctx, c, pr.Flavor)
	if d != nil && d.Field == "properties.context" {
		return nil, schema.Diagnostics{*d}
	}
	add(d)
	if pr.Image != "" {
		r.imageID, d = findImage(ctx, c, "properties.image", pr.Image)
		add(d)
	}
	if pr.KeyName != "" {
		if _, err := keypairs.Get(ctx, c.compute, pr.KeyName, nil).Extract(); err != nil {
			if gophercloud.ResponseCodeIs(err, 404) {
				add(&schema.Diagnostic{Field: "properties.key_name", Message: fmt.Sprintf("no key pair %q was found.", pr.KeyName)})
			} else {
				add(lookupError(ctx, "properties.key_name", "key pair", pr.KeyName, err))
			}
		}
	}
	for i, n := range pr.Networks {
		net := servers.Network{Port: n.Port, FixedIP: n.FixedIP}
		if n.Network != "" {
			net.UUID, d = findNetwork(ctx, c, fmt.Sprintf("properties.networks[%d].network", i), n.Network)
			add(d)
		}
		spec, pds := resolvePort(ctx, c, i, n, net.UUID)
		ds = append(ds, pds...)
		r.networks = append(r.networks, net)
		r.entries = append(r.entries, netEntry{Net: net, Key: spec.key(net)})
		r.specs = append(r.specs, spec)
	}
	if len(ds) > 0 {
		return nil, ds
	}
	return r, nil
}

func findFlavor(ctx context.Context, c *clients, value string) (id, name string, d *schema.Diagnostic) {
	const field = "properties.flavor"
	if f, err := flavors.Get(ctx, c.compute, value).Extract(); err == nil {
		return f.ID, f.Name, nil
	} else if !gophercloud.ResponseCodeIs(err, 404) {
		return "", "", lookupError(ctx, field, "flavor", value, err)
	}
	pages, err := flavors.ListDetail(c.compute, flavors.ListOpts{AccessType: flavors.AllAccess}).AllPages(ctx)
	if err != nil {
		// A project that may not list private flavors lists its own.
		pages, err = flavors.ListDetail(c.compute, nil).AllPages(ctx)
	}
	if err != nil {
		return "", "", lookupError(ctx, field, "flavor", value, err)
	}
	all, err := flavors.ExtractFlavors(pages)
	if err != nil {
		return "", "", lookupError(ctx, field, "flavor", value, err)
	}
	cands := make([]found, len(all))
	for i, f := range all {
		cands[i] = found{f.ID, f.Name}
	}
	f, d := pick(field, "flavor", value, cands)
	return f.id, f.name, d
}

// findImage resolves an image through Glance when the catalog has it,
// else through Nova's image proxy (API 2.1), which a cloud without
// Keystone still serves.
func findImage(ctx context.Context, c *clients, field, value string) (string, *schema.Diagnostic) {
	var cands []found
	if c.image != nil {
		if uuidRE.MatchString(value) {
			if img, err := images.Get(ctx, c.image, value).Extract(); err == nil {
				return img.ID, nil
			} else if !gophercloud.ResponseCodeIs(err, 404) {
				return "", lookupError(ctx, field, "image", value, err)
			}
		}
		pages, err := images.List(c.image, images.ListOpts{Name: value}).AllPages(ctx)
		if err != nil {
			return "", lookupError(ctx, field, "image", value, err)
		}
		all, err := images.ExtractImages(pages)
		if err != nil {
			return "", lookupError(ctx, field, "image", value, err)
		}
		for _, img := range all {
			cands = append(cands, found{img.ID, img.Name})
		}
	} else {
		l := c.legacy()
		if uuidRE.MatchString(value) {
			var one struct {
				Image struct{ ID, Name string } `json:"image"`
			}
			if _, err := l.Get(ctx, l.ServiceURL("images", value), &one, nil); err == nil {
				return one.Image.ID, nil
			} else if !gophercloud.ResponseCodeIs(err, 404) {
				return "", lookupError(ctx, field, "image", value, err)
			}
		}
		var list struct {
			Images []struct{ ID, Name string } `json:"images"`
		}
		if _, err := l.Get(ctx, l.ServiceURL("images")+"?name="+url.QueryEscape(value), &list, nil); err != nil {
			return "", lookupError(ctx, field, "image", value, err)
		}
		for _, img := range list.Images {
			cands = append(cands, found{img.ID, img.Name})
		}
	}
	f, d := pick(field, "image", value, cands)
	return f.id, d
}

// findNetwork resolves a network through Neutron when the catalog has it,
// else through Nova's network proxy (API 2.1).
func findNetwork(ctx context.Context, c *clients, field, value string) (string, *schema.Diagnostic) {
	var cands []found
	if c.network != nil {
		if uuidRE.MatchString(value) {
			if n, err := networks.Get(ctx, c.network, value).Extract(); err == nil {
				return n.ID, nil
			} else if !gophercloud.ResponseCodeIs(err, 404) {
				return "", lookupError(ctx, field, "network", value, err)
			}
		}
		pages, err := networks.List(c.network, networks.ListOpts{Name: value}).AllPages(ctx)
		if err != nil {
			return "", lookupError(ctx, field, "network", value, err)
		}
		all, err := networks.ExtractNetworks(pages)
		if err != nil {
			return "", lookupError(ctx, field, "network", value, err)
		}
		for _, n := range all {
			cands = append(cands, found{n.ID, n.Name})
		}
	} else {
		l := c.legacy()
		var list struct {
			Networks []struct {
				ID    string `json:"id"`
				Label string `json:"label"`
			} `json:"networks"`
		}
		if _, err := l.Get(ctx, l.ServiceURL("os-networks"), &list, nil); err != nil {
			return "", lookupError(ctx, field, "network", value, err)
		}
		for _, n := range list.Networks {
			cands = append(cands, found{n.ID, n.Label})
		}
	}
	f, d := pick(field, "network", value, cands)
	return f.id, d
}

// resolve resolves a spec's properties, once per profile id.
func (d *Driver) resolve(ctx context.Context, p sdk.Spec) (*resolved, error) {
	pr, err := propsOf(p)
	if err != nil {
		return nil, err
	}
	d.mu.Lock()
	r, ok := d.resolved[p.ID]
	d.mu.Unlock()
	if ok && p.ID != "" {
		return r, nil
	}
	c, err := d.connect(ctx, pr.Context)
	if err != nil {
		return nil, err
	}
	r, ds := resolve(ctx, c, pr)
	if len(ds) > 0 {
		if ctx.Err() != nil {
			return nil, sdk.Retryable(ctx.Err())
		}
		return nil, ds
	}
	if p.ID != "" {
		d.mu.Lock()
		d.resolved[p.ID] = r
		d.mu.Unlock()
	}
	return r, nil
}
