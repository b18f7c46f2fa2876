package sdk

import "github.com/grovehq/grove/plugins/sdk/schema"

// The schema types are re-exported so a plugin author imports one package.
type (
	// Schema maps property names to their descriptions.
	Schema = schema.Schema
	// Property describes one property.
	Property = schema.Property
	// Constraint restricts a property's value.
	Constraint = schema.Constraint
	// Diagnostic is one validation failure naming its field.
	Diagnostic = schema.Diagnostic
	// Diagnostics is a list of failures that is also an error.
	Diagnostics = schema.Diagnostics
)

// Property types.
const (
	String  = schema.String
	Integer = schema.Integer
	Number  = schema.Number
	Boolean = schema.Boolean
	List    = schema.List
	Map     = schema.Map
)

// AllowedValues, Range, Length and F build constraints; see package schema.
var (
	AllowedValues = schema.AllowedValues
	Range         = schema.Range
	Length        = schema.Length
	F             = schema.F
)
