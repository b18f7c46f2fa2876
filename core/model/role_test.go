package model

import (
	"strings"
	"testing"
)

// A role is free text, but no control character may reach the listings and
// terminals that show it.
func TestValidateNodeRole(t *testing.T) {
	for role, ok := range map[string]bool{
		"":           true,
		"primary":    true,
		"db primary": true,
		"rôle/β:1":   true,
		"db\x00":     false,
		"\x1b[31m":   false,
		"a\nb":       false,
		"a\tb":       false,
		"\u0085":     false, // C1 next-line
		"\x7f":       false,
	} {
		err := ValidateNodeRole("node.role", role)
		if ok != (err == nil) {
			t.Errorf("ValidateNodeRole(%q) = %v, want ok=%v", role, err, ok)
		}
		if err != nil && !strings.HasPrefix(err.Error(), "node.role ") {
			t.Errorf("error %q does not name the field", err)
		}
	}
}

// TestValidateName: Senlin's pattern, without the two names a URL path
// cannot hold.
func TestValidateName(t *testing.T) {
	for name, want := range map[string]string{
		"web":                    "",
		"a.b_c~d-e":              "",
		"...":                    "",
		"ウェブ":                    "",
		"":                       "name is required.",
		".":                      `name "." is not valid: "." and ".." cannot be looked up`,
		"..":                     `name ".." is not valid: "." and ".." cannot be looked up`,
		"a b":                    `name "a b" is not valid: use 1 to 255 characters`,
		strings.Repeat("a", 256): `is not valid: use 1 to 255 characters`,
	} {
		err := ValidateName("name", name)
		if (want == "") != (err == nil) || err != nil && !strings.Contains(err.Error(), want) {
			t.Errorf("ValidateName(%q) = %v, want %q", name, err, want)
		}
	}
}
