package pgways

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// serverPids are the server's processes: the postmaster and its children.
func serverPids(t *testing.T) []int {
	data, err := os.ReadFile(filepath.Join(server.Data, "postmaster.pid"))
	if err != nil {
		t.Fatal(err)
	}
	first, _, _ := strings.Cut(string(data), "\n")
	out, _ := exec.Command("pgrep", "-P", first).Output()
	pids := []int{atoi(first)}
	for _, f := range strings.Fields(string(out)) {
		pids = append(pids, atoi(f))
	}
	return pids
}

func atoi(s string) int {
	n := 0
	for _, c := range strings.TrimSpace(s) {
		n = n*10 + int(c-'0')
	}
	return n
}

// TestStalledServer: a server that stops answering (every process of it
// stopped with SIGSTOP) is not waited on forever: next exits 8 naming the
// database, nothing moved on the board; once the server answers again,
// next claims.
func TestStalledServer(t *testing.T) {
	_, url := newDatabase(t)
	c := clones(t, url, 1)[0]
	id := strings.TrimSpace(c.must("", "new", "-t", "stalled"))
	pids := serverPids(t)
	for _, p := range pids {
		_ = syscall.Kill(p, syscall.SIGSTOP)
	}
	resumed := false
	resume := func() {
		if !resumed {
			for _, p := range pids {
				_ = syscall.Kill(p, syscall.SIGCONT)
			}
			resumed = true
		}
	}
	t.Cleanup(resume)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	res := c.pickup(ctx, "w", "next")
	resume()
	if res.code != 8 || !strings.Contains(res.stderr, "database postgres://pickup@127.0.0.1") {
		t.Fatalf("next against a stalled server: exit %d, want 8 naming the database\n%s%s", res.code, res.stdout, res.stderr)
	}
	if got := c.files("todo"); len(got) != 1 || got[0] != id {
		t.Errorf("todo after the failed next: %v, want %s", got, id)
	}
	if got := c.files("doing/w"); len(got) != 0 {
		t.Errorf("doing/w after the failed next: %v, want nothing", got)
	}
	if res := c.pickup(ctx, "w", "next", "--json"); res.code != 0 || !strings.Contains(res.stdout, id) {
		t.Errorf("next once the server answers: exit %d\n%s%s", res.code, res.stdout, res.stderr)
	}
}
