package vsphere

import "testing"

// TestConnectionSecretsAreSensitive: the password, and the URL that may
// carry one, are sealed in the store and shown as "(sensitive)"; the rest of
// the connection stays readable.
func TestConnectionSecretsAreSensitive(t *testing.T) {
	conn := Type().Schema["connection"].Schema
	for name, want := range map[string]bool{"url": true, "password": true, "username": false, "insecure": false, "thumbprint": false} {
		if p := conn[name]; p == nil || p.Sensitive != want {
			t.Errorf("connection.%s: sensitive should be %v, schema says %+v", name, want, p)
		}
	}
}
