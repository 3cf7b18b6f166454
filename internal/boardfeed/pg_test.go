package boardfeed

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/pickup-dev/pickup/internal/boardview"
	"github.com/pickup-dev/pickup/sessions"
)

// TestOpenPostgresBoardUnreachable: a PostgreSQL board whose database
// cannot be reached (here: its helper cannot even start) opens all the
// same, shows the board directory's last view, and says why; the live
// board keeps saying it while it tries again.
func TestOpenPostgresBoardUnreachable(t *testing.T) {
	dir, _, _ := newTestBoard(t, "seen before")
	cfg, err := os.OpenFile(filepath.Join(dir, sessions.ConfigFile), os.O_APPEND|os.O_WRONLY|os.O_CREATE, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	fmt.Fprintln(cfg, "shared: postgres://pickup@127.0.0.1:1/work")
	cfg.Close()
	t.Setenv("PICKUP_POSTGRES_HELPER", filepath.Join(t.TempDir(), "no-such-helper"))
	t.Setenv("PICKUP_PG_DAEMON", "0")
	t.Setenv("PICKUP_PG_POLL", "50ms")

	f, err := Open(context.Background(), dir)
	if err != nil {
		t.Fatalf("open: %v", err)
	}
	snap, err := f.Snapshot()
	if err != nil {
		t.Fatal(err)
	}
	if snap.DBErr == "" || len(snap.Items) != 1 || snap.Shared != "postgres://pickup@127.0.0.1:1/work" {
		t.Fatalf("snapshot: database error %q, %d sessions, shared %q; want the error, the one session, the URL", snap.DBErr, len(snap.Items), snap.Shared)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var got events
	done := make(chan struct{})
	go func() { defer close(done); f.Run(ctx, got.add) }()
	time.Sleep(300 * time.Millisecond) // several tries
	cancel()
	<-done
	for _, e := range got.got {
		if st, ok := e.(boardview.FeedStatus); ok && !st.Fetched.IsZero() {
			t.Errorf("the feed said the database answered: %#v", st)
		}
	}
}
