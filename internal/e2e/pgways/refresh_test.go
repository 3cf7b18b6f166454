package pgways

import (
	"bufio"
	"context"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestRefreshSeesLateCommit: a board reads only the rows changed since
// its last read, so that read must not skip a transaction that took its
// version before the read and committed after it. A psql transaction
// moves session A to done with a version taken first, and stays open;
// meanwhile a claim of B (a later version) commits and board b reads it.
// Once the psql transaction commits, b must show A in done: a horizon
// that trusted the highest version seen (B's) would never read A again.
func TestRefreshSeesLateCommit(t *testing.T) {
	db, url := newDatabase(t)
	cs := clones(t, url, 2)
	a, b := cs[0], cs[1]
	idA := strings.TrimSpace(a.must("", "new", "-t", "late", "--priority", "low"))
	idB := strings.TrimSpace(a.must("", "new", "-t", "early", "--priority", "high"))
	b.must("", "list")
	if !slices.Contains(b.files("todo"), idA) {
		t.Fatalf("b shows %v in todo, want %s", b.files("todo"), idA)
	}

	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	psql := exec.CommandContext(ctx, "psql", "-X", "-q", "-A", "-t", "-v", "ON_ERROR_STOP=1", "-h", "127.0.0.1", "-p", strconv.Itoa(server.Port), "-U", "pickup", "-d", db)
	in, err := psql.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	outPipe, err := psql.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := psql.Start(); err != nil {
		t.Fatal(err)
	}
	out := bufio.NewReader(outPipe)
	if _, err := in.Write([]byte("BEGIN;\nUPDATE pickup_sessions SET state = 'done', version = nextval('pickup_version') WHERE id = '" + idA + "';\n\\echo ready\n")); err != nil {
		t.Fatal(err)
	}
	if line, err := out.ReadString('\n'); err != nil || strings.TrimSpace(line) != "ready" {
		t.Fatalf("psql: %q, %v", line, err)
	}

	// B's claim commits after A's version was taken; b reads it.
	if got := a.must("claimer", "next", "--json"); !strings.Contains(got, idB) {
		t.Fatalf("next took %s, want %s", got, idB)
	}
	b.must("", "list")
	if !slices.Contains(b.files("doing/claimer"), idB) || !slices.Contains(b.files("todo"), idA) {
		t.Fatalf("b shows todo %v, doing/claimer %v; want %s in todo (not committed yet), %s claimed", b.files("todo"), b.files("doing/claimer"), idA, idB)
	}

	if _, err := in.Write([]byte("COMMIT;\n")); err != nil {
		t.Fatal(err)
	}
	in.Close()
	if err := psql.Wait(); err != nil {
		t.Fatalf("psql: %v", err)
	}
	b.must("", "list")
	if !slices.Contains(b.files("done"), idA) || slices.Contains(b.files("todo"), idA) {
		t.Fatalf("after the late commit b shows todo %v, done %v; want %s in done", b.files("todo"), b.files("done"), idA)
	}
}
