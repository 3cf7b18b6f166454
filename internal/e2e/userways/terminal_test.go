package userways

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// stepBound bounds one step of a terminal scenario (a command typed, a
// process dying, a file appearing), counted from the step before: it
// catches a hang only, with room for a machine many times slower.
const stepBound = 2 * time.Minute

// TestTerminal starts agents the way almost every agent is started: from an
// interactive shell in a real terminal (tmux), typed at its prompt. An
// agent killed with SIGKILL (a script in the background or the foreground,
// a pipeline, a background job, `xargs -P 4`, `nohup`, `setsid`) gives its
// sessions back at once while the shell and the terminal live; a claim
// typed at the prompt is kept for as long as that shell lives, and given
// back once it exits, while tmux still runs.
func TestTerminal(t *testing.T) {
	for _, sh := range [][]string{
		{"bash", "--norc", "--noprofile", "-i"},
		{"zsh", "-f", "-i"},
		{"dash", "-i"},
	} {
		t.Run(sh[0], func(t *testing.T) {
			if _, err := exec.LookPath(sh[0]); err != nil {
				t.Fatalf("%s is not installed (scripts/test installs it): %v", sh[0], err)
			}
			if _, err := exec.LookPath("tmux"); err != nil {
				t.Fatalf("tmux is not installed (scripts/test installs it): %v", err)
			}
			b := newBoard(t)
			b.install("term-agent.sh")
			tm := startTerm(t, b, sh)
			ctx := testContext(t)

			// A script started in the background, killed as a job.
			victim := b.seed(ctx, 1)[0]
			tm.run("./term-agent.sh bg &")
			tm.await("bg.claimed", victim)
			tm.run("kill -9 %1")
			tm.recovered("bg", victim)

			// A script in the foreground, killed from outside (an OOM
			// kill, a crash): the shell returns to its prompt.
			victim = b.seed(ctx, 1)[0]
			tm.send("./term-agent.sh fg")
			tm.await("fg.claimed", victim)
			tm.kill("fg.pid")
			tm.run("true") // the prompt is back
			tm.recovered("fg", victim)

			// A pipeline.
			victim = b.seed(ctx, 1)[0]
			tm.run("./term-agent.sh pipe | cat > /dev/null &")
			tm.await("pipe.claimed", victim)
			tm.run("kill -9 %1")
			tm.recovered("pipe", victim)

			// A background job typed at the prompt: its subshell is the agent.
			victim = b.seed(ctx, 1)[0]
			tm.run("{ pickup --owner job next --json | jq -r .id > job.claimed; sleep 600; } &")
			tm.await("job.claimed", victim)
			tm.run("kill -9 %1")
			tm.recovered("job", victim)

			// xargs -P 4 of sh -c workers.
			victims := b.seed(ctx, 4)
			tm.run(`seq 4 | xargs -P 4 -I{} sh -c 'pickup --owner xargs next --json | jq -r .id >> xargs.claimed; sleep 600' &`)
			tm.await("xargs.claimed", victims...)
			tm.run("kill -9 %1")
			tm.recovered("xargs", victims...)

			// nohup, killed as a job.
			victim = b.seed(ctx, 1)[0]
			tm.run("nohup ./term-agent.sh nohup > /dev/null 2>&1 &")
			tm.await("nohup.claimed", victim)
			tm.run("kill -9 %1")
			tm.recovered("nohup", victim)

			// setsid: the agent leaves the shell's session.
			victim = b.seed(ctx, 1)[0]
			tm.run("setsid ./term-agent.sh setsid > /dev/null 2>&1")
			tm.await("setsid.claimed", victim)
			tm.kill("setsid.pid")
			tm.recovered("setsid", victim)

			// A claim typed at the prompt is the shell's: kept while it
			// lives, whoever asks, and given back once it exits.
			victim = b.seed(ctx, 1)[0]
			tm.run("pickup --owner person claim " + victim)
			tm.run("pickup status")
			if !strings.Contains(tm.screen(), "interactive shell pickup was typed at") {
				t.Fatalf("pickup status at the prompt does not say the prompt's shell holds person:\n%s", tm.screen())
			}
			tm.run("pickup reap")
			if out, err := b.output(ctx, "pickup", "--owner", "other", "next", "--json"); err == nil {
				t.Fatalf("another owner's next took a session while the shell that claimed it lives: %s", out)
			}
			if got := b.placeOf(victim); got != "doing/person" {
				t.Fatalf("%s is in %s after reap and another owner's next, want doing/person:\n%s", victim, got, b.status(ctx))
			}
			tm.send("exit")
			tm.waitShellGone()
			tm.recovered("person", victim)
		})
	}
}

// term is an interactive shell in a tmux window. A second window keeps the
// tmux server running after the shell exits.
type term struct {
	t        *testing.T
	b        *board
	sock     string
	pane     string
	shellPID int
	marks    int
}

func startTerm(t *testing.T, b *board, shell []string) *term {
	t.Helper()
	dir, err := os.MkdirTemp("", "tm") // a socket path must be short
	if err != nil {
		t.Fatal(err)
	}
	tm := &term{t: t, b: b, sock: filepath.Join(dir, "s")}
	t.Cleanup(func() {
		_ = exec.Command("tmux", "-S", tm.sock, "kill-server").Run()
		_ = os.RemoveAll(dir)
	})
	tm.tmux("-f", "/dev/null", "new-session", "-d", "-x", "200", "-y", "50", "-s", "keep", "sleep", "100000")
	out := tm.tmux(append([]string{"new-window", "-P", "-F", "#{pane_id} #{pane_pid}", "-t", "keep", "-c", b.work, "--"}, shell...)...)
	f := strings.Fields(out)
	if len(f) != 2 {
		t.Fatalf("tmux new-window said %q", out)
	}
	tm.pane = f[0]
	if tm.shellPID, err = strconv.Atoi(f[1]); err != nil {
		t.Fatal(err)
	}
	tm.run("true") // the shell reads its terminal
	return tm
}

func (tm *term) tmux(args ...string) string {
	tm.t.Helper()
	cmd := exec.Command("tmux", append([]string{"-S", tm.sock}, args...)...)
	cmd.Env, cmd.Dir = append(tm.b.env, "ENV="), tm.b.work
	out, err := cmd.CombinedOutput()
	if err != nil {
		tm.t.Fatalf("tmux %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return strings.TrimSpace(string(out))
}

// send types line and Enter at the prompt.
func (tm *term) send(line string) {
	tm.t.Helper()
	tm.tmux("send-keys", "-t", tm.pane, "-l", line)
	tm.tmux("send-keys", "-t", tm.pane, "Enter")
}

// run types line and waits until the shell has run it: a next line echoes a
// mark that its typed form does not contain.
func (tm *term) run(line string) {
	tm.t.Helper()
	tm.marks++
	mark := fmt.Sprintf("MARK-%d.", tm.marks)
	tm.send(line)
	tm.send(`echo "MA""RK-` + strconv.Itoa(tm.marks) + `."`)
	tm.wait("the shell to run "+line, func() bool { return strings.Contains(tm.screen(), mark) })
}

// screen is the pane's whole text, its history included.
func (tm *term) screen() string {
	tm.t.Helper()
	return tm.tmux("capture-pane", "-p", "-J", "-S", "-", "-t", tm.pane)
}

// wait polls cond until it holds, failing after stepBound with the screen
// and the board's owners.
func (tm *term) wait(what string, cond func() bool) {
	tm.t.Helper()
	for deadline := time.Now().Add(stepBound); !cond(); time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			tm.t.Fatalf("waited %v for %s\nscreen:\n%s\nstatus:\n%s", stepBound, what, tm.screen(), tm.b.status(context.Background()))
		}
	}
}

// await waits for the work directory's file name to list the sessions ids
// (one a line, in any order).
func (tm *term) await(name string, ids ...string) {
	tm.t.Helper()
	want := strings.Join(sorted(ids), " ")
	tm.wait(name+" to list "+want, func() bool {
		got := tm.b.lines(name)
		return strings.HasSuffix(tm.b.file(name), "\n") && strings.Join(sorted(got), " ") == want
	})
}

// kill SIGKILLs the process whose pid the work directory's file name holds.
func (tm *term) kill(name string) {
	tm.t.Helper()
	pid, err := strconv.Atoi(strings.TrimSpace(tm.b.file(name)))
	if err != nil {
		tm.t.Fatalf("%s: %v", name, err)
	}
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		tm.t.Fatalf("kill %d: %v", pid, err)
	}
}

// recovered checks that owner's sessions ids come back at once: as soon as
// `pickup status` judges owner dead (its processes have exited: no
// heartbeat, no timeout), another owner's next takes each of them, while
// the terminal lives (and, unless it exited on purpose, the shell).
func (tm *term) recovered(owner string, ids ...string) {
	tm.t.Helper()
	ctx := context.Background()
	tm.wait(owner+" to be judged dead", func() bool {
		out, err := tm.b.output(ctx, "pickup", "status", "--json")
		return err == nil && ownerState(tm.t, out, owner) == "dead"
	})
	if owner != "person" && !running(tm.shellPID) {
		tm.t.Fatalf("the interactive shell (pid %d) has exited", tm.shellPID)
	}
	var got []string
	for range ids {
		out, err := tm.b.output(ctx, "pickup", "--owner", "other", "next", "--json")
		if err != nil {
			tm.t.Fatalf("%s is dead, but another owner's next: %v\nstatus:\n%s", owner, err, tm.b.status(ctx))
		}
		var s struct{ ID string }
		if err := json.Unmarshal([]byte(out), &s); err != nil {
			tm.t.Fatalf("pickup next --json: %q: %v", out, err)
		}
		got = append(got, s.ID)
	}
	if strings.Join(sorted(got), " ") != strings.Join(sorted(ids), " ") {
		tm.t.Fatalf("another owner's next took %v, want %s's %v", got, owner, ids)
	}
}

// waitShellGone waits for the shell to exit.
func (tm *term) waitShellGone() {
	tm.t.Helper()
	tm.wait("the shell to exit", func() bool { return !running(tm.shellPID) })
}

// running reports whether pid runs (a zombie does not).
func running(pid int) bool {
	data, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat"))
	if err != nil {
		return false
	}
	i := bytes.LastIndexByte(data, ')')
	return i > 0 && i+2 < len(data) && data[i+2] != 'Z' && data[i+2] != 'X'
}

// placeOf says where the board keeps id: todo, doing/OWNER, done, ...
func (b *board) placeOf(id string) string {
	b.t.Helper()
	matches, _ := filepath.Glob(filepath.Join(b.dir, "*", id+".md"))
	matches2, _ := filepath.Glob(filepath.Join(b.dir, "*", "*", id+".md"))
	for _, m := range append(matches, matches2...) {
		rel, _ := filepath.Rel(b.dir, filepath.Dir(m))
		return rel
	}
	return "nowhere"
}

// status is `pickup status` for a failure's message.
func (b *board) status(ctx context.Context) string {
	out, err := b.output(ctx, "pickup", "status")
	if err != nil {
		return err.Error()
	}
	return out
}

func sorted(s []string) []string {
	out := append([]string(nil), s...)
	for i := range out {
		for j := i + 1; j < len(out); j++ {
			if out[j] < out[i] {
				out[i], out[j] = out[j], out[i]
			}
		}
	}
	return out
}
