package model

import (
	"fmt"
	"time"
)

// Roles a token carries. A reader reads its project; a member reads and
// writes it; an admin does everything: every project's lists with
// global_project=true, tokens and project grants.
const (
	RoleReader = "reader"
	RoleMember = "member"
	RoleAdmin  = "admin"
)

// Roles lists the roles, weakest first.
var Roles = []string{RoleReader, RoleMember, RoleAdmin}

// DefaultProject is the project of the bootstrap token and of dev mode.
const DefaultProject = "default"

// Token is an API token's record. Its secret is never stored: Hash is the
// SHA-256 (hex) of the secret, which is what a request is looked up by.
type Token struct {
	// ID is the token's accessor: what lists, revocation and audit records
	// show. It is not a credential.
	ID        string
	Name      string
	Project   string
	Role      string
	Hash      string
	CreatedAt time.Time
	ExpiresAt *time.Time
	// CreatedBy is the id of the token that created it, or "bootstrap".
	CreatedBy string
}

// Expired reports whether the token has expired at now.
func (t *Token) Expired(now time.Time) bool {
	return t.ExpiresAt != nil && !now.Before(*t.ExpiresAt)
}

// ValidateRole checks that role is one of the roles.
func ValidateRole(field, role string) error {
	for _, r := range Roles {
		if r == role {
			return nil
		}
	}
	return fmt.Errorf("%s %q is not a role; use reader, member or admin.", field, role)
}
