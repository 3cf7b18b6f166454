package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/pickup-dev/pickup/sessions"
)

// TestWorkCtrlC: Ctrl-C typed in the terminal where `pickup work` runs in
// the foreground reaches its running commands from the terminal; work does
// not send them a second SIGINT, waits for them, releases their sessions
// to todo/ and exits 130.
func TestWorkCtrlC(t *testing.T) {
	lb := newLockBoard(t, lockBin(t))
	for _, title := range []string{"one", "two"} {
		lb.want(0, "new", "--title", title)
	}
	run := lb.pickup("work", "-j", "2", "--owner", "w", "--",
		"sh", "-c", `trap 'echo INT >> ints; exit 42' INT; touch ready.$$; while :; do sleep 0.02; done`)
	bg := ctrlCInTerminal(t, lb, run, "both commands started", func() bool {
		m, _ := filepath.Glob(filepath.Join(lb.dir, "ready.*"))
		return len(m) == 2
	})
	if code := bg.wait(t, 15*time.Second); code != 130 {
		t.Fatalf("work exited %d, want 130\nstderr:\n%s", code, bg.stderr.String())
	}
	stderr := bg.stderr.String()
	if !strings.Contains(stderr, "got it from the terminal too") || strings.Contains(stderr, "get SIGINT") {
		t.Errorf("work forwarded a Ctrl-C that its commands had from the terminal already:\n%s", stderr)
	}
	if ints, err := os.ReadFile(filepath.Join(lb.dir, "ints")); err != nil || strings.Count(string(ints), "INT") != 2 {
		t.Errorf("the commands did not each get the terminal's SIGINT: %q, %v", ints, err)
	}
	todo, err := lb.board.ListState(sessions.Todo, true)
	if err != nil {
		t.Fatal(err)
	}
	if len(todo) != 2 {
		t.Errorf("%d session(s) back in todo/, want both\nstderr:\n%s", len(todo), stderr)
	}
}
