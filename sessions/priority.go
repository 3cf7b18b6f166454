package sessions

import (
	"fmt"
	"strings"
)

// Priority orders sessions: High before Medium before Low. The zero value
// is Medium, the default.
type Priority int

// The priorities, in the order next takes them.
const (
	High   Priority = -1
	Medium Priority = 0
	Low    Priority = 1
)

func (p Priority) String() string {
	switch p {
	case High:
		return "high"
	case Low:
		return "low"
	}
	return "medium"
}

// ParsePriority parses "high", "medium" or "low" (any case).
func ParsePriority(s string) (Priority, error) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "high":
		return High, nil
	case "medium", "":
		return Medium, nil
	case "low":
		return Low, nil
	}
	return Medium, fmt.Errorf("unknown priority %q: use high, medium or low", s)
}

// MarshalText implements encoding.TextMarshaler.
func (p Priority) MarshalText() ([]byte, error) { return []byte(p.String()), nil }

// UnmarshalText implements encoding.TextUnmarshaler.
func (p *Priority) UnmarshalText(b []byte) error {
	v, err := ParsePriority(string(b))
	*p = v
	return err
}
