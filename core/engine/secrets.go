package engine

import (
	"context"
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"sort"
	"strings"

	"github.com/grovehq/grove/core/model"
	"github.com/grovehq/grove/core/store"
	"github.com/grovehq/grove/plugins/sdk"
	"github.com/grovehq/grove/plugins/sdk/schema"
)

// Redacted is what the API shows in place of a sensitive property's value.
const Redacted = "(sensitive)"

// sealedPrefix begins every value the engine encrypted. What follows is the
// base64 (standard, unpadded) of the GCM nonce and ciphertext of the value's
// JSON encoding, so a sealed number opens as a number again.
const sealedPrefix = "grove:sealed:v1:"

// SecretsKeySize is the length of the key for sensitive values: AES-256.
const SecretsKeySize = 32

// secrets seals and opens sensitive property values with AES-256-GCM. The
// object's id is the additional data, so a sealed value copied into another
// profile in the store does not open there.
type secrets struct{ aead cipher.AEAD }

func newSecrets(key []byte) (*secrets, error) {
	if len(key) != SecretsKeySize {
		return nil, fmt.Errorf("the secrets key must be %d bytes, got %d", SecretsKeySize, len(key))
	}
	block, err := aes.NewCipher(key)
	if err != nil {
		return nil, err
	}
	aead, err := cipher.NewGCM(block)
	if err != nil {
		return nil, err
	}
	return &secrets{aead: aead}, nil
}

// LoadSecretsKey reads the key for sensitive values from path: the base64
// of 32 random bytes. When the file does not exist and create is true, a
// new key is written there, readable by its owner only; the agent does this
// with its data dir's secrets.key at first start. A key configured with
// secrets_key_file is never created: agents sharing a store must share it.
func LoadSecretsKey(path string, create bool) ([]byte, error) {
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) && create {
		key := make([]byte, SecretsKeySize)
		if _, err := rand.Read(key); err != nil {
			return nil, fmt.Errorf("generate a secrets key: %w", err)
		}
		f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
		if err != nil {
			return nil, fmt.Errorf("create the secrets key file: %w", err)
		}
		_, werr := f.WriteString(base64.StdEncoding.EncodeToString(key) + "\n")
		if cerr := f.Close(); werr == nil {
			werr = cerr
		}
		if werr != nil {
			return nil, fmt.Errorf("write the secrets key file %s: %w", path, werr)
		}
		return key, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read the secrets key file: %w", err)
	}
	key, err := base64.StdEncoding.DecodeString(strings.TrimSpace(string(b)))
	if err != nil || len(key) != SecretsKeySize {
		return nil, fmt.Errorf("the secrets key file %s must hold the base64 of %d random bytes (for example the output of `head -c %d /dev/urandom | base64`)",
			path, SecretsKeySize, SecretsKeySize)
	}
	return key, nil
}

func (s *secrets) seal(id string, v any) (string, error) {
	plain, err := json.Marshal(v)
	if err != nil {
		return "", err
	}
	nonce := make([]byte, s.aead.NonceSize())
	if _, err := rand.Read(nonce); err != nil {
		return "", err
	}
	out := s.aead.Seal(nonce, nonce, plain, []byte(id))
	return sealedPrefix + base64.RawStdEncoding.EncodeToString(out), nil
}

func (s *secrets) open(id, v string) (any, error) {
	raw, err := base64.RawStdEncoding.DecodeString(strings.TrimPrefix(v, sealedPrefix))
	if err != nil || len(raw) < s.aead.NonceSize() {
		return nil, errors.New("the sealed value is malformed")
	}
	n := s.aead.NonceSize()
	plain, err := s.aead.Open(nil, raw[:n], raw[n:], []byte(id))
	if err != nil {
		return nil, errors.New("it does not open with this agent's secrets key; every agent sharing a store needs the same secrets_key_file")
	}
	var out any
	return out, json.Unmarshal(plain, &out)
}

func isSealed(v any) bool {
	s, ok := v.(string)
	return ok && strings.HasPrefix(s, sealedPrefix)
}

// mapValues returns a copy of v with fn applied to every value that is not a
// map or a list (map keys are kept); path names each value for errors.
func mapValues(path string, v any, fn func(path string, v any) (any, error)) (any, error) {
	switch x := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(x))
		for _, k := range sortedMapKeys(x) {
			nv, err := mapValues(path+"."+k, x[k], fn)
			if err != nil {
				return nil, err
			}
			out[k] = nv
		}
		return out, nil
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			nv, err := mapValues(fmt.Sprintf("%s[%d]", path, i), e, fn)
			if err != nil {
				return nil, err
			}
			out[i] = nv
		}
		return out, nil
	}
	return fn(path, v)
}

func sortedMapKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// sensitiveValues returns a copy of v, described by p, with fn applied to
// each value the schema marks sensitive: a sensitive property's own value,
// or every value inside it when it is a map or list (a sensitive env map
// keeps its variable names and hides their values).
func sensitiveValues(path string, p *schema.Property, v any, fn func(path string, v any) (any, error)) (any, error) {
	if p == nil || v == nil {
		return v, nil
	}
	if p.Sensitive {
		return mapValues(path, v, fn)
	}
	switch x := v.(type) {
	case map[string]any:
		if p.Schema == nil && p.Elem == nil {
			return v, nil
		}
		out := make(map[string]any, len(x))
		for _, k := range sortedMapKeys(x) {
			sub := p.Elem
			if p.Schema != nil {
				sub = p.Schema[k]
			}
			nv, err := sensitiveValues(path+"."+k, sub, x[k], fn)
			if err != nil {
				return nil, err
			}
			out[k] = nv
		}
		return out, nil
	case []any:
		if p.Elem == nil {
			return v, nil
		}
		out := make([]any, len(x))
		for i, e := range x {
			nv, err := sensitiveValues(fmt.Sprintf("%s[%d]", path, i), p.Elem, e, fn)
			if err != nil {
				return nil, err
			}
			out[i] = nv
		}
		return out, nil
	}
	return v, nil
}

// sealProps returns a copy of props with every value the schema marks
// sensitive sealed for the object id. Values already sealed stay as they
// are, so sealing twice changes nothing.
func (e *Engine) sealProps(sch schema.Schema, id string, props map[string]any) (map[string]any, error) {
	if props == nil {
		return nil, nil
	}
	out, err := sensitiveValues("spec.properties", &schema.Property{Type: schema.Map, Schema: sch}, props, func(_ string, v any) (any, error) {
		if isSealed(v) {
			return v, nil
		}
		return e.secrets.seal(id, v)
	})
	if err != nil {
		return nil, err
	}
	return out.(map[string]any), nil
}

// checkSubmitted refuses properties holding the API's placeholder for a
// sensitive value, which a client that read an object and sent it back
// would store as the secret, or a value looking sealed, which only the
// engine writes.
func checkSubmitted(sch schema.Schema, props map[string]any) error {
	_, err := mapValues("spec.properties", props, func(path string, v any) (any, error) {
		if isSealed(v) {
			return nil, BadRequest("%s: values beginning with %q are reserved for the values the agent encrypts.", path, sealedPrefix)
		}
		return v, nil
	})
	if err != nil {
		return err
	}
	_, err = sensitiveValues("spec.properties", &schema.Property{Type: schema.Map, Schema: sch}, props, func(path string, v any) (any, error) {
		if v == Redacted {
			return nil, BadRequest("%s is %q, the placeholder the API shows for a sensitive value; send the value itself.", path, Redacted)
		}
		return v, nil
	})
	return err
}

// openProps returns a copy of props with every sealed value opened: what a
// plugin is given. It is the only place sensitive values are decrypted.
func (e *Engine) openProps(kind, id string, props map[string]any) (map[string]any, error) {
	out, err := mapValues("properties", props, func(path string, v any) (any, error) {
		if !isSealed(v) {
			return v, nil
		}
		o, err := e.secrets.open(id, v.(string))
		if err != nil {
			return nil, fmt.Errorf("the sensitive value %s of %s %s cannot be decrypted: %w", path, kind, id, err)
		}
		return o, nil
	})
	if err != nil || out == nil {
		return nil, err
	}
	return out.(map[string]any), nil
}

// Redact returns a copy of m with every sealed value replaced by Redacted:
// what the API shows of a spec or properties.
func Redact(m map[string]any) map[string]any {
	if m == nil {
		return nil
	}
	out, _ := mapValues("", m, func(_ string, v any) (any, error) {
		if isSealed(v) {
			return Redacted, nil
		}
		return v, nil
	})
	return out.(map[string]any)
}

// sealSpec seals the sensitive values of a spec as submitted and of its
// validated properties.
func (e *Engine) sealSpec(sch schema.Schema, id string, spec, props map[string]any) (map[string]any, map[string]any, error) {
	sealedProps, err := e.sealProps(sch, id, props)
	if err != nil {
		return nil, nil, err
	}
	raw, _ := spec["properties"].(map[string]any)
	if raw == nil {
		return spec, sealedProps, nil
	}
	sealedRaw, err := e.sealProps(sch, id, raw)
	if err != nil {
		return nil, nil, err
	}
	out := make(map[string]any, len(spec))
	for k, v := range spec {
		out[k] = v
	}
	out["properties"] = sealedRaw
	return out, sealedProps, nil
}

// SealStored seals the sensitive values that profiles and policies stored
// before their types marked them sensitive, or by a Grove that did not
// encrypt them, still hold in plain text. The engine runs it at start-up;
// objects whose type no running plugin provides are sealed at a later start.
func (e *Engine) SealStored(ctx context.Context) (int, error) {
	n := 0
	profiles, err := e.store.ListProfiles(ctx, store.ListOpts{})
	if err != nil {
		return 0, err
	}
	for _, p := range profiles {
		changed, err := e.sealStored(ctx, "profile", p.Type, p.ID, p.Spec, p.Properties)
		if err != nil {
			return n, err
		}
		if changed {
			n++
		}
	}
	policies, err := e.store.ListPolicies(ctx, store.ListOpts{})
	if err != nil {
		return n, err
	}
	for _, p := range policies {
		changed, err := e.sealStored(ctx, "policy", p.Type, p.ID, p.Spec, p.Properties)
		if err != nil {
			return n, err
		}
		if changed {
			n++
		}
	}
	return n, nil
}

func (e *Engine) sealStored(ctx context.Context, kind, typ, id string, spec, props map[string]any) (bool, error) {
	comp, ok := e.plugins.Component(kind, typ)
	if !ok || !hasSensitive(comp.Schema) {
		return false, nil
	}
	sealedSpec, sealedProps, err := e.sealSpec(comp.Schema, id, spec, props)
	if err != nil {
		return false, fmt.Errorf("seal the sensitive values of %s %s: %w", kind, id, err)
	}
	before, _ := json.Marshal([]any{spec, props})
	after, _ := json.Marshal([]any{sealedSpec, sealedProps})
	if string(before) == string(after) {
		return false, nil
	}
	if err := e.store.ReplaceSpec(ctx, kind, id, sealedSpec, sealedProps); err != nil {
		return false, fmt.Errorf("store the sealed values of %s %s: %w", kind, id, err)
	}
	return true, nil
}

func hasSensitive(s schema.Schema) bool {
	for _, p := range s {
		for q := p; q != nil; q = q.Elem {
			if q.Sensitive || (q.Schema != nil && hasSensitive(q.Schema)) {
				return true
			}
		}
	}
	return false
}

// openProfile is what a profile driver is given of a profile's
// properties: its sensitive values opened.
func (e *Engine) openProfile(p *model.Profile) (map[string]any, error) {
	return e.openProps("profile", p.ID, p.Properties)
}

// policySpec is what a policy plugin is given of a policy: its sensitive
// values opened.
func (e *Engine) policySpec(p *model.Policy) (sdk.Spec, error) {
	props, err := e.openProps("policy", p.ID, p.Properties)
	if err != nil {
		return sdk.Spec{}, err
	}
	return sdk.Spec{ID: p.ID, Name: p.Name, Type: p.Type, Version: p.Version, Properties: props}, nil
}

// CheckSpecUnchanged accepts a spec sent with an update of a profile or
// policy (kind) only when it is the stored one, where the placeholder
// Redacted stands for the stored value at its place: a client that reads an
// object and sends it back whole keeps its secrets, and a spec, immutable
// as in Senlin, is never changed by an update.
func (e *Engine) CheckSpecUnchanged(ctx context.Context, c Caller, kind, ident string, sent map[string]any) error {
	var id string
	var stored map[string]any
	switch kind {
	case "profile":
		p, err := e.store.FindProfile(ctx, c.Project, ident)
		if err != nil {
			return err
		}
		id, stored = p.ID, p.Spec
	case "policy":
		p, err := e.store.FindPolicy(ctx, c.Project, ident)
		if err != nil {
			return err
		}
		id, stored = p.ID, p.Spec
	default:
		return fmt.Errorf("check spec: %q is not profile or policy", kind)
	}
	opened, err := e.openProps(kind, id, stored)
	if err != nil {
		return err
	}
	a, _ := json.Marshal(restorePlaceholders(sent, opened))
	b, _ := json.Marshal(opened)
	if string(a) != string(b) {
		return BadRequest("%s.spec cannot be changed: a %s's spec is immutable; create a new %s with the new spec instead.", kind, kind, kind)
	}
	return nil
}

// restorePlaceholders returns sent with each Redacted replaced by the value
// at the same place in stored.
func restorePlaceholders(sent, stored any) any {
	if sent == Redacted && stored != nil {
		return stored
	}
	switch x := sent.(type) {
	case map[string]any:
		sm, _ := stored.(map[string]any)
		out := make(map[string]any, len(x))
		for k, v := range x {
			out[k] = restorePlaceholders(v, sm[k])
		}
		return out
	case []any:
		sl, _ := stored.([]any)
		out := make([]any, len(x))
		for i, v := range x {
			var sv any
			if i < len(sl) {
				sv = sl[i]
			}
			out[i] = restorePlaceholders(v, sv)
		}
		return out
	}
	return sent
}
