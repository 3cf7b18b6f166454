package sharedways

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestFetchedSessionKeepsPriority: a session that arrives in todo/ from the
// remote counts as an arrival, like one made here. Clone B has just listed
// todo/ (its listing is trusted for a while); clone A then makes a
// high-priority session; B's next must fetch it and take it, not the
// low-priority one its trusted listing still shows.
func TestFetchedSessionKeepsPriority(t *testing.T) {
	t.Parallel()
	r := newRemote(t, "file")
	cs := r.clones(2)
	a, b := cs[0], cs[1]
	// B trusts its listings for an hour, so that only the arrival can
	// make it list again, however slow this machine is.
	cfg := filepath.Join(b.board(), "config.yaml")
	old, err := os.ReadFile(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(cfg, append(old, "lineup_age: 1h\n"...), 0o644); err != nil {
		t.Fatal(err)
	}
	for range 3 {
		b.must("", "new", "--priority", "low", "--title", "low", "-")
	}
	// Two listings: the first rewrites the listing cache (it lacks the
	// new sessions), the second is answered by it and leaves the stamp
	// that lets later nexts skip reading todo/.
	b.must("agent-b", "next")
	b.must("agent-b", "next")
	// B's claims trust a fetch of B's made less than a second ago
	// (sharedFresh): let that second pass, so that B's next fetches.
	time.Sleep(1100 * time.Millisecond)
	high := firstField(a.must("", "new", "--priority", "high", "--title", "high", "-"))
	if out := b.must("agent-b", "next"); !strings.Contains(out, high) {
		t.Fatalf("B's next after A made high-priority %s took another:\n%s", high, out)
	}
}
