package engine

import (
	"math/rand/v2"
	"regexp"
	"testing"
)

func TestEvalStatus(t *testing.T) {
	cases := []struct {
		active, desired, min, max int
		status, reason            string
	}{
		{1, 3, 2, 5, "ERROR", "op: number of active nodes is below min_size (2)."},
		{2, 3, 2, 5, "WARNING", "op: number of active nodes is below desired_capacity (3)."},
		{3, 3, 2, 5, "ACTIVE", "op: number of active nodes is equal or above desired_capacity (3)."},
		{9, 3, 0, -1, "ACTIVE", "op: number of active nodes is equal or above desired_capacity (3)."},
		{6, 3, 0, 5, "WARNING", "op: number of active nodes is above max_size (5)."},
		{0, 0, 0, -1, "ACTIVE", "op: number of active nodes is equal or above desired_capacity (0)."},
	}
	for _, c := range cases {
		s, r := EvalStatus("op", c.active, c.desired, c.min, c.max)
		if s != c.status || r != c.reason {
			t.Errorf("EvalStatus(%d,%d,%d,%d) = %s %q, want %s %q", c.active, c.desired, c.min, c.max, s, r, c.status, c.reason)
		}
	}
}

func TestNodeName(t *testing.T) {
	cases := []struct {
		name, format string
		index        int
		want         string // a regular expression the whole name matches
	}{
		{"empty format is node-$8R", "", 7, `node-[A-Za-z][A-Za-z0-9]{7}`},
		{"$R without a width is 8 random characters", "web-$R", 7, `web-[A-Za-z][A-Za-z0-9]{7}`},
		{"$r without a width is 8 lower-case characters", "web-$r", 7, `web-[a-z][a-z0-9]{7}`},
		{"$I without a width is the index unpadded", "web-$I", 7, `web-7`},
		{"$I without a width keeps every digit", "web-$I", 1234, `web-1234`},
		{"$nI pads the index to n digits", "web-$3I", 7, `web-007`},
		{"$nI never cuts the index", "web-$2I", 1234, `web-1234`},
		{"$nR is n random characters", "web-$3R", 7, `web-[A-Za-z][A-Za-z0-9]{2}`},
		{"$nr is n lower-case characters", "x-$4r-$2I", 7, `x-[a-z][a-z0-9]{3}-07`},
		{"$0R is empty", "a$0Rb", 7, `ab`},
		{"directives anywhere", "$I.$R", 12, `12\.[A-Za-z][A-Za-z0-9]{7}`},
		{"a $ before a directive is literal", "$$I", 7, `\$7`},
		{"a trailing $ is literal", "literal$", 7, `literal\$`},
		{"a width alone is literal", "cost-$5", 7, `cost-\$5`},
		{"an unknown letter is literal", "keep-$2Q-tail", 7, `keep-\$2Q-tail`},
		{"a width of nine digits is literal, as in Senlin", "n-$123456789I", 7, `n-\$123456789I`},
		{"a width beyond the longest name is cut to it", "$99999999R", 7, `[A-Za-z][A-Za-z0-9]{254}`},
	}
	rng := rand.New(rand.NewPCG(1, 1))
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := NodeName(c.format, c.index, rng)
			if !regexp.MustCompile(`^(?:` + c.want + `)$`).MatchString(got) {
				t.Errorf("NodeName(%q, %d) = %q, want match %s", c.format, c.index, got, c.want)
			}
		})
	}
}
