package sessions_test

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/pickup-dev/pickup/internal/benchkit"
	"github.com/pickup-dev/pickup/sessions"
)

// BenchmarkListTodo10k lists todo/ of a board of 10,000 sessions with a warm
// listing cache: what `pickup next` (validate=false) and `pickup list`
// (validate=true: one lstat per file) pay on every call, and the lineup a
// claim.Queue with a snapshot reads instead.
func BenchmarkListTodo10k(b *testing.B) {
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
	for _, validate := range []bool{false, true} {
		name := "validate=false"
		if validate {
			name = "validate=true"
		}
		b.Run(name, func(b *testing.B) {
			b.ReportAllocs()
			cpu := benchkit.CPUTime()
			for b.Loop() {
				list, err := board.ListState(sessions.Todo, validate)
				if err != nil {
					b.Fatal(err)
				}
				if len(list) != n {
					b.Fatalf("listed %d sessions, want %d", len(list), n)
				}
			}
			b.ReportMetric(float64(benchkit.CPUTime()-cpu)/float64(b.N), "cpu-ns/op")
		})
	}
	// What a claim.Queue with a snapshot reads instead: the directory and
	// the cache, no Session built.
	b.Run("lineup", func(b *testing.B) {
		b.ReportAllocs()
		cpu := benchkit.CPUTime()
		for b.Loop() {
			l, ok := board.Lineup(sessions.Todo)
			if !ok {
				b.Fatal("the cache cannot answer")
			}
			if l.Len() != n {
				b.Fatalf("lineup of %d sessions, want %d", l.Len(), n)
			}
		}
		b.ReportMetric(float64(benchkit.CPUTime()-cpu)/float64(b.N), "cpu-ns/op")
	})
}

// BenchmarkParseMeta parses the frontmatter of a typical session file: what
// a cold listing pays per file, on top of opening and reading it.
func BenchmarkParseMeta(b *testing.B) {
	content := benchkit.Content(5) // with tags
	b.SetBytes(int64(len(content)))
	b.ReportAllocs()
	cpu := benchkit.CPUTime()
	for b.Loop() {
		m, err := sessions.ParseMeta(bytes.NewReader(content))
		if err != nil {
			b.Fatal(err)
		}
		if m.Title == "" {
			b.Fatal("no title parsed")
		}
	}
	b.ReportMetric(float64(benchkit.CPUTime()-cpu)/float64(b.N), "cpu-ns/op")
}

// BenchmarkListTodo10kCold lists todo/ of a board of 10,000 sessions with
// no listing cache: what the first `pickup list` of a board pays, per file
// an open, an fstat, a read, a close and a frontmatter parse.
func BenchmarkListTodo10kCold(b *testing.B) {
	const n = 10000
	board, err := benchkit.NewBoard(filepath.Join(b.TempDir(), "board"))
	if err != nil {
		b.Fatal(err)
	}
	if _, err := benchkit.Fill(board, sessions.Todo, "", 0, n); err != nil {
		b.Fatal(err)
	}
	cache := filepath.Join(board.RuntimeDir(), "cache")
	b.ReportAllocs()
	cpu := benchkit.CPUTime()
	for b.Loop() {
		if err := os.RemoveAll(cache); err != nil {
			b.Fatal(err)
		}
		list, err := board.ListState(sessions.Todo, true)
		if err != nil {
			b.Fatal(err)
		}
		if len(list) != n {
			b.Fatalf("listed %d sessions, want %d", len(list), n)
		}
	}
	b.ReportMetric(float64(benchkit.CPUTime()-cpu)/float64(b.N), "cpu-ns/op")
}
