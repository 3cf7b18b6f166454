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

// TestWorkWaitWokenAcrossBoards: `pickup work -j 2 --wait` on one board
// runs sessions made on another board (pickup new there), woken by the
// database's NOTIFY: the fallback poll is set to an hour, so nothing else
// could wake it in time. The command is a bash script that records each
// session it was given.
func TestWorkWaitWokenAcrossBoards(t *testing.T) {
	db, url := newDatabase(t)
	cs := clones(t, url, 2)
	a, b := cs[0], cs[1]
	tmp := t.TempDir()
	ran := filepath.Join(tmp, "ran")
	script := filepath.Join(tmp, "session.sh")
	if err := os.WriteFile(script, []byte("#!/bin/bash\nid=$(basename \"$1\" .md)\n(echo \"$id\" >> \""+ran+"\")\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	work := exec.CommandContext(ctx, filepath.Join(bin, "pickup"), "--dir", a.dir, "--owner", "worker", "work", "-j", "2", "--wait", "--", script, "{}")
	work.Env = append(env(a.home), "PICKUP_PG_POLL=1h")
	var out strings.Builder
	work.Stdout, work.Stderr = &out, &out
	if err := work.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = work.Process.Kill(); _ = work.Wait() }()
	time.Sleep(time.Second) // work starts and listens

	ranIDs := func() string { data, _ := os.ReadFile(ran); return string(data) }
	var lat []time.Duration
	for i := range 3 {
		start := time.Now()
		id := strings.TrimSpace(b.must("", "new", "-t", "made on b"))
		for !strings.Contains(ranIDs(), id) {
			if time.Since(start) > 30*time.Second {
				t.Fatalf("round %d: work --wait on a did not run %s, made on b, in 30 s (ran: %q)\n%s", i, id, ranIDs(), out.String())
			}
			time.Sleep(5 * time.Millisecond)
		}
		lat = append(lat, time.Since(start))
		deadline := time.Now().Add(10 * time.Second)
		for server.psql(t, db, "SELECT state FROM pickup_sessions WHERE id = '"+id+"'") != "done" {
			if time.Now().After(deadline) {
				t.Fatalf("%s is not done in the database after its run\n%s", id, out.String())
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	t.Logf("pickup new on b to the session's command running on a: %v", lat)
	_ = work.Process.Signal(syscall.SIGTERM)
	if err := work.Wait(); err != nil {
		t.Logf("work after SIGTERM: %v", err)
	}
}
