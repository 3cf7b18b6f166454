package lifeline

import "testing"

func TestParseStat(t *testing.T) {
	for _, tt := range []struct {
		line  string
		state byte
		pgid  int
		ok    bool
	}{
		{"123 (sleep) S 1 77 1 0 -1", 'S', 77, true},
		{"123 (a) b) (c) Z 1 78 1 0", 'Z', 78, true},
		{"123 (x", 0, 0, false},
		{"123 (x) S 1", 0, 0, false},
	} {
		st, pg, ok := parseStat([]byte(tt.line))
		if st != tt.state || pg != tt.pgid || ok != tt.ok {
			t.Errorf("parseStat(%q) = %q, %d, %v; want %q, %d, %v", tt.line, st, pg, ok, tt.state, tt.pgid, tt.ok)
		}
	}
}
