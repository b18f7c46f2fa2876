package api

import (
	"fmt"
	"regexp"
	"strconv"
	"unicode/utf8"
)

// ConfigNodeNameFormat is Senlin's cluster config key for the names given
// to the nodes a cluster creates.
const ConfigNodeNameFormat = "node.name.format"

// NodeNameDirective matches a node.name.format directive, as Senlin's
// format_node_name reads it: "$", a width of up to eight digits (optional),
// and R, r or I. The engine expands with it and ValidateSettings judges
// with it, so what is accepted is exactly what is expanded.
var NodeNameDirective = regexp.MustCompile(`\$(\d{0,8})([rRI])`)

// MaxNameChars is the longest valid name, in characters (NamePattern).
const MaxNameChars = 255

// nameCharRE is one character NamePattern allows.
var nameCharRE = regexp.MustCompile(`^[` + nameChars + `]$`)

// NodeNameWidth is how many characters a directive of NodeNameDirective
// expands to at most and at least: digits is its width as written, kind its
// letter. A width is cut to MaxNameChars; $R and $r default to 8; $I
// without a width is the index unpadded, up to the digits of MaxCount (an
// index is a 32-bit column, as in Senlin).
func NodeNameWidth(digits string, kind byte) (longest, shortest int) {
	width := -1
	if digits != "" {
		width, _ = strconv.Atoi(digits)
		width = min(width, MaxNameChars)
	}
	if kind == 'I' {
		indexDigits := len(strconv.Itoa(MaxCount))
		if width < 0 {
			return indexDigits, 1
		}
		return max(width, indexDigits), max(width, 1)
	}
	if width < 0 {
		width = 8
	}
	return width, width
}

// nodeNameFormatRule returns the rule a node.name.format breaks, or "". A
// node's name must be a valid name (NamePattern) whatever the directives
// expand to, so the literal characters must be name characters and the
// longest and shortest expansions must be 1 to MaxNameChars characters; a
// name that breaks the rule could not be named by any reference, and a NUL
// in it broke every create on local.process.
func nodeNameFormatRule(format string) string {
	longest, shortest := 0, 0
	last := 0
	literal := func(s string) string {
		for _, r := range s {
			if !nameCharRE.MatchString(string(r)) {
				return fmt.Sprintf("%q has the character %q outside its directives; node names may hold only letters, digits, '.', '_', '~' and '-', and directives are $R, $r and $I with an optional width such as $8R.", format, r)
			}
		}
		n := utf8.RuneCountInString(s)
		longest, shortest = longest+n, shortest+n
		return ""
	}
	for _, m := range NodeNameDirective.FindAllStringSubmatchIndex(format, -1) {
		if rule := literal(format[last:m[0]]); rule != "" {
			return rule
		}
		l, s := NodeNameWidth(format[m[2]:m[3]], format[m[4]])
		longest, shortest = longest+l, shortest+s
		last = m[1]
	}
	if rule := literal(format[last:]); rule != "" {
		return rule
	}
	switch {
	case longest > MaxNameChars:
		return fmt.Sprintf("%q expands to names of up to %d characters; node names are at most %d characters (an unpadded $I counts as %d digits).", format, longest, MaxNameChars, len(strconv.Itoa(MaxCount)))
	case shortest < 1:
		return fmt.Sprintf("%q can expand to an empty name; node names need at least one character.", format)
	}
	return ""
}
