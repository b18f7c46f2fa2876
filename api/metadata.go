package api

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
)

// Limits of a metadata object (a profile's, cluster's or node's): the agent
// refuses one over them, and the CLI's definitions and the Terraform
// provider check them before they create anything.
const (
	// MaxMetadataKeys bounds the entries of a metadata object.
	MaxMetadataKeys = 128
	// MaxMetadataValueBytes bounds one metadata value written as JSON.
	MaxMetadataValueBytes = 16 << 10
)

// ValidateMetadata applies the agent's rules for a metadata object: at most
// MaxMetadataKeys keys, none empty, each value at most MaxMetadataValueBytes
// as JSON. field names the object in the error, a sentence.
func ValidateMetadata(field string, m map[string]any) error {
	if len(m) > MaxMetadataKeys {
		return fmt.Errorf("%s has %d keys; at most %d are allowed.", field, len(m), MaxMetadataKeys)
	}
	// In key order: the first key at fault, whatever the map's order.
	for _, key := range slices.Sorted(maps.Keys(m)) {
		if key == "" {
			return fmt.Errorf("%s: keys must not be empty.", field)
		}
		b, err := json.Marshal(m[key])
		if err != nil {
			return fmt.Errorf("measure %s.%s: %w", field, key, err)
		}
		if len(b) > MaxMetadataValueBytes {
			return fmt.Errorf("%s.%s is %d bytes as JSON; a metadata value may be at most %d bytes.", field, key, len(b), MaxMetadataValueBytes)
		}
	}
	return nil
}
