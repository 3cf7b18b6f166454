package sessions_test

import (
	"path/filepath"
	"testing"

	"github.com/pickup-dev/pickup/internal/benchkit"
	"github.com/pickup-dev/pickup/sessions"
)

// BenchmarkPeekMatching10k is what a one-shot `pickup next` reads the
// listing cache with, on 10,000 sessions of which one in five carries the
// tag "bench": unfiltered (Peek) and filtered by that tag, which also looks
// at every line's tags field.
func BenchmarkPeekMatching10k(b *testing.B) {
	const n = 10000
	board, err := benchkit.NewBoard(filepath.Join(b.TempDir(), "board"))
	if err != nil {
		b.Fatal(err)
	}
	if _, err := benchkit.Fill(board, sessions.Todo, "", 0, n); err != nil {
		b.Fatal(err)
	}
	if _, err := board.ListState(sessions.Todo, true); err != nil { // warm the cache
		b.Fatal(err)
	}
	for _, bm := range []struct {
		name string
		peek func() ([]sessions.Session, bool)
	}{
		{"peek", func() ([]sessions.Session, bool) { l, _, ok := board.Peek(sessions.Todo, 16); return l, ok }},
		{"tag", func() ([]sessions.Session, bool) {
			l, _, _, ok := board.PeekMatching(sessions.Todo, 16, sessions.TagFilter{Tags: []string{"bench"}})
			return l, ok
		}},
		{"tag+not-tag", func() ([]sessions.Session, bool) {
			l, _, _, ok := board.PeekMatching(sessions.Todo, 16, sessions.TagFilter{Tags: []string{"bench"}, NotTags: []string{"slow"}})
			return l, ok
		}},
	} {
		b.Run(bm.name, func(b *testing.B) {
			b.ReportAllocs()
			cpu := benchkit.CPUTime()
			for b.Loop() {
				if l, ok := bm.peek(); !ok || len(l) != 16 {
					b.Fatalf("peeked %d sessions (ok %v), want 16", len(l), ok)
				}
			}
			b.ReportMetric(float64(benchkit.CPUTime()-cpu)/float64(b.N), "cpu-ns/op")
		})
	}
}
