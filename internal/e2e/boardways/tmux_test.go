package boardways

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// agentScript is a coding agent as a shell script: it takes the next
// session, works until told to finish (a file appears), and finishes it.
// Its lease follows the script's own process ($$).
const agentScript = `#!/bin/bash
set -e
export PICKUP_PID=$$
id=$(pickup next | sed -n 's/^claimed \([^ ]*\) .*/\1/p')
echo "$id" > "$1.claimed"
while [ ! -e "$1.finish" ]; do sleep 0.05; done
pickup done "$id" > /dev/null
echo "$id" > "$1.done"
`

// agent is one running agent script.
type agent struct {
	t     *testing.T
	owner string
	mark  string // its files: .claimed, .finish, .done
	cmd   *exec.Cmd
}

func startAgent(t *testing.T, dir string, env []string, owner string) *agent {
	t.Helper()
	script := filepath.Join(dir, "agent.sh")
	if _, err := os.Stat(script); err != nil {
		if err := os.WriteFile(script, []byte(agentScript), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	a := &agent{t: t, owner: owner, mark: filepath.Join(dir, owner)}
	a.cmd = exec.Command(script, a.mark)
	a.cmd.Env = append(env, "PICKUP_OWNER="+owner)
	a.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := a.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = syscall.Kill(-a.cmd.Process.Pid, syscall.SIGKILL); _ = a.cmd.Wait() })
	return a
}

// agentBound is how long await waits for an agent's step (a process
// start and a command on a local board): it catches a hang, with room for
// a machine many times slower than a quiet one.
const agentBound = time.Minute

// await waits (up to agentBound) for the agent's file with suffix and
// returns its content.
func (a *agent) await(suffix string) string {
	a.t.Helper()
	for deadline := time.Now().Add(agentBound); time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
		if data, err := os.ReadFile(a.mark + suffix); err == nil && strings.HasSuffix(string(data), "\n") {
			return strings.TrimSpace(string(data))
		}
	}
	a.t.Fatalf("agent %s: no %s after %v", a.owner, suffix, agentBound)
	return ""
}

// TestBoardInTmux: pickup board in a real terminal, 120×40, while agents
// claim, finish and die. A claim shows within a second, a SIGKILLed
// agent shows dead within five, the idle board uses no CPU, agents' text
// cannot reach the terminal, and q gives the terminal back as it was.
func TestBoardInTmux(t *testing.T) {
	bin := binDir(t)
	dir := t.TempDir()
	board := filepath.Join(dir, "board")
	e := env(bin, board)
	run := func(args ...string) string {
		t.Helper()
		cmd := exec.Command(filepath.Join(bin, "pickup"), args...)
		cmd.Env, cmd.Dir, cmd.Stdin = e, dir, nil
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("pickup %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		return string(out)
	}
	run("init")
	for i := range 3 {
		run("new", "--title", fmt.Sprintf("task %d", i))
	}
	run("new", "--priority", "low", "--title", "evil \x1b]52;c;cHduZWQ=\x07\x1b]2;pwned\x07\x1b[2J title")

	tm := newTerm(t, e, 120, 40, "pickup board; echo BOARD-EXITED; stty -a; sleep 60")
	tm.waitFor("the first screen", 10*time.Second, func(s string) bool {
		return strings.Contains(s, "OWNERS (") && strings.Contains(s, "4 todo")
	})
	boardPID := childNamed(t, tm.panePID(), "pickup-board")

	// A claim shows within a second.
	a1 := startAgent(t, dir, e, "agent-1")
	id1 := a1.await(".claimed")
	took := tm.waitFor("agent-1's claim", time.Second, func(s string) bool {
		return strings.Contains(s, "agent-1") && strings.Contains(s, "└ "+id1) && strings.Contains(s, "1 doing")
	})
	t.Logf("the claim showed %v after pickup next returned", took)

	// And its done.
	if err := os.WriteFile(a1.mark+".finish", nil, 0o644); err != nil {
		t.Fatal(err)
	}
	a1.await(".done")
	tm.waitFor("agent-1's done", time.Second, func(s string) bool {
		return strings.Contains(s, "1 done") && strings.Contains(s, "ago  done    "+id1)
	})

	// An agent killed with SIGKILL shows dead within five seconds.
	victim := startAgent(t, dir, e, "victim")
	id2 := victim.await(".claimed")
	tm.waitFor("the victim's claim", time.Second, func(s string) bool { return strings.Contains(s, "└ "+id2) })
	if err := syscall.Kill(-victim.cmd.Process.Pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	took = tm.waitFor("the dead victim", 5*time.Second, func(s string) bool {
		for _, l := range strings.Split(s, "\n") {
			if strings.Contains(l, "victim") && strings.Contains(l, "✗ DEAD") {
				return true
			}
		}
		return false
	})
	t.Logf("the death showed %v after the SIGKILL", took)

	// Agents' text is shown escaped and never acted on: no clipboard, no
	// title, no cleared screen.
	s := tm.screen()
	if !strings.Contains(s, `evil \x1b]52;c;cHduZWQ=\x07\x1b]2;pwned\x07\x1b[2J title`) {
		t.Errorf("the hostile title is not shown escaped:\n%s", s)
	}
	if title := tm.tmux("display", "-p", "#{pane_title}"); strings.Contains(title, "pwned") {
		t.Errorf("an agent's title set the terminal's title: %q", title)
	}
	if bufs := tm.tmux("list-buffers"); strings.Contains(bufs, "pwned") || strings.Contains(bufs, "cHduZWQ") {
		t.Errorf("an agent's title set the clipboard: %q", bufs)
	}

	// Idle: nothing happens on the board, so the board does nothing. Its
	// age label changes every second for ten seconds after an event, then
	// every ten (NextRedraw): wait for the moment it turns to a whole ten
	// seconds ("(10s ago)", "(20s ago)", ...) and read the board's CPU
	// time over 5 s of the next ten, which hold no redraw. (Sleeping a fixed 10 s
	// let the window catch the next redraw on a slow run.)
	tens := regexp.MustCompile(`\(([1-5]0)s ago\)`)
	label := func(s string) string { return tens.FindString(s) }
	was := label(tm.screen())
	tm.waitFor("the label turning to a whole ten seconds", 30*time.Second, func(s string) bool {
		l := label(s)
		if l == "" || l == was {
			was = l
			return false
		}
		return true
	})
	// The redraw keeps the frame ticker running for a moment after it
	// (frames.go: minIdle, 500 ms): start counting once that has passed.
	time.Sleep(time.Second)
	before := cpuTicks(t, boardPID)
	time.Sleep(5 * time.Second)
	if used := cpuTicks(t, boardPID) - before; used != 0 {
		t.Errorf("the idle board used %d clock ticks of CPU in 5 s, want 0", used)
	}

	// Help, then quit: the terminal is given back in its own mode.
	tm.tmux("send-keys", "?")
	tm.waitFor("the help", time.Second, func(s string) bool { return strings.Contains(s, "filter by owner") })
	tm.tmux("send-keys", "x")
	tm.waitFor("the board again", time.Second, func(s string) bool { return strings.Contains(s, "OWNERS (") })
	tm.tmux("send-keys", "q")
	// stty -a's first line starts "speed": wait for it, not only for the
	// marker before it (a loaded machine printed the marker alone first).
	tm.waitFor("the exit", 5*time.Second, func(s string) bool {
		return strings.Contains(s, "BOARD-EXITED") && strings.Contains(s, "speed ")
	})
	after := tm.screen()
	if strings.Contains(after, "OWNERS (") {
		t.Errorf("the board is still on the screen after q (the alternate screen was not left):\n%s", after)
	}
	if !strings.Contains(after, " icanon") || !strings.Contains(after, " echo") {
		t.Errorf("the terminal was not restored (stty -a after the board):\n%s", after)
	}
}

// childNamed returns the process named name among ppid and its children
// (the pane's shell runs pickup, which hands over to pickup-board).
func childNamed(t testing.TB, ppid int, name string) int {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if comm(ppid) == name {
			return ppid
		}
		stats, _ := filepath.Glob("/proc/[0-9]*/stat")
		for _, p := range stats {
			data, err := os.ReadFile(p)
			if err != nil {
				continue
			}
			rest := string(data[strings.LastIndexByte(string(data), ')')+2:])
			f := strings.Fields(rest)
			if pp, _ := strconv.Atoi(f[1]); pp == ppid {
				pid, _ := strconv.Atoi(filepath.Base(filepath.Dir(p)))
				if comm(pid) == name {
					return pid
				}
			}
		}
	}
	t.Fatalf("no process %s under %d", name, ppid)
	return 0
}
