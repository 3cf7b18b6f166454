package claim_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/pickup-dev/pickup/claim"
	"github.com/pickup-dev/pickup/internal/benchkit"
	"github.com/pickup-dev/pickup/sessions"
)

// BenchmarkClaimReleaseInGit is BenchmarkClaimRelease on a board inside a
// git work tree: each rename also holds the sync gate (an open, a shared
// flock and a close of <git dir>/pickup-sync.lock) and checks for a stopped
// rebase, merge, cherry-pick or revert (five stats). Compare the two in
// one run.
func BenchmarkClaimReleaseInGit(b *testing.B) {
	top := b.TempDir()
	if err := os.Mkdir(filepath.Join(top, ".git"), 0o755); err != nil {
		b.Fatal(err)
	}
	board, err := benchkit.NewBoard(filepath.Join(top, ".spx", "sessions"))
	if err != nil {
		b.Fatal(err)
	}
	ids, err := benchkit.Fill(board, sessions.Todo, "", 0, 1)
	if err != nil {
		b.Fatal(err)
	}
	c, err := claim.New(board, "bench")
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	cpu := benchkit.CPUTime()
	for b.Loop() {
		if _, err := c.Claim(context.Background(), ids[0]); err != nil {
			b.Fatal(err)
		}
		if _, err := c.Release(context.Background(), ids[0]); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(benchkit.CPUTime()-cpu)/float64(b.N), "cpu-ns/op")
}
