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
// the foreground reaches pickup alone (each command leads a process group
// of its own); work passes it on to each command once, waits for them,
// releases their sessions to todo/ and exits 130.
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
	if !strings.Contains(stderr, "running commands get SIGINT") {
		t.Errorf("work does not say it passes the Ctrl-C on:\n%s", stderr)
	}
	if ints, err := os.ReadFile(filepath.Join(lb.dir, "ints")); err != nil || string(ints) != "INT\nINT\n" {
		t.Errorf("the commands did not each get one SIGINT: %q, %v", ints, err)
	}
	todo, err := lb.board.ListState(sessions.Todo, true)
	if err != nil {
		t.Fatal(err)
	}
	if len(todo) != 2 {
		t.Errorf("%d session(s) back in todo/, want both\nstderr:\n%s", len(todo), stderr)
	}
}
