package hcl

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"reflect"
	"slices"
	"sort"
	"strings"

	"github.com/grovehq/grove/api"
	"github.com/grovehq/grove/plugins/sdk/schema"
)

// Change actions.
const (
	Create  = "create"
	Update  = "update"
	Replace = "replace"
	Delete  = "delete"
	// Adopt records as the set's an object that exists with the desired
	// content but no set owns (an apply that stopped between creating it
	// and recording it, or one created by hand).
	Adopt = "adopt"
)

// FieldChange is one attribute that differs.
type FieldChange struct {
	Path   string `json:"path"`
	Old    any    `json:"old"`
	New    any    `json:"new"`
	Forces bool   `json:"forces_replacement,omitempty"`
}

// Change is one step of a plan.
type Change struct {
	Action string `json:"action"`
	Ref    Ref    `json:"ref"`
	ID     string `json:"id,omitempty"`   // the existing object (update, replace, delete)
	Name   string `json:"name,omitempty"` // the agent's name for the object
	// Old is the agent's name of the object a replace removes.
	Old    string        `json:"old,omitempty"`
	Fields []FieldChange `json:"fields,omitempty"`
}

// Plan is what apply will do, and what it was computed against.
type Plan struct {
	Version int    `json:"version"`
	Set     string `json:"set"`
	// Fingerprint digests the agent state the plan was computed from; apply
	// refuses a saved plan when it no longer matches.
	Fingerprint string    `json:"fingerprint"`
	Changes     []Change  `json:"changes"`
	Desired     *Snapshot `json:"desired"`
	Destroy     bool      `json:"destroy,omitempty"`
	// Keep holds the agent ids of the profiles and policies that exist
	// as desired, by reference ("profile.web"): clusters are given them
	// by id, since two objects may share a name. A plan saved before it
	// existed names them by their agent names.
	Keep map[string]string `json:"keep,omitempty"`
}

// Snapshot is the evaluated definition a plan applies.
type Snapshot struct {
	Profiles map[string]*Profile `json:"profiles"`
	Policies map[string]*Policy  `json:"policies"`
	Clusters map[string]*Cluster `json:"clusters"`
	// Milestones are applied by name; the agent does not record them as a
	// set's objects.
	Milestones map[string]*Milestone `json:"milestones,omitempty"`
	Order      []Ref                 `json:"order"`
}

// ErrDamagedPlan is returned for a saved plan that `grove plan -out` cannot
// have written: edited, truncated or made by another program.
var ErrDamagedPlan = errors.New("the saved plan is damaged")

// Check refuses a plan whose desired state does not hold together: every
// block in Order once, each with its entry under its own name, every entry
// in Order, and what clusters reference declared. Apply looks objects up by
// these names, so a saved plan is checked before anything is sent.
func (p *Plan) Check() error {
	bad := func(format string, args ...any) error {
		return fmt.Errorf("%w: %s; make it again with `grove plan -out`", ErrDamagedPlan, fmt.Sprintf(format, args...))
	}
	if p.Version != 1 || p.Desired == nil {
		return bad("it is not a version 1 plan with a desired state")
	}
	s := p.Desired
	if p.Set == "" {
		return bad("it names no definition set")
	}
	seen := map[Ref]bool{}
	for _, ref := range s.Order {
		name, ok := s.declared(ref)
		switch {
		case !slices.Contains([]string{"profile", "policy", "cluster", "milestone"}, ref.Kind):
			return bad("its order lists a %q, which is not a profile, policy, cluster or milestone", ref.Kind)
		case !ok:
			return bad("its order lists %s, which its desired state does not hold", ref)
		case name != ref.Name:
			return bad("%s of its desired state is named %q", ref, name)
		case seen[ref]:
			return bad("its order lists %s twice", ref)
		}
		seen[ref] = true
	}
	count := len(s.Profiles) + len(s.Policies) + len(s.Clusters) + len(s.Milestones)
	if count != len(seen) {
		return bad("its desired state holds %d blocks but its order lists %d", count, len(seen))
	}
	for _, name := range sortedKeys(keysOfClusters(s.Clusters)) {
		c := s.Clusters[name]
		if !seen[Ref{Kind: "profile", Name: c.Profile}] {
			return bad("cluster.%s uses profile %q, which its desired state does not hold", name, c.Profile)
		}
		for _, b := range c.Bindings {
			if !seen[Ref{Kind: "policy", Name: b.Policy}] {
				return bad("cluster.%s binds policy %q, which its desired state does not hold", name, b.Policy)
			}
		}
	}
	for _, c := range p.Changes {
		if !slices.Contains([]string{Create, Update, Replace, Delete, Adopt}, c.Action) {
			return bad("it has a change %q of %s, which is not create, update, replace, delete or adopt", c.Action, c.Ref)
		}
	}
	return nil
}

// declared answers the name a desired block has under its own, and whether
// the snapshot holds it.
func (s *Snapshot) declared(ref Ref) (string, bool) {
	switch ref.Kind {
	case "profile":
		if p := s.Profiles[ref.Name]; p != nil {
			return p.Name, true
		}
	case "policy":
		if p := s.Policies[ref.Name]; p != nil {
			return p.Name, true
		}
	case "cluster":
		if c := s.Clusters[ref.Name]; c != nil {
			return c.Name, true
		}
	case "milestone":
		if m := s.Milestones[ref.Name]; m != nil {
			return m.Name, true
		}
	}
	return "", false
}

// Empty reports whether the plan changes nothing.
func (p *Plan) Empty() bool { return len(p.Changes) == 0 }

// AgentName is the name an object has in the agent. Profiles and policies
// cannot change their spec in place, so their agent names carry a digest of
// the spec: a changed spec is a new object, which is what replace means.
func AgentName(kind, name, typ, version string, props map[string]any) string {
	if kind == "cluster" {
		return name
	}
	b, _ := json.Marshal(map[string]any{"type": typ, "version": version, "properties": props})
	sum := sha256.Sum256(b)
	return name + "-" + hex.EncodeToString(sum[:])[:8]
}

func (s *Snapshot) agentName(r Ref) string {
	switch r.Kind {
	case "profile":
		p := s.Profiles[r.Name]
		return AgentName("profile", p.Name, p.Type, p.Version, p.Properties)
	case "policy":
		p := s.Policies[r.Name]
		return AgentName("policy", p.Name, p.Type, p.Version, p.Properties)
	}
	return r.Name
}

// remote is what the agent holds for a set.
type remote struct {
	owned    map[Ref][]api.SetObject
	profiles map[string]*api.Profile
	policies map[string]*api.Policy
	clusters map[string]*api.Cluster
	bindings map[string][]api.ClusterPolicy
	// deps are the groups each cluster (by id) declared on itself.
	deps map[string][]api.DependencyGroup
	// dependents are the dependents each cluster (by id) declared.
	dependents map[string][]api.DependencyGroup
	// milestones are the agent's milestones the definition names, by name.
	milestones map[string]*api.Milestone
	digest     []string
}

func get(ctx context.Context, c *api.Client, path, key string, out any) (bool, error) {
	var body map[string]json.RawMessage
	_, err := c.Do(ctx, http.MethodGet, path, nil, nil, &body)
	if api.IsNotFound(err) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	return true, json.Unmarshal(body[key], out)
}

func fetch(ctx context.Context, c *api.Client, set string) (*remote, error) {
	r := &remote{owned: map[Ref][]api.SetObject{}, profiles: map[string]*api.Profile{}, policies: map[string]*api.Policy{},
		clusters: map[string]*api.Cluster{}, bindings: map[string][]api.ClusterPolicy{},
		deps: map[string][]api.DependencyGroup{}, dependents: map[string][]api.DependencyGroup{}, milestones: map[string]*api.Milestone{}}
	var st api.Set
	if _, err := get(ctx, c, "/v1/sets/"+url.PathEscape(set), "set", &st); err != nil {
		return nil, fmt.Errorf("read definition set %q from the agent: %w", set, err)
	}
	for _, o := range st.Objects {
		if err := r.load(ctx, c, o.Kind, o.ID); err != nil {
			return nil, err
		}
		ref := Ref{Kind: o.Kind, Name: o.Name}
		r.owned[ref] = append(r.owned[ref], o)
	}
	// A cluster's current profile tells whether a new one changes its type.
	for _, cl := range r.clusters {
		if _, ok := r.profiles[cl.ProfileID]; !ok {
			if err := r.load(ctx, c, "profile", cl.ProfileID); err != nil {
				return nil, err
			}
		}
	}
	return r, nil
}

// load reads one object by id (or name) into the remote state; it reports
// whether it exists.
func (r *remote) load(ctx context.Context, c *api.Client, kind, ident string) error {
	path := "/v1/" + map[string]string{"profile": "profiles", "policy": "policies", "cluster": "clusters"}[kind] + "/" + url.PathEscape(ident)
	var err error
	var found bool
	var id, digest string
	switch kind {
	case "profile":
		var p api.Profile
		if found, err = get(ctx, c, path, "profile", &p); found {
			r.profiles[p.ID], id, digest = &p, p.ID, p.Name+mustJSON(p.Metadata)
		}
	case "policy":
		var p api.Policy
		if found, err = get(ctx, c, path, "policy", &p); found {
			r.policies[p.ID], id, digest = &p, p.ID, p.Name
		}
	case "milestone":
		var m api.Milestone
		if found, err = get(ctx, c, "/v1/milestones/"+url.PathEscape(ident), "milestone", &m); found {
			r.milestones[m.Name], id, digest = &m, m.ID, mustJSON(m.Clusters)
		}
	case "cluster":
		var cl api.Cluster
		if found, err = get(ctx, c, path, "cluster", &cl); found {
			var bs []api.ClusterPolicy
			if _, err = get(ctx, c, path+"/policies", "cluster_policies", &bs); err != nil {
				return err
			}
			var d api.ClusterDependencies
			if _, err = get(ctx, c, path+"/dependencies", "dependencies", &d); err != nil {
				return err
			}
			var own []api.DependencyGroup
			for _, g := range d.Groups {
				if g.DeclaredBy == cl.Name {
					own = append(own, g.DependencyGroup)
				}
			}
			r.clusters[cl.ID], r.bindings[cl.ID], r.deps[cl.ID], r.dependents[cl.ID], id = &cl, bs, own, d.Dependents, cl.ID
			digest = fmt.Sprintf("%s|%d|%d|%d|%d|%s|%s|%s|%s|%s", cl.ProfileName, cl.DesiredCapacity, cl.MinSize, cl.MaxSize, cl.Timeout,
				mustJSON(cl.Metadata), mustJSON(cl.Config), mustJSON(bs), mustJSON(own), mustJSON(d.Dependents))
		}
	}
	if err != nil {
		return fmt.Errorf("read %s %s: %w", kind, ident, err)
	}
	r.digest = append(r.digest, kind+"|"+ident+"|"+id+"|"+digest)
	return nil
}

func (r *remote) fingerprint() string {
	d := append([]string{}, r.digest...)
	sort.Strings(d)
	sum := sha256.Sum256([]byte(strings.Join(d, "\n")))
	return hex.EncodeToString(sum[:])
}

func mustJSON(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// MakePlan compares a definition with what the agent holds. With destroy it
// plans the removal of everything the set owns.
func MakePlan(ctx context.Context, c *api.Client, def *Definition, destroy bool) (*Plan, error) {
	snap := &Snapshot{Profiles: def.Profiles, Policies: def.Policies, Clusters: def.Clusters, Milestones: def.Milestones, Order: def.Order}
	if destroy {
		snap = &Snapshot{Profiles: map[string]*Profile{}, Policies: map[string]*Policy{}, Clusters: map[string]*Cluster{}}
	}
	r, err := fetch(ctx, c, def.Set)
	if err != nil {
		return nil, err
	}
	plan := &Plan{Version: 1, Set: def.Set, Desired: snap, Destroy: destroy}
	// Desired objects the set does not own yet must not collide with an
	// object of another set, or of none.
	for _, ref := range snap.Order {
		name := snap.agentName(ref)
		if ref.Kind == "milestone" {
			// Milestones are matched by name, not owned by a set.
			if err := r.load(ctx, c, ref.Kind, name); err != nil {
				return nil, err
			}
			continue
		}
		if ownsName(r, ref, name) {
			continue
		}
		if err := r.load(ctx, c, ref.Kind, name); err != nil {
			return nil, err
		}
		id := r.idByName(ref.Kind, name)
		if id == "" {
			continue
		}
		var owner api.SetObject
		found, err := get(ctx, c, "/v1/owners/"+ref.Kind+"/"+id, "owner", &owner)
		if err != nil {
			return nil, err
		}
		switch {
		case found && owner.Set != def.Set:
			return nil, fmt.Errorf("%s %q already exists and is owned by definition set %q; apply does not take over another set's objects (rename it here, or destroy it there)", ref.Kind, name, owner.Set)
		case !found && ref.Kind == "cluster":
			return nil, fmt.Errorf("cluster %q already exists outside any definition set; rename the cluster here or delete the existing one", name)
		}
	}
	var dropMilestones []Change
	if destroy {
		// Milestones belong to no set (they are matched by name), so the
		// set's objects do not list them: destroy removes those the
		// definition declares, before the clusters they name.
		for _, name := range sortedKeys(keysOfMilestones(def.Milestones)) {
			if err := r.load(ctx, c, "milestone", name); err != nil {
				return nil, err
			}
			if m := r.milestones[name]; m != nil {
				dropMilestones = append(dropMilestones, Change{Action: Delete, Ref: Ref{Kind: "milestone", Name: name}, ID: m.ID, Name: name})
			}
		}
	}
	plan.Fingerprint = r.fingerprint()
	plan.Changes = append(diff(r, snap), dropMilestones...)
	plan.Keep = keptIDs(r, snap)
	return plan, nil
}

func keysOfMilestones(m map[string]*Milestone) map[string]bool {
	out := map[string]bool{}
	for k := range m {
		out[k] = true
	}
	return out
}

// ownsName reports whether the set owns the object with this agent name.
func ownsName(r *remote, ref Ref, name string) bool {
	for _, o := range r.owned[ref] {
		if r.nameOf(ref.Kind, o.ID) == name {
			return true
		}
	}
	return false
}

func (r *remote) nameOf(kind, id string) string {
	switch kind {
	case "profile":
		if p := r.profiles[id]; p != nil {
			return p.Name
		}
	case "policy":
		if p := r.policies[id]; p != nil {
			return p.Name
		}
	case "cluster":
		if c := r.clusters[id]; c != nil {
			return c.Name
		}
	}
	return ""
}

func (r *remote) idByName(kind, name string) string {
	switch kind {
	case "profile":
		for id, p := range r.profiles {
			if p.Name == name {
				return id
			}
		}
	case "policy":
		for id, p := range r.policies {
			if p.Name == name {
				return id
			}
		}
	case "cluster":
		for id, c := range r.clusters {
			if c.Name == name {
				return id
			}
		}
	}
	return ""
}

// current picks the object a desired block is: the set's object with its
// agent name, or else one no set owns with that name (adopted). Two applies
// that raced may each have created and recorded an object of the same
// name: the one a cluster of the set uses is kept (a profile in use cannot
// be deleted), else the smallest id, so every plan picks the same; the
// others are deleted as the set's objects the definition does not keep.
func (r *remote) current(ref Ref, name string) (id string, owned bool) {
	used := map[string]bool{}
	for cid, cl := range r.clusters {
		used[cl.ProfileID] = true
		for _, b := range r.bindings[cid] {
			used[b.PolicyID] = true
		}
	}
	for _, o := range r.owned[ref] {
		if r.nameOf(ref.Kind, o.ID) != name {
			continue
		}
		if id == "" || used[o.ID] && !used[id] || used[o.ID] == used[id] && o.ID < id {
			id = o.ID
		}
	}
	if id != "" {
		return id, true
	}
	return r.idByName(ref.Kind, name), false
}

// keptIDs are the agent ids of the profiles and policies the desired state
// keeps as they are (owned, or adopted), by reference ("profile.web"):
// apply names them to clusters by id, since two objects may share a name.
func keptIDs(r *remote, s *Snapshot) map[string]string {
	out := map[string]string{}
	for _, ref := range s.Order {
		if ref.Kind != "profile" && ref.Kind != "policy" {
			continue
		}
		if id, _ := r.current(ref, s.agentName(ref)); id != "" {
			out[ref.String()] = id
		}
	}
	return out
}

func diff(r *remote, s *Snapshot) []Change {
	var changes []Change
	keep := map[string]bool{} // object ids the desired state keeps
	for _, ref := range s.Order {
		name := s.agentName(ref)
		if ref.Kind == "milestone" {
			if c := milestoneChange(r, s, ref); c != nil {
				changes = append(changes, *c)
			}
			continue
		}
		// current is the object with the current agent name, owned or
		// (same content, unowned) adopted at apply.
		current, owned := r.current(ref, name)
		var others []api.SetObject
		for _, o := range r.owned[ref] {
			if n := r.nameOf(ref.Kind, o.ID); n != "" && n != name {
				others = append(others, o) // owned objects gone from the agent have no name
			}
		}
		switch {
		case current != "" && ref.Kind == "cluster":
			keep[current] = true
			if c := clusterChange(r, s, ref, current); c != nil {
				changes = append(changes, *c)
			}
		case current != "":
			keep[current] = true
			if !owned {
				changes = append(changes, Change{Action: Adopt, Ref: ref, ID: current, Name: name})
			}
			if ref.Kind == "profile" {
				want := s.Profiles[ref.Name].Metadata
				if p := r.profiles[current]; want != nil && !subset(want, p.Metadata) {
					changes = append(changes, Change{Action: Update, Ref: ref, ID: current, Name: name, Fields: []FieldChange{{Path: "metadata", Old: p.Metadata, New: want}}})
				}
			}
		case len(others) > 0:
			changes = append(changes, Change{Action: Replace, Ref: ref, ID: others[0].ID, Name: name, Old: r.nameOf(ref.Kind, others[0].ID), Fields: specFields(r, s, ref, others[0].ID)})
		default:
			changes = append(changes, Change{Action: Create, Ref: ref, Name: name})
		}
	}
	// What the set owns and the definition no longer keeps goes, clusters
	// first so that nothing still uses the profiles and policies deleted.
	var dels []Change
	for ref, objs := range r.owned {
		for _, o := range objs {
			if keep[o.ID] || r.nameOf(ref.Kind, o.ID) == "" {
				continue
			}
			if replaced(changes, ref, o.ID) {
				continue
			}
			dels = append(dels, Change{Action: Delete, Ref: ref, ID: o.ID, Name: r.nameOf(ref.Kind, o.ID)})
		}
	}
	rank := map[string]int{"cluster": 0, "policy": 1, "profile": 2}
	sort.Slice(dels, func(i, j int) bool {
		if rank[dels[i].Ref.Kind] != rank[dels[j].Ref.Kind] {
			return rank[dels[i].Ref.Kind] < rank[dels[j].Ref.Kind]
		}
		if dels[i].Name != dels[j].Name {
			return dels[i].Name < dels[j].Name
		}
		// Two objects of one name (two applies that raced) go in the order
		// of their ids, so that the same agent state gives the same plan.
		return dels[i].ID < dels[j].ID
	})
	return append(changes, dels...)
}

func replaced(changes []Change, ref Ref, id string) bool {
	for _, c := range changes {
		if c.Action == Replace && c.Ref == ref && c.ID == id {
			return true
		}
	}
	return false
}

// specFields names the spec fields whose change forces a replacement.
func specFields(r *remote, s *Snapshot, ref Ref, oldID string) []FieldChange {
	var oldSpec map[string]any
	var typ, version string
	var props map[string]any
	switch ref.Kind {
	case "profile":
		if p := r.profiles[oldID]; p != nil {
			oldSpec = p.Spec
		}
		d := s.Profiles[ref.Name]
		typ, version, props = d.Type, d.Version, d.Properties
	case "policy":
		if p := r.policies[oldID]; p != nil {
			oldSpec = p.Spec
		}
		d := s.Policies[ref.Name]
		typ, version, props = d.Type, d.Version, d.Properties
	}
	var out []FieldChange
	if oldSpec["type"] != typ {
		out = append(out, FieldChange{Path: "type", Old: oldSpec["type"], New: typ, Forces: true})
	}
	if fmt.Sprint(oldSpec["version"]) != version {
		out = append(out, FieldChange{Path: "version", Old: oldSpec["version"], New: version, Forces: true})
	}
	oldProps, _ := oldSpec["properties"].(map[string]any)
	keys := map[string]bool{}
	for k := range oldProps {
		keys[k] = true
	}
	for k := range props {
		keys[k] = true
	}
	// The API shows a sensitive value as "(sensitive)": such a property is
	// compared as shown, and its new values are shown no more than the old.
	var hidden []FieldChange
	for _, k := range sortedKeys(keys) {
		oldV, newV := normal(oldProps[k]), normal(props[k])
		if !hasRedacted(oldV) {
			if !reflect.DeepEqual(oldV, newV) {
				out = append(out, FieldChange{Path: "properties." + k, Old: oldProps[k], New: props[k], Forces: true})
			}
			continue
		}
		fc := FieldChange{Path: "properties." + k, Old: oldProps[k], New: maskLike(newV, nil), Forces: true}
		if !reflect.DeepEqual(oldV, maskLike(newV, oldV)) {
			out = append(out, fc)
		} else {
			hidden = append(hidden, fc)
		}
	}
	if len(out) == 0 {
		// The spec changed (its digest did) where only its sensitive
		// values can tell.
		return hidden
	}
	return out
}

// redacted is what the API shows in place of a sensitive value.
const redacted = "(sensitive)"

func hasRedacted(v any) bool {
	switch x := v.(type) {
	case string:
		return x == redacted
	case map[string]any:
		for _, e := range x {
			if hasRedacted(e) {
				return true
			}
		}
	case []any:
		for _, e := range x {
			if hasRedacted(e) {
				return true
			}
		}
	}
	return false
}

// maskLike returns v with "(sensitive)" wherever shown has it, and every
// scalar in a map or list shown does not describe (a new key of a sensitive
// map) masked too.
func maskLike(v, shown any) any {
	if shown == redacted {
		return redacted
	}
	switch x := v.(type) {
	case map[string]any:
		sm, _ := shown.(map[string]any)
		out := make(map[string]any, len(x))
		for k, e := range x {
			s, ok := sm[k]
			if !ok {
				s = redacted
			}
			out[k] = maskLike(e, s)
		}
		return out
	case []any:
		sl, _ := shown.([]any)
		out := make([]any, len(x))
		for i, e := range x {
			var s any = redacted
			if i < len(sl) {
				s = sl[i]
			}
			out[i] = maskLike(e, s)
		}
		return out
	}
	if shown == nil {
		return redacted
	}
	return v
}

// maskSensitive returns v, described by p, with what p marks sensitive shown
// as "(sensitive)", as the API shows it: a sensitive map keeps its keys.
func maskSensitive(p *schema.Property, v any) any {
	if p == nil || v == nil {
		return v
	}
	if p.Sensitive {
		return maskLike(normal(v), nil)
	}
	m, ok := normal(v).(map[string]any)
	if !ok || p.Schema == nil {
		return v
	}
	out := make(map[string]any, len(m))
	for k, e := range m {
		out[k] = maskSensitive(p.Schema[k], e)
	}
	return out
}

// normal makes JSON-decoded and HCL-decoded values comparable.
func normal(v any) any {
	b, _ := json.Marshal(v)
	var out any
	_ = json.Unmarshal(b, &out)
	return out
}

func sortedKeys(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// subset reports whether every key of want has the same value in have.
func subset(want, have map[string]any) bool {
	for k, v := range want {
		if !reflect.DeepEqual(normal(v), normal(have[k])) {
			return false
		}
	}
	return true
}

func clusterChange(r *remote, s *Snapshot, ref Ref, id string) *Change {
	rc := r.clusters[id]
	d := s.Clusters[ref.Name]
	var fields []FieldChange
	wantProfile := s.agentName(Ref{Kind: "profile", Name: d.Profile})
	if rc.ProfileName != wantProfile {
		fc := FieldChange{Path: "profile", Old: rc.ProfileName, New: wantProfile}
		// A cluster keeps its profile type: another type forces replacement.
		if old := r.profiles[rc.ProfileID]; old != nil && old.Spec["type"] != s.Profiles[d.Profile].Type {
			fc.Forces = true
		}
		fields = append(fields, fc)
	}
	ints := []struct {
		path string
		want *int
		have int
	}{{"desired_capacity", d.DesiredCapacity, rc.DesiredCapacity}, {"min_size", d.MinSize, rc.MinSize}, {"max_size", d.MaxSize, rc.MaxSize}, {"timeout", d.Timeout, rc.Timeout}}
	for _, f := range ints {
		if f.want != nil && *f.want != f.have {
			fields = append(fields, FieldChange{Path: f.path, Old: f.have, New: *f.want})
		}
	}
	if d.Metadata != nil && !subset(d.Metadata, rc.Metadata) {
		fields = append(fields, FieldChange{Path: "metadata", Old: rc.Metadata, New: d.Metadata})
	}
	keys := map[string]bool{}
	for k := range d.Config {
		keys[k] = true
	}
	for k, v := range rc.Config {
		if strings.HasPrefix(k, "grove.") && v != nil {
			keys[k] = true // a setting removed from the definition is cleared
		}
	}
	for _, k := range sortedKeys(keys) {
		if !reflect.DeepEqual(normal(d.Config[k]), normal(rc.Config[k])) {
			fields = append(fields, FieldChange{Path: "config." + k, Old: rc.Config[k], New: d.Config[k]})
		}
	}
	if want, have := dependsOnView(d.DependsOn), dependsOnAPIView(r.deps[id]); !reflect.DeepEqual(normal(want), normal(have)) {
		fields = append(fields, FieldChange{Path: "depends_on", Old: have, New: want})
	}
	if want, have := dependentsView(d.Dependents), dependentsView(apiGroups(r.dependents[id])); !reflect.DeepEqual(normal(want), normal(have)) {
		fields = append(fields, FieldChange{Path: "dependents", Old: have, New: want})
	}
	have := map[string]api.ClusterPolicy{}
	for _, b := range r.bindings[id] {
		have[b.PolicyName] = b
	}
	want := map[string]Binding{}
	for _, b := range d.Bindings {
		want[s.agentName(Ref{Kind: "policy", Name: b.Policy})] = b
	}
	for _, name := range sortedKeys(union(have, want)) {
		hb, hok := have[name]
		wb, wok := want[name]
		switch {
		case !hok:
			fields = append(fields, FieldChange{Path: "binding." + name, Old: nil, New: bindingView(wb.Enabled, wb.Priority)})
		case !wok:
			fields = append(fields, FieldChange{Path: "binding." + name, Old: bindingView(hb.Enabled, &hb.Priority), New: nil})
		case hb.Enabled != wb.Enabled || wb.Priority != nil && *wb.Priority != hb.Priority:
			fields = append(fields, FieldChange{Path: "binding." + name, Old: bindingView(hb.Enabled, &hb.Priority), New: bindingView(wb.Enabled, wb.Priority)})
		}
	}
	if len(fields) == 0 {
		return nil
	}
	action := Update
	for _, f := range fields {
		if f.Forces {
			action = Replace
		}
	}
	return &Change{Action: action, Ref: ref, ID: id, Name: ref.Name, Fields: fields}
}

func union(a map[string]api.ClusterPolicy, b map[string]Binding) map[string]bool {
	out := map[string]bool{}
	for k := range a {
		out[k] = true
	}
	for k := range b {
		out[k] = true
	}
	return out
}

func bindingView(enabled bool, priority *int) map[string]any {
	m := map[string]any{"enabled": enabled}
	if priority != nil {
		m["priority"] = *priority
	}
	return m
}

// Render prints a plan as Terraform does: one block per change, then a
// summary line.
func (p *Plan) Render(w io.Writer) {
	if p.Empty() {
		fmt.Fprintf(w, "No changes. The agent matches definition set %q.\n", p.Set)
		return
	}
	fmt.Fprintf(w, "Grove will perform the following actions on definition set %q:\n\n", p.Set)
	counts := map[string]int{}
	for _, c := range p.Changes {
		counts[c.Action]++
		sym, verb := map[string]string{Create: "+", Update: "~", Replace: "-/+", Delete: "-", Adopt: "&"}[c.Action], map[string]string{
			Create: "will be created", Update: "will be updated in place", Replace: "must be replaced", Delete: "will be destroyed",
			Adopt: "will be adopted: it exists with this content and no set owns it"}[c.Action]
		fmt.Fprintf(w, "  # %s %s\n", c.Ref, verb)
		fmt.Fprintf(w, "%3s %s %q", sym, c.Ref.Kind, c.Ref.Name)
		if c.Name != "" && c.Name != c.Ref.Name {
			fmt.Fprintf(w, " (%s)", c.Name)
		}
		fmt.Fprintln(w, " {")
		if c.Action == Create {
			for _, line := range createLines(p.Desired, c.Ref) {
				fmt.Fprintf(w, "      + %s\n", line)
			}
		}
		for _, f := range c.Fields {
			note := ""
			if f.Forces {
				note = " # forces replacement"
			}
			switch {
			case f.Old == nil:
				fmt.Fprintf(w, "      + %s = %s%s\n", f.Path, show(f.New), note)
			case f.New == nil:
				fmt.Fprintf(w, "      - %s = %s%s\n", f.Path, show(f.Old), note)
			default:
				fmt.Fprintf(w, "      ~ %s = %s -> %s%s\n", f.Path, show(f.Old), show(f.New), note)
			}
		}
		fmt.Fprintln(w, "    }")
		fmt.Fprintln(w)
	}
	adopt := ""
	if counts[Adopt] > 0 {
		adopt = fmt.Sprintf(", %d to adopt", counts[Adopt])
	}
	fmt.Fprintf(w, "Plan: %d to add, %d to change, %d to replace, %d to destroy%s.\n", counts[Create], counts[Update], counts[Replace], counts[Delete], adopt)
	if waves := p.Desired.StartOrder(); waves != nil {
		parts := make([]string, len(waves))
		for i, w := range waves {
			parts[i] = strings.Join(w, ", ")
		}
		fmt.Fprintf(w, "Start order (depends_on): %s.\n", strings.Join(parts, " → "))
	}
}

func createLines(s *Snapshot, ref Ref) []string {
	var out []string
	add := func(k string, v any) {
		if v != nil && !reflect.ValueOf(v).IsZero() {
			out = append(out, fmt.Sprintf("%s = %s", k, show(v)))
		}
	}
	spec := func(typ, version string, props map[string]any, sc schema.Schema) {
		add("type", typ)
		add("version", version)
		for _, k := range sortedKeys(keysOf(props)) {
			add("properties."+k, maskSensitive(sc[k], props[k]))
		}
	}
	switch ref.Kind {
	case "profile":
		p := s.Profiles[ref.Name]
		spec(p.Type, p.Version, p.Properties, p.schema)
	case "policy":
		p := s.Policies[ref.Name]
		spec(p.Type, p.Version, p.Properties, p.schema)
	case "cluster":
		c := s.Clusters[ref.Name]
		add("profile", s.agentName(Ref{Kind: "profile", Name: c.Profile}))
		for k, v := range map[string]*int{"desired_capacity": c.DesiredCapacity, "min_size": c.MinSize, "max_size": c.MaxSize, "timeout": c.Timeout} {
			if v != nil {
				out = append(out, fmt.Sprintf("%s = %d", k, *v))
			}
		}
		for _, k := range sortedKeys(keysOf(c.Config)) {
			add("config."+k, c.Config[k])
		}
		for _, b := range c.Bindings {
			out = append(out, fmt.Sprintf("binding.%s = %s", s.agentName(Ref{Kind: "policy", Name: b.Policy}), show(bindingView(b.Enabled, b.Priority))))
		}
		for _, g := range c.DependsOn {
			out = append(out, fmt.Sprintf("depends_on.%s = %s", g.Name, show(map[string]any{"grouping": g.Grouping, "restart_on": g.RestartOn, "members": g.Members})))
		}
		for _, g := range c.Dependents {
			out = append(out, fmt.Sprintf("dependent.%s = %s", g.Name, show(map[string]any{"grouping": g.Grouping, "restart_on": g.RestartOn, "members": g.Members})))
		}
	case "milestone":
		add("clusters", s.Milestones[ref.Name].Clusters)
	}
	sort.Strings(out)
	return out
}

func keysOf(m map[string]any) map[string]bool {
	out := map[string]bool{}
	for k := range m {
		out[k] = true
	}
	return out
}

func show(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(b)
}
