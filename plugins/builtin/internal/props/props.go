// Package props reads the built-in drivers' properties. The SDK has
// validated them against the schema before a driver sees them, so a list is
// a []any and a number an int64 or float64; these helpers only convert.
package props

import "fmt"

// Strings returns a list property's items as strings (nil for no list).
func Strings(v any) []string {
	items, _ := v.([]any)
	out := make([]string, 0, len(items))
	for _, it := range items {
		out = append(out, fmt.Sprint(it))
	}
	return out
}

// Int returns an integer property, or def when it is not set.
func Int(v any, def int) int {
	switch x := v.(type) {
	case int64:
		return int(x)
	case float64:
		return int(x)
	case int:
		return x
	}
	return def
}
