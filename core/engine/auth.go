package engine

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/grovehq/grove/core/model"
	"github.com/grovehq/grove/core/store"
)

// TokenPrefix starts every token secret, so a leaked one is recognisable
// (and greppable by secret scanners).
const TokenPrefix = "grove_"

// tokenBytes is the randomness of a secret: 32 bytes, 43 base64url
// characters after the prefix.
const tokenBytes = 32

// MaxTokenTTL bounds a token's lifetime (ten years).
const MaxTokenTTL = 10 * 365 * 24 * time.Hour

// Unauthorized reports a request without a valid token. The message never
// repeats what the request sent.
func Unauthorized(format string, args ...any) error {
	return &Error{Status: http.StatusUnauthorized, Type: "Unauthorized", Message: fmt.Sprintf(format, args...)}
}

// WellFormedToken reports whether s has the shape of a token secret:
// the prefix and exactly 32 bytes in unpadded base64url. Anything else is
// refused before the store is asked.
func WellFormedToken(s string) bool {
	rest, ok := strings.CutPrefix(s, TokenPrefix)
	if !ok || len(rest) != base64.RawURLEncoding.EncodedLen(tokenBytes) {
		return false
	}
	b, err := base64.RawURLEncoding.Strict().DecodeString(rest)
	return err == nil && len(b) == tokenBytes
}

// HashToken is what the store keeps of a secret: its SHA-256, in hex.
func HashToken(secret string) string {
	sum := sha256.Sum256([]byte(secret))
	return hex.EncodeToString(sum[:])
}

func newSecret() (string, error) {
	b := make([]byte, tokenBytes)
	if _, err := rand.Read(b); err != nil {
		return "", fmt.Errorf("make a token secret: %w", err)
	}
	return TokenPrefix + base64.RawURLEncoding.EncodeToString(b), nil
}

// Authenticate resolves a token secret to its caller. The token is looked
// up by the hash of the secret, never by the secret, and the hashes are
// compared in constant time, so neither the lookup nor the comparison
// tells an attacker how much of a guess was right.
func (e *Engine) Authenticate(ctx context.Context, secret string) (Caller, error) {
	return e.AuthenticateFrom(ctx, e.store, secret)
}

// AuthenticateFrom is Authenticate reading the token from st: the API
// passes its read pool for reads, so polling never waits for the writer.
func (e *Engine) AuthenticateFrom(ctx context.Context, st store.Store, secret string) (Caller, error) {
	const bad = "The token is not valid: it is malformed, unknown or revoked. Send a token as X-Auth-Token or Authorization: Bearer."
	if !WellFormedToken(secret) {
		return Caller{}, Unauthorized(bad)
	}
	hash := HashToken(secret)
	t, err := st.TokenByHash(ctx, hash)
	if errors.Is(err, store.ErrNotFound) {
		return Caller{}, Unauthorized(bad)
	}
	if err != nil {
		return Caller{}, err
	}
	if subtle.ConstantTimeCompare([]byte(t.Hash), []byte(hash)) != 1 {
		return Caller{}, Unauthorized(bad)
	}
	if t.Expired(e.cfg.Now()) {
		return Caller{}, Unauthorized("The token %s expired at %s; ask an admin for a new one.", t.ID, t.ExpiresAt.Format(time.RFC3339))
	}
	return Caller{User: t.ID, Project: t.Project, Role: t.Role}, nil
}

// TokenCreate is a request for a new token.
type TokenCreate struct {
	Name    string
	Project string
	Role    string
	// TTL is a Go duration ("24h"); empty means the token does not expire.
	TTL string
}

// CreateToken makes a token and returns its record and its secret, which
// is not kept and cannot be shown again.
func (e *Engine) CreateToken(ctx context.Context, c Caller, req TokenCreate) (*model.Token, string, error) {
	if err := model.ValidateName("token.name", req.Name); err != nil {
		return nil, "", BadRequest("%s", err)
	}
	if err := model.ValidateName("token.project", req.Project); err != nil {
		return nil, "", BadRequest("%s", err)
	}
	if err := model.ValidateRole("token.role", req.Role); err != nil {
		return nil, "", BadRequest("%s", err)
	}
	now := e.cfg.Now()
	var expires *time.Time
	if req.TTL != "" {
		d, err := time.ParseDuration(req.TTL)
		if err != nil || d <= 0 || d > MaxTokenTTL {
			return nil, "", BadRequest("token.ttl must be a positive duration of at most %s such as \"24h\", got %q.", MaxTokenTTL, req.TTL)
		}
		at := now.Add(d)
		expires = &at
	}
	by := c.User
	if by == "" {
		by = "bootstrap"
	}
	return e.newToken(ctx, &model.Token{ID: e.newID(), Name: req.Name, Project: req.Project, Role: req.Role, CreatedAt: now, ExpiresAt: expires, CreatedBy: by})
}

func (e *Engine) newToken(ctx context.Context, t *model.Token) (*model.Token, string, error) {
	secret, err := newSecret()
	if err != nil {
		return nil, "", err
	}
	t.Hash = HashToken(secret)
	if err := e.store.CreateToken(ctx, t); err != nil {
		return nil, "", err
	}
	return t, secret, nil
}

// Bootstrap creates the first token, an admin of project "default", when
// the store holds none, and returns its secret; it returns "" when tokens
// exist. An operator who revoked every token gets a new bootstrap token at
// the next start: whoever can start the agent owns its data dir anyway.
func (e *Engine) Bootstrap(ctx context.Context) (*model.Token, string, error) {
	ts, err := e.store.ListTokens(ctx)
	if err != nil {
		return nil, "", err
	}
	if len(ts) > 0 {
		return nil, "", nil
	}
	return e.newToken(ctx, &model.Token{ID: e.newID(), Name: "bootstrap", Project: model.DefaultProject, Role: model.RoleAdmin,
		CreatedAt: e.cfg.Now(), CreatedBy: "bootstrap"})
}

// Tokens lists every token (without secrets: none are kept).
func (e *Engine) Tokens(ctx context.Context) ([]*model.Token, error) { return e.store.ListTokens(ctx) }

// Token returns one token by id.
func (e *Engine) Token(ctx context.Context, id string) (*model.Token, error) {
	return e.store.GetToken(ctx, id)
}

// RevokeToken deletes a token: the next request carrying it is refused.
func (e *Engine) RevokeToken(ctx context.Context, id string) error {
	return e.store.DeleteToken(ctx, id)
}

// HostAccessTypes are the profile types a project may use only when an
// admin granted them, because their nodes reach the agent's host.
func HostAccessTypes() []string { return []string{"container.docker", "local.process"} }

// hostAccess says whether a profile of a type with these properties reaches
// the agent's host, and how. It is a table here rather than a flag in each
// plugin's schema because a plugin cannot be trusted to declare its own
// reach: the agent decides what it considers host access. Keep it in step
// with HostAccessTypes.
func hostAccess(typ string, props map[string]any) (string, bool) {
	switch typ {
	case "local.process":
		return "it runs any command as the agent's user", true
	case "container.docker":
		if vs, _ := props["volumes"].([]any); len(vs) > 0 {
			return "its volumes mount the agent's host's files", true
		}
	}
	return "", false
}

// checkHostAccess refuses a profile that reaches the agent's host in a
// project that was not granted its type. In dev mode project "default"
// holds every grant.
func (e *Engine) checkHostAccess(ctx context.Context, project, typ string, props map[string]any) error {
	how, ok := hostAccess(typ, props)
	if !ok || (e.cfg.Dev && project == model.DefaultProject) {
		return nil
	}
	grants, err := e.store.ListGrants(ctx, project)
	if err != nil {
		return err
	}
	if slices.Contains(grants, typ) {
		return nil
	}
	return Forbidden("A %s profile is host access (%s), and project %q has not been granted %s; an admin grants it with `grove project allow %s %s`.",
		typ, how, project, typ, project, typ)
}

func (e *Engine) checkProfileAccess(ctx context.Context, project string, p *model.Profile) error {
	return e.checkHostAccess(ctx, project, p.Type, p.Properties)
}

// Grants lists the host-access types granted to a project.
func (e *Engine) Grants(ctx context.Context, project string) ([]string, error) {
	if err := model.ValidateName("project", project); err != nil {
		return nil, BadRequest("%s", err)
	}
	if e.cfg.Dev && project == model.DefaultProject {
		return HostAccessTypes(), nil
	}
	return e.store.ListGrants(ctx, project)
}

// Grant lets a project use a host-access profile type.
func (e *Engine) Grant(ctx context.Context, project, typ string) error {
	if err := e.checkGrant(project, typ); err != nil {
		return err
	}
	return e.store.PutGrant(ctx, project, typ)
}

// Ungrant takes a host-access type back from a project: new profiles,
// clusters and nodes of the type are refused there; running nodes keep
// running.
func (e *Engine) Ungrant(ctx context.Context, project, typ string) error {
	if err := e.checkGrant(project, typ); err != nil {
		return err
	}
	return e.store.DeleteGrant(ctx, project, typ)
}

func (e *Engine) checkGrant(project, typ string) error {
	if err := model.ValidateName("project", project); err != nil {
		return BadRequest("%s", err)
	}
	if !slices.Contains(HostAccessTypes(), typ) {
		return BadRequest("type %q is not a host-access profile type; grants exist for %s.", typ, strings.Join(HostAccessTypes(), ", "))
	}
	return nil
}
