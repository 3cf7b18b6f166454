package sharedways

import (
	"context"
	"crypto/rand"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

var (
	boardBuild sync.Once
	boardErr   error
)

// boardBinary builds pickup-board beside pickup (where pickup board looks
// for it first).
func boardBinary(t *testing.T) {
	t.Helper()
	dir := filepath.Dir(pickupBinary(t))
	boardBuild.Do(func() {
		out, err := exec.Command("go", "build", "-race=false", "-o", filepath.Join(dir, "pickup-board"),
			"github.com/pickup-dev/pickup/internal/cmd/pickup-board").CombinedOutput()
		if err != nil {
			boardErr = fmt.Errorf("go build pickup-board: %v\n%s", err, out)
		}
	})
	if boardErr != nil {
		t.Fatal(boardErr)
	}
}

// TestBoardShowsOtherClones: pickup board in clone A (a real terminal,
// tmux) shows what clone B does through the git daemon remote: the
// sessions B makes, B's agent and its claim, as an owner of another clone.
func TestBoardShowsOtherClones(t *testing.T) {
	if _, err := exec.LookPath("tmux"); err != nil {
		t.Skip("tmux is not installed (scripts/test installs it)")
	}
	t.Parallel()
	boardBinary(t)
	r := newRemote(t, "daemon")
	cs := r.clones(2)
	a, b := cs[0], cs[1]
	if err := os.WriteFile(a.board()+"/config.yaml", []byte("shared: origin\nshared_fetch: 300ms\n"), 0o644); err != nil {
		t.Fatal(err)
	}

	var rnd [4]byte
	_, _ = rand.Read(rnd[:])
	socket := fmt.Sprintf("sharedways-board-%d-%x", os.Getpid(), rnd)
	tmux := func(args ...string) string {
		t.Helper()
		cmd := exec.Command("tmux", append([]string{"-L", socket}, args...)...)
		cmd.Dir = a.dir
		cmd.Env = append(baseEnv(r.home), "PATH="+filepath.Dir(pickupBinary(t))+string(os.PathListSeparator)+os.Getenv("PATH"), "TERM=xterm-256color")
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("tmux %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		return string(out)
	}
	tmux("new-session", "-d", "-x", "120", "-y", "40", "-c", a.dir, "pickup board; sleep 60")
	t.Cleanup(func() { _ = exec.Command("tmux", "-L", socket, "kill-server").Run() })
	waitFor := func(what string, ok func(string) bool) {
		t.Helper()
		deadline := time.Now().Add(15 * time.Second)
		for {
			s := tmux("capture-pane", "-p")
			if ok(s) {
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s: not on clone A's board after 15 s:\n%s", what, s)
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	waitFor("the board", func(s string) bool { return strings.Contains(s, "(shared via origin)") })

	ids := b.newSessions(2)
	waitFor("the sessions made in B", func(s string) bool {
		return strings.Contains(s, "2 todo") && strings.Contains(s, ids[0]) && strings.Contains(s, ids[1])
	})
	pid, _ := holder(t)
	if res := b.pickupEnv(context.Background(), "peer-b", []string{fmt.Sprintf("PICKUP_PID=%d", pid)}, "claim", ids[1]); res.code != 0 {
		t.Fatalf("claim in B: exit %d: %s", res.code, res.stderr)
	}
	// B's heartbeat names B's machine (this one, as both clones are here):
	// the board shows it in the HOST column, not a bare "other clone".
	host, err := os.Hostname()
	if err != nil {
		t.Fatal(err)
	}
	waitFor("B's agent, its machine and its claim", func(s string) bool {
		var owner, claimed bool
		for _, l := range strings.Split(s, "\n") {
			f := strings.Fields(l)
			owner = owner || len(f) > 2 && f[0] == "peer-b" && f[2] == host
			claimed = claimed || strings.Contains(l, "└ "+ids[1])
		}
		return owner && claimed && strings.Contains(s, "1 todo  1 doing")
	})
}
