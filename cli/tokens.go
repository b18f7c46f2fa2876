package cli

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/grovehq/grove/api"
)

// roles are the token roles the agent knows, least first.
var roles = []string{"reader", "member", "admin"}

func tokenCreate(ctx context.Context, env *Env, _ *api.Client, g *globals, args []string) error {
	fs := flagSet("token create", g)
	project := fs.String("project", "", "project the token acts in (required)")
	role := fs.String("role", "", "reader, member or admin (required)")
	ttl := fs.String("ttl", "", "lifetime such as 24h or 30m (default: no expiry)")
	name := fs.String("name", "", "a name to recognise the token by in lists (default PROJECT-ROLE)")
	pos, err := parseFlags(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 0 || *project == "" || *role == "" {
		return usagef("usage: grove token create -project PROJECT -role reader|member|admin [-ttl 24h] [-name NAME]")
	}
	if !slices.Contains(roles, *role) {
		return usagef("-role must be one of %s, got %q", strings.Join(roles, ", "), *role)
	}
	if *ttl != "" {
		if d, err := time.ParseDuration(*ttl); err != nil || d <= 0 {
			return usagef("-ttl must be a positive duration such as 24h or 30m, got %q", *ttl)
		}
	}
	if *name == "" {
		// The agent requires a name; the and README's
		// `grove token create -project P -role R` gives none.
		*name = *project + "-" + *role
	}
	tok, err := g.client().CreateToken(ctx, api.TokenCreate{Name: *name, Project: *project, Role: *role, TTL: *ttl})
	if err != nil {
		return err
	}
	if g.json {
		return printJSON(env.Stdout, tok)
	}
	expires := "never expires"
	if tok.ExpiresAt != nil && *tok.ExpiresAt != "" {
		expires = "expires " + *tok.ExpiresAt
	}
	fmt.Fprintf(env.Stdout, "Token %s created: project %s, role %s, %s.\n", tok.ID, tok.Project, tok.Role, expires)
	fmt.Fprintf(env.Stdout, "Its secret is shown this once and cannot be read again; store it now (clients send it with -token or GROVE_TOKEN):\n\n  %s\n", tok.Secret)
	return nil
}

func tokenList(ctx context.Context, env *Env, _ *api.Client, g *globals, args []string) error {
	fs := flagSet("token list", g)
	pos, err := parseFlags(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 0 {
		return usagef("usage: grove token list")
	}
	toks, err := g.client().ListTokens(ctx)
	if err != nil {
		return err
	}
	if g.json {
		if toks == nil {
			toks = []api.Token{}
		}
		return printJSON(env.Stdout, toks)
	}
	w := tabwriter.NewWriter(env.Stdout, 0, 2, 2, ' ', 0)
	fmt.Fprintln(w, "ID\tNAME\tPROJECT\tROLE\tCREATED\tEXPIRES\tCREATED BY")
	for _, t := range toks {
		expires := "-"
		if t.ExpiresAt != nil && *t.ExpiresAt != "" {
			expires = *t.ExpiresAt
		}
		fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%s\t%s\t%s\n", t.ID, cell(t.Name, false), t.Project, t.Role, cell(t.CreatedAt, false), expires, cell(t.CreatedBy, false))
	}
	return w.Flush()
}

func tokenShow(ctx context.Context, env *Env, _ *api.Client, g *globals, args []string) error {
	fs := flagSet("token show", g)
	pos, err := parseFlags(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		return usagef("usage: grove token show <id>")
	}
	tok, err := g.client().GetToken(ctx, pos[0])
	if err != nil {
		return err
	}
	if g.json {
		return printJSON(env.Stdout, tok)
	}
	return details(env, tok)
}

func tokenRevoke(ctx context.Context, env *Env, _ *api.Client, g *globals, args []string) error {
	fs := flagSet("token revoke", g)
	pos, err := parseFlags(fs, args)
	if err != nil {
		return err
	}
	if len(pos) == 0 {
		return usagef("usage: grove token revoke <id>...")
	}
	c := g.client()
	for _, id := range pos {
		if err := c.RevokeToken(ctx, id); err != nil {
			return err
		}
		fmt.Fprintf(env.Stdout, "Token %s revoked; the agent refuses it from now on.\n", id)
	}
	return nil
}

func projectGrant(allow bool) verb {
	verbName := map[bool]string{true: "allow", false: "deny"}[allow]
	return func(ctx context.Context, env *Env, _ *api.Client, g *globals, args []string) error {
		fs := flagSet("project "+verbName, g)
		pos, err := parseFlags(fs, args)
		if err != nil {
			return err
		}
		if len(pos) != 2 {
			return usagef("usage: grove project %s PROJECT TYPE (for example: grove project %s default local.process)", verbName, verbName)
		}
		c := g.client()
		if allow {
			if err := c.AllowType(ctx, pos[0], pos[1]); err != nil {
				return err
			}
			fmt.Fprintf(env.Stdout, "Project %s may now use %s profiles.\n", pos[0], pos[1])
			return nil
		}
		if err := c.DenyType(ctx, pos[0], pos[1]); err != nil {
			return err
		}
		fmt.Fprintf(env.Stdout, "Project %s may no longer use %s profiles.\n", pos[0], pos[1])
		return nil
	}
}

func projectGrants(ctx context.Context, env *Env, _ *api.Client, g *globals, args []string) error {
	fs := flagSet("project grants", g)
	pos, err := parseFlags(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		return usagef("usage: grove project grants PROJECT")
	}
	grants, err := g.client().ProjectGrants(ctx, pos[0])
	if err != nil {
		return err
	}
	if grants == nil {
		grants = []string{}
	}
	if g.json {
		return printJSON(env.Stdout, grants)
	}
	rows := make([]any, len(grants))
	for i, t := range grants {
		rows[i] = map[string]any{"type": t}
	}
	return table(env, []column{{"TYPE", "type", false}}, rows)
}
